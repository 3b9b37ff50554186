//! `move_file` through the C ABI: files, directories, symlinks inside and outside, overwrite on
//! and off (and a no-replace race), moves into themselves, the root, temp names, escapes, the
//! writers' lock, and a mount point.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Arc, Barrier};

fn mv(f: &Fixture, src: &str, dst: &str) -> Value {
    f.call("move_file", json!({"src": src, "dst": dst}))
}

fn mv_over(f: &Fixture, src: &str, dst: &str) -> Value {
    f.call(
        "move_file",
        json!({"src": src, "dst": dst, "overwrite": true}),
    )
}

crate::backend_tests! {
#[test]
fn renames_a_file_keeping_its_inode_and_content() {
    let f = Fixture::new();
    f.write("a.txt", "hello\n");
    if f.backend == Backend::Overlay {
        // A base file gets a new inode when the kernel copies it up to the session, before
        // its first change; from then on it is renamed like on the host.
        assert_ok(&call(f.ws, "write_file", json!({"path": "a.txt", "content": "hello\n"})));
    }
    let ino = f.stat("a.txt").ino();
    let v = mv(&f, "a.txt", "b.txt");
    let d = assert_ok(&v);
    assert_eq!(
        *d,
        json!({"moved_from": "a.txt", "moved_to": "b.txt", "type": "file", "replaced": false, "dirs_created": []})
    );
    assert_eq!(v["text"], json!("moved a.txt to b.txt"));
    assert!(!f.exists("a.txt"));
    assert_eq!(f.read("b.txt"), b"hello\n");
    assert_eq!(
        f.stat("b.txt").ino(),
        ino,
        "copied, not renamed"
    );
}

#[test]
fn creates_missing_parents_of_dst() {
    let f = Fixture::new();
    f.write("a.txt", "x");
    let v = mv(&f, "a.txt", "new/deeper/a.txt");
    let d = assert_ok(&v);
    assert_eq!(d["dirs_created"], json!(["new", "new/deeper"]));
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .ends_with("; created 2 directories: new, new/deeper"),
        "{}",
        short(&v)
    );
    assert_eq!(f.read("new/deeper/a.txt"), b"x");
}

#[test]
fn moves_a_directory_with_its_contents() {
    let f = Fixture::new();
    f.write("d/sub/f.txt", "1");
    f.write("d/g.txt", "2");
    let before = f.snapshot("d");
    let v = mv(&f, "d", "e");
    assert_eq!(assert_ok(&v)["type"], json!("dir"));
    assert_eq!(v["text"], json!("moved directory d to e"));
    assert!(!f.exists("d"));
    assert_eq!(f.snapshot("e"), before);
    // A trailing slash names a directory, on either end.
    assert_ok(&mv(&f, "e/", "d/"));
    assert_eq!(f.snapshot("d"), before);
}

#[test]
fn symlinks_move_themselves_never_their_target() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "TOPSECRET").unwrap();
    f.write("real/t.txt", "target");
    f.symlink("real/t.txt", "in_link");
    f.symlink(&outside, "out_link");
    f.symlink("../outside/secret.txt", "rel_out");
    for (src, dst, target) in [
        ("in_link", "moved_in", Path::new("real/t.txt").to_path_buf()),
        ("out_link", "moved_out", outside.clone()),
        ("rel_out", "sub/moved_rel", "../outside/secret.txt".into()),
    ] {
        let v = mv(&f, src, dst);
        assert_eq!(assert_ok(&v)["type"], json!("symlink"), "{}", short(&v));
        assert!(!f.exists(src));
        assert_eq!(f.read_link(dst), target, "{dst}");
    }
    assert_eq!(f.read("real/t.txt"), b"target");
    assert_eq!(fs::read(outside.join("secret.txt")).unwrap(), b"TOPSECRET");
    assert_eq!(fs::read_dir(&outside).unwrap().count(), 1);
    // Moving through a symlinked parent inside the workspace is fine.
    f.symlink("real", "via");
    assert_ok(&mv(&f, "via/t.txt", "via/u.txt"));
    assert_eq!(f.read("real/u.txt"), b"target");
}

#[test]
fn an_existing_dst_is_never_replaced_without_overwrite() {
    let f = Fixture::new();
    f.write("a.txt", "A");
    f.write("b.txt", "B");
    f.write("docs/keep.txt", "K");
    f.symlink("b.txt", "link");
    let before = f.snapshot("");
    let msg = assert_err(&mv(&f, "a.txt", "b.txt"), "file_exists");
    assert!(
        msg.contains("b.txt already exists (a file)") && msg.contains("overwrite: true"),
        "{msg}"
    );
    let msg = assert_err(&mv(&f, "a.txt", "docs"), "file_exists");
    assert!(msg.contains("use dst 'docs/a.txt'"), "{msg}");
    assert_err(&mv(&f, "a.txt", "link"), "file_exists");
    assert_err(&mv(&f, "docs", "b.txt"), "file_exists");
    assert_eq!(
        f.snapshot(""),
        before,
        "a refused move changed something"
    );
}

#[test]
fn overwrite_replaces_files_and_empty_directories_only() {
    let f = Fixture::new();
    f.write("a.txt", "A");
    f.write("b.txt", "B");
    let v = mv_over(&f, "a.txt", "b.txt");
    assert_eq!(assert_ok(&v)["replaced"], json!(true));
    assert_eq!(
        v["text"],
        json!("moved a.txt to b.txt (replaced the existing b.txt)")
    );
    assert_eq!(f.read("b.txt"), b"A");
    assert!(!f.exists("a.txt"));
    // A symlink at dst is replaced itself, never written through.
    f.write("c.txt", "C");
    f.symlink("b.txt", "link");
    assert_ok(&mv_over(&f, "c.txt", "link"));
    assert_eq!(f.read("link"), b"C");
    assert!(f.lstat("link").is_file());
    assert_eq!(f.read("b.txt"), b"A");
    // Missing dst with overwrite: a plain rename.
    assert_eq!(
        assert_ok(&mv_over(&f, "link", "new.txt"))["replaced"],
        json!(false)
    );

    f.mkdir("empty");
    f.write("full/x.txt", "x");
    f.write("src_dir/y.txt", "y");
    let before = f.snapshot("");
    let msg = assert_err(&mv_over(&f, "b.txt", "empty"), "not_a_file");
    assert!(
        msg.contains("cannot replace a directory") && msg.contains("'empty/b.txt'"),
        "{msg}"
    );
    let msg = assert_err(&mv_over(&f, "src_dir", "b.txt"), "not_a_directory");
    assert!(msg.contains("b.txt is a file"), "{msg}");
    let msg = assert_err(&mv_over(&f, "src_dir", "full"), "file_exists");
    assert!(msg.contains("not empty"), "{msg}");
    assert_eq!(
        f.snapshot(""),
        before,
        "a refused overwrite changed something"
    );
    assert_eq!(
        assert_ok(&mv_over(&f, "src_dir", "empty"))["replaced"],
        json!(true)
    );
    assert_eq!(f.read("empty/y.txt"), b"y");
}

#[test]
fn a_directory_is_never_moved_into_itself() {
    let f = Fixture::new();
    f.write("a/b/f.txt", "x");
    f.symlink("a", "to_a");
    let before = f.snapshot("");
    for dst in ["a/b/a", "a/new/deeper/a", "to_a/b/c", "a/b/../x"] {
        let msg = assert_err(&mv(&f, "a", dst), "invalid_path");
        assert!(msg.contains("cannot be moved into itself"), "{dst}: {msg}");
        assert_eq!(
            f.snapshot(""),
            before,
            "{dst}: created directories were left"
        );
    }
    let msg = assert_err(&mv(&f, "a/b", "a/b/c"), "invalid_path");
    assert!(msg.contains("a/b/c is inside a/b"), "{msg}");
    // Into a sibling whose name starts the same is fine (identity, not string prefixes).
    assert_ok(&mv(&f, "a/b", "ab"));
}

#[test]
fn the_root_is_neither_moved_nor_replaced() {
    let f = Fixture::new();
    f.write("a/f.txt", "x");
    let root = f.root.to_str().unwrap().to_string();
    for src in [".", "a/..", root.as_str(), "./"] {
        let msg = assert_err(&mv(&f, src, "elsewhere"), "invalid_path");
        assert!(msg.contains("is the workspace root"), "{src}: {msg}");
    }
    for dst in [".", "a/..", root.as_str()] {
        let msg = assert_err(&mv_over(&f, "a/f.txt", dst), "invalid_path");
        assert!(msg.contains("is the workspace root"), "{dst}: {msg}");
    }
    f.mkdir("a/sub");
    let msg = assert_err(&mv(&f, "a/sub/..", "b"), "invalid_path");
    assert!(msg.contains("ends with '..'"), "{msg}");
    assert_eq!(f.read("a/f.txt"), b"x");
    assert!(!f.exists("elsewhere"));
}

#[test]
fn temp_names_escapes_and_missing_sources_are_refused() {
    let f = Fixture::new();
    let temp = ".wsfs-0123456789abcdef.tmp";
    f.write(temp, "staged");
    f.write("a.txt", "A");
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    f.symlink(&outside, "out");
    f.symlink("../outside", "rel_out");
    assert_err(&mv(&f, temp, "x"), "invalid_path");
    assert_err(&mv(&f, "a.txt", temp), "invalid_path");
    assert_err(&mv(&f, "a.txt", &format!("sub/{temp}")), "invalid_path");
    for dst in ["../a.txt", "out/a.txt", "rel_out/a.txt", "out/new/a.txt"] {
        assert_err(&mv(&f, "a.txt", dst), "outside_workspace");
    }
    assert_err(&mv(&f, "../outside", "x"), "outside_workspace");
    assert_err(&mv(&f, "out/x", "y"), "outside_workspace");
    let msg = assert_err(&mv(&f, "missing.txt", "new/x.txt"), "path_not_found");
    assert!(msg.contains("missing.txt"), "{msg}");
    assert!(
        !f.exists("new"),
        "dst's parents were created for a missing src"
    );
    assert_err(&mv(&f, "a.txt", "a.txt"), "invalid_arguments");
    f.hard_link("a.txt", "hard.txt");
    let msg = assert_err(&mv_over(&f, "a.txt", "hard.txt"), "invalid_arguments");
    assert!(msg.contains("same file"), "{msg}");
    assert_err(&mv(&f, "a.txt/", "b"), "not_a_directory");
    assert_err(&mv(&f, "a.txt", "somedir/"), "not_a_file");
    assert_err(
        &f.call("move_file", json!({"src": "a.txt"})),
        "invalid_arguments",
    );
    assert_eq!(f.read("a.txt"), b"A");
    assert_eq!(
        fs::read_dir(&outside).unwrap().count(),
        0,
        "something reached outside"
    );
}

/// A move waits for the lock writers and editors hold, so an edit in flight is never undone
/// by the move (nor does it recreate the old name afterwards).
#[test]
fn a_move_waits_for_the_writers_lock() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "a lock a test holds on a workspace file through its own mount is not the view's lock (nothing outside the process can open the overlay view; wsfs's own writers share the view's locks, tested in overlay_view)") {
        return;
    }
    f.write("a.txt", "A");
    let held = f.open("a.txt");
    held.lock().unwrap();
    let v = call_opts(
        f.ws,
        "move_file",
        r#"{"src":"a.txt","dst":"b.txt"}"#,
        Some(r#"{"timeout_ms":200}"#),
    );
    assert_err(&v, "timeout");
    assert!(f.exists("a.txt") && !f.exists("b.txt"));
    held.unlock().unwrap();
    assert_ok(&mv(&f, "a.txt", "b.txt"));
}

#[test]
fn a_stopped_move_changes_nothing() {
    let f = Fixture::new();
    f.write("a.txt", "A");
    let v = call_opts(
        f.ws,
        "move_file",
        r#"{"src":"a.txt","dst":"new/b.txt"}"#,
        Some(r#"{"timeout_ms":0}"#),
    );
    assert_err(&v, "timeout");
    assert!(f.exists("a.txt") && !f.exists("new"));
}

#[test]
fn moving_across_file_systems_is_an_error_not_a_copy() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "a file system mounted inside the base is not part of the session's view (overlayfs takes the base directory's own file system; docs/sessions.md: limits)") {
        return;
    }
    f.mkdir("mnt");
    let Some(_mount) = Mount::new(&["-t", "tmpfs", "wsfs-test"], &f.disk_path("mnt")) else {
        eprintln!("skipped: cannot mount a tmpfs here (not root?)");
        return;
    };
    f.write("a.txt", "A");
    let msg = assert_err(&mv(&f, "a.txt", "mnt/a.txt"), "io_error");
    assert!(
        msg.contains("different file systems") && msg.contains("never copies"),
        "{msg}"
    );
    assert_eq!(f.read("a.txt"), b"A");
    assert!(!f.exists("mnt/a.txt"));
    // The mount point itself cannot be moved either.
    assert_err_in(&mv(&f, "mnt", "mnt2"), &["io_error"]);
}

/// A move killed after making `dst`'s parents, before the rename: the next open removes
/// them (the stop is injected where a SIGKILL would leave them; `durability.rs` kills for real).
#[test]
fn parents_left_by_a_killed_move_are_removed_at_the_next_open() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("a.txt", "x");
    f.mkdir("have");
    let before = f.snapshot("");
    wsfs::testing::abandon_next_new_dirs(&f.root, true);
    assert_err(&mv(&f, "a.txt", "have/new/deeper/a.txt"), "io_error");
    assert!(
        f.is_dir("have/new/deeper"),
        "the stop must leave them, as a kill does"
    );
    assert_eq!(f.state_files().len(), 1, "{:?}", f.state_files());
    // Directories something was put in since stay; the record is replayed once.
    f.write("have/new/kept.txt", "k");
    let again = open_ws(&f.root, json!({"state_dir": f.base.join("state")}));
    assert!(!f.target_exists("have/new/deeper") && f.target_exists("have/new/kept.txt"));
    f.remove_file("have/new/kept.txt");
    f.remove_dir("have/new");
    assert_eq!(f.snapshot(""), before);
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
    // And a move that completes keeps what it made.
    let d = assert_ok(&mv(&f, "a.txt", "have/new/deeper/a.txt")).clone();
    assert_eq!(d["dirs_created"], json!(["have/new", "have/new/deeper"]));
    assert_ok(&close_ws(again));
    let third = open_ws(&f.root, json!({"state_dir": f.base.join("state")}));
    assert_eq!(f.read("have/new/deeper/a.txt"), b"x");
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
    assert!(f.wsfs_names().is_empty());
    assert_ok(&close_ws(third));
}

}

/// Host mode only: the creator writes where the movers rename, one namespace, so the kernel's
/// RENAME_NOREPLACE decides. In overlay mode the creator writes the base, which the session's
/// view shows only after a refresh: a mover may then win in the session while the creator wins
/// in the base, and the commit reports that path as a conflict
/// (`overlay_view::a_base_file_created_where_the_session_created_one_is_a_conflict`).
#[test]
fn no_replace_decides_races_atomically() {
    let f = Fixture::new();
    let barrier = Arc::new(Barrier::new(3));
    let (mut movers_won, mut creator_won) = (0, 0);
    for round in 0..200 {
        f.write("a", format!("a{round}"));
        f.write("b", format!("b{round}"));
        let dst = format!("target{round}");
        let creator_path = f.disk_path(&dst);
        let threads: Vec<_> = ["a", "b"]
            .into_iter()
            .map(|src| {
                let (ws, barrier, dst) = (f.ws, barrier.clone(), dst.clone());
                std::thread::spawn(move || {
                    barrier.wait();
                    call(ws, "move_file", json!({"src": src, "dst": dst}))
                })
            })
            .collect();
        let creator = {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                barrier.wait();
                fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&creator_path)
                    .is_ok()
            })
        };
        let results: Vec<Value> = threads.into_iter().map(|t| t.join().unwrap()).collect();
        let created = creator.join().unwrap();
        let winners: Vec<&str> = ["a", "b"]
            .into_iter()
            .zip(&results)
            .filter(|(_, v)| v["ok"] == json!(true))
            .map(|(src, _)| src)
            .collect();
        for v in results.iter().filter(|v| v["ok"] != json!(true)) {
            assert_err(v, "file_exists");
        }
        assert_eq!(
            winners.len() + usize::from(created),
            1,
            "round {round}: exactly one of the movers and the creator may win: {results:?}, created {created}"
        );
        let content = String::from_utf8(f.read(&dst)).unwrap();
        match winners.first() {
            Some(src) => {
                movers_won += 1;
                assert_eq!(content, format!("{src}{round}"));
                assert!(!f.exists(src));
            }
            None => {
                creator_won += 1;
                assert_eq!(content, "", "round {round}: the created file was replaced");
            }
        }
        for src in ["a", "b"] {
            if !winners.contains(&src) {
                assert_eq!(
                    f.read(src),
                    format!("{src}{round}").as_bytes(),
                    "the loser changed"
                );
            }
        }
    }
    eprintln!("movers won {movers_won} rounds, the creator {creator_won}");
}
