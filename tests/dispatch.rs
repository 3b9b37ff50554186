//! `wsfs_dispatch`: a tool call as a model API gives it (docs/dispatch.md), run exactly as
//! `wsfs_call_with_options` runs the tool it names: every form, the policy, the audit log,
//! the options, a profile's names, Wasm tools, and malformed calls that run nothing.

use crate::common::*;
use serde_json::{json, Value};
use std::fs;

fn dispatch(ws: u64, call: &str, options: Option<&str>) -> Value {
    let c = cs(call);
    let o = options.map(cs);
    take_json(unsafe {
        ffi::wsfs_dispatch(
            ws,
            c.as_ptr(),
            o.as_ref().map_or(std::ptr::null(), |o| o.as_ptr()),
        )
    })
}

/// The envelope without what differs from call to call (the metrics' duration).
fn steady(mut v: Value) -> Value {
    if let Some(m) = v.get_mut("metrics").and_then(Value::as_object_mut) {
        m.remove("duration_us");
    }
    v
}

#[test]
fn every_form_runs_the_named_tool_as_wsfs_call_does() {
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\n");
    let direct = steady(call_opts(f.ws, "read_file", r#"{"path":"a.txt"}"#, None));
    assert_eq!(assert_ok(&direct)["content"], "one\ntwo\n");
    for call in [
        r#"{"tool_call":{"name":"read_file","arguments":{"path":"a.txt"}}}"#,
        r#"{"name":"read_file","arguments":{"path":"a.txt"}}"#,
        r#"{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}"#,
        r#"{"tool_call":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}"#,
    ] {
        assert_eq!(steady(dispatch(f.ws, call, None)), direct, "{call}");
    }
    // The name-only call: the tool gets {} (list_dir's path defaults to ".").
    for call in [
        r#"{"tool_call":{"name":"list_dir"}}"#,
        r#"{"name":"list_dir"}"#,
    ] {
        let v = dispatch(f.ws, call, None);
        assert_eq!(entry_names(&v), ["a.txt"], "{call}");
    }
    // A changing tool changes the workspace.
    let v = dispatch(
        f.ws,
        r#"{"name":"write_file","arguments":{"path":"b.txt","content":"new"}}"#,
        None,
    );
    assert_ok(&v);
    assert_eq!(f.read_string("b.txt"), "new");
}

#[test]
fn a_malformed_call_is_invalid_arguments_and_runs_nothing() {
    let f = Fixture::new();
    let cases = [
        ("", "got nothing"),
        (
            r#"["write_file",{"path":"x","content":"x"}]"#,
            "got an array",
        ),
        (
            r#"{"arguments":{"path":"x","content":"x"}}"#,
            "name is missing",
        ),
        (
            r#"{"name":["write_file"],"arguments":{"path":"x","content":"x"}}"#,
            "name must be the tool's name as a string",
        ),
        (
            r#"{"name":"write_file","arguments":["x","x"]}"#,
            "arguments must be an object",
        ),
        (
            r#"{"name":"write_file","arguments":{"path":"x","content":"x"},"id":"call_1"}"#,
            "unknown field `id`",
        ),
        (
            r#"{"tool_call":{"name":"write_file","arguments":{"path":"x","content":"x"}},"name":"write_file"}"#,
            "both forms at once",
        ),
    ];
    for (call, want) in cases {
        let message = assert_err(&dispatch(f.ws, call, None), "invalid_arguments");
        assert!(message.contains(want), "{call}: {message}");
        assert!(message.contains("\"tool_call\""), "{message}");
    }
    assert!(!f.exists("x"));
    // A NULL call names the parameter; an unknown tool is unknown_tool, as for wsfs_call.
    let v = take_json(unsafe { ffi::wsfs_dispatch(f.ws, std::ptr::null(), std::ptr::null()) });
    assert!(assert_err(&v, "invalid_arguments").contains("call_json is NULL"));
    let v = dispatch(f.ws, r#"{"name":"rm","arguments":{}}"#, None);
    assert!(assert_err(&v, "unknown_tool").contains("read_file"));
    // A closed handle is invalid_workspace, whatever the call.
    assert_err(
        &dispatch(u64::MAX, r#"{"name":"list_dir"}"#, None),
        "invalid_workspace",
    );
}

#[test]
fn the_policy_audit_and_options_apply_as_to_wsfs_call() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let f =
        Fixture::with_config(json!({"policy": {"audit_log": log, "deny_tools": ["delete_file"]}}));
    f.write("a.txt", "a");
    let v = dispatch(
        f.ws,
        r#"{"name":"delete_file","arguments":{"path":"a.txt"}}"#,
        None,
    );
    assert_err(&v, "policy_denied");
    assert!(f.exists("a.txt"));
    let v = dispatch(
        f.ws,
        r#"{"name":"read_file","arguments":{"path":"a.txt"}}"#,
        Some(r#"{"output":"data"}"#),
    );
    assert_eq!(v["data"]["content"], "a");
    assert!(v.get("text").is_none(), "{v}");
    // A cancelled token stops the call before it runs.
    let token = ffi::wsfs_cancel_token_new();
    ffi::wsfs_cancel_token_cancel(token);
    let options = format!(r#"{{"cancel_token":{token}}}"#);
    let v = dispatch(
        f.ws,
        r#"{"name":"write_file","arguments":{"path":"c.txt","content":"c"}}"#,
        Some(&options),
    );
    assert_err(&v, "cancelled");
    ffi::wsfs_cancel_token_free(token);
    assert!(!f.exists("c.txt"));
    assert_err(
        &dispatch(f.ws, r#"{"name":"list_dir"}"#, Some(r#"{"timeout":1}"#)),
        "invalid_arguments",
    );
    let lines: Vec<Value> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let got: Vec<(&Value, &Value)> = lines.iter().map(|l| (&l["tool"], &l["outcome"])).collect();
    assert_eq!(
        got,
        [
            (&json!("delete_file"), &json!("policy_denied")),
            (&json!("read_file"), &json!("ok")),
            (&json!("write_file"), &json!("cancelled")),
        ]
    );
}

#[test]
fn a_profile_workspace_dispatches_its_own_names_and_envelope() {
    let f = Fixture::with_config(json!({"profile": "capability-plan"}));
    f.write("a.txt", "hello\n");
    let v = dispatch(
        f.ws,
        r#"{"tool_call":{"name":"file_read","arguments":"{\"path\":\"a.txt\"}"}}"#,
        None,
    );
    let (t, a) = (cs("file_read"), cs(r#"{"path":"a.txt"}"#));
    let direct = take_json(unsafe { ffi::wsfs_call(f.ws, t.as_ptr(), a.as_ptr()) });
    assert_eq!(v, direct);
    assert_eq!(v["ok"], json!(true), "{v}");
    assert_eq!(v["error_code"], Value::Null, "the profile's envelope: {v}");
    assert_eq!(v["data"]["content"], "hello\n");
    // An unknown name is refused in the profile's spelling, as wsfs_call refuses it.
    let v = dispatch(f.ws, r#"{"name":"no_such_tool"}"#, None);
    assert_eq!(v["ok"], json!(false), "{v}");
    assert_eq!(v["error_code"], "UNKNOWN_TOOL", "{v}");
    // A malformed call never reaches the profile: the native failure envelope.
    let v = dispatch(f.ws, r#"{"tool_call":{"arguments":{}}}"#, None);
    assert!(assert_err(&v, "invalid_arguments").contains("tool_call.name is missing"));
}

#[cfg(feature = "wasm")]
#[test]
fn a_wasm_tool_is_dispatched_like_a_builtin() {
    let echo = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/echo");
    let f = Fixture::with_config(json!({"wasm_tools": [echo]}));
    for call in [
        r#"{"tool_call":{"name":"echo","arguments":{"message":"hi"}}}"#,
        r#"{"name":"echo","arguments":"{\"message\":\"hi\"}"}"#,
    ] {
        let v = dispatch(f.ws, call, None);
        assert_eq!(
            assert_ok(&v),
            &json!({"received": {"message": "hi"}}),
            "{call}"
        );
    }
    // Its schema still decides its arguments: the name-only call lacks `message`.
    let v = dispatch(f.ws, r#"{"tool_call":{"name":"echo"}}"#, None);
    assert!(assert_err(&v, "invalid_arguments").contains("message"));
}
