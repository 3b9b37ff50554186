//! `create_directory` through `wsfs_call`: creation with and without parents, idempotence,
//! things in the way, symlinks in and out, reserved names, and clean-up of a failed call.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;

fn mkdir(f: &Fixture, args: Value) -> Value {
    call_named(f.ws, "create_directory", &args.to_string())
}

crate::backend_tests! {
#[test]
fn creates_with_parents_and_is_idempotent() {
    let f = Fixture::new();
    let v = mkdir(&f, json!({"path": "a/b/c"}));
    assert_eq!(
        assert_ok(&v),
        &json!({"path": "a/b/c", "created": true, "parents_created": 2})
    );
    assert_eq!(
        v["text"],
        "created directory a/b/c (and 2 parent directories)"
    );
    assert!(f.is_dir("a/b/c"));
    let again = mkdir(&f, json!({"path": "a/b/c/"}));
    assert_eq!(
        assert_ok(&again),
        &json!({"path": "a/b/c", "created": false, "parents_created": 0})
    );
    assert!(again["text"].as_str().unwrap().contains("already exists"));
    let v = mkdir(&f, json!({"path": "a/b/d", "parents": false}));
    assert_eq!(assert_ok(&v)["created"], true);
    for existing in [".", "a/..", "a/b/../b"] {
        let v = mkdir(&f, json!({"path": existing}));
        assert_eq!(assert_ok(&v)["created"], false, "{existing}");
    }
    let abs = f.p("a/e");
    assert_eq!(assert_ok(&mkdir(&f, json!({"path": abs})))["created"], true);
    let umask = current_umask();
    use std::os::unix::fs::PermissionsExt;
    let mode = f.stat("a/e").permissions().mode() & 0o777;
    assert_eq!(mode, 0o777 & !umask, "like mkdir");
}

#[test]
fn without_parents_a_missing_parent_is_path_not_found() {
    let f = Fixture::new();
    let before = f.snapshot("");
    assert_err(
        &mkdir(&f, json!({"path": "x/y", "parents": false})),
        "path_not_found",
    );
    assert_eq!(f.snapshot(""), before);
}

#[test]
fn things_in_the_way() {
    let f = Fixture::new();
    f.write("file.txt", "x");
    f.mkfifo("fifo");
    let before = f.snapshot("");
    for path in ["file.txt", "fifo", "file.txt/sub", "file.txt/sub/deeper"] {
        let msg = assert_err(&mkdir(&f, json!({"path": path})), "not_a_directory");
        assert!(!msg.is_empty(), "{path}");
    }
    assert_err(
        &mkdir(&f, json!({"path": ".wsfs-0123456789abcdef.tmp"})),
        "invalid_path",
    );
    assert_err(&mkdir(&f, json!({"path": ""})), "invalid_path");
    assert_err(
        &mkdir(&f, json!({"path": "a", "recursive": true})),
        "invalid_arguments",
    );
    assert_eq!(f.snapshot(""), before);
}

#[test]
fn symlinks_are_followed_only_inside() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    f.mkdir("real");
    f.symlink(&outside, "abs-out");
    f.symlink("../outside", "rel-out");
    f.symlink("real", "in");
    f.symlink("real/made-through-link", "dangling");
    for path in [
        "abs-out/x",
        "rel-out/x",
        "rel-out/x/y",
        "../outside/z",
        "rel-out",
    ] {
        let v = mkdir(&f, json!({"path": path}));
        let code = err_code(&v).map(str::to_owned);
        if path == "rel-out" {
            // The link leads outside: refused, not reported as an existing directory.
            assert_err(&v, "outside_workspace");
        } else {
            assert_eq!(code.as_deref(), Some("outside_workspace"), "{path}: {v}");
        }
    }
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "created outside"
    );
    assert_eq!(
        assert_ok(&mkdir(&f, json!({"path": "in/sub"})))["created"],
        true
    );
    assert!(f.is_dir("real/sub"));
    assert_eq!(
        assert_ok(&mkdir(&f, json!({"path": "in"})))["created"],
        false
    );
    // A dangling link inside is followed, as write_file does.
    assert_eq!(
        assert_ok(&mkdir(&f, json!({"path": "dangling"})))["created"],
        true
    );
    assert!(f.is_dir("real/made-through-link"));
}

#[test]
fn a_failed_call_removes_the_parents_it_created() {
    let f = Fixture::new();
    let before = f.snapshot("");
    // The leaf's mkdir fails (ENAMETOOLONG) after the parents were made.
    let long = "n".repeat(300);
    let v = mkdir(&f, json!({"path": format!("p/q/{long}")}));
    assert_err(&v, "invalid_path");
    assert_eq!(f.snapshot(""), before, "parents left behind");
    // A deadline that has already passed stops it before anything exists.
    let v = call_opts(
        f.ws,
        "create_directory",
        &json!({"path": "t/u/v"}).to_string(),
        Some(r#"{"timeout_ms":0}"#),
    );
    assert_err(&v, "timeout");
    assert_eq!(f.snapshot(""), before);
}

#[test]
fn the_data_is_workspace_relative_and_counts_only_what_it_made() {
    let f = Fixture::new();
    f.mkdir("have/some");
    let v = mkdir(&f, json!({"path": "./have/some/new/er"}));
    assert_eq!(
        assert_ok(&v),
        &json!({"path": "have/some/new/er", "created": true, "parents_created": 1})
    );
    assert!(!v.to_string().contains(f.root.to_str().unwrap()));
}

/// A path through missing directories and `..` to an existing one: nothing to create at the
/// end, but the directories on the way were made, and the result says so.
#[test]
fn directories_made_on_the_way_to_an_existing_one_are_reported() {
    let f = Fixture::new();
    let v = mkdir(&f, json!({"path": "x/y/.."}));
    assert_eq!(
        assert_ok(&v),
        &json!({"path": "x/y/..", "created": false, "parents_created": 2})
    );
    assert_eq!(
        v["text"],
        "x/y/.. already exists (a directory); created 2 directories on the way to it"
    );
    assert!(f.is_dir("x/y"));
}

/// A call killed after making the parents, before the leaf: the next open removes them; a
/// directory someone else made with a name the call meant to use is never taken for its own.
#[test]
fn parents_left_by_a_killed_call_are_removed_at_the_next_open() {
    let f = Fixture::with_state_dir(json!({}));
    let before = f.snapshot("");
    wsfs::testing::abandon_next_new_dirs(&f.root, true);
    let long = "n".repeat(300); // the leaf would fail anyway; the stop comes first
    assert_err(
        &mkdir(&f, json!({"path": format!("p/q/{long}")})),
        "io_error",
    );
    assert!(f.is_dir("p/q"));
    let again = open_ws(&f.root, json!({"state_dir": f.base.join("state")}));
    assert_eq!(f.snapshot(""), before, "parents left behind");
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
    assert_ok(&close_ws(again));
    // Parents made, then replaced by someone else's empty directory of the same name.
    wsfs::testing::abandon_next_new_dirs(&f.root, true);
    assert_err(&mkdir(&f, json!({"path": "r/s/t"})), "io_error");
    // Past a tick of the kernel's coarse clock, so the new directory's birth time differs
    // (its inode number is the freed one's).
    std::thread::sleep(std::time::Duration::from_millis(20));
    f.remove_dir("r/s");
    f.mkdir("r/s");
    let again = open_ws(&f.root, json!({"state_dir": f.base.join("state")}));
    assert!(f.is_dir("r/s"), "someone else's directory was removed");
    assert_ok(&close_ws(again));
}

}
