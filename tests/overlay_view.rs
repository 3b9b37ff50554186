//! Overlay mode end to end through the C ABI (issue 20): the tools change only the session,
//! the host diffs, commits all / some files / some hunks, checkpoints and rewinds, discards;
//! the base never changes before a commit; a base changed behind the view is never the ground
//! of a write; sessions are durable and independent; wsfs's own writers share the view's
//! locks. The contract suite (`backend_tests!`) runs every tool's tests on the overlay too.
use crate::common::*;

use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub(crate) struct Overlay {
    _tmp: tempfile::TempDir,
    pub(crate) root: PathBuf,
    pub(crate) state: PathBuf,
    pub(crate) ws: u64,
}

pub(crate) fn config(state: &Path, extra: Value) -> Value {
    let mut c = json!({"mode": "overlay", "state_dir": state.to_str().unwrap()});
    merge(&mut c, extra);
    c
}

impl Overlay {
    pub(crate) fn new(seed: &[(&str, &str)], extra: Value) -> Overlay {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, state) = (base.join("ws"), base.join("state"));
        for (rel, text) in seed {
            let p = root.join(rel);
            fs::create_dir_all(p.parent().unwrap()).unwrap();
            fs::write(p, text).unwrap();
        }
        fs::create_dir_all(&root).unwrap();
        let ws = open_ws(&root, config(&state, extra));
        Overlay {
            _tmp: tmp,
            root,
            state,
            ws,
        }
    }

    pub(crate) fn call(&self, tool: &str, args: Value) -> Value {
        call(self.ws, tool, args)
    }

    pub(crate) fn read(&self, path: &str) -> String {
        let v = self.call("read_file", json!({ "path": path }));
        assert_ok(&v)["content"].as_str().unwrap().to_string()
    }

    pub(crate) fn base(&self, rel: &str) -> Option<String> {
        fs::read_to_string(self.root.join(rel)).ok()
    }
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let _ = close_ws(self.ws);
    }
}

pub(crate) fn session(ws: u64, op: &str, options: Option<Value>) -> Value {
    let text = options.map(|o| cs(&o.to_string()));
    let ptr = text.as_ref().map_or(std::ptr::null(), |c| c.as_ptr());
    // SAFETY: the options string (or NULL) lives for the call; each result is freed by
    // take_envelope.
    let raw = unsafe {
        match op {
            "diff" => ffi::wsfs_session_diff(ws, ptr),
            "commit" => ffi::wsfs_session_commit(ws, ptr),
            "checkpoint" => ffi::wsfs_session_checkpoint(ws, ptr),
            "rewind" => ffi::wsfs_session_rewind(ws, ptr),
            "checkpoints" => ffi::wsfs_session_checkpoints(ws),
            "discard" => ffi::wsfs_session_discard(ws),
            "refresh" => ffi::wsfs_session_refresh(ws),
            _ => panic!("no session op {op}"),
        }
    };
    take_envelope(raw)
}

pub(crate) fn changes(ws: u64) -> Vec<(String, String)> {
    let v = session(ws, "diff", None);
    assert_ok(&v)["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["path"].as_str().unwrap().to_string(),
                c["status"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn the_base_changes_only_at_commit_and_then_shows_the_view() {
    let o = Overlay::new(
        &[
            ("keep.txt", "keep\n"),
            ("edit.txt", "one\ntwo\n"),
            ("gone.txt", "bye\n"),
            ("d/moved.txt", "m\n"),
        ],
        json!({}),
    );
    let before = snapshot(&o.root);
    assert_ok(&o.call(
        "write_file",
        json!({"path": "new/a.txt", "content": "new\n"}),
    ));
    assert_ok(&o.call(
        "edit_file",
        json!({"path": "edit.txt", "old_text": "two", "new_text": "TWO"}),
    ));
    assert_ok(&o.call(
        "append_file",
        json!({"path": "keep.txt", "content": "more\n"}),
    ));
    assert_ok(&o.call("delete_file", json!({"path": "gone.txt"})));
    assert_ok(&o.call("move_file", json!({"src": "d", "dst": "e"})));
    assert_eq!(
        snapshot(&o.root),
        before,
        "the base changed before a commit"
    );
    // The view shows every change.
    assert_eq!(o.read("new/a.txt"), "new\n");
    assert_eq!(o.read("edit.txt"), "one\nTWO\n");
    assert_eq!(o.read("keep.txt"), "keep\nmore\n");
    assert_eq!(o.read("e/moved.txt"), "m\n");
    assert_err(
        &o.call("read_file", json!({"path": "gone.txt"})),
        "path_not_found",
    );
    assert_err(
        &o.call("read_file", json!({"path": "d/moved.txt"})),
        "path_not_found",
    );
    let listed = o.call("list_dir", json!({"path": "."}));
    assert_eq!(entry_names(&listed), ["e", "edit.txt", "keep.txt", "new"]);
    let found = o.call("search_text", json!({"query": "TWO"}));
    assert_eq!(assert_ok(&found)["matches"][0]["file"], json!("edit.txt"));
    // The diff lists each change; deletions first.
    let mut got = changes(o.ws);
    assert_eq!(got[0].1, "D", "deletions come first: {got:?}");
    got.sort();
    let want: Vec<(String, String)> = [
        ("d/moved.txt", "D"),
        ("e/moved.txt", "A"),
        ("edit.txt", "M"),
        ("gone.txt", "D"),
        ("keep.txt", "M"),
        ("new/a.txt", "A"),
    ]
    .iter()
    .map(|(p, s)| (p.to_string(), s.to_string()))
    .collect();
    let paths: Vec<_> = got
        .iter()
        .filter(|(p, _)| !p.ends_with('/') && p.contains('.'))
        .cloned()
        .collect();
    assert_eq!(paths, want);
    // Commit everything: the base becomes the view, and the tools go on.
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(o.base("edit.txt").as_deref(), Some("one\nTWO\n"));
    assert_eq!(o.base("keep.txt").as_deref(), Some("keep\nmore\n"));
    assert_eq!(o.base("new/a.txt").as_deref(), Some("new\n"));
    assert_eq!(o.base("e/moved.txt").as_deref(), Some("m\n"));
    assert!(o.base("gone.txt").is_none() && !o.root.join("d/moved.txt").exists());
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
    assert_ok(&o.call(
        "write_file",
        json!({"path": "edit.txt", "content": "after\n"}),
    ));
    assert_eq!(o.read("edit.txt"), "after\n");
    assert_eq!(o.base("edit.txt").as_deref(), Some("one\nTWO\n"));
}

#[test]
fn part_of_a_session_is_committed_and_a_checkpoint_rewinds_the_rest() {
    let o = Overlay::new(&[("a.txt", "a\n"), ("b.txt", "b\n")], json!({}));
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "A\n"})));
    let id = assert_ok(&session(
        o.ws,
        "checkpoint",
        Some(json!({"label": "after a"})),
    ))["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ok(&o.call("write_file", json!({"path": "b.txt", "content": "B\n"})));
    assert_ok(&o.call("write_file", json!({"path": "c.txt", "content": "C\n"})));
    let listed = assert_ok(&session(o.ws, "checkpoints", None))["checkpoints"].clone();
    assert_eq!(listed[0]["label"], json!("after a"));
    // Commit only a.txt.
    let v = session(o.ws, "commit", Some(json!({"paths": ["a.txt"]})));
    assert_eq!(assert_ok(&v)["files"], json!(["a.txt"]));
    assert_eq!(o.base("a.txt").as_deref(), Some("A\n"));
    assert_eq!(o.base("b.txt").as_deref(), Some("b\n"));
    // Rewind to the checkpoint: b and c go back to how they were then.
    assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
    assert_eq!(o.read("b.txt"), "b\n");
    assert_err(
        &o.call("read_file", json!({"path": "c.txt"})),
        "path_not_found",
    );
    assert_eq!(o.read("a.txt"), "A\n");
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
    // An unknown checkpoint, and a rewind without one.
    assert_err(
        &session(o.ws, "rewind", Some(json!({"id": "99"}))),
        "invalid_arguments",
    );
    assert_err(&session(o.ws, "rewind", None), "invalid_arguments");
    assert_err(
        &session(o.ws, "diff", Some(json!({"nope": 1}))),
        "invalid_arguments",
    );
}

#[test]
fn discard_drops_the_session_and_the_view_shows_the_base() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({}));
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "A\n"})));
    assert_ok(&o.call("write_file", json!({"path": "n.txt", "content": "n\n"})));
    assert_ok(&session(o.ws, "discard", None));
    assert_eq!(o.read("a.txt"), "a\n");
    assert_err(
        &o.call("read_file", json!({"path": "n.txt"})),
        "path_not_found",
    );
    assert!(changes(o.ws).is_empty());
    // The workspace goes on in a fresh session.
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "again\n"})));
    assert_eq!(o.read("a.txt"), "again\n");
    assert_eq!(o.base("a.txt").as_deref(), Some("a\n"));
}

#[test]
fn a_session_outlives_its_workspace_and_sessions_are_independent() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({"session": "one"}));
    assert_ok(&o.call("write_file", json!({"path": "a.txt", "content": "one\n"})));
    let two = open_ws(&o.root, config(&o.state, json!({"session": "two"})));
    let v = call(two, "read_file", json!({"path": "a.txt"}));
    assert_eq!(
        assert_ok(&v)["content"],
        json!("a\n"),
        "session two saw session one"
    );
    // A second workspace on the same session in this process shares it.
    let shared = open_ws(&o.root, config(&o.state, json!({"session": "one"})));
    let v = call(shared, "read_file", json!({"path": "a.txt"}));
    assert_eq!(
        assert_ok(&v)["content"],
        json!("one\n"),
        "a second open did not share"
    );
    assert_ok(&call(
        shared,
        "write_file",
        json!({"path": "s.txt", "content": "s\n"}),
    ));
    assert_eq!(o.read("s.txt"), "s\n");
    close_ws(shared);
    close_ws(o.ws);
    let reopened = open_ws(&o.root, config(&o.state, json!({"session": "one"})));
    let v = call(reopened, "read_file", json!({"path": "a.txt"}));
    assert_eq!(
        assert_ok(&v)["content"],
        json!("one\n"),
        "the session did not last"
    );
    close_ws(reopened);
    close_ws(two);
}

#[test]
fn a_base_file_replaced_behind_the_view_is_never_the_ground_of_a_write() {
    // A view that is never refreshed on its own: only writes may notice.
    let o = Overlay::new(
        &[("a.txt", "old\n")],
        json!({"session_refresh_ms": 86_400_000}),
    );
    assert_eq!(o.read("a.txt"), "old\n");
    // Another program replaces the base file (as editors and git do): a new inode.
    fs::write(o.root.join("a.tmp"), "new\n").unwrap();
    fs::rename(o.root.join("a.tmp"), o.root.join("a.txt")).unwrap();
    // The edit sees the new content (the stale view is noticed and mounted afresh).
    assert_ok(&o.call(
        "edit_file",
        json!({"path": "a.txt", "old_text": "new", "new_text": "edited"}),
    ));
    assert_eq!(o.read("a.txt"), "edited\n");
    // And its fingerprint is the new base: the commit finds no conflict.
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(o.base("a.txt").as_deref(), Some("edited\n"));
    // A new base file shows after a refresh.
    fs::write(o.root.join("b.txt"), "b\n").unwrap();
    assert_ok(&session(o.ws, "refresh", None));
    assert_eq!(o.read("b.txt"), "b\n");
}

#[test]
fn a_base_changed_after_the_session_touched_it_is_a_conflict_and_nothing_is_written() {
    let o = Overlay::new(&[("a.txt", "1\n2\n3\n"), ("b.txt", "b\n")], json!({}));
    assert_ok(&o.call(
        "write_file",
        json!({"path": "a.txt", "content": "1\n2\nthree\n"}),
    ));
    assert_ok(&o.call("write_file", json!({"path": "b.txt", "content": "B\n"})));
    fs::write(o.root.join("a.txt"), "one\n2\n3\n").unwrap();
    let v = session(o.ws, "commit", None);
    let d = assert_ok(&v);
    assert_eq!(d["committed"], json!(false), "{v}");
    assert_eq!(d["conflicts"][0]["path"], json!("a.txt"));
    assert_eq!(d["conflicts"][0]["mergeable"], json!(true));
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains("nothing was committed: 1 conflict (a.txt)"),
        "{text}"
    );
    assert_eq!(o.base("a.txt").as_deref(), Some("one\n2\n3\n"));
    assert_eq!(
        o.base("b.txt").as_deref(),
        Some("b\n"),
        "part of a refused commit was written"
    );
    let v = session(o.ws, "commit", Some(json!({"merge": true})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(
        v["text"],
        json!("committed 2 paths to the workspace"),
        "{v}"
    );
    assert_eq!(o.base("a.txt").as_deref(), Some("one\n2\nthree\n"));
}

#[test]
fn overlay_settings_are_checked_and_host_mode_has_no_session() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let host = open_ws(&root, json!({}));
    assert_err(&session(host, "diff", None), "no_session");
    assert_err(&session(host, "discard", None), "no_session");
    close_ws(host);
    let bad = [
        json!({"root": root, "session": "s"}),
        json!({"root": root, "session_refresh_ms": 5}),
        json!({"root": root, "mode": "overlay", "restrict_to_workspace": false}),
        json!({"root": root, "mode": "overlay", "session": "../x"}),
        json!({"root": root, "mode": "overlay", "state_dir": root.join("inside")}),
        json!({"root": root, "mode": "sideways"}),
    ];
    for config in bad {
        assert_err(&open_raw(&config.to_string()), "invalid_arguments");
    }
}

#[test]
fn wsfs_writers_in_one_overlay_workspace_share_the_views_locks() {
    let o = Arc::new(Overlay::new(&[("log.txt", "")], json!({})));
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let o = o.clone();
            std::thread::spawn(move || {
                for i in 0..25 {
                    let line = format!("{t}-{i}\n");
                    assert_ok(&o.call("append_file", json!({"path": "log.txt", "content": line})));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    assert_eq!(o.read("log.txt").lines().count(), 150, "an append was lost");
    assert_eq!(o.base("log.txt").as_deref(), Some(""));
}

#[test]
fn session_operations_wait_for_calls_and_calls_go_on_after_them() {
    let o = Arc::new(Overlay::new(&[("a.txt", "a\n")], json!({})));
    let writer = {
        let o = o.clone();
        std::thread::spawn(move || {
            for i in 0..200 {
                let v = o.call(
                    "write_file",
                    json!({"path": "w.txt", "content": format!("{i}\n")}),
                );
                assert_ok(&v);
            }
        })
    };
    for _ in 0..20 {
        assert_ok(&session(o.ws, "checkpoint", None));
        // Nothing new since the last commit is the one refusal a commit may give here.
        let v = session(o.ws, "commit", Some(json!({"paths": ["w.txt"]})));
        if v["ok"] != json!(true) {
            assert_err(&v, "nothing_to_commit");
        }
    }
    writer.join().unwrap();
    let v = session(o.ws, "commit", None);
    if v["ok"] == json!(true) {
        assert_eq!(v["data"]["committed"], json!(true), "{v}");
    } else {
        assert_err(&v, "nothing_to_commit");
    }
    assert_eq!(o.base("w.txt").as_deref(), Some("199\n"));
}

#[test]
fn after_a_partial_commit_a_later_base_change_still_merges() {
    let lines: Vec<String> = (1..=20).map(|i| format!("line {i}")).collect();
    let text = lines.join("\n") + "\n";
    let o = Overlay::new(&[("f.txt", text.as_str())], json!({}));
    let mut mine = lines.clone();
    mine[1] = "LINE 2".into();
    mine[17] = "LINE 18".into();
    let content = mine.join("\n") + "\n";
    assert_ok(&o.call("write_file", json!({"path": "f.txt", "content": content})));
    let diff = session(o.ws, "diff", None);
    let hunks = assert_ok(&diff)["changes"][0]["hunks"].clone();
    assert_eq!(hunks.as_array().unwrap().len(), 2, "{diff}");
    let first = hunks[0]["id"].clone();
    let v = session(o.ws, "commit", Some(json!({"hunks": {"f.txt": [first]}})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    // Someone changes line 10 of the base.
    let mut theirs: Vec<String> = o.base("f.txt").unwrap().lines().map(String::from).collect();
    theirs[9] = "LINE 10".into();
    fs::write(o.root.join("f.txt"), theirs.join("\n") + "\n").unwrap();
    assert_ok(&session(o.ws, "refresh", None));
    let v = session(o.ws, "commit", None);
    let d = assert_ok(&v);
    assert_eq!(d["committed"], json!(false), "{v}");
    assert_eq!(d["conflicts"][0]["mergeable"], json!(true), "{v}");
    let v = session(o.ws, "commit", Some(json!({"merge": true})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    let merged = o.base("f.txt").unwrap();
    for want in ["LINE 2", "LINE 10", "LINE 18"] {
        assert!(merged.contains(want), "{want} missing: {merged}");
    }
}

/// Where the raw (not necessarily UTF-8) path `rel` is below `root`.
fn raw(root: &Path, rel: &[u8]) -> PathBuf {
    use std::os::unix::ffi::OsStrExt;
    root.join(std::ffi::OsStr::from_bytes(rel))
}

/// A base with names that are not UTF-8: `caf\xe9.txt` (byte E9), the directory `d\xff` with
/// `in.txt` and `gone.txt`, and `caf\\xe9.txt`, the UTF-8 name with a literal backslash that
/// looks like the escaped form of the first.
fn non_utf8_base(extra: Value) -> Overlay {
    let o = Overlay::new(&[], extra);
    fs::write(raw(&o.root, b"caf\xe9.txt"), "one\ntwo\n").unwrap();
    fs::write(raw(&o.root, b"caf\\xe9.txt"), "look-alike\n").unwrap();
    fs::create_dir(raw(&o.root, b"d\xff")).unwrap();
    fs::write(raw(&o.root, b"d\xff/in.txt"), "in\n").unwrap();
    fs::write(raw(&o.root, b"d\xff/gone.txt"), "gone\n").unwrap();
    assert_ok(&session(o.ws, "refresh", None));
    o
}

/// The agent's changes on `non_utf8_base`: a non-UTF-8 file edited, a file inside a
/// non-UTF-8 directory edited and one deleted, a new non-UTF-8 file, a new file in a new
/// non-UTF-8 directory.
fn change_non_utf8_names(ws: u64) {
    for (path, content) in [
        (r"caf\xe9.txt", "ONE\ntwo\n"),
        (r"d\xff/in.txt", "IN\n"),
        (r"new\xfe.txt", "new\n"),
        (r"n\x80/x.txt", "x\n"),
    ] {
        assert_ok(&call(
            ws,
            "write_file",
            json!({"path": path, "content": content}),
        ));
    }
    assert_ok(&call(ws, "delete_file", json!({"path": r"d\xff/gone.txt"})));
}

fn sorted_changes(ws: u64) -> Vec<(String, String)> {
    let mut c = changes(ws);
    c.sort();
    c
}

fn expected_non_utf8_changes() -> Vec<(String, String)> {
    let mut want: Vec<(String, String)> = [
        (r"caf\xe9.txt", "M"),
        (r"d\xff/gone.txt", "D"),
        (r"d\xff/in.txt", "M"),
        (r"n\x80", "A"),
        (r"n\x80/x.txt", "A"),
        (r"new\xfe.txt", "A"),
    ]
    .iter()
    .map(|(p, s)| (p.to_string(), s.to_string()))
    .collect();
    want.sort();
    want
}

#[test]
fn non_utf8_names_are_diffed_and_committed_and_reach_the_base_as_their_bytes() {
    let o = non_utf8_base(json!({}));
    change_non_utf8_names(o.ws);
    // The base is untouched; the view shows the changes by the names the tools show.
    assert_eq!(
        fs::read(raw(&o.root, b"caf\xe9.txt")).unwrap(),
        b"one\ntwo\n"
    );
    assert_eq!(o.read(r"caf\xe9.txt"), "ONE\ntwo\n");
    assert_eq!(o.read(r"n\x80/x.txt"), "x\n");
    // diff names every change in the escaped form, the unified text too.
    assert_eq!(sorted_changes(o.ws), expected_non_utf8_changes());
    let v = session(o.ws, "diff", Some(json!({"paths": [r"caf\xe9.txt"]})));
    let d = assert_ok(&v);
    assert_eq!(d["changes"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(d["changes"][0]["hunks"].as_array().unwrap().len(), 1, "{v}");
    let unified = d["unified"].as_str().unwrap();
    assert!(
        unified.contains("--- a/caf\\xe9.txt\n+++ b/caf\\xe9.txt\n") && unified.contains("+ONE"),
        "{unified}"
    );
    // A directory selects what is below it; `\xNN` may be written in either case.
    let v = session(o.ws, "diff", Some(json!({"paths": [r"D\xFF", r"d\xFF"]})));
    let listed: Vec<&str> = assert_ok(&v)["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(listed, [r"d\xff/gone.txt", r"d\xff/in.txt"], "{v}");

    // Commit one file by its hunk, then the rest.
    let hunk = d["changes"][0]["hunks"][0]["id"].clone();
    let v = session(
        o.ws,
        "commit",
        Some(json!({"hunks": {r"caf\xE9.txt": [hunk]}})),
    );
    assert_eq!(assert_ok(&v)["files"], json!([r"caf\xe9.txt"]), "{v}");
    assert_eq!(
        fs::read(raw(&o.root, b"caf\xe9.txt")).unwrap(),
        b"ONE\ntwo\n"
    );
    assert!(!raw(&o.root, b"new\xfe.txt").exists());
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(fs::read(raw(&o.root, b"d\xff/in.txt")).unwrap(), b"IN\n");
    assert!(!raw(&o.root, b"d\xff/gone.txt").exists());
    assert_eq!(fs::read(raw(&o.root, b"new\xfe.txt")).unwrap(), b"new\n");
    assert_eq!(fs::read(raw(&o.root, b"n\x80/x.txt")).unwrap(), b"x\n");
    // The look-alike UTF-8 name was never touched; nothing is left to commit.
    assert_eq!(
        fs::read(raw(&o.root, b"caf\\xe9.txt")).unwrap(),
        b"look-alike\n"
    );
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
    assert!(wsfs_names(&o.root).is_empty(), "{:?}", wsfs_names(&o.root));
}

#[test]
fn non_utf8_names_are_checkpointed_rewound_and_discarded() {
    let o = non_utf8_base(json!({}));
    assert_ok(&o.call(
        "write_file",
        json!({"path": r"caf\xe9.txt", "content": "A\n"}),
    ));
    assert_ok(&o.call("create_directory", json!({"path": r"n\x80"})));
    let id = assert_ok(&session(o.ws, "checkpoint", None))["id"]
        .as_str()
        .unwrap()
        .to_string();
    change_non_utf8_names(o.ws);
    assert_ok(&o.call(
        "write_file",
        json!({"path": r"caf\\xe9.txt", "content": "literal changed\n"}),
    ));
    let cps = assert_ok(&session(o.ws, "checkpoints", None))["checkpoints"].clone();
    assert_eq!(cps[0]["paths"], json!([r"caf\xe9.txt", r"n\x80"]), "{cps}");
    // Rewind: back to the checkpoint, where only caf\xe9.txt and the new n\x80 had changed.
    assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
    assert_eq!(o.read(r"caf\xe9.txt"), "A\n");
    assert_eq!(o.read(r"d\xff/in.txt"), "in\n");
    assert_eq!(o.read(r"d\xff/gone.txt"), "gone\n");
    assert_eq!(o.read(r"caf\\xe9.txt"), "look-alike\n");
    for gone in [r"new\xfe.txt", r"n\x80/x.txt"] {
        let v = o.call("get_path_info", json!({ "path": gone }));
        assert_eq!(assert_ok(&v)["exists"], json!(false), "{v}");
    }
    assert_eq!(
        sorted_changes(o.ws),
        [
            (r"caf\xe9.txt".to_string(), "M".to_string()),
            (r"n\x80".to_string(), "A".to_string())
        ]
    );
    // Discard: the view is the base again, and the base never changed.
    change_non_utf8_names(o.ws);
    assert_ok(&session(o.ws, "discard", None));
    assert!(changes(o.ws).is_empty(), "{:?}", changes(o.ws));
    assert_eq!(o.read(r"caf\xe9.txt"), "one\ntwo\n");
    assert_eq!(o.read(r"d\xff/gone.txt"), "gone\n");
    assert_err(
        &o.call("read_file", json!({"path": r"n\x80/x.txt"})),
        "path_not_found",
    );
    assert_eq!(
        fs::read(raw(&o.root, b"caf\xe9.txt")).unwrap(),
        b"one\ntwo\n"
    );
    assert!(!raw(&o.root, b"n\x80").exists());
}

#[test]
fn a_reopened_session_reads_its_non_utf8_paths_back() {
    let o = non_utf8_base(json!({"session": "s"}));
    change_non_utf8_names(o.ws);
    let id = assert_ok(&session(o.ws, "checkpoint", None))["id"]
        .as_str()
        .unwrap()
        .to_string();
    assert_ok(&o.call(
        "write_file",
        json!({"path": r"n\x80/x.txt", "content": "after the checkpoint\n"}),
    ));
    close_ws(o.ws);
    // A process that died mid-write left a temp name inside a non-UTF-8 directory of the
    // upper tree: the next open removes it.
    let ids: Vec<PathBuf> = fs::read_dir(&o.state)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let upper = ids[0].join("sessions/s/upper");
    let stray = raw(&upper, b"n\x80/.wsfs-0123456789abcdef.tmp");
    fs::write(&stray, "half").unwrap();
    let ws = open_ws(&o.root, config(&o.state, json!({"session": "s"})));
    assert!(!stray.exists(), "the stray temp file was not swept");
    // The touch log, the checkpoint's images and the upper tree agree on every path.
    assert_eq!(sorted_changes(ws), expected_non_utf8_changes());
    assert_ok(&session(ws, "rewind", Some(json!({ "id": id }))));
    let v = call(ws, "read_file", json!({"path": r"n\x80/x.txt"}));
    assert_eq!(assert_ok(&v)["content"], json!("x\n"));
    // The fingerprints recorded at the first touch were read back: a base changed since is a
    // conflict on its escaped path, and nothing is written.
    fs::write(raw(&o.root, b"d\xff/in.txt"), "changed outside\n").unwrap();
    let v = session(ws, "commit", None);
    let d = assert_ok(&v);
    assert_eq!(d["committed"], json!(false), "{v}");
    assert_eq!(d["conflicts"][0]["path"], json!(r"d\xff/in.txt"), "{v}");
    assert_eq!(
        fs::read(raw(&o.root, b"caf\xe9.txt")).unwrap(),
        b"one\ntwo\n"
    );
    let v = session(ws, "commit", Some(json!({"force": true})));
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(fs::read(raw(&o.root, b"d\xff/in.txt")).unwrap(), b"IN\n");
    assert_eq!(
        fs::read(raw(&o.root, b"caf\xe9.txt")).unwrap(),
        b"ONE\ntwo\n"
    );
    assert_eq!(fs::read(raw(&o.root, b"n\x80/x.txt")).unwrap(), b"x\n");
    close_ws(ws);
}

fn exists(o: &Overlay, path: &str) -> bool {
    let v = o.call("get_path_info", json!({ "path": path }));
    assert_ok(&v)["exists"].as_bool().unwrap()
}

fn checkpoint(o: &Overlay) -> String {
    assert_ok(&session(o.ws, "checkpoint", None))["id"]
        .as_str()
        .unwrap()
        .to_string()
}

/// The directories a call makes on the way to its path (`write_file`, `apply_patch`'s Add
/// File, `move_file`'s destination, `create_directory` with parents) are touched before the
/// kernel makes them: their before-image is what the session had there (nothing, or the
/// whiteout of a deleted base directory, which the kernel turns into an opaque directory), so
/// a rewind to a checkpoint taken before takes them away again (or deletes them again).
#[test]
fn directories_a_call_makes_after_a_checkpoint_go_at_its_rewind() {
    let o = Overlay::new(
        &[
            ("keep.txt", "keep\n"),
            ("d/old.txt", "old\n"),
            ("e/old.txt", "old\n"),
            ("g/old.txt", "old\n"),
            ("m.txt", "m\n"),
            ("w.txt", "w\n"),
        ],
        json!({}),
    );
    for dir in ["d", "e", "g"] {
        assert_ok(&o.call("delete_file", json!({"path": dir, "recursive": true})));
    }
    let base = snapshot(&o.root);
    let before = sorted_changes(o.ws);
    for dir in ["d", "e", "g"] {
        assert!(
            before.contains(&(dir.to_string(), "D".to_string())),
            "{before:?}"
        );
    }
    let id = checkpoint(&o);
    for (path, content) in [
        ("n/x.txt", "n\n"),
        ("a/b/c/y.txt", "y\n"),
        ("d/z.txt", "over a deleted directory\n"),
    ] {
        assert_ok(&o.call("write_file", json!({"path": path, "content": content})));
    }
    let patch = "*** Begin Patch\n*** Add File: p/q/new.txt\n+new\n*** Add File: g/h/new.txt\n+new\n*** End Patch\n";
    assert_ok(&o.call("apply_patch", json!({ "patch": patch })));
    assert_ok(&o.call("create_directory", json!({"path": "k/l/m"})));
    assert_ok(&o.call("create_directory", json!({"path": "e/f"})));
    assert_ok(&o.call("move_file", json!({"src": "m.txt", "dst": "s/t/m.txt"})));
    assert_ok(&o.call("move_file", json!({"src": "w.txt", "dst": "d/u/w.txt"})));
    for made in [
        "n", "a/b/c", "d/z.txt", "p/q", "g/h", "k/l/m", "e/f", "s/t", "d/u",
    ] {
        assert!(exists(&o, made), "{made}");
    }
    assert_eq!(snapshot(&o.root), base, "the base changed before a commit");
    // Each was touched (the commit's new file in new directories too): the next checkpoint
    // lists them as changed in the step it closes.
    checkpoint(&o);
    let cps = assert_ok(&session(o.ws, "checkpoints", None))["checkpoints"].clone();
    let step: Vec<&str> = cps[1]["paths"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    for touched in [
        "n",
        "n/x.txt",
        "a",
        "a/b",
        "a/b/c",
        "a/b/c/y.txt",
        "d",
        "d/z.txt",
        "p",
        "p/q",
        "p/q/new.txt",
        "g",
        "g/h",
        "g/h/new.txt",
        "k",
        "k/l",
        "k/l/m",
        "e",
        "e/f",
        "s",
        "s/t",
        "s/t/m.txt",
        "m.txt",
        "d/u",
        "d/u/w.txt",
        "w.txt",
    ] {
        assert!(step.contains(&touched), "{touched} not in {step:?}");
    }

    assert_ok(&session(o.ws, "rewind", Some(json!({ "id": id }))));
    for gone in [
        "n",
        "a",
        "p",
        "k",
        "s",
        "d",
        "e",
        "g",
        "n/x.txt",
        "a/b/c/y.txt",
    ] {
        assert!(!exists(&o, gone), "{gone} survived the rewind");
    }
    assert_eq!(o.read("m.txt"), "m\n");
    assert_eq!(o.read("w.txt"), "w\n");
    assert_eq!(o.read("keep.txt"), "keep\n");
    assert_eq!(sorted_changes(o.ws), before);
    assert_eq!(snapshot(&o.root), base, "a rewind changed the base");
    // The deleted base directories are deleted in the session again: making one again
    // starts empty.
    assert_ok(&o.call("create_directory", json!({"path": "d"})));
    let listed = assert_ok(&o.call("list_dir", json!({"path": "d"}))).clone();
    assert_eq!(listed["entries"], json!([]), "{listed}");
}

#[test]
fn a_base_file_created_where_the_session_created_one_is_a_conflict() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({}));
    assert_ok(&o.call("move_file", json!({"src": "a.txt", "dst": "new.txt"})));
    // Meanwhile someone creates the same name in the base (the view does not show it yet).
    fs::write(o.root.join("new.txt"), "theirs\n").unwrap();
    let v = session(o.ws, "commit", None);
    let d = assert_ok(&v);
    assert_eq!(d["committed"], json!(false), "{v}");
    assert!(
        d["conflicts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["path"] == json!("new.txt")),
        "{v}"
    );
    assert_eq!(o.base("new.txt").as_deref(), Some("theirs\n"));
    assert_eq!(o.base("a.txt").as_deref(), Some("a\n"));
}
