//! Issue 18 gap 6: `policy.audit_arguments` records each call's arguments in its audit line
//! with every content argument replaced by `{length, sha256}`; calls a profile refuses at the
//! edge (its own refusals, an unknown tool, `deny_tools`) get an audit line like any refused
//! call.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fs;
use std::path::{Path, PathBuf};

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn lines(log: &Path) -> Vec<Value> {
    fs::read_to_string(log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn audited(extra: Value) -> (Fixture, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut config = json!({"policy": {"audit_log": log}});
    merge(&mut config, extra);
    (Fixture::with_config(config), log, dir)
}

const SECRET: &str = "SECRET-9f1c";

/// A call on a workspace with a profile: its envelope is the profile's.
fn profiled(f: &Fixture, tool: &str, args: Value) -> Value {
    let (t, a) = (cs(tool), cs(&args.to_string()));
    take_json(unsafe { wsfs::ffi::wsfs_call(f.ws, t.as_ptr(), a.as_ptr()) })
}

#[test]
fn arguments_are_recorded_without_contents() {
    let (f, log, _dir) = audited(json!({"policy": {"audit_arguments": true}}));
    let content = format!("{SECRET} one\n");
    assert_ok(&f.call("write_file", json!({"path": "a.txt", "content": content})));
    assert_ok(&f.call(
        "edit_file",
        json!({"path": "a.txt", "old_text": format!("{SECRET} one"), "new_text": format!("{SECRET} two")}),
    ));
    assert_ok(&call_content(
        f.ws,
        "append_file",
        r#"{"path":"a.txt"}"#,
        SECRET.as_bytes(),
    ));
    let patch = format!("*** Begin Patch\n*** Add File: p.txt\n+{SECRET}\n*** End Patch\n");
    assert_ok(&f.call("apply_patch", json!({ "patch": patch })));
    f.call("search_text", json!({"query": SECRET, "path": "."}));
    assert_ok(&f.call("read_file", json!({"path": "a.txt", "max_lines": 5})));
    assert_err(
        &f.call("write_file", json!({"path": "../x", "content": SECRET})),
        "outside_workspace",
    );

    let text = fs::read_to_string(&log).unwrap();
    assert!(!text.contains(SECRET), "content in the log: {text}");
    let lines = lines(&log);
    assert_eq!(lines.len(), 7, "{text}");
    let args: Vec<&Value> = lines.iter().map(|l| &l["arguments"]).collect();
    assert_eq!(args[0]["path"], "a.txt");
    assert_eq!(
        args[0]["content"],
        json!({"length": content.len(), "sha256": sha(content.as_bytes())})
    );
    let old = format!("{SECRET} one");
    assert_eq!(
        args[1]["old_text"],
        json!({"length": old.len(), "sha256": sha(old.as_bytes())})
    );
    assert_eq!(args[1]["new_text"]["length"], json!(old.len()));
    // The content buffer beside the JSON.
    assert_eq!(
        args[2]["content"],
        json!({"length": SECRET.len(), "sha256": sha(SECRET.as_bytes())})
    );
    assert_eq!(args[3]["patch"]["sha256"], json!(sha(patch.as_bytes())));
    assert_eq!(args[4]["query"]["length"], json!(SECRET.len()));
    assert_eq!(*args[5], json!({"path": "a.txt", "max_lines": 5}));
    assert_eq!(lines[6]["outcome"], "outside_workspace");
    assert_eq!(args[6]["path"], "../x");
}

#[test]
fn without_the_key_lines_have_no_arguments() {
    let (f, log, _dir) = audited(json!({}));
    assert_ok(&f.call("write_file", json!({"path": "a.txt", "content": SECRET})));
    let lines = lines(&log);
    assert!(lines[0].get("arguments").is_none(), "{:?}", lines[0]);
}

#[test]
fn audit_arguments_needs_an_audit_log() {
    let tmp = tempfile::tempdir().unwrap();
    let v = open_raw(&json!({"root": tmp.path(), "policy": {"audit_arguments": true}}).to_string());
    let message = assert_err(&v, "invalid_arguments");
    assert!(message.contains("audit_log"), "{message}");
    // The effective policy says it is on.
    let (f, _log, _dir) = audited(json!({"policy": {"audit_arguments": true}}));
    let _ = f;
}

#[test]
fn refusals_at_the_profile_edge_are_audited() {
    let (f, log, _dir) = audited(json!({
        "profile": "agent-base",
        // Writes on: agent-base's own default is off, and the last call writes.
        "policy": {"deny_tools": ["create_directory"], "audit_arguments": true, "writes_enabled": true}
    }));
    f.write("notes/a.txt", "a");
    // Each refusal's envelope code, which its audit line must carry (agent-base's words).
    let mut answered = Vec::new();
    let v = profiled(&f, "read_file", json!({"path": "notes/../a.txt"}));
    assert_eq!(v["error"], "path_traversal_attempt", "{v}");
    answered.push(v["error"].clone());
    let v = profiled(&f, "create_directory", json!({"path": "made"}));
    assert_eq!(v["error"], "permission_denied", "{v}");
    answered.push(v["error"].clone());
    let v = profiled(&f, "no_such_tool", json!({}));
    assert_eq!(v["success"], false, "{v}");
    answered.push(v["error"].clone());
    let v = profiled(
        &f,
        "write_file",
        json!({"path": "b.txt", "content": SECRET, "bogus": 1}),
    );
    assert_eq!(v["success"], false, "{v}");
    answered.push(v["error"].clone());
    // A call that runs natively is logged once, under the native tool.
    let v = profiled(
        &f,
        "write_file",
        json!({"path": "c.txt", "content": SECRET}),
    );
    assert_eq!(v["success"], true, "{v}");

    let text = fs::read_to_string(&log).unwrap();
    assert!(!text.contains(SECRET), "content in the log: {text}");
    let lines = lines(&log);
    let got: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| (l["tool"].as_str().unwrap(), l["outcome"].as_str().unwrap()))
        .collect();
    assert_eq!(
        got,
        vec![
            ("read_file", "path_traversal_attempt"),
            ("create_directory", "permission_denied"),
            ("no_such_tool", "unknown_tool"),
            ("write_file", "invalid_arguments"),
            ("write_file", "ok"),
        ],
        "{text}"
    );
    for (line, code) in lines.iter().zip(&answered) {
        assert_eq!(
            &line["outcome"], code,
            "the line carries the answered code: {text}"
        );
    }
    assert_eq!(lines[0]["paths"], json!(["notes/../a.txt"]));
    assert_eq!(lines[1]["paths"], json!(["made"]));
    assert_eq!(
        lines[3]["arguments"]["content"]["length"],
        json!(SECRET.len())
    );
}

/// A profile that spells codes its own way (capability-plan: upper case) logs them so.
#[test]
fn a_refused_call_is_logged_with_the_code_in_the_profiles_spelling() {
    let (f, log, _dir) = audited(json!({
        "profile": "capability-plan",
        "policy": {"deny_tools": ["file_delete"]}
    }));
    let unknown = profiled(&f, "no_such_tool", json!({}));
    assert_eq!(unknown["error_code"], "UNKNOWN_TOOL", "{unknown}");
    let denied = profiled(&f, "file_delete", json!({"path": "a.txt"}));
    assert_eq!(denied["ok"], false, "{denied}");
    let lines = lines(&log);
    let got: Vec<&Value> = lines.iter().map(|l| &l["outcome"]).collect();
    assert_eq!(got, vec![&unknown["error_code"], &denied["error_code"]]);
}

#[test]
fn a_denied_tool_on_the_native_profile_is_audited_too() {
    let (f, log, _dir) = audited(json!({"policy": {"deny_tools": ["delete_file"]}}));
    f.write("a.txt", "a");
    assert_err(
        &f.call("delete_file", json!({"path": "a.txt"})),
        "policy_denied",
    );
    let lines = lines(&log);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["tool"], "delete_file");
    assert_eq!(lines[0]["outcome"], "policy_denied");
    assert!(f.exists("a.txt"));
}
