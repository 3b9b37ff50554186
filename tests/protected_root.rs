//! Issue 18 gap 3: a restricted workspace whose root is a protected system location or
//! contains one (a root of `/`) refuses them as unrestricted mode does: direct calls are
//! `permission_denied`, listings and walks skip them and count them in `protected`. These
//! tests only read and list system paths.

use crate::common::*;
use serde_json::json;
use std::fs;

/// The names directly under `/` that are protected locations.
const PROTECTED_NAMES: [&str; 16] = [
    "etc", "root", "proc", "sys", "dev", "boot", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
    "usr", "var", "run", "srv",
];

#[test]
fn a_restricted_root_of_slash_refuses_protected_locations() {
    let ws = open_ws(std::path::Path::new("/"), json!({}));
    for path in [
        "etc/hosts",
        "/etc/hosts",
        "tmp/../etc/hosts",
        "usr/bin",
        "proc/self/status",
    ] {
        let v = call(ws, "read_file", json!({ "path": path }));
        let message = assert_err(&v, "permission_denied");
        assert!(
            message.contains("protected system location"),
            "{path}: {message}"
        );
        assert!(!v.to_string().contains("localhost"), "{path}: {v}");
        let v = call(ws, "get_path_info", json!({ "path": path }));
        assert_err(&v, "permission_denied");
    }
    for path in ["etc", "/usr", "var/tmp/.."] {
        assert_err(
            &call(ws, "list_dir", json!({ "path": path })),
            "permission_denied",
        );
    }
    // Denied whether or not it exists, so nothing is learnt about what is there.
    assert_err(
        &call(ws, "read_file", json!({"path": "etc/no-such-dir-wsfs/x"})),
        "permission_denied",
    );
    // A symlink in the workspace with an absolute target into a protected location.
    let tmp = tempfile::tempdir_in("/tmp").unwrap();
    let link = tmp.path().join("hosts");
    std::os::unix::fs::symlink("/etc/hosts", &link).unwrap();
    fs::write(tmp.path().join("mine.txt"), "MINE\n").unwrap();
    let rel = tmp
        .path()
        .strip_prefix("/")
        .unwrap()
        .to_str()
        .unwrap()
        .to_owned();
    assert_err(
        &call(ws, "read_file", json!({ "path": format!("{rel}/hosts") })),
        "permission_denied",
    );
    // Everything else stays readable.
    let v = call(
        ws,
        "read_file",
        json!({ "path": format!("{rel}/mine.txt") }),
    );
    assert_eq!(assert_ok(&v)["content"], json!("MINE\n"));
    if fs::metadata("/var/tmp").is_ok_and(|m| m.is_dir()) {
        assert_ok(&call(
            ws,
            "list_dir",
            json!({"path": "var/tmp", "max_entries": 1}),
        ));
    }

    let present = fs::read_dir("/")
        .unwrap()
        .filter(|e| {
            PROTECTED_NAMES.contains(&e.as_ref().unwrap().file_name().to_str().unwrap_or(""))
        })
        .count() as u64;
    assert!(present > 0, "no protected location under / to test with");
    let v = call(ws, "list_dir", json!({"path": "."}));
    let data = assert_ok(&v);
    for e in data["entries"].as_array().unwrap() {
        let name = e["name"].as_str().unwrap();
        assert!(!PROTECTED_NAMES.contains(&name), "{name} listed: {v}");
    }
    assert_eq!(data["protected"], json!(present), "{v}");
    let v = call(
        ws,
        "list_dir",
        json!({"path": ".", "depth": 2, "max_entries": 50}),
    );
    let data = assert_ok(&v);
    for child in data["tree"]["children"].as_array().unwrap() {
        let name = child["name"].as_str().unwrap();
        assert!(!PROTECTED_NAMES.contains(&name), "{name} in the tree: {v}");
    }
    assert!(data["protected"].as_u64().unwrap_or(0) >= present, "{v}");
    assert_ok(&close_ws(ws));
}

/// A restricted root below no protected location pays nothing and is told nothing: its
/// listings have no `protected` field, and a root inside one (`/var/tmp/...`, `/root/...` in
/// CI) keeps its own contents.
#[test]
fn ordinary_restricted_roots_are_unchanged() {
    let f = Fixture::new();
    f.write("etc/hosts", "mine\n");
    let v = f.call("read_file", json!({"path": "etc/hosts"}));
    assert_eq!(assert_ok(&v)["content"], json!("mine\n"));
    let v = f.call("list_dir", json!({}));
    assert!(assert_ok(&v).get("protected").is_none(), "{v}");
    if let Ok(tmp) = tempfile::tempdir_in("/var/tmp") {
        fs::write(tmp.path().join("a.txt"), "A").unwrap();
        let ws = open_ws(tmp.path(), json!({}));
        assert_eq!(
            assert_ok(&call(ws, "read_file", json!({"path": "a.txt"})))["content"],
            json!("A")
        );
        assert_ok(&close_ws(ws));
    }
}
