//! `capability-plan` (004) against the real native tools.

use super::Ws;
use serde_json::{json, Value};

const P: &str = "capability-plan";

fn sha256(ws: &Ws, path: &str) -> String {
    let r = ws.call(P, "read_file", json!({"path": path}));
    r["data"]["sha256"].as_str().expect("sha256").to_string()
}

#[test]
fn every_result_is_a_tool_result() {
    let ws = Ws::open();
    ws.write("a.py", "x\n");
    for (tool, args) in [
        ("read_file", json!({"path": "a.py"})),
        ("read_file", json!({"path": "nope"})),
        ("file_list", json!({"path": "."})),
        ("file_delete", json!({"path": "nope"})),
        ("nope", json!({})),
    ] {
        let r = ws.call(P, tool, args);
        let keys: Vec<&String> = r.as_object().expect("object").keys().collect();
        assert_eq!(
            keys,
            [
                "ok",
                "error_code",
                "message",
                "data",
                "warnings",
                "artifacts"
            ],
            "{tool}: {r}"
        );
        assert_eq!(r["ok"] == true, r["error_code"].is_null(), "{r}");
    }
    let r = ws.call(P, "read_file", json!({"path": "nope"}));
    assert_eq!(r["error_code"], "PATH_NOT_FOUND");
}

#[test]
fn file_patch_both_modes_and_rejections() {
    let ws = Ws::open();
    ws.write("foo.py", "a\nb\nc\n");
    let diff = "--- a/foo.py\n+++ b/foo.py\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n";
    let r = ws.call(P, "file_patch", json!({"diff_text": diff}));
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(
        r["data"],
        json!({"applied": true, "files_changed": ["foo.py"], "rejected_hunks": []})
    );
    assert_eq!(
        r["artifacts"],
        json!([{"type": "file", "path": "foo.py", "description": "changed by file_patch"}])
    );
    assert_eq!(ws.read("foo.py").as_deref(), Some("a\nB\nc\n"));
    let hash = sha256(&ws, "foo.py");
    let r = ws.call(
        P,
        "file_patch",
        json!({"patches": [{"path": "foo.py", "file_hash": hash,
            "hunks": [{"start": 3, "end": 3, "replace_with": "C\n"}]}]}),
    );
    assert_eq!(r["data"]["applied"], true, "{r}");
    assert_eq!(ws.read("foo.py").as_deref(), Some("a\nB\nC\n"));
    let r = ws.call(
        P,
        "file_patch",
        json!({"patches": [{"path": "foo.py", "file_hash": hash,
            "hunks": [{"start": 1, "end": 1, "replace_with": "A\n"}]}]}),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(r["data"]["applied"], false);
    assert_eq!(r["data"]["rejected_hunks"][0]["reason"], "stale");
    assert_eq!(r["artifacts"], json!([]));
    let r = ws.call(P, "file_patch", json!({"diff_text": diff}));
    assert_eq!(r["data"]["applied"], false);
    assert_eq!(
        r["data"]["rejected_hunks"][0]["reason"],
        "context_not_found"
    );
    assert_eq!(ws.read("foo.py").as_deref(), Some("a\nB\nC\n"));
}

#[test]
fn file_list_is_a_tree_two_levels_deep() {
    let ws = Ws::open();
    ws.write("src/main.py", "x");
    ws.write("src/pkg/mod.py", "y");
    ws.write("src/pkg/deeper/z.py", "z");
    ws.write("src/.env", "s");
    let r = ws.call(P, "file_list", json!({"path": "src"}));
    let tree = &r["data"]["tree"];
    assert_eq!(tree["name"], "src");
    assert_eq!(tree["type"], "dir");
    let names: Vec<&str> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        ["main.py", "pkg"],
        "hidden names are left out by default"
    );
    let pkg = &tree["children"][1];
    assert_eq!(pkg["children"][0]["name"], "deeper");
    assert!(
        pkg["children"][0].get("children").is_none(),
        "depth 2: {pkg}"
    );
    let r = ws.call(P, "file_list", json!({"path": "src", "depth": 1}));
    assert_eq!(
        r["data"]["tree"]["children"][0]["name"], "main.py",
        "a tree at depth 1 too"
    );
    let r = ws.call(P, "file_list", json!({}));
    assert_eq!(
        r["error_code"], "INVALID_ARGUMENTS",
        "path is required: {r}"
    );
}

#[test]
fn file_move_and_file_delete() {
    let ws = Ws::open();
    ws.write("a.txt", "a");
    ws.write("d/x", "x");
    let r = ws.call(
        P,
        "file_move",
        json!({"src": "a.txt", "dst": "new/dir/a.txt"}),
    );
    assert_eq!(
        r["data"],
        json!({"moved_from": "a.txt", "moved_to": "new/dir/a.txt", "dirs_created": ["new", "new/dir"]})
    );
    assert_eq!(r["artifacts"][0]["type"], "file");
    let r = ws.call(
        P,
        "file_move",
        json!({"src": "new/dir/a.txt", "dst": "../a.txt"}),
    );
    assert_eq!(r["error_code"], "OUTSIDE_WORKSPACE");
    let r = ws.call(P, "file_delete", json!({"path": "d"}));
    assert_eq!(r["ok"], false);
    assert_eq!(r["error_code"], "RECURSIVE_REQUIRED");
    assert!(ws.path("d/x").exists());
    let r = ws.call(P, "file_delete", json!({"path": "d", "recursive": true}));
    assert_eq!(
        r["data"],
        json!({"deleted": "d", "was_directory": true, "complete": true, "entries_removed": 2})
    );
    let r: Value = ws.call(P, "file_delete", json!({"path": "new/dir/a.txt"}));
    assert_eq!(r["data"]["was_directory"], false);
}

/// The plan's own guard example calls `file_read`: it reads like `read_file`, and the
/// example's traversal (`/workspace/../../etc/passwd`) is refused in the ToolResult envelope.
#[test]
fn file_read_is_read_file_under_the_plans_name() {
    let ws = Ws::open();
    ws.write("notes.md", "one\ntwo\nthree\n");
    let whole = ws.call(P, "file_read", json!({"path": "notes.md"}));
    assert_eq!(whole["ok"], true, "{whole}");
    assert_eq!(whole["data"]["content"], "one\ntwo\nthree\n", "{whole}");
    assert_eq!(
        whole["data"],
        ws.call(P, "read_file", json!({"path": "notes.md"}))["data"]
    );
    let range = ws.call(
        P,
        "file_read",
        json!({"path": "notes.md", "start_line": 2, "max_lines": 1}),
    );
    assert_eq!(range["data"]["content"], "two\n", "{range}");
    let escape = ws.call(
        P,
        "file_read",
        json!({"path": "/workspace/../../etc/passwd"}),
    );
    assert_eq!(escape["ok"], false, "{escape}");
    assert!(
        escape["error_code"]
            .as_str()
            .is_some_and(|c| c.chars().all(|c| c.is_ascii_uppercase() || c == '_')),
        "{escape}"
    );
    let unknown = ws.call(P, "file_read", json!({"path": "notes.md", "offset": 3}));
    assert_eq!(unknown["error_code"], "INVALID_ARGUMENTS", "{unknown}");
}
