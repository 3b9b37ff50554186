//! `filesystem-tool` (001) against the real native tools.

use super::Ws;
use serde_json::{json, Value};

const P: &str = "filesystem-tool";

fn fs(ws: &Ws, args: Value) -> Value {
    ws.call(P, "filesystem", args)
}

#[test]
fn read_write_list() {
    let ws = Ws::open();
    let r = fs(
        &ws,
        json!({"operation": "write", "path": "deep/dir/a.txt", "content": "héllo"}),
    );
    assert_eq!(
        r,
        json!({"ok": true, "result": "Wrote 6 bytes to deep/dir/a.txt", "warnings": []})
    );
    let r = fs(
        &ws,
        json!({"operation": "write", "path": "deep/dir/a.txt", "content": "bye"}),
    );
    assert_eq!(
        r,
        json!({"ok": true, "result": "File exists, overwriting. Wrote 3 bytes to deep/dir/a.txt",
            "warnings": ["File exists, overwriting"]})
    );
    let r = fs(&ws, json!({"operation": "read", "path": "deep/dir/a.txt"}));
    assert_eq!(r, json!({"ok": true, "result": "bye", "warnings": []}));
    ws.write("deep/b.txt", "");
    std::os::unix::fs::symlink("b.txt", ws.path("deep/l")).expect("symlink");
    let r = fs(&ws, json!({"operation": "list", "path": "deep"}));
    let listing: Value =
        serde_json::from_str(r["result"].as_str().expect("a string")).expect("JSON");
    assert_eq!(
        listing,
        json!([{"name": "b.txt", "type": "file"}, {"name": "dir", "type": "dir"},
            {"name": "l", "type": "other"}])
    );
    let r = fs(&ws, json!({"operation": "list", "path": "deep/dir/a.txt"}));
    assert_eq!(
        r,
        json!({"ok": false, "error": "execution_failed", "message": "Path is not a directory"})
    );
}

#[test]
fn the_storys_errors() {
    let ws = Ws::open();
    ws.write("a.txt", "x");
    let r = fs(&ws, json!({"operation": "read", "path": "nope.txt"}));
    assert_eq!(r["error"], "not_found");
    assert_eq!(r["message"], "File not found: nope.txt");
    for path in ["../../../etc/passwd", "/etc/hosts", "/root/x"] {
        let r = fs(&ws, json!({"operation": "read", "path": path}));
        assert_eq!(r["error"], "permission_denied", "{path}: {r}");
    }
    let r = fs(&ws, json!({"operation": "read", "path": "."}));
    assert_eq!(r["error"], "execution_failed", "{r}");
    assert!(
        r["message"]
            .as_str()
            .unwrap()
            .contains("filesystem (operation \"list\")"),
        "{r}"
    );
    let r = fs(&ws, json!({"operation": "write", "path": "a.txt"}));
    assert_eq!(r["error"], "invalid_arguments");
    let r = fs(&ws, json!({"operation": "move", "path": "a.txt"}));
    assert_eq!(r["error"], "invalid_arguments");
    let r = fs(&ws, json!({"path": "a.txt"}));
    assert_eq!(r["error"], "invalid_arguments");
}

#[test]
fn a_long_listing_stays_json_and_warns() {
    let ws = Ws::open_with(json!({"limits": {"max_list_entries": 2}}));
    for name in ["a", "b", "c"] {
        ws.write(name, "");
    }
    let r = fs(&ws, json!({"operation": "list", "path": "."}));
    let listing: Value = serde_json::from_str(r["result"].as_str().unwrap()).expect("JSON");
    assert_eq!(listing.as_array().map(Vec::len), Some(2));
    assert_eq!(
        r["warnings"],
        json!(["truncated: showing the first 2 of 3 entries"])
    );
}
