//! The host's review of a session (issue 31, item 6): `diff` and `commit` leave out what the
//! workspace's `.gitignore` files and the built-in cache list ignore (counted, kept in the
//! session, shown and committed with `include_ignored`), and a git repository's changes are
//! one entry naming the session's commits, committed whole.
use crate::common::*;
use crate::overlay_view::{session, Overlay};

use serde_json::{json, Value};

fn write(o: &Overlay, path: &str, content: &str) {
    assert_ok(&o.call("write_file", json!({ "path": path, "content": content })));
}

/// The paths of a diff's changes.
fn paths(diff: &Value) -> Vec<String> {
    diff["changes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["path"].as_str().unwrap().to_string())
        .collect()
}

fn diff(o: &Overlay, options: Value) -> Value {
    assert_ok(&session(o.ws, "diff", Some(options))).clone()
}

/// Caches and what the base's `.gitignore` files ignore (the root's and a nested one).
fn noisy_session() -> Overlay {
    let o = Overlay::new(
        &[
            ("a.txt", "a\n"),
            (".gitignore", "*.log\n"),
            ("sub/.gitignore", "out/\n!keep.log\n"),
        ],
        json!({}),
    );
    write(&o, "a.txt", "changed\n");
    write(&o, ".pytest_cache/v/cache/nodeids", "[]\n");
    write(&o, ".mypy_cache/3.12/a.meta.json", "{}\n");
    write(&o, ".ruff_cache/0.5.0/123", "x\n");
    write(&o, "pkg/__pycache__/m.cpython-312.pyc", "pyc\n");
    write(&o, "debug.log", "log\n");
    write(&o, "sub/out/o.txt", "o\n");
    write(&o, "sub/keep.log", "kept by a ! rule\n");
    o
}

#[test]
fn diff_leaves_out_ignored_changes_and_counts_them() {
    let o = noisy_session();
    let d = diff(&o, json!({}));
    assert_eq!(paths(&d), ["a.txt", "sub/keep.log"], "{d}");
    // .pytest_cache (2 entries: dirs are changes too) etc.: every left-out path is counted.
    let all = diff(&o, json!({"include_ignored": true}));
    let n_all = all["changes"].as_array().unwrap().len();
    assert_eq!(d["ignored"], json!(n_all - 2), "{all}");
    for p in [
        ".pytest_cache/v/cache/nodeids",
        ".mypy_cache/3.12/a.meta.json",
        ".ruff_cache/0.5.0/123",
        "pkg/__pycache__/m.cpython-312.pyc",
        "debug.log",
        "sub/out/o.txt",
    ] {
        assert!(paths(&all).iter().any(|q| q == p), "{p} missing: {all}");
    }
    assert_eq!(all["ignored"], json!(0));
    let text = session(o.ws, "diff", None)["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(text.contains("include_ignored: true shows them"), "{text}");
}

#[test]
fn a_commit_of_all_leaves_ignored_changes_in_the_session() {
    let o = noisy_session();
    let v = session(o.ws, "commit", None);
    let r = assert_ok(&v);
    assert_eq!(r["files"], json!(["a.txt", "sub/keep.log"]), "{v}");
    assert!(r["ignored"].as_u64().unwrap() >= 6, "{v}");
    assert_eq!(o.base("a.txt").as_deref(), Some("changed\n"));
    for p in [
        ".pytest_cache",
        ".mypy_cache",
        "pkg",
        "debug.log",
        "sub/out",
    ] {
        assert!(!o.root.join(p).exists(), "{p} reached the workspace");
    }
    // Still in the session and its view; the next commit of all has nothing to take.
    assert_eq!(o.read("debug.log"), "log\n");
    let e = assert_err(&session(o.ws, "commit", None), "nothing_to_commit");
    assert!(e.contains("include_ignored: true"), "{e}");
    let v = session(o.ws, "commit", Some(json!({"include_ignored": true})));
    assert_eq!(assert_ok(&v)["ignored"], json!(0), "{v}");
    assert_eq!(o.base("debug.log").as_deref(), Some("log\n"));
    assert_eq!(
        o.base(".pytest_cache/v/cache/nodeids").as_deref(),
        Some("[]\n")
    );
    assert_eq!(
        diff(&o, json!({"include_ignored": true}))["changes"],
        json!([])
    );
}

/// The rules are the base's: a `.gitignore` the session writes hides nothing from the review.
#[test]
fn a_gitignore_written_in_the_session_hides_nothing() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({}));
    write(&o, ".gitignore", "*\n");
    write(&o, "secret.txt", "s\n");
    let d = diff(&o, json!({}));
    assert_eq!(paths(&d), [".gitignore", "secret.txt"], "{d}");
    assert_eq!(d["ignored"], json!(0));
}

/// A workspace rule re-includes a built-in cache (the built-in list is the outermost layer).
#[test]
fn a_workspace_rule_re_includes_a_builtin_cache() {
    let o = Overlay::new(&[(".gitignore", "!.tox/\n")], json!({}));
    write(&o, ".tox/env.txt", "e\n");
    write(&o, ".nox/env.txt", "e\n");
    let d = diff(&o, json!({}));
    assert_eq!(paths(&d), [".tox", ".tox/env.txt"], "{d}");
    assert_eq!(d["ignored"], json!(2), "{d}");
}

/// A deleted directory takes its ignored files with it.
#[test]
fn a_deleted_directory_takes_its_ignored_files_along() {
    let o = Overlay::new(
        &[("lib/a.py", "a\n"), ("lib/__pycache__/a.pyc", "pyc\n")],
        json!({}),
    );
    assert_ok(&o.call("delete_file", json!({"path": "lib", "recursive": true})));
    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert!(!o.root.join("lib").exists(), "{v}");
}

#[test]
fn a_selection_inside_a_repository_is_refused() {
    let o = Overlay::new(&[("a.txt", "a\n")], json!({}));
    write(&o, "a.txt", "b\n");
    let e = assert_err(
        &session(o.ws, "commit", Some(json!({"paths": [".git/objects"]}))),
        "invalid_arguments",
    );
    assert!(e.contains("select \".git\""), "{e}");
    assert_eq!(o.base("a.txt").as_deref(), Some("a\n"));
}

/// Seed 004 scenario B's review: caches, a commit the agent made with git in the session, and
/// one real change are 2 entries; a commit of all carries the repository whole.
#[cfg(feature = "exec")]
#[test]
fn a_repository_is_one_entry_naming_its_commits_and_commits_whole() {
    use crate::overlay_programs::{exec_on, git_repo};
    let o = Overlay::new(&[("a.txt", "a\n"), ("b.txt", "b\n")], exec_on());
    let git = git_repo(&o);
    write(&o, "a.txt", "fixed\n");
    let v = o.call(
        "git_commit",
        json!({"message": "fix a", "paths": ["a.txt"], "confirmed": true}),
    );
    if v["ok"] == json!(false) && v["error"]["code"] == json!("sandbox_unavailable") {
        eprintln!("SKIPPED: no Landlock here: {v}");
        return;
    }
    assert_ok(&v);
    write(&o, "b.txt", "not committed to git\n");
    write(&o, ".pytest_cache/v/cache/lastfailed", "{}\n");
    write(&o, "__pycache__/t.pyc", "pyc\n");

    let d = diff(&o, json!({}));
    assert_eq!(paths(&d), [".git", "a.txt", "b.txt"], "{d}");
    let repo = &d["changes"][0];
    assert_eq!(repo["type"], json!("git_repository"), "{d}");
    assert_eq!(repo["status"], json!("M"), "{d}");
    assert!(repo["changed_paths"].as_u64().unwrap() >= 3, "{d}");
    let head = git(&["rev-parse", "HEAD"]); // the base's: not moved yet
    assert_eq!(git(&["log", "--format=%s"]), "start\n");
    let commits = repo["commits"].as_array().unwrap();
    assert_eq!(commits.len(), 1, "{d}");
    assert_eq!(commits[0]["subject"], json!("fix a"), "{d}");
    assert_ne!(commits[0]["hash"].as_str().unwrap(), head.trim());
    assert!(d["unified"].as_str().unwrap().contains("fix a"), "{d}");
    assert!(d["ignored"].as_u64().unwrap() >= 4, "{d}");

    let v = session(o.ws, "commit", None);
    assert_eq!(assert_ok(&v)["committed"], json!(true), "{v}");
    assert_eq!(
        git(&["log", "--format=%H %s"]).lines().next().unwrap(),
        format!("{} fix a", commits[0]["hash"].as_str().unwrap())
    );
    assert_eq!(git(&["log", "--format=%s"]), "fix a\nstart\n");
    git(&["fsck", "--no-progress"]);
    assert_eq!(git(&["status", "--porcelain"]), " M b.txt\n");
    assert!(!o.root.join(".pytest_cache").exists());
    assert!(!o.root.join("__pycache__").exists());
    let left = paths(&diff(&o, json!({"include_ignored": true})));
    assert!(
        left.iter()
            .all(|p| p.starts_with(".pytest_cache") || p.starts_with("__pycache__")),
        "only ignored changes stay: {left:?}"
    );
    assert!(left.contains(&"__pycache__/t.pyc".to_string()), "{left:?}");
    assert!(
        left.contains(&".pytest_cache/v/cache/lastfailed".to_string()),
        "{left:?}"
    );
}
