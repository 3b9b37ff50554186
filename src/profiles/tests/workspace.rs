//! The profile as a workspace option, at the ABI edge: opening, the calls, the specs.

use super::Ws;
use crate::api;
use serde_json::{json, Value};

fn parse(s: &str) -> Value {
    serde_json::from_str(s).expect("json")
}

fn names(tools: &Value) -> Vec<&str> {
    tools
        .as_array()
        .expect("array")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect()
}

#[test]
fn an_unknown_profile_is_refused_naming_the_known_ones_and_creates_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("ws");
    let env = parse(&api::workspace_open(
        &json!({"root": root, "profile": "agentbase"}).to_string(),
    ));
    assert_eq!(env["ok"], false, "{env}");
    assert_eq!(env["error"]["code"], "invalid_arguments");
    let message = env["error"]["message"].as_str().unwrap();
    for name in [
        "agentbase",
        "wsfs",
        "miniclaw",
        "filesystem-tool",
        "agent-base",
        "capability-plan",
    ] {
        assert!(message.contains(name), "{message}");
    }
    assert!(!root.exists(), "the root was created for a refused config");
    let env = parse(&api::workspace_open(
        &json!({"root": root, "profile": 3}).to_string(),
    ));
    assert_eq!(env["error"]["code"], "invalid_arguments", "{env}");
}

#[test]
fn the_open_result_names_the_profile() {
    let ws = Ws::open();
    for (config, want) in [
        (json!({"root": ws.root}), "wsfs"),
        (
            json!({"root": ws.root, "profile": "agent-base"}),
            "agent-base",
        ),
    ] {
        let env = parse(&api::workspace_open(&config.to_string()));
        assert_eq!(env["data"]["profile"], want, "{env}");
        let id = env["data"]["workspace"].as_u64().unwrap();
        api::workspace_close(id);
    }
}

#[test]
fn a_workspace_serves_its_profile_to_every_call() {
    // Writes on: agent-base's own default is off.
    let ws = Ws::open_with(json!({"policy": {"writes_enabled": true}}));
    ws.write("a.txt", "one\n");
    // The profile's tool and argument names, and its envelope.
    let r = ws.call(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "read", "path": "a.txt"}),
    );
    assert_eq!(r, json!({"ok": true, "result": "one\n", "warnings": []}));
    let r = ws.call("filesystem-tool", "read_file", json!({"path": "a.txt"}));
    assert_eq!(r["ok"], false, "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("the tools are filesystem"),
        "{r}"
    );
    // agent-base refuses a `..` component before resolving anything; natively it is allowed.
    ws.write("sub/b.txt", "b");
    let r = ws.call("agent-base", "read_file", json!({"path": "sub/../a.txt"}));
    assert_eq!(r["error"], "path_traversal_attempt", "{r}");
    let r = ws.call("wsfs", "read_file", json!({"path": "sub/../a.txt"}));
    assert_eq!(r["ok"], true, "{r}");
    // agent-base's write_file defaults to mode create.
    let r = ws.call(
        "agent-base",
        "write_file",
        json!({"path": "a.txt", "content": "x"}),
    );
    assert_eq!(r["error"], "file_exists", "{r}");
    assert_eq!(ws.read("a.txt").as_deref(), Some("one\n"));
}

#[test]
fn a_profile_takes_only_the_full_output_mode() {
    let ws = Ws::open();
    ws.write("a.txt", "x");
    let config = json!({"root": ws.root, "profile": "miniclaw"});
    let id = parse(&api::workspace_open(&config.to_string()))["data"]["workspace"]
        .as_u64()
        .unwrap();
    let r = parse(&api::call(
        id,
        "read_file",
        r#"{"path":"a.txt"}"#,
        Some(r#"{"output":"text"}"#),
        None,
    ));
    assert_eq!(r["error"]["code"], "invalid_arguments", "{r}");
    assert!(r["error"]["message"].as_str().unwrap().contains("miniclaw"));
    let r = parse(&api::call(
        id,
        "read_file",
        r#"{"path":"a.txt"}"#,
        Some(r#"{"output":"full","timeout_ms":5000}"#),
        None,
    ));
    assert_eq!(r["ok"], true, "{r}");
    api::workspace_close(id);
}

#[test]
fn a_deadline_and_a_cancel_token_reach_the_native_call() {
    let ws = Ws::open();
    ws.write("a.txt", "x");
    let env = parse(&api::workspace_open(
        &json!({"root": ws.root, "profile": "agent-base"}).to_string(),
    ));
    let id = env["data"]["workspace"].as_u64().unwrap();
    let token = crate::control::token_new();
    crate::control::token_cancel(token);
    let options = json!({"cancel_token": token}).to_string();
    let r = parse(&api::call(
        id,
        "read_file",
        r#"{"path":"a.txt"}"#,
        Some(&options),
        None,
    ));
    assert_eq!(r["success"], false, "{r}");
    assert_eq!(r["error"], "cancelled", "{r}");
    let r = parse(&api::call(
        id,
        "read_file",
        r#"{"path":"a.txt"}"#,
        Some(r#"{"cancel_token":999999}"#),
        None,
    ));
    assert_eq!(r["success"], false, "{r}");
    crate::control::token_free(token);
    api::workspace_close(id);
}

#[test]
fn tool_specs_are_the_profiles_and_leave_out_what_the_policy_refuses() {
    let ws = Ws::open();
    // The native tools the default policy lets run: the exec switches are off, so the file
    // tools alone (the developer tools, when built, are offered only with exec_enabled).
    let native = ws.specs("wsfs");
    let runs: Vec<Value> = crate::specs::tool_specs()
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| {
            let tool = crate::tools::find(s["name"].as_str().unwrap()).unwrap();
            tool.switch == crate::tools::contract::Switch::None
        })
        .cloned()
        .collect();
    assert_eq!(runs.len(), crate::tools::FILE_TOOLS.len());
    assert_eq!(native, Value::Array(runs));
    assert_eq!(
        names(&ws.specs("miniclaw")),
        [
            "read_file",
            "write_file",
            "append_file",
            "list_dir",
            "edit_file"
        ]
    );
    assert_eq!(names(&ws.specs("filesystem-tool")), ["filesystem"]);
    let ab = ws.specs("agent-base");
    let write = ab
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "write_file")
        .unwrap();
    assert_eq!(
        write["parameters"]["properties"]["mode"]["default"],
        "create"
    );

    let ro = Ws::open_with(json!({"policy": {"writes_enabled": false}}));
    let readers = names(&ro.specs("wsfs"))
        .into_iter()
        .map(String::from)
        .collect::<Vec<_>>();
    assert!(readers.contains(&"read_file".to_string()), "{readers:?}");
    for writer in [
        "write_file",
        "append_file",
        "edit_file",
        "delete_file",
        "apply_patch",
    ] {
        assert!(!readers.contains(&writer.to_string()), "{readers:?}");
    }
    assert_eq!(names(&ro.specs("miniclaw")), ["read_file", "list_dir"]);
    // agent-base's document has each changing tool answer writes_disabled: they stay offered.
    assert_eq!(
        names(&ro.specs("agent-base")),
        [
            "get_path_info",
            "list_directory",
            "read_file",
            "search_text",
            "write_file",
            "apply_text_edit",
            "create_directory"
        ]
    );
    // One tool with a read and a write operation stays while one of them can run.
    assert_eq!(names(&ro.specs("filesystem-tool")), ["filesystem"]);
}

#[test]
fn tool_specs_of_a_closed_handle_is_invalid_workspace() {
    let env = parse(&api::workspace_tool_specs(u64::MAX));
    assert_eq!(env["error"]["code"], "invalid_workspace", "{env}");
}
