//! The audit log: one whole JSON line per call (fields, hashes before and after, refusals),
//! lines that never interleave between threads or processes, a log inside the workspace that no
//! tool can reach or list, and what a call says when its line cannot be written.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::fs;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};

fn sha(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

fn lines(log: &Path) -> Vec<Value> {
    let text = fs::read_to_string(log).unwrap();
    assert!(text.is_empty() || text.ends_with('\n'), "last line cut");
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("not one JSON line ({e}): {l}")))
        .collect()
}

/// A fixture with an audit log outside the workspace (in a directory of its own, kept as
/// long as the returned `TempDir`).
fn audited(extra: Value) -> (Fixture, PathBuf, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("audit.jsonl");
    let mut config = json!({"policy": {"audit_log": log}});
    merge(&mut config, extra);
    (Fixture::with_config(config), log, dir)
}

#[test]
fn every_call_is_one_line_with_its_facts_and_hashes() {
    let (f, log, _dir) = audited(json!({"policy": {"deny_read": [".env"]}}));
    f.write("old.txt", "old content\n");
    let args = json!({"path": "old.txt", "content": "new content\n"});
    assert_ok(&f.call("write_file", args.clone()));
    assert_ok(&f.call(
        "append_file",
        json!({"path": "old.txt", "content": "more\n"}),
    ));
    assert_ok(&f.call(
        "edit_file",
        json!({"path": "old.txt", "old_text": "more", "new_text": "less"}),
    ));
    let read = f.call("read_file", json!({"path": "old.txt"}));
    assert_ok(&read);
    assert_ok(&call_content(
        f.ws,
        "write_file",
        r#"{"path":"d/n.txt","mode":"create"}"#,
        b"n\n",
    ));
    assert_err(
        &f.call("read_file", json!({"path": ".env"})),
        "policy_denied",
    );
    assert_err(
        &f.call("read_file", json!({"path": "../x"})),
        "outside_workspace",
    );
    assert_ok(&call_named(f.ws, "create_directory", r#"{"path":"p/q"}"#));
    assert_ok(&f.call("list_dir", json!({})));
    let l = lines(&log);
    assert_eq!(l.len(), 9, "{l:#?}");
    for line in &l {
        let time = line["time"].as_str().unwrap();
        assert!(
            time.len() >= 20 && time.ends_with('Z') && time.as_bytes()[10] == b'T',
            "RFC 3339 UTC: {time}"
        );
        assert!(
            line["duration_us"].is_u64() && line["bytes_out"].is_u64(),
            "{line}"
        );
        let text = line.to_string();
        for secret in ["old content", "new content", "less"] {
            assert!(!text.contains(secret), "content in the log: {text}");
        }
    }
    let (write, append, edit, read_line) = (&l[0], &l[1], &l[2], &l[3]);
    assert_eq!(write["tool"], "write_file");
    assert_eq!(write["paths"], json!(["old.txt"]));
    assert_eq!(write["outcome"], "ok");
    assert_eq!(write["bytes_in"], args.to_string().len());
    assert_eq!(
        write["changes"],
        json!([{"path": "old.txt", "type": "file", "existed_before": true,
                "sha256_before": sha(b"old content\n"), "sha256_after": sha(b"new content\n")}])
    );
    assert_eq!(append["changes"][0]["sha256_before"], sha(b"new content\n"));
    assert_eq!(
        append["changes"][0]["sha256_after"],
        sha(b"new content\nmore\n")
    );
    assert_eq!(
        edit["changes"][0]["sha256_before"],
        sha(b"new content\nmore\n")
    );
    assert_eq!(
        edit["changes"][0]["sha256_after"],
        sha(b"new content\nless\n")
    );
    assert_eq!(read_line["changes"], json!([]));
    assert_eq!(read_line["bytes_out"], "new content\nless\n".len());
    let create = &l[4];
    assert_eq!(
        create["bytes_in"],
        r#"{"path":"d/n.txt","mode":"create"}"#.len() + 2
    );
    assert_eq!(
        create["changes"],
        json!([{"path": "d", "type": "dir", "existed_before": false, "sha256_before": null, "sha256_after": null},
               {"path": "d/n.txt", "type": "file", "existed_before": false, "sha256_before": null, "sha256_after": sha(b"n\n")}])
    );
    assert_eq!(l[5]["outcome"], "policy_denied");
    assert_eq!(l[5]["paths"], json!([".env"]));
    assert_eq!(l[6]["outcome"], "outside_workspace");
    let dirs: Vec<&str> = l[7]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap())
        .collect();
    assert_eq!(dirs, ["p", "p/q"]);
    assert_eq!(l[8]["tool"], "list_dir");
}

#[test]
fn a_write_through_a_symlink_logs_the_file_it_changed() {
    let (f, log, _dir) = audited(json!({}));
    f.write("real/target.txt", "a");
    symlink("real/target.txt", f.p("link")).unwrap();
    assert_ok(&f.call("write_file", json!({"path": "link", "content": "b"})));
    let l = lines(&log);
    assert_eq!(l[0]["paths"], json!(["link"]));
    assert_eq!(l[0]["changes"][0]["path"], "real/target.txt");
    assert_eq!(l[0]["changes"][0]["sha256_before"], sha(b"a"));
}

#[test]
fn refusals_of_a_read_only_workspace_are_logged() {
    let (f, log, _dir) = audited(json!({"policy": {"writes_enabled": false}}));
    assert_err(
        &f.call("write_file", json!({"path": "a/b.txt", "content": "x"})),
        "writes_disabled",
    );
    assert_err(
        &call_named(f.ws, "create_directory", "{}"),
        "writes_disabled",
    );
    let l = lines(&log);
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["outcome"], "writes_disabled");
    assert_eq!(l[0]["paths"], json!(["a/b.txt"]));
    assert_eq!(l[1]["tool"], "create_directory");
    assert_eq!(l[1]["paths"], json!([]));
}

#[test]
fn a_log_inside_the_workspace_is_out_of_reach_and_unlisted() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("ws");
    let ws = open_ws(
        &root,
        json!({"policy": {"audit_log": root.join("logs/../logs/audit.jsonl")}}),
    );
    let log = root.join("logs/audit.jsonl");
    fs::hard_link(&log, root.join("copy.txt")).unwrap();
    symlink("logs/audit.jsonl", root.join("link.txt")).unwrap();
    fs::write(root.join("logs/other.txt"), "x").unwrap();
    let c = |tool: &str, args: Value| call_named(ws, tool, &args.to_string());
    for path in [
        "logs/audit.jsonl",
        "copy.txt",
        "link.txt",
        "logs/./audit.jsonl",
    ] {
        for (tool, args) in [
            ("read_file", json!({"path": path})),
            ("write_file", json!({"path": path, "content": "forged\n"})),
            (
                "write_file",
                json!({"path": path, "content": "x", "mode": "create"}),
            ),
            ("append_file", json!({"path": path, "content": "forged\n"})),
            (
                "edit_file",
                json!({"path": path, "old_text": "ok", "new_text": "forged"}),
            ),
            ("list_dir", json!({"path": path})),
            ("create_directory", json!({"path": path})),
        ] {
            let msg = assert_err(&c(tool, args.clone()), "policy_denied");
            assert!(msg.contains("audit log"), "{tool} {args}: {msg}");
        }
    }
    let listing = c("list_dir", json!({"path": "logs"}));
    let data = assert_ok(&listing);
    assert_eq!(
        data["entries"],
        json!([{"name": "other.txt", "type": "file", "size": 1}])
    );
    assert_eq!(
        (data["total"].as_u64(), data["denied"].as_u64()),
        (Some(1), Some(0))
    );
    let top = c("list_dir", json!({}));
    let names: Vec<&str> = assert_ok(&top)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["link.txt", "logs"], "the hard link is hidden too");
    let text = fs::read_to_string(&log).unwrap();
    assert!(!text.contains("forged"));
    assert_eq!(lines(&log).len(), 7 * 4 + 2);
    close_ws(ws);
}

/// Child half of `concurrent_writers_never_interleave_lines`: another process appending.
#[test]
#[ignore = "child process of concurrent_writers_never_interleave_lines"]
fn concurrent_writer_child() {
    let Ok(setup) = std::env::var("WSFS_AUDIT_CHILD") else {
        return;
    };
    let (root, log) = setup.split_once('\n').unwrap();
    let ws = open_ws(Path::new(root), json!({"policy": {"audit_log": log}}));
    hammer(ws, 200, 'p');
}

/// Calls that each log a line of about 18 KiB (a long path of control characters, escaped to
/// six bytes each in JSON), several pages long, so a line written in pieces would show.
fn hammer(ws: u64, calls: usize, tag: char) {
    let long: String = std::iter::repeat_n('\u{1}', 3000).collect();
    for i in 0..calls {
        let path = format!("{tag}{i}/{long}");
        assert_err(
            &call(ws, "read_file", json!({"path": path})),
            "path_not_found",
        );
    }
}

#[test]
fn concurrent_writers_never_interleave_lines() {
    let f = Fixture::new();
    let log = f.base.join("shared.jsonl");
    let ws_a = open_ws(&f.root, json!({"policy": {"audit_log": log}}));
    let ws_b = open_ws(&f.root, json!({"policy": {"audit_log": log}}));
    let children: Vec<_> = (0..2)
        .map(|_| {
            child_test(&crate::test_name!(concurrent_writer_child))
                .env(
                    "WSFS_AUDIT_CHILD",
                    format!("{}\n{}", f.root.display(), log.display()),
                )
                .spawn()
                .unwrap()
        })
        .collect();
    let threads: Vec<_> = (0..6)
        .map(|t| {
            let ws = if t % 2 == 0 { ws_a } else { ws_b };
            std::thread::spawn(move || hammer(ws, 200, char::from(b'a' + t as u8)))
        })
        .collect();
    for t in threads {
        t.join().unwrap();
    }
    for mut child in children {
        assert!(child.wait().unwrap().success(), "a child process failed");
    }
    let l = lines(&log);
    assert_eq!(
        l.len(),
        6 * 200 + 2 * 200,
        "every call has exactly one whole line"
    );
    for line in &l {
        let path = line["paths"][0].as_str().unwrap();
        assert_eq!(
            path.chars().filter(|c| *c == '\u{1}').count(),
            3000,
            "{path:.20}"
        );
    }
    assert!(fs::metadata(&log).unwrap().len() > 16 * 1024 * l.len() as u64);
    close_ws(ws_a);
    close_ws(ws_b);
}

#[test]
fn audit_logs_that_cannot_be_opened_refuse_the_workspace() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    let fifo = tmp.path().join("fifo");
    mkfifo(&fifo);
    let dir = tmp.path().join("a-dir");
    fs::create_dir(&dir).unwrap();
    for (log, code) in [(fifo, "not_a_file"), (dir, "not_a_file")] {
        let config = json!({"root": root, "create_root": true, "policy": {"audit_log": log}});
        let v = with_watchdog(10, "opening a FIFO as the log", move || {
            open_raw(&config.to_string())
        });
        let msg = assert_err_in(&v, &[code, "io_error"]);
        assert!(
            v["error"]["message"]
                .as_str()
                .unwrap()
                .contains("audit_log"),
            "{msg}: {v}"
        );
    }
    // Missing parent directories are created; the log is private to its owner.
    let nested = tmp.path().join("state/wsfs/audit.jsonl");
    let ws = open_ws(&root, json!({"policy": {"audit_log": nested}}));
    use std::os::unix::fs::PermissionsExt;
    let mode = fs::metadata(&nested).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode & 0o077, 0, "mode {mode:o}");
    close_ws(ws);
}

/// Child half of `an_unwritable_log_withholds_reads_and_reports_changes`: the log is past the
/// process's file size limit (SIGXFSZ ignored, as Go hosts do), so every line fails with EFBIG.
#[test]
#[ignore = "child process of an_unwritable_log_withholds_reads_and_reports_changes"]
fn unwritable_log_child() {
    let Ok(dir) = std::env::var("WSFS_AUDIT_FULL_CHILD") else {
        return;
    };
    let dir = PathBuf::from(dir);
    let (root, log) = (dir.join("ws"), dir.join("audit.jsonl"));
    fs::write(&log, vec![b'#'; 64 * 1024]).unwrap();
    let ws = open_ws(&root, json!({"policy": {"audit_log": log}}));
    fs::write(root.join("a.txt"), "hello\n").unwrap();
    // SAFETY: setting a signal disposition to SIG_IGN in this single-purpose child process.
    unsafe { libc::signal(libc::SIGXFSZ, libc::SIG_IGN) };
    let limit = libc::rlimit {
        rlim_cur: 32 * 1024,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: a valid rlimit for this process.
    assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_FSIZE, &limit) }, 0);
    let read = call(ws, "read_file", json!({"path": "a.txt"}));
    let msg = assert_err(&read, "io_error");
    assert!(
        msg.contains("audit log") && msg.contains("withheld"),
        "{msg}"
    );
    assert!(
        !read.to_string().contains("hello"),
        "the content leaked: {read}"
    );
    let write = call(
        ws,
        "write_file",
        json!({"path": "b.txt", "content": "new\n"}),
    );
    assert_ok(&write);
    let warnings = write["warnings"].to_string();
    assert!(
        warnings.contains("audit log") && warnings.contains("do not repeat"),
        "{write}"
    );
    assert_eq!(
        fs::read(root.join("b.txt")).unwrap(),
        b"new\n",
        "the change was made"
    );
    let failed = call(ws, "read_file", json!({"path": "missing.txt"}));
    let msg = assert_err(&failed, "path_not_found");
    assert!(msg.contains("audit log"), "{msg}");
    assert_eq!(
        fs::metadata(&log).unwrap().len(),
        64 * 1024,
        "no partial line"
    );
    println!("CHILD-CHECKS-PASSED");
}

#[test]
fn an_unwritable_log_withholds_reads_and_reports_changes() {
    let tmp = tempfile::tempdir().unwrap();
    let out = child_test(&crate::test_name!(unwritable_log_child))
        .arg("--nocapture")
        .env("WSFS_AUDIT_FULL_CHILD", tmp.path())
        .output()
        .unwrap();
    let report =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "child failed: {report}");
    assert!(
        report.contains("CHILD-CHECKS-PASSED"),
        "child did not run: {report}"
    );
}

#[test]
fn unrestricted_changes_are_named_like_every_other_path() {
    let (f, log, _dir) = audited(json!({"restrict_to_workspace": false}));
    let outside = f.base.join("elsewhere");
    assert_ok(&f.call("write_file", json!({"path": "new/in.txt", "content": "i"})));
    let out_path = outside.join("sub/out.txt");
    assert_ok(&f.call("write_file", json!({"path": out_path, "content": "o"})));
    let l = lines(&log);
    let paths = |line: &Value| -> Vec<String> {
        line["changes"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| c["path"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(paths(&l[0]), ["new", "new/in.txt"]);
    let shown = |p: &Path| p.to_str().unwrap().to_owned();
    assert_eq!(
        paths(&l[1]),
        [
            shown(&outside),
            shown(&outside.join("sub")),
            shown(&out_path)
        ]
    );
}

#[test]
fn a_patch_logs_every_file_it_changed_and_a_dry_run_none() {
    let (f, log, _dir) = audited(json!({}));
    f.write("a.txt", "one\ntwo\n");
    f.write("gone.txt", "bye\n");
    let patch = "*** Begin Patch\n*** Update File: a.txt\n@@\n one\n-two\n+TWO\n*** Add File: new.txt\n+fresh\n*** Delete File: gone.txt\n*** End Patch\n";
    let dry = call_named(
        f.ws,
        "apply_patch",
        &json!({"patch": patch, "dry_run": true}).to_string(),
    );
    assert_eq!(assert_ok(&dry)["applied"], true);
    let done = call_named(f.ws, "apply_patch", &json!({"patch": patch}).to_string());
    assert_eq!(assert_ok(&done)["applied"], true, "{done}");
    let l = lines(&log);
    assert_eq!(l.len(), 2);
    assert_eq!(l[0]["tool"], "apply_patch");
    assert!(
        l[0].get("changes").is_none_or(|c| c == &json!([])),
        "dry run: {}",
        l[0]
    );
    let mut changes: Vec<(String, Value, Value)> = l[1]["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            assert_eq!(c["type"], "file");
            let path = c["path"].as_str().unwrap().to_string();
            (path, c["sha256_before"].clone(), c["sha256_after"].clone())
        })
        .collect();
    changes.sort_by(|a, b| a.0.cmp(&b.0));
    assert_eq!(
        changes,
        [
            (
                "a.txt".to_string(),
                json!(sha(b"one\ntwo\n")),
                json!(sha(b"one\nTWO\n"))
            ),
            ("gone.txt".to_string(), json!(sha(b"bye\n")), Value::Null),
            ("new.txt".to_string(), Value::Null, json!(sha(b"fresh\n"))),
        ]
    );
    let text = fs::read_to_string(&log).unwrap();
    assert!(
        !text.contains("fresh") && !text.contains("TWO"),
        "contents logged: {text}"
    );
}

#[test]
fn moves_and_deletions_are_logged_with_hashes() {
    let (f, log, _dir) = audited(json!({}));
    f.write("a.txt", "alpha\n");
    f.write("tree/x/y.txt", "y");
    let v = call_named(
        f.ws,
        "move_file",
        &json!({"src": "a.txt", "dst": "new/b.txt"}).to_string(),
    );
    assert_ok(&v);
    let v = call_named(
        f.ws,
        "delete_file",
        &json!({"path": "new/b.txt"}).to_string(),
    );
    assert_ok(&v);
    let v = call_named(
        f.ws,
        "delete_file",
        &json!({"path": "tree", "recursive": true}).to_string(),
    );
    assert_ok(&v);
    let l = lines(&log);
    assert_eq!(l.len(), 3);
    let h = sha(b"alpha\n");
    assert_eq!(l[0]["tool"], "move_file");
    assert_eq!(
        l[0]["changes"],
        json!([
            {"path": "a.txt", "type": "file", "existed_before": true, "sha256_before": h, "sha256_after": null},
            {"path": "new/b.txt", "type": "file", "existed_before": false, "sha256_before": null, "sha256_after": h},
            {"path": "new", "type": "dir", "existed_before": false, "sha256_before": null, "sha256_after": null}
        ])
    );
    assert_eq!(
        l[1]["changes"],
        json!([{"path": "new/b.txt", "type": "file", "existed_before": true, "sha256_before": h, "sha256_after": null}])
    );
    assert_eq!(
        l[2]["changes"],
        json!([{"path": "tree", "type": "dir", "existed_before": true, "sha256_before": null, "sha256_after": null}])
    );
}

#[test]
fn a_recursive_deletion_never_removes_the_audit_log() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    fs::create_dir_all(root.join("logs")).unwrap();
    let log = root.join("logs/audit.jsonl");
    let ws = open_ws(&root, json!({"policy": {"audit_log": log}}));
    fs::write(root.join("logs/other.txt"), "o").unwrap();
    let v = call_named(
        ws,
        "delete_file",
        &json!({"path": "logs", "recursive": true}).to_string(),
    );
    assert_eq!(assert_ok(&v)["stopped"], "not_removed", "{v}");
    assert!(log.exists() && !root.join("logs/other.txt").exists());
    let v = call_named(
        ws,
        "move_file",
        &json!({"src": "logs", "dst": "moved"}).to_string(),
    );
    assert_err(&v, "policy_denied");
    close_ws(ws);
}

/// Finding 16.2: `get_path_info` described the audit log (its size and hash) by its name, a
/// hard link to it, or its directory through a symlink.
#[test]
fn get_path_info_never_describes_the_audit_log() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("ws");
    let ws = open_ws(
        &root,
        json!({"policy": {"audit_log": root.join("logs/audit.jsonl")}}),
    );
    fs::hard_link(root.join("logs/audit.jsonl"), root.join("copy.txt")).unwrap();
    symlink("logs", root.join("logdir")).unwrap();
    symlink("logs/audit.jsonl", root.join("link.txt")).unwrap();
    for path in [
        "logs/audit.jsonl",
        "./logs/../logs/audit.jsonl",
        "copy.txt",
        "logdir/audit.jsonl",
    ] {
        let v = call_named(ws, "get_path_info", &json!({ "path": path }).to_string());
        let msg = assert_err(&v, "policy_denied");
        assert!(msg.contains("audit log"), "{path}: {msg}");
    }
    // The symlink itself is described, not the log it leads to.
    let v = call_named(ws, "get_path_info", r#"{"path": "link.txt"}"#);
    let d = assert_ok(&v);
    assert_eq!(d["type"], json!("symlink"));
    assert!(
        d.get("symlink_target").is_none() && d.get("sha256").is_none(),
        "{v}"
    );
    close_ws(ws);
    // A log outside the workspace, hard-linked into it.
    let (f, log, _dir) = audited(json!({}));
    fs::hard_link(&log, f.p("copy.txt")).unwrap();
    let v = f.call("get_path_info", json!({"path": "copy.txt"}));
    assert!(assert_err(&v, "policy_denied").contains("audit log"));
}

/// Finding 16.9: a hard link to an audit log kept outside the workspace was refused to
/// `read_file` but listed and searched by the walks (the identity check ran only with
/// `deny_read` rules or a log inside). Every listing and walk leaves it out, uncounted.
#[test]
fn a_hard_link_to_an_outside_log_is_in_no_listing_or_walk() {
    let (f, log, _dir) = audited(json!({}));
    f.write("sub/notes.txt", "tool notes\n");
    assert_ok(&f.call("read_file", json!({"path": "sub/notes.txt"})));
    fs::hard_link(&log, f.p("sub/copy.txt")).unwrap();
    fs::hard_link(&log, f.p("top.jsonl")).unwrap();
    assert_err(
        &f.call("read_file", json!({"path": "sub/copy.txt"})),
        "policy_denied",
    );
    let v = f.call("list_dir", json!({"path": "sub"}));
    let d = assert_ok(&v);
    assert_eq!(
        d["entries"],
        json!([{"name": "notes.txt", "type": "file", "size": 11}]),
        "{v}"
    );
    assert_eq!(
        (d["total"].clone(), d["denied"].clone()),
        (json!(1), json!(0))
    );
    let v = f.call("list_dir", json!({"path": ".", "depth": 3}));
    let text = v["text"].as_str().unwrap();
    assert!(
        !text.contains("copy.txt") && !text.contains("top.jsonl"),
        "{text}"
    );
    assert_eq!(assert_ok(&v)["total"], json!(2), "{text}");
    let v = call_named(f.ws, "find_files", r#"{"pattern": "**"}"#);
    assert_eq!(assert_ok(&v)["files"], json!(["sub/notes.txt"]), "{v}");
    // The log's lines hold "tool"; only the notes may match.
    let v = call_named(f.ws, "search_text", r#"{"query": "tool"}"#);
    let d = assert_ok(&v);
    let files: Vec<&str> = d["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap())
        .collect();
    assert_eq!(files, ["sub/notes.txt"], "{v}");
    assert_eq!(d["denied"], json!(0));
    // The suggestions after a missing path never name it either.
    let v = f.call("read_file", json!({"path": "sub/copy.tx"}));
    assert!(!assert_err(&v, "path_not_found").contains("copy.txt"));
}

/// An edit writes the kept parts of the file and its new text as pieces (16 replacements or
/// fewer) or joined (more): either way the file and its audited hash are the whole new content.
#[test]
fn edits_written_in_pieces_or_joined_log_the_hash_of_the_file() {
    let (f, log, _dir) = audited(json!({}));
    for (n, name) in [(16, "pieces.txt"), (17, "joined.txt"), (300, "many.txt")] {
        let before = "keep x\n".repeat(n) + "end";
        f.write(name, &before);
        let v = f.call(
            "edit_file",
            json!({"path": name, "old_text": "x\n", "new_text": "y\nz\n", "replace_all": true}),
        );
        let data = assert_ok(&v);
        let after = "keep y\nz\n".repeat(n) + "end";
        assert_eq!(f.read(name), after.as_bytes(), "{name}");
        assert_eq!(data["new_size"], after.len(), "{name}");
        assert_eq!(
            (&data["first_changed_line"], &data["last_changed_line"]),
            (&json!(1), &json!(2 * n)),
            "{name}"
        );
        let l = lines(&log);
        let last = l.last().unwrap();
        assert_eq!(last["changes"][0]["sha256_before"], sha(before.as_bytes()));
        assert_eq!(last["changes"][0]["sha256_after"], sha(after.as_bytes()));
    }
}
