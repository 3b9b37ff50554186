//! `delete_file` through the C ABI: files, symlinks inside and outside, special files,
//! directories with and without `recursive`, the root, temp names, escapes, the writers' lock,
//! deadlines part-way through a large tree, a mount point inside a tree, and a 1,500-deep tree
//! under a low descriptor limit.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

fn del(f: &Fixture, path: &str) -> Value {
    f.call("delete_file", json!({ "path": path }))
}

fn del_r(f: &Fixture, path: &str) -> Value {
    f.call("delete_file", json!({ "path": path, "recursive": true }))
}

/// Entries below `rel` (not followed), `rel` excluded.
fn count_tree(f: &Fixture, rel: &str) -> u64 {
    let mut n = 0;
    for name in f.names(rel) {
        n += 1;
        let child = format!("{rel}/{name}");
        if f.lstat(&child).is_dir() {
            n += count_tree(f, &child);
        }
    }
    n
}

crate::backend_tests! {
#[test]
fn deletes_a_file() {
    let f = Fixture::new();
    f.write("a.txt", "A");
    let v = del(&f, "a.txt");
    assert_eq!(
        *assert_ok(&v),
        json!({"path": "a.txt", "deleted": true, "was_directory": false, "entries_removed": 1})
    );
    assert_eq!(v["text"], json!("deleted a.txt"));
    assert!(!f.exists("a.txt"));
    let msg = assert_err(&del(&f, "a.txt"), "path_not_found");
    assert!(msg.contains("a.txt does not exist"), "{msg}");
}

#[test]
fn symlinks_are_removed_never_their_targets() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "TOPSECRET").unwrap();
    f.write("real/t.txt", "target");
    f.symlink("real/t.txt", "in_file");
    f.symlink("real", "in_dir");
    f.symlink(outside.join("secret.txt"), "out_file");
    f.symlink(&outside, "out_dir");
    f.symlink("../outside", "rel_out");
    f.symlink("nowhere", "dangling");
    for link in [
        "in_file", "in_dir", "out_file", "out_dir", "rel_out", "dangling",
    ] {
        let v = del(&f, link);
        assert_eq!(
            assert_ok(&v)["was_directory"],
            json!(false),
            "{}",
            short(&v)
        );
        assert!(
            v["text"].as_str().unwrap().starts_with("deleted symlink"),
            "{}",
            short(&v)
        );
        assert!(!f.exists(link), "{link}");
    }
    assert_eq!(f.read("real/t.txt"), b"target");
    assert_eq!(fs::read(outside.join("secret.txt")).unwrap(), b"TOPSECRET");
    // A trailing slash names a directory: not a symlink to one.
    f.symlink("real", "again");
    assert_err(&del(&f, "again/"), "not_a_directory");
    // Deleting through a symlinked parent inside the workspace removes the file there.
    assert_ok(&del(&f, "again/t.txt"));
    assert!(!f.exists("real/t.txt"));
    assert_err(&del(&f, "out_dir/secret.txt"), "path_not_found");
    f.symlink(&outside, "out_dir");
    assert_err(&del(&f, "out_dir/secret.txt"), "outside_workspace");
    assert_err(&del(&f, "../outside/secret.txt"), "outside_workspace");
    assert_eq!(fs::read(outside.join("secret.txt")).unwrap(), b"TOPSECRET");
}

#[test]
fn special_files_are_removed_without_being_opened() {
    let f = Fixture::new();
    f.mkfifo("fifo");
    let _sock = std::os::unix::net::UnixListener::bind(f.disk_path("sock")).unwrap();
    let ws = f.ws;
    for name in ["fifo", "sock"] {
        let v = with_watchdog(10, "delete_file on a special file", move || {
            call(ws, "delete_file", json!({ "path": name }))
        });
        assert_ok(&v);
        assert_eq!(v["text"], json!(format!("deleted special file {name}")));
        assert!(!f.exists(name));
    }
}

#[test]
fn a_directory_needs_recursive() {
    let f = Fixture::new();
    f.mkdir("empty");
    f.write("d/a.txt", "a");
    f.write("d/b.txt", "b");
    f.write("d/.wsfs-0123456789abcdef.tmp", "");
    let msg = assert_err(&del(&f, "d"), "recursive_required");
    assert_eq!(
        msg,
        "d is a directory holding 2 entries; pass recursive: true to delete it and everything in it"
    );
    let msg = assert_err(&del(&f, "empty"), "recursive_required");
    assert!(msg.starts_with("empty is an empty directory;"), "{msg}");
    assert!(f.exists("d/a.txt") && f.exists("empty"));
    let v = del_r(&f, "empty/");
    assert_eq!(assert_ok(&v)["entries_removed"], json!(1));
    // `recursive` on a file is harmless.
    assert_ok(&del_r(&f, "d/a.txt"));
}

#[test]
fn recursive_deletion_removes_everything_and_counts_it() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("canary"), "c").unwrap();
    for i in 0..5 {
        f.write(&format!("t/d{i}/sub/f.txt"), "x");
        f.write(&format!("t/d{i}/.hidden"), "h");
    }
    f.symlink(&outside, "t/out");
    f.symlink(outside.join("canary"), "t/d0/canary_link");
    f.symlink("../d1", "t/d0/sibling");
    f.mkfifo("t/d2/fifo");
    let _sock = std::os::unix::net::UnixListener::bind(f.disk_path("t/d3/sock")).unwrap();
    // A crash leftover of wsfs (unlocked temp file) goes too.
    f.write("t/d4/.wsfs-0123456789abcdef.tmp", "left over");
    let total = count_tree(&f, "t") + 1;
    let ws = f.ws;
    let v = with_watchdog(30, "recursive delete with a FIFO", move || {
        call(ws, "delete_file", json!({"path": "t", "recursive": true}))
    });
    let d = assert_ok(&v);
    assert_eq!(
        *d,
        json!({"path": "t", "deleted": true, "was_directory": true, "entries_removed": total})
    );
    assert_eq!(
        v["text"],
        json!(format!(
            "deleted directory t and everything in it ({total} entries removed, the directory included)"
        ))
    );
    assert!(!f.exists("t"));
    assert_eq!(fs::read(outside.join("canary")).unwrap(), b"c");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
}

#[test]
fn the_root_is_never_deleted() {
    let f = Fixture::new();
    f.write("a/f.txt", "x");
    f.mkdir("a/sub");
    let root = f.root.to_str().unwrap().to_string();
    for path in [".", "./", "a/..", "a/sub/../..", root.as_str()] {
        let msg = assert_err(&del_r(&f, path), "invalid_path");
        assert!(msg.contains("is the workspace root"), "{path}: {msg}");
    }
    let msg = assert_err(&del_r(&f, "a/sub/.."), "invalid_path");
    assert!(msg.contains("ends with '..'"), "{msg}");
    assert_err(&del_r(&f, ".."), "outside_workspace");
    assert_eq!(f.read("a/f.txt"), b"x");
}

#[test]
fn temp_names_and_bad_arguments_are_refused() {
    let f = Fixture::new();
    f.write(".wsfs-0123456789abcdef.tmp", "x");
    assert_err(&del(&f, ".wsfs-0123456789abcdef.tmp"), "invalid_path");
    assert!(f.exists(".wsfs-0123456789abcdef.tmp"));
    f.write("a.txt", "A");
    assert_err(&del(&f, "a.txt/"), "not_a_directory");
    assert_err(
        &f.call("delete_file", json!({"path": "a.txt", "force": true})),
        "invalid_arguments",
    );
    assert_err(
        &f.call("delete_file", json!({"path": "a.txt", "recursive": "yes"})),
        "invalid_arguments",
    );
    assert_eq!(f.read("a.txt"), b"A");
}

/// A delete waits for the lock writers and editors hold, so an edit in flight never
/// recreates the file after it was deleted.
#[test]
fn a_delete_waits_for_the_writers_lock() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "a lock a test holds on a workspace file through its own mount is not the view's lock (nothing outside the process can open the overlay view; wsfs's own writers share the view's locks, tested in overlay_view)") {
        return;
    }
    f.write("a.txt", "A");
    let held = f.open("a.txt");
    held.lock().unwrap();
    let v = call_opts(
        f.ws,
        "delete_file",
        r#"{"path":"a.txt"}"#,
        Some(r#"{"timeout_ms":200}"#),
    );
    assert_err(&v, "timeout");
    assert_eq!(f.read("a.txt"), b"A");
    held.unlock().unwrap();
    assert_ok(&del(&f, "a.txt"));
}

/// A live writer's temp file (locked) stays, and so does its directory: reported, not hidden.
#[test]
fn a_live_writers_temp_file_is_kept_and_reported() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "a lock a test holds on a workspace file through its own mount is not the view's lock (nothing outside the process can open the overlay view; wsfs's own writers share the view's locks, tested in overlay_view)") {
        return;
    }
    f.write("t/a.txt", "a");
    f.write("t/busy/.wsfs-00000000000000aa.tmp", "in flight");
    f.write("t/busy/b.txt", "b");
    let held = f.open("t/busy/.wsfs-00000000000000aa.tmp");
    held.lock().unwrap();
    let v = del_r(&f, "t");
    let d = assert_ok(&v);
    assert_eq!(d["deleted"], json!(false));
    assert_eq!(d["stopped"], json!("not_removed"));
    assert_eq!(d["entries_removed"], json!(2), "{}", short(&v));
    assert_eq!(d["not_removed_count"], json!(1));
    assert_eq!(
        d["not_removed"][0]["path"],
        json!("t/busy/.wsfs-00000000000000aa.tmp")
    );
    let text = v["text"].as_str().unwrap();
    assert!(
        text.starts_with("t was NOT fully deleted: 2 entries were removed, but 1 could not be")
            && text.contains("a wsfs write in progress"),
        "{text}"
    );
    assert!(f.exists("t/busy/.wsfs-00000000000000aa.tmp"));
    assert!(!f.exists("t/a.txt") && !f.exists("t/busy/b.txt"));
    drop(held);
    let d = assert_ok(&del_r(&f, "t")).clone();
    assert_eq!(d["deleted"], json!(true));
    assert_eq!(d["entries_removed"], json!(3));
}

/// A deadline part-way through a large tree: what was removed is reported exactly, the rest
/// stays, and a second call finishes the job. Stopped before anything was removed, the call
/// is a `timeout` error and nothing changed.
#[test]
fn a_deadline_part_way_reports_what_was_removed() {
    let f = Fixture::new();
    for d in 0..20 {
        let dir = format!("big/d{d:02}");
        f.mkdir(&dir);
        for i in 0..1000 {
            f.write(&format!("{dir}/f{i:04}"), "");
        }
    }
    let total = count_tree(&f, "big") + 1;
    let v = call_opts(
        f.ws,
        "delete_file",
        r#"{"path":"big","recursive":true}"#,
        Some(r#"{"timeout_ms":0}"#),
    );
    assert_err(&v, "timeout");
    assert_eq!(
        count_tree(&f, "big") + 1,
        total,
        "a timeout error removed something"
    );
    let mut partial = None;
    for ms in [2, 5, 10, 20, 40, 80, 160] {
        let v = call_opts(
            f.ws,
            "delete_file",
            r#"{"path":"big","recursive":true}"#,
            Some(&format!(r#"{{"timeout_ms":{ms}}}"#)),
        );
        if v["ok"] == json!(false) {
            assert_err(&v, "timeout"); // stopped before the first removal: nothing changed
            assert_eq!(count_tree(&f, "big") + 1, total);
            continue;
        }
        partial = Some(v);
        break;
    }
    let v = partial.expect("no deadline stopped the deletion part-way");
    let d = assert_ok(&v);
    assert_eq!(d["deleted"], json!(false), "{}", short(&v));
    assert_eq!(d["stopped"], json!("timeout"));
    let removed = d["entries_removed"].as_u64().unwrap();
    assert!(removed > 0 && removed < total, "{removed} of {total}");
    let left = count_tree(&f, "big") + 1;
    assert_eq!(
        left,
        total - removed,
        "entries_removed does not match what disappeared"
    );
    let text = v["text"].as_str().unwrap();
    assert_eq!(
        text,
        format!(
            "big was NOT fully deleted: {removed} entries were removed, then the call's deadline passed. big and the rest of its contents remain; call delete_file again to continue"
        )
    );
    let v = del_r(&f, "big");
    let d = assert_ok(&v);
    assert_eq!(d["deleted"], json!(true));
    assert_eq!(d["entries_removed"].as_u64().unwrap(), left);
    assert!(!f.exists("big"));
}

#[test]
fn a_cancelled_deletion_changes_nothing() {
    let f = Fixture::new();
    f.write("t/a/b.txt", "x");
    let before = f.snapshot("");
    let token = ffi::wsfs_cancel_token_new();
    ffi::wsfs_cancel_token_cancel(token);
    let v = call_opts(
        f.ws,
        "delete_file",
        r#"{"path":"t","recursive":true}"#,
        Some(&format!(r#"{{"cancel_token":{token}}}"#)),
    );
    ffi::wsfs_cancel_token_free(token);
    assert_err(&v, "cancelled");
    assert_eq!(f.snapshot(""), before);
}

/// Mount points and bind mounts inside a tree (even of a directory on the same file system,
/// even one outside the workspace) are never entered, and never deleted as the top either.
#[test]
fn mount_points_are_never_entered() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "a file system mounted inside the base is not part of the session's view (overlayfs takes the base directory's own file system; docs/sessions.md: limits)") {
        return;
    }
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("canary"), "outside").unwrap();
    f.write("t/a.txt", "a");
    f.mkdir("t/mnt");
    f.mkdir("t/sub/bind");
    let Some(_tmpfs) = Mount::new(&["-t", "tmpfs", "wsfs-test"], &f.disk_path("t/mnt")) else {
        eprintln!("skipped: cannot mount here (not root?)");
        return;
    };
    let outside_arg = outside.to_str().unwrap();
    let _bind = Mount::new(&["--bind", outside_arg], &f.disk_path("t/sub/bind")).expect("bind mount");
    f.write("t/mnt/canary", "on another file system");
    let v = del_r(&f, "t");
    let d = assert_ok(&v);
    assert_eq!(d["stopped"], json!("not_removed"), "{}", short(&v));
    assert_eq!(d["not_removed_count"], json!(2), "{}", short(&v));
    let kept: Vec<&str> = d["not_removed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert_eq!(kept, ["t/mnt", "t/sub/bind"], "{}", short(&v));
    assert!(d["not_removed"][0]["reason"]
        .as_str()
        .unwrap()
        .contains("mount point"));
    assert_eq!(
        f.read("t/mnt/canary"),
        b"on another file system"
    );
    assert_eq!(fs::read(outside.join("canary")).unwrap(), b"outside");
    assert!(!f.exists("t/a.txt"));
    // Nothing else to remove: an error, nothing changed.
    let msg = assert_err(&del_r(&f, "t"), "permission_denied");
    assert!(
        msg.starts_with("nothing was deleted: t/mnt: a mount point"),
        "{msg}"
    );
    // A mount point named directly is refused before anything is removed.
    for top in ["t/mnt", "t/sub/bind"] {
        let msg = assert_err(&del_r(&f, top), "permission_denied");
        assert!(msg.contains("is a mount point"), "{msg}");
    }
    assert_eq!(fs::read(outside.join("canary")).unwrap(), b"outside");
    assert_eq!(
        f.read("t/mnt/canary"),
        b"on another file system"
    );
}
}

const DEEP_ENV: &str = "WSFS_DEEP_DELETE_CHILD";

const DEPTH: usize = 1500;

/// Child half of `deep_trees_are_deleted_under_a_low_fd_limit` (runs only when re-invoked).
#[test]
#[ignore = "child process of deep_trees_are_deleted_under_a_low_fd_limit"]
fn deep_delete_child() {
    let Ok(dir) = std::env::var(DEEP_ENV) else {
        return;
    };
    limit_open_files(32);
    let ws = open_ws(Path::new(&dir), json!({}));
    let v = call(
        ws,
        "delete_file",
        json!({"path": "deep", "recursive": true}),
    );
    let d = assert_ok(&v);
    // Each level: d and z.txt; then bottom.txt, and deep itself.
    assert_eq!(d["entries_removed"], json!(2 * DEPTH + 2), "{}", short(&v));
    assert_eq!(d["deleted"], json!(true));
    assert!(!Path::new(&dir).join("deep").exists());
    assert_ok(&close_ws(ws));
}

#[test]
fn deep_trees_are_deleted_under_a_low_fd_limit() {
    let tmp = tempfile::tempdir().unwrap();
    let deep = tmp.path().join("deep");
    fs::create_dir(&deep).unwrap();
    deep_chain(&deep, DEPTH);
    run_child_test(&crate::test_name!(deep_delete_child), DEEP_ENV, tmp.path());
}
