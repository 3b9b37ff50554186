//! Finding 4: wsfs's temp files (`.wsfs-<16 hex>.tmp`) are never shown to the agent, never
//! read or written by a tool, and crash leftovers are removed when a workspace is opened,
//! unless a live writer (which holds the file's lock) still owns them.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::fs;
use std::path::Path;

const LEFTOVER: &str = ".wsfs-00000000deadbeef.tmp";

fn on_disk(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    names
}

#[test]
fn leftovers_are_never_listed_nor_counted() {
    let f = Fixture::new();
    // Planted after the workspace was opened, as a crash of another process would leave them.
    f.write(LEFTOVER, "half of a file");
    f.write(&format!("sub/{LEFTOVER}"), "half of a file");
    f.write("sub/real.txt", "real");
    f.write(".wsfs-notes.tmp", "the user's own file, not wsfs's pattern");
    let v = f.call("list_dir", json!({"path": "."}));
    assert_eq!(entry_names(&v), [".wsfs-notes.tmp", "sub"]);
    assert_eq!(v["data"]["total"], json!(2));
    assert!(!v["text"].as_str().unwrap().contains("deadbeef"), "{v}");
    let v = f.call("list_dir", json!({"path": "sub"}));
    assert_eq!(entry_names(&v), ["real.txt"]);
    assert_eq!(v["data"]["total"], json!(1));
}

#[test]
fn no_tool_touches_a_temp_name() {
    let f = Fixture::new();
    f.write(LEFTOVER, "half of a file");
    f.write(&format!("sub/{LEFTOVER}"), "half");
    std::os::unix::fs::symlink(LEFTOVER, f.p("innocent-link")).unwrap();
    let before = snapshot(&f.root);
    let fresh = ".wsfs-0123456789abcdef.tmp";
    for path in [
        LEFTOVER,
        &format!("sub/{LEFTOVER}"),
        "innocent-link",
        fresh,
        &format!("new/{fresh}"),
    ] {
        for tool in TOOLS {
            let v = f.call(tool, args_for(tool, path, "half", "whole"));
            let message = assert_err(&v, "invalid_path");
            assert!(message.contains("reserved"), "{tool} {path}: {message}");
            assert!(
                !v.to_string().contains("half of a file"),
                "{tool} {path}: {v}"
            );
        }
    }
    assert_eq!(
        snapshot(&f.root),
        before,
        "a refused call changed the workspace"
    );
}

#[test]
fn opening_removes_leftovers_but_not_live_temp_files() {
    let f = Fixture::new();
    f.write(LEFTOVER, "crashed");
    f.write(&format!("a/b/{LEFTOVER}"), "crashed");
    f.write(".wsfs-notes.tmp", "mine");
    fs::create_dir(f.p(".wsfs-00000000000000d1.tmp")).unwrap();
    std::os::unix::fs::symlink("/etc/hostname", f.p(".wsfs-00000000000000f1.tmp")).unwrap();
    // A writer in progress (here: this process, through another open file description)
    // holds the lock on its temp file for as long as the name exists.
    let live = f.p(".wsfs-00000000000011ee.tmp");
    fs::write(&live, "being written").unwrap();
    let writer = fs::File::open(&live).unwrap();
    writer.lock().unwrap();
    let again = open_ws(&f.root, json!({}));
    assert_eq!(
        on_disk(&f.root),
        [
            ".wsfs-00000000000000d1.tmp",
            ".wsfs-00000000000000f1.tmp",
            ".wsfs-00000000000011ee.tmp",
            ".wsfs-notes.tmp",
            "a"
        ],
        "only unlocked regular temp files are removed"
    );
    assert!(on_disk(&f.p("a/b")).is_empty());
    assert_eq!(fs::read(&live).unwrap(), b"being written");
    // Nothing with the temp pattern is visible, whatever its type.
    let v = call(again, "list_dir", json!({}));
    assert_eq!(entry_names(&v), [".wsfs-notes.tmp", "a"]);
    assert_ok(&close_ws(again));
    // Once the writer is gone, the next open removes its file too.
    drop(writer);
    let third = open_ws(&f.root, json!({}));
    assert!(!live.exists(), "an abandoned temp file survived the sweep");
    assert_ok(&close_ws(third));
}

#[test]
fn writes_leave_no_temp_names_even_when_they_fail() {
    let f = Fixture::with_config(limits(json!({"max_write_bytes": 64})));
    f.write("keep.txt", "old");
    assert_ok(&f.call("write_file", json!({"path": "keep.txt", "content": "new"})));
    assert_ok(&f.call("write_file", json!({"path": "fresh.txt", "content": "new"})));
    assert_ok(&f.call(
        "edit_file",
        json!({"path": "keep.txt", "old_text": "new", "new_text": "edited"}),
    ));
    assert_err(
        &call_opts(
            f.ws,
            "write_file",
            &json!({"path": "keep.txt", "content": "late"}).to_string(),
            Some(r#"{"timeout_ms": 0}"#),
        ),
        "timeout",
    );
    assert_eq!(on_disk(&f.root), ["fresh.txt", "keep.txt"]);
    assert_eq!(f.read("keep.txt"), b"edited");
}
