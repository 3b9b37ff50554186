//! Wasm tools through the C ABI, like the built-in tools: loaded from the config's
//! `wasm_tools`, listed by `wsfs_workspace_tool_specs` with their manifest's schema, called by
//! name through `wsfs_call` with the same envelope, read-only check, audit log, cancellation and
//! argument errors. The example tools under tools/ are the fixtures (module.wat text).
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};

fn examples() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools")
}

fn example(name: &str) -> String {
    examples().join(name).to_string_lossy().into_owned()
}

fn specs(ws: u64) -> Vec<Value> {
    let v = take_envelope(ffi::wsfs_workspace_tool_specs(ws));
    assert_ok(&v)["tools"].as_array().unwrap().clone()
}

#[test]
fn examples_load_and_are_listed_after_the_builtins_with_their_schema() {
    // Every built-in tool is offered once the exec switches are on (see
    // `the_one_spec_list_is_the_workspace_s_offer` for what a policy leaves out).
    let f = Fixture::with_config(json!({"wasm_tools": [examples()],
        "policy": {"exec_enabled": true, "shell_enabled": true}}));
    let listed = specs(f.ws);
    let builtin = take_json(ffi::wsfs_tool_specs());
    let builtin = builtin.as_array().unwrap();
    assert_eq!(&listed[..builtin.len()], &builtin[..]);
    let wasm: Vec<&str> = listed[builtin.len()..]
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    assert_eq!(wasm, ["ask_model", "echo", "inventory"]);
    let manifest: Value =
        serde_json::from_str(&fs::read_to_string(examples().join("echo/manifest.json")).unwrap())
            .unwrap();
    let echo = &listed[builtin.len() + 1];
    assert_eq!(echo["parameters"], manifest["input_schema"]);
    assert_eq!(echo["description"], manifest["description"]);
    assert_eq!(echo["annotations"]["readOnlyHint"], true);
    let ask = &listed[builtin.len()];
    assert_eq!(ask["annotations"]["openWorldHint"], true);
    let inventory = &listed[builtin.len() + 2];
    assert_eq!(inventory["annotations"]["readOnlyHint"], false);
    assert_eq!(inventory["annotations"]["destructiveHint"], true);
    // The open's data names them; a workspace without wasm_tools lists the built-ins only
    // (with the exec switches off by default, without the developer tools).
    let plain = Fixture::new();
    assert_eq!(names(&specs(plain.ws)), file_tools());
    let bad = take_envelope(ffi::wsfs_workspace_tool_specs(u64::MAX));
    assert_err(&bad, "invalid_workspace");
}

#[test]
fn a_wasm_tool_is_called_by_name_with_the_same_envelope() {
    let f = Fixture::with_config(json!({"wasm_tools": [example("echo")]}));
    let v = call_named(f.ws, "echo", r#"{"message":"hi"}"#);
    let data = assert_ok(&v);
    assert_eq!(data, &json!({"received": {"message": "hi"}}));
    assert_eq!(v["text"], r#"{"received":{"message":"hi"}}"#);
    // A tool call form reaches it too.
    let v = call_named(
        f.ws,
        "echo",
        r#"{"tool_call":{"name":"echo","arguments":{"message":"x"}}}"#,
    );
    assert_eq!(assert_ok(&v)["received"]["message"], "x");
    // Output modes are the envelope's, as for a built-in tool.
    let v = call_opts(
        f.ws,
        "echo",
        r#"{"message":"m"}"#,
        Some(r#"{"output":"data"}"#),
    );
    assert_eq!(v["data"]["received"]["message"], "m");
    assert!(v.get("text").is_none(), "{v}");
    // Arguments are checked against the manifest's schema before the tool runs.
    let v = call_named(f.ws, "echo", r#"{"message":1}"#);
    let message = assert_err(&v, "invalid_arguments");
    assert!(message.contains("\"message\": string"), "{message}");
    assert_err(&call_named(f.ws, "echo", "{"), "invalid_arguments");
    assert_err(&call_named(f.ws, "echo", "{}"), "invalid_arguments");
    // Unknown tools name the Wasm ones among the tools there are.
    let message = assert_err(&call_named(f.ws, "ech", "{}"), "unknown_tool");
    assert!(
        message.contains("read_file") && message.contains("echo"),
        "{message}"
    );
    // Another workspace did not load it.
    let other = Fixture::new();
    assert_err(
        &call_named(other.ws, "echo", r#"{"message":"hi"}"#),
        "unknown_tool",
    );
    // The content buffer is for write_file and append_file only.
    let v = call_content(f.ws, "echo", r#"{"message":"hi"}"#, b"x");
    assert_err(&v, "invalid_arguments");
}

#[test]
fn the_workspace_tool_reads_and_writes_through_the_workspace() {
    let f = Fixture::with_config(json!({"wasm_tools": [example("inventory")]}));
    f.write("a.txt", "a");
    fs::create_dir(f.p("dir")).unwrap();
    let v = call_named(f.ws, "inventory", "{}");
    let data = assert_ok(&v);
    assert_eq!(data["written"], "INVENTORY.txt");
    let written = String::from_utf8(f.read("INVENTORY.txt")).unwrap();
    let mut names: Vec<&str> = written.lines().collect();
    names.sort();
    assert!(
        names.contains(&"a.txt") && names.contains(&"dir"),
        "{written}"
    );
    assert_eq!(data["entries"], json!(names.len()));
}

#[test]
fn the_workspace_policy_applies_to_wasm_tools() {
    // Read-only workspace: refused before it runs, like every changing built-in tool.
    let ro = Fixture::with_config(json!({
        "wasm_tools": [example("inventory"), example("echo")],
        "policy": {"writes_enabled": false}
    }));
    let message = assert_err(&call_named(ro.ws, "inventory", "{}"), "writes_disabled");
    assert!(message.contains("inventory"), "{message}");
    assert!(!ro.p("INVENTORY.txt").exists());
    // A tool without the filesystem capability still runs.
    assert_ok(&call_named(ro.ws, "echo", r#"{"message":"hi"}"#));
    // A deny_write rule refuses its write: the file is not created.
    let denied = Fixture::with_config(json!({
        "wasm_tools": [example("inventory")],
        "policy": {"deny_write": ["INVENTORY.txt"]}
    }));
    let v = call_named(denied.ws, "inventory", "{}");
    assert!(v["ok"] == false, "{v}");
    assert!(!denied.p("INVENTORY.txt").exists());
    // The host's ceiling: a workspace whose wasm_policy allows no filesystem refuses to load it.
    let tmp = tempfile::tempdir().unwrap();
    let cfg = json!({
        "root": tmp.path(),
        "wasm_tools": [example("inventory")],
        "wasm_policy": {"filesystem": "read"}
    });
    let message = assert_err(&open_raw(&cfg.to_string()), "capability_denied");
    assert!(message.contains("inventory"), "{message}");
}

#[test]
fn the_audit_log_records_wasm_calls_and_their_changes() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let f = Fixture::with_config(json!({
        "wasm_tools": [example("inventory"), example("echo")],
        "policy": {"audit_log": log}
    }));
    assert_ok(&call_named(f.ws, "inventory", "{}"));
    assert_err(
        &call_named(f.ws, "echo", r#"{"message":2}"#),
        "invalid_arguments",
    );
    let lines: Vec<Value> = fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert_eq!(lines[0]["tool"], "inventory");
    assert_eq!(lines[0]["outcome"], "ok");
    let changes = lines[0]["changes"].as_array().unwrap();
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert_eq!(changes[0]["path"], "INVENTORY.txt");
    assert!(changes[0]["sha256_after"].is_string());
    assert_eq!(lines[1]["tool"], "echo");
    assert_eq!(lines[1]["outcome"], "invalid_arguments");
}

#[test]
fn a_tool_that_does_not_load_fails_the_open_with_its_code() {
    let tmp = tempfile::tempdir().unwrap();
    let tools = tmp.path().join("tools");
    let copy = tools.join("echo");
    fs::create_dir_all(&copy).unwrap();
    let manifest = fs::read_to_string(examples().join("echo/manifest.json")).unwrap();
    fs::write(copy.join("manifest.json"), &manifest).unwrap();
    let wat = fs::read_to_string(examples().join("echo/module.wat")).unwrap();
    fs::write(copy.join("module.wat"), wat.replace("received", "recieved")).unwrap();
    let root = tmp.path().join("ws");
    fs::create_dir(&root).unwrap();
    let cfg = json!({"root": root, "wasm_tools": [tools]});
    let message = assert_err(&open_raw(&cfg.to_string()), "module_mismatch");
    assert!(message.contains("echo"), "{message}");
    // A folder that is not there.
    let cfg = json!({"root": root, "wasm_tools": [tmp.path().join("missing")]});
    assert_err(&open_raw(&cfg.to_string()), "manifest_invalid");
    // A name a built-in tool has.
    fs::write(
        copy.join("manifest.json"),
        manifest.replace("\"name\": \"echo\"", "\"name\": \"read_file\""),
    )
    .unwrap();
    fs::write(copy.join("module.wat"), wat).unwrap();
    let cfg = json!({"root": root, "wasm_tools": [tools]});
    let message = assert_err(&open_raw(&cfg.to_string()), "manifest_invalid");
    assert!(message.contains("built-in"), "{message}");
}

#[test]
fn a_cancelled_call_stops_a_wasm_tool() {
    let f = Fixture::with_config(json!({"wasm_tools": [example("echo")]}));
    let token = ffi::wsfs_cancel_token_new();
    ffi::wsfs_cancel_token_cancel(token);
    let v = call_opts(
        f.ws,
        "echo",
        r#"{"message":"hi"}"#,
        Some(&format!(r#"{{"cancel_token":{token}}}"#)),
    );
    assert_err(&v, "cancelled");
    ffi::wsfs_cancel_token_free(token);
}

/// The C gateway the test sets: answers by the request's prompt.
unsafe extern "C" fn gateway(
    userdata: *mut std::ffi::c_void,
    request: *const std::ffi::c_char,
    timeout_ms: u64,
    response: *mut ffi::wsfs_gateway_response,
) -> i32 {
    let calls = unsafe { &*(userdata as *const std::sync::atomic::AtomicUsize) };
    calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let request = unsafe { std::ffi::CStr::from_ptr(request) }
        .to_str()
        .unwrap();
    let prompt = serde_json::from_str::<Value>(request).unwrap()["prompt"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(timeout_ms > 0 && timeout_ms <= 30_000, "{timeout_ms}");
    let (status, text) = match prompt.as_str() {
        "fail" => (ffi::WSFS_GATEWAY_ERROR, "provider said no".to_string()),
        "slow" => (ffi::WSFS_GATEWAY_TIMEOUT, String::new()),
        "bad" => (
            ffi::WSFS_GATEWAY_INVALID_REQUEST,
            "no such model".to_string(),
        ),
        _ => (
            ffi::WSFS_GATEWAY_OK,
            json!({"text": format!("answer to {prompt}")}).to_string(),
        ),
    };
    if !text.is_empty() {
        let text = cs(&text);
        assert_eq!(
            unsafe { ffi::wsfs_gateway_respond(response, text.as_ptr()) },
            0
        );
    }
    status
}

#[test]
fn the_model_gateway_is_the_hosts_c_callback() {
    let f = Fixture::with_config(json!({"wasm_tools": [example("ask_model")]}));
    let ask =
        |prompt: &str| call_named(f.ws, "ask_model", &json!({ "prompt": prompt }).to_string());
    // None set yet: the tool passes the gateway_error on.
    assert_err(&ask("hi"), "gateway_error");
    let calls = Box::new(std::sync::atomic::AtomicUsize::new(0));
    let userdata = &*calls as *const _ as *mut std::ffi::c_void;
    let v = take_envelope(ffi::wsfs_set_model_gateway(f.ws, Some(gateway), userdata));
    assert_eq!(assert_ok(&v)["gateway"], true);
    assert_eq!(assert_ok(&ask("hi")), &json!({"text": "answer to hi"}));
    let message = assert_err(&ask("fail"), "gateway_error");
    assert!(message.contains("provider said no"), "{message}");
    assert_err(&ask("slow"), "timeout");
    let message = assert_err(&ask("bad"), "invalid_arguments");
    assert!(message.contains("no such model"), "{message}");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    // Removed: back to gateway_error, and the callback is not called.
    let v = take_envelope(ffi::wsfs_set_model_gateway(
        f.ws,
        None,
        std::ptr::null_mut(),
    ));
    assert_eq!(assert_ok(&v)["gateway"], false);
    assert_err(&ask("hi"), "gateway_error");
    assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 4);
    // A closed handle; a workspace without Wasm tools gets a warning.
    let v = take_envelope(ffi::wsfs_set_model_gateway(
        u64::MAX,
        Some(gateway),
        userdata,
    ));
    assert_err(&v, "invalid_workspace");
    let plain = Fixture::new();
    let v = take_envelope(ffi::wsfs_set_model_gateway(
        plain.ws,
        Some(gateway),
        userdata,
    ));
    assert_eq!(v["warnings"].as_array().map(Vec::len), Some(1), "{v}");
    assert_eq!(
        unsafe { ffi::wsfs_gateway_respond(std::ptr::null_mut(), std::ptr::null()) },
        -1
    );
    drop(f);
    drop(plain);
    drop(calls);
}

/// The nine developer tools, which `exec_enabled` (`shell`: also `shell_enabled`) turns on.
const DEV_TOOLS: [&str; 9] = [
    "workspace_info",
    "git_status",
    "git_diff",
    "git_commit",
    "run_tests",
    "run_lint",
    "typecheck",
    "safe_shell",
    "shell",
];

fn names(specs: &[Value]) -> Vec<String> {
    specs
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

/// `wsfs_tool_specs`' names without the developer tools.
fn file_tools() -> Vec<String> {
    let all = take_json(ffi::wsfs_tool_specs());
    names(all.as_array().unwrap())
        .into_iter()
        .filter(|n| !DEV_TOOLS.contains(&n.as_str()))
        .collect()
}

/// Issues 18 and 22 merged: `wsfs_workspace_tool_specs` is the one list of what a workspace
/// offers. Under `wsfs`: the built-in tools the policy lets run (exec switches, writes,
/// allow/deny_tools), then the Wasm tools it lets run (a tool list may name them). Under another
/// profile: the profile's tools only, and opening one with `wasm_tools` warns.
#[test]
fn the_one_spec_list_is_the_workspace_s_offer() {
    let wasm = |extra: Value| {
        let mut config = json!({"wasm_tools": [examples()]});
        config
            .as_object_mut()
            .unwrap()
            .extend(extra.as_object().unwrap().clone());
        Fixture::with_config(config)
    };
    let wasm_names = ["ask_model", "echo", "inventory"].map(String::from);
    // Exec switches off: no developer tools; the Wasm tools after the file tools.
    let f = wasm(json!({}));
    assert_eq!(
        names(&specs(f.ws)),
        [file_tools(), wasm_names.to_vec()].concat()
    );
    // exec_enabled without shell_enabled: every developer tool but shell.
    let f = wasm(json!({"policy": {"exec_enabled": true}}));
    let listed = names(&specs(f.ws));
    assert!(listed.iter().any(|n| n == "run_tests") && !listed.iter().any(|n| n == "shell"));
    // Writes disabled: the changing tools, built-in and Wasm, are left out.
    let f = wasm(json!({"policy": {"writes_enabled": false}}));
    let listed = names(&specs(f.ws));
    for gone in ["write_file", "edit_file", "inventory"] {
        assert!(!listed.iter().any(|n| n == gone), "{gone}: {listed:?}");
    }
    assert!(listed.iter().any(|n| n == "echo") && listed.iter().any(|n| n == "read_file"));
    // The tool lists name Wasm tools like built-in ones.
    let f = wasm(json!({"policy": {"deny_tools": ["echo", "read_file"]}}));
    let listed = names(&specs(f.ws));
    assert!(
        !listed.iter().any(|n| n == "echo" || n == "read_file"),
        "{listed:?}"
    );
    let v = call_named(f.ws, "echo", r#"{"message":"hi"}"#);
    assert_err(&v, "policy_denied");
    let f = wasm(json!({"policy": {"allow_tools": ["echo", "list_dir"]}}));
    assert_eq!(names(&specs(f.ws)), ["list_dir", "echo"]);
    let tmp = tempfile::tempdir().unwrap();
    let bad = open_raw(
        &json!({"root": tmp.path(), "wasm_tools": [examples()],
                "policy": {"allow_tools": ["no_such_tool"]}})
        .to_string(),
    );
    let msg = assert_err(&bad, "invalid_arguments");
    assert!(
        msg.contains("no_such_tool") && msg.contains("echo"),
        "{msg}"
    );
    // Another profile: its tools only, and a warning that the Wasm tools are not offered.
    let v = open_raw(
        &json!({"root": tmp.path(), "wasm_tools": [examples()], "profile": "filesystem-tool"})
            .to_string(),
    );
    let data = assert_ok(&v).clone();
    let warned = v["warnings"].to_string();
    assert!(warned.contains("echo") && warned.contains("wsfs"), "{v}");
    let id = data["workspace"].as_u64().unwrap();
    assert_eq!(names(&specs(id)), ["filesystem"]);
    close_ws(id);
}
