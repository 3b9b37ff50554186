//! `restrict_to_workspace: false` (findings 8 and 9): system locations are refused whatever
//! the root, a root inside a protected location keeps only its own contents, and the open
//! warning says what is and is not protected. These tests only read and list system paths.
#![allow(unused_unsafe)]

mod common;

use common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

fn unrestricted(root: &Path) -> (u64, Value) {
    let v = open_raw(&json!({"root": root, "restrict_to_workspace": false}).to_string());
    let ws = assert_ok(&v)["workspace"].as_u64().unwrap();
    (ws, v)
}

#[track_caller]
fn denied(ws: u64, tool: &str, path: &str) {
    let v = call(ws, tool, json!({ "path": path }));
    let message = assert_err(&v, "permission_denied");
    assert!(
        message.contains("protected system location"),
        "{tool} {path}: {message}"
    );
}

/// Root `/` used to unlock everything, `/etc/hostname` and `/proc/self/status` included.
#[test]
fn a_root_of_slash_unlocks_no_system_location() {
    let (ws, _) = unrestricted(Path::new("/"));
    for path in [
        "/etc/hostname",
        "etc/hostname",
        "/proc/self/status",
        "/sys/kernel",
        "/usr/bin",
        "/var/log",
        "/var",
        "/run",
        "/srv",
        "/root",
        "/var/tmpx",
    ] {
        let tool = if path.ends_with("status") || path.ends_with("hostname") {
            "read_file"
        } else {
            "list_dir"
        };
        denied(ws, tool, path);
    }
    assert_ok(&close_ws(ws));
}

/// Root `/etc` used to allow `/etc` itself.
#[test]
fn a_protected_root_unlocks_nothing_and_says_so() {
    let (ws, v) = unrestricted(Path::new("/etc"));
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("every call on it is refused"),
        "{warnings}"
    );
    denied(ws, "list_dir", ".");
    denied(ws, "read_file", "hostname");
    denied(ws, "read_file", "/etc/hostname");
    assert_ok(&close_ws(ws));
}

#[test]
fn the_open_warning_says_what_is_and_is_not_protected() {
    let f = Fixture::new();
    let (ws, v) = unrestricted(&f.root);
    let warnings = v["warnings"].to_string();
    for part in [
        "/etc",
        "/var (except /var/tmp)",
        "/run",
        "/srv",
        "home directory",
    ] {
        assert!(warnings.contains(part), "no {part:?} in {warnings}");
    }
    assert!(!warnings.contains(f.root.to_str().unwrap()), "{warnings}");
    assert_ok(&close_ws(ws));
    // Restricted mode has nothing to warn about.
    let v = open_raw(&json!({ "root": f.root }).to_string());
    assert_eq!(v["warnings"], json!([]));
    assert_ok(&close_ws(v["data"]["workspace"].as_u64().unwrap()));
}

#[test]
fn var_tmp_and_other_places_stay_open() {
    let f = Fixture::new();
    let (ws, _) = unrestricted(&f.root);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = scratch.path().join("x.txt");
    let file = file.to_str().unwrap();
    assert_ok(&call(
        ws,
        "write_file",
        json!({"path": file, "content": "scratch"}),
    ));
    assert_eq!(
        assert_ok(&call(ws, "read_file", json!({ "path": file })))["content"],
        json!("scratch")
    );
    fs::write(f.base.join("sibling.txt"), "next door").unwrap();
    assert_ok(&call(ws, "read_file", json!({"path": "../sibling.txt"})));
    denied(ws, "list_dir", "/var/log");
    assert_ok(&close_ws(ws));
}

/// CI runs as root with workspaces under `/root`: a root strictly inside a protected location
/// keeps its own contents, and nothing else of that location.
#[test]
fn a_root_inside_a_protected_location_keeps_its_own_contents() {
    let home = Path::new("/root");
    let tmp = match tempfile::tempdir_in(home) {
        Ok(tmp) => tmp,
        Err(e) => {
            eprintln!("SKIPPED: cannot create a directory under /root ({e})");
            return;
        }
    };
    let root = tmp.path().join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(tmp.path().join("outside.txt"), "private").unwrap();
    let (ws, _) = unrestricted(&root);
    assert_ok(&call(
        ws,
        "write_file",
        json!({"path": "a/b.txt", "content": "ok"}),
    ));
    assert_ok(&call(ws, "read_file", json!({"path": "a/b.txt"})));
    assert_ok(&call(ws, "list_dir", json!({"path": "."})));
    let inside = root.join("a/b.txt");
    assert_ok(&call(ws, "read_file", json!({ "path": inside })));
    denied(ws, "read_file", "../outside.txt");
    denied(
        ws,
        "read_file",
        tmp.path().join("outside.txt").to_str().unwrap(),
    );
    assert_ok(&close_ws(ws));
}

/// Finding 9: the message used to read "/etc/passwd// ends with '/'".
#[test]
fn a_trailing_slash_is_shown_once() {
    let f = Fixture::new();
    let (ws, _) = unrestricted(&f.root);
    for (path, shown) in [
        ("/etc/passwd/", "/etc/passwd/ "),
        ("a.txt/", "a.txt/ "),
        ("/etc//passwd//", "/etc/passwd/ "),
    ] {
        let message = assert_err(
            &call(ws, "read_file", json!({ "path": path })),
            "not_a_file",
        );
        assert!(message.starts_with(shown), "{path}: {message}");
        assert!(!message.contains("//"), "{path}: {message}");
    }
    assert_ok(&close_ws(ws));
    let message = assert_err(
        &f.call("read_file", json!({"path": "a.txt/"})),
        "not_a_file",
    );
    assert!(message.starts_with("a.txt/ ends with '/'"), "{message}");
}
