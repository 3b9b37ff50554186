//! A multi-file apply_patch is all or nothing: a failure part-way rolls back, and a crash
//! (an abandoned commit, or SIGKILL at random moments, hundreds of times) is rolled back or
//! finished when the workspace is next opened, leaving no `.wsfs-` name or journal behind.
//! While a commit runs, its staged and backup files are hidden from every tool and survive
//! the sweep of another open of the workspace.

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::time::Duration;
use wsfs::testing::{
    inject_commit_fault, resume_commit, set_thread_faults, take_thread_faults,
    wait_for_paused_commit, CommitFault, FaultPlan, Sys, SysFault,
};

const FILES: usize = 6;
const CRASH_ENV: &str = "WSFS_PATCH_CRASH_CHILD";

/// Version `v` ("A" or "B") of file `i`: ~40 KB, so staging and fsyncs take a while.
fn content(i: usize, v: &str) -> String {
    (0..1000)
        .map(|n| format!("{v}{v} file {i} line {n:04} {v}{v}{v}{v}{v}{v}{v}{v}\n"))
        .collect()
}

/// Writes version A: every file at A, no `extra.txt`.
fn write_a(root: &Path) {
    for i in 0..FILES {
        fs::write(root.join(format!("f{i}.txt")), content(i, "A")).unwrap();
    }
}

/// The patch from version `from` to the other: the first line of every file changes,
/// `extra.txt` and `sub/new/extra2.txt` (in a new directory) are added (A to B) or deleted
/// (B to A).
fn flip(from: &str) -> Value {
    let to = if from == "A" { "B" } else { "A" };
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..FILES {
        let line = |v: &str| format!("{v}{v} file {i} line 0000 {}", v.repeat(8));
        p.push_str(&format!(
            "*** Update File: f{i}.txt\n@@\n-{}\n+{}\n",
            line(from),
            line(to)
        ));
    }
    if from == "A" {
        p.push_str("*** Add File: extra.txt\n+extra\n*** Add File: sub/new/extra2.txt\n+extra2\n");
    } else {
        p.push_str("*** Delete File: extra.txt\n*** Delete File: sub/new/extra2.txt\n");
    }
    p.push_str("*** End Patch\n");
    json!({ "patch": p })
}

/// The first line of each file's version B differs from A; the rest is A.
fn version_b(i: usize) -> String {
    content(i, "A").replacen(
        &format!("AA file {i} line 0000 AAAAAAAA"),
        &format!("BB file {i} line 0000 BBBBBBBB"),
        1,
    )
}

/// Which version the whole tree is at; panics on a mix.
fn which_version(root: &Path) -> &'static str {
    let mut seen = vec![];
    for i in 0..FILES {
        let bytes = fs::read(root.join(format!("f{i}.txt"))).unwrap();
        if bytes == content(i, "A").as_bytes() {
            seen.push("A");
        } else if bytes == version_b(i).as_bytes() {
            seen.push("B");
        } else {
            panic!(
                "f{i}.txt is neither version A nor B ({} bytes)",
                bytes.len()
            );
        }
    }
    let extra = root.join("extra.txt").exists();
    let extra2 = root.join("sub/new/extra2.txt").exists();
    seen.push(if extra { "B" } else { "A" });
    seen.push(if extra2 { "B" } else { "A" });
    if !extra2 && root.join("sub").exists() {
        // Left by a completed B-to-A patch (deleting a file keeps its directory), never
        // with anything in it.
        assert_eq!(fs::read_dir(root.join("sub/new")).unwrap().count(), 0);
    }
    let first = seen[0];
    assert!(
        seen.iter().all(|v| *v == first),
        "a mix of versions: {seen:?}"
    );
    first
}

/// Journals, in the workspaces' state directories under `state`.
fn journals(state: &Path) -> usize {
    let Ok(dirs) = fs::read_dir(state) else {
        return 0;
    };
    dirs.map(|d| d.unwrap())
        .filter(|d| d.file_type().unwrap().is_dir())
        .map(|d| fs::read_dir(d.path()).unwrap().count())
        .sum()
}

/// Records of the directories a call is making, kept beside the state directories.
fn dir_records(state: &Path) -> usize {
    let Ok(entries) = fs::read_dir(state) else {
        return 0;
    };
    entries
        .filter(|e| e.as_ref().unwrap().file_type().unwrap().is_file())
        .count()
}

fn config(state: &Path) -> Value {
    json!({ "state_dir": state.to_str().unwrap() })
}

/// Child half of `sigkill_during_multi_file_patches`: flips between A and B forever.
#[test]
#[ignore = "child process of sigkill_during_multi_file_patches"]
fn patch_crash_child() {
    let Ok(dirs) = std::env::var(CRASH_ENV) else {
        return;
    };
    let (root, state) = dirs.split_once('\n').unwrap();
    let ws = open_ws(Path::new(root), config(Path::new(state)));
    let mut at = which_version(Path::new(root));
    loop {
        let v = call_named(ws, "apply_patch", &flip(at).to_string());
        let d = assert_ok(&v);
        assert_eq!(d["applied"], json!(true), "{}", short(&v));
        at = if at == "A" { "B" } else { "A" };
    }
}

#[test]
fn sigkill_during_multi_file_patches() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let (root, state) = (base.join("ws"), base.join("state"));
    fs::create_dir(&root).unwrap();
    write_a(&root);
    let trials: u64 = std::env::var("WSFS_PATCH_CRASH_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(300);
    let (mut seen_a, mut seen_b, mut recovered) = (0, 0, 0);
    for i in 0..trials {
        let mut child = child_test(&crate::test_name!(patch_crash_child))
            .env(
                CRASH_ENV,
                format!("{}\n{}", root.display(), state.display()),
            )
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .unwrap();
        std::thread::sleep(Duration::from_millis(20 + (i * 37) % 90));
        let still_running = child.try_wait().unwrap().is_none();
        child.kill().unwrap(); // SIGKILL
        child.wait().unwrap();
        assert!(still_running, "the crash child exited early (trial {i})");
        if journals(&state) > 0 {
            recovered += 1;
        }
        // Reopening recovers; then the tree is one version, with nothing of wsfs's left.
        let ws = open_ws(&root, config(&state));
        match which_version(&root) {
            "A" => seen_a += 1,
            _ => seen_b += 1,
        }
        assert_eq!(
            wsfs_names(&root),
            Vec::<std::path::PathBuf>::new(),
            "trial {i}"
        );
        assert_eq!(journals(&state), 0, "trial {i}: a journal is left");
        assert_eq!(dir_records(&state), 0, "trial {i}: a record is left");
        let listed = assert_ok(&call(ws, "list_dir", json!({}))).clone();
        assert!(!listed.to_string().contains(".wsfs-"), "{listed}");
        assert_ok(&close_ws(ws));
    }
    eprintln!("{trials} kills: A {seen_a}, B {seen_b}, {recovered} interrupted commits recovered");
    assert!(
        seen_a > 0 && seen_b > 0,
        "the child never completed a patch both ways"
    );
    assert!(
        recovered > 0,
        "no kill landed inside a commit: the test proves nothing"
    );
}

const KILL_ENV: &str = "WSFS_KILL_POINT_CHILD";

/// Child half of the kill-point tests. `WSFS_KILL_POINT_CHILD` is a JSON spec: `phase`
/// "commit" (open the workspace, then apply `PATCH` under the plan) or "recover" (open the
/// workspace under the plan: its recovery runs), `root`, `state`, `kill_at` (this process
/// kills itself before that hooked call), and optionally `fail_at`, `errno`, `persistent`.
#[test]
#[ignore = "child process of the kill-point tests"]
fn kill_point_child() {
    let Ok(spec) = std::env::var(KILL_ENV) else {
        return;
    };
    let spec: Value = serde_json::from_str(&spec).unwrap();
    let config = json!({"root": spec["root"], "state_dir": spec["state"]}).to_string();
    let plan = FaultPlan {
        fail: spec["fail_at"].as_u64().map(|at| SysFault {
            at: at as usize,
            errno: spec["errno"].as_i64().unwrap() as i32,
            persistent: spec["persistent"].as_bool().unwrap(),
        }),
        kill_at: spec["kill_at"].as_u64().map(|k| k as usize),
    };
    if spec["phase"] == "commit" {
        let ws = assert_ok(&open_raw(&config))["workspace"].as_u64().unwrap();
        set_thread_faults(plan);
        call_named(ws, "apply_patch", &json!({ "patch": PATCH }).to_string());
    } else {
        set_thread_faults(plan);
        assert_ok(&open_raw(&config));
    }
    take_thread_faults();
}

/// Runs `kill_point_child` on `case` with `spec`: whether it was killed at its kill point
/// (rather than finishing first).
fn killed(case: &Case, mut spec: Value) -> bool {
    merge(&mut spec, json!({"root": case.root, "state": case.state}));
    let out = child_test(&crate::test_name!(kill_point_child))
        .env(KILL_ENV, spec.to_string())
        .output()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    let log = String::from_utf8_lossy(&out.stdout) + String::from_utf8_lossy(&out.stderr);
    match out.status.signal() {
        Some(9) => true,
        Some(other) => panic!("the child died of signal {other}: {log}"),
        None => {
            assert!(
                out.status.success() && log.contains("1 passed"),
                "{spec}: {log}"
            );
            false
        }
    }
}

/// Reopens the workspace after a kill: the files are all old or all new, and nothing of
/// wsfs's is left (no temp file, no journal, no directory a rolled-back commit created).
fn recovered(case: &Case, what: &str) -> &'static str {
    assert_eq!(case.reopen(), json!([]), "{what}");
    assert!(
        case.state_files().is_empty() && wsfs_names(&case.root).is_empty(),
        "{what}: left {:?} {:?}",
        case.state_files(),
        wsfs_names(&case.root)
    );
    match (case.is_old(), case.is_new()) {
        (true, _) => "old",
        (_, true) => "new",
        _ => panic!("{what}: torn: {:?}", snapshot(&case.root)),
    }
}

/// Issue 16 finding 5, and SIGKILL anywhere: before every hooked system call of a five-file
/// commit, of its rollback after an injected failure, of its clean-up, and of the recovery
/// that the next open runs (itself killed at every call, then run again). After the final
/// open the files are all old or all new, and nothing of wsfs's is left; a kill before the
/// commit point (the journal's rename) ends all old, one after it all new. It used to be torn
/// when the kill landed in the undo that followed an EIO on the fsync after that rename (the
/// journal said committed, so the next open rolled the half-undone commit forward).
/// `make test-crash` adds an EIO at every call, once and from then on, each followed by a kill
/// at every call after it, and runs the random-timing test below longer.
#[test]
fn sigkill_at_every_hooked_call_of_a_commit_its_rollback_and_its_recovery() {
    let calls = calls_of_a_commit();
    let renames: Vec<usize> = (0..calls.len())
        .filter(|&i| calls[i] == Sys::Rename)
        .collect();
    let point = *renames.last().unwrap();
    let eio = |at: usize, persistent: bool| json!({"fail_at": at, "errno": libc::EIO, "persistent": persistent});
    let mut trials = 0;
    let mut scenarios = vec![
        ("undisturbed".to_string(), json!({}), true),
        (
            "rollback after one EIO on the third rename".into(),
            eio(renames[2], false),
            false,
        ),
        (
            "rollback failing on every rename".into(),
            eio(renames[2], true),
            false,
        ),
        (
            "finishing after an EIO on the fsync after the commit point".into(),
            eio(point + 1, false),
            true,
        ),
    ];
    if std::env::var("WSFS_KILL_POINTS").is_ok_and(|v| v == "all") {
        // `make test-crash`: an EIO at every call, once and from then on, and every kill point
        // of what follows.
        for (at, call) in calls.iter().enumerate() {
            for persistent in [false, true] {
                let scenario = format!("EIO at call {at} ({:?}), persistent {persistent}", call);
                scenarios.push((scenario, eio(at, persistent), at > point));
            }
        }
    }
    for (scenario, fault, finishes) in scenarios {
        for kill_at in 0.. {
            let case = Case::unopened();
            let mut spec = json!({"phase": "commit", "kill_at": kill_at});
            merge(&mut spec, fault.clone());
            if !killed(&case, spec) {
                break;
            }
            let what = format!("{scenario}: killed before call {kill_at}");
            let want = if finishes && kill_at > point {
                "new"
            } else {
                "old"
            };
            assert_eq!(recovered(&case, &what), want, "{what}");
            trials += 1;
        }
    }
    // Recovery killed at every call: of a commit killed part-way through its renames, of one
    // killed in its rollback, and of one killed just after its commit point.
    let interrupted = [
        (json!({"kill_at": renames[2]}), "old"),
        (
            {
                let mut spec = eio(renames[3], false);
                merge(&mut spec, json!({"kill_at": renames[3] + 3}));
                spec
            },
            "old",
        ),
        (json!({"kill_at": point + 1}), "new"),
    ];
    for (commit, want) in interrupted {
        for kill_at in 0.. {
            let case = Case::unopened();
            let mut spec = json!({"phase": "commit"});
            merge(&mut spec, commit.clone());
            assert!(killed(&case, spec), "{commit}: the commit was not killed");
            let what = format!("{commit}, recovery killed before call {kill_at}");
            if !killed(&case, json!({"phase": "recover", "kill_at": kill_at})) {
                break;
            }
            assert_eq!(recovered(&case, &what), want, "{what}");
            trials += 1;
        }
    }
    eprintln!("{trials} kill points");
    assert!(trials >= 200, "only {trials} kill points");
}

fn three_file_patch() -> String {
    "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** Delete File: c.txt\n*** Add File: d/e/new.txt\n+new\n*** End Patch\n".into()
}

fn three_files(f: &Fixture) {
    f.write("a.txt", "a\n");
    f.write("b.txt", "b\n");
    f.write("c.txt", "c\n");
}

#[test]
fn a_failure_part_way_rolls_back() {
    for after in 0..4 {
        let f = Fixture::with_state_dir(json!({}));
        three_files(&f);
        let before = snapshot(&f.root);
        inject_commit_fault(&f.root, Some(CommitFault::FailAfterRenames(after)));
        let v = call_named(
            f.ws,
            "apply_patch",
            &json!({ "patch": three_file_patch() }).to_string(),
        );
        let msg = assert_err(&v, "io_error");
        assert!(msg.contains("injected"), "{msg}");
        assert_eq!(
            snapshot(&f.root),
            before,
            "after {after} renames: not rolled back"
        );
        assert!(f.state_files().is_empty(), "{:?}", f.state_files());
        // And the same patch then applies.
        let v = call_named(
            f.ws,
            "apply_patch",
            &json!({ "patch": three_file_patch() }).to_string(),
        );
        assert_eq!(assert_ok(&v)["applied"], json!(true), "{v}");
        assert_eq!(f.read("d/e/new.txt"), b"new\n");
    }
}

#[test]
fn an_abandoned_commit_is_rolled_back_or_finished_at_open() {
    for (fault, finished) in [
        (CommitFault::AbandonAfterRenames(0), false),
        (CommitFault::AbandonAfterRenames(2), false),
        (CommitFault::AbandonAfterRenames(3), false),
        (CommitFault::AbandonAfterCommitMark, true),
    ] {
        let f = Fixture::with_state_dir(json!({}));
        three_files(&f);
        let before = snapshot(&f.root);
        inject_commit_fault(&f.root, Some(fault));
        let v = call_named(
            f.ws,
            "apply_patch",
            &json!({ "patch": three_file_patch() }).to_string(),
        );
        assert_err(&v, "io_error");
        assert!(
            !f.state_files().is_empty(),
            "{fault:?}: no journal left to recover"
        );
        assert!(!wsfs_names(&f.root).is_empty(), "{fault:?}: nothing staged");
        let again = open_ws(&f.root, json!({ "state_dir": f.base.join("state") }));
        if finished {
            assert_eq!(f.read("a.txt"), b"A\n");
            assert_eq!(f.read("b.txt"), b"B\n");
            assert!(!f.p("c.txt").exists());
            assert_eq!(f.read("d/e/new.txt"), b"new\n");
        } else {
            assert_eq!(snapshot(&f.root), before, "{fault:?}: not rolled back");
        }
        assert!(
            wsfs_names(&f.root).is_empty(),
            "{fault:?}: {:?}",
            wsfs_names(&f.root)
        );
        assert!(
            f.state_files().is_empty(),
            "{fault:?}: {:?}",
            f.state_files()
        );
        // Recovery is idempotent: opening again changes nothing.
        let snap = snapshot(&f.root);
        let third = open_ws(&f.root, json!({ "state_dir": f.base.join("state") }));
        assert_eq!(snapshot(&f.root), snap);
        assert_ok(&close_ws(again));
        assert_ok(&close_ws(third));
    }
}

#[test]
fn a_live_commit_is_never_recovered_by_another_open() {
    // A journal held by a live commit (its lock) is left alone by Workspace::open: simulated
    // by holding the lock on a journal-shaped file.
    let f = Fixture::with_state_dir(json!({}));
    three_files(&f);
    inject_commit_fault(&f.root, Some(CommitFault::AbandonAfterRenames(1)));
    let v = call_named(
        f.ws,
        "apply_patch",
        &json!({ "patch": three_file_patch() }).to_string(),
    );
    assert_err(&v, "io_error");
    let state_dir = fs::read_dir(f.base.join("state"))
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    let journal = fs::read_dir(&state_dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "journal"))
        .unwrap();
    let held = fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(&journal)
        .unwrap();
    held.lock().unwrap();
    let mid = snapshot(&f.root);
    let other = open_ws(&f.root, json!({ "state_dir": f.base.join("state") }));
    assert_eq!(snapshot(&f.root), mid, "a locked journal was recovered");
    drop(held);
    let last = open_ws(&f.root, json!({ "state_dir": f.base.join("state") }));
    assert_eq!(f.read("a.txt"), b"a\n");
    assert!(f.state_files().is_empty());
    assert_ok(&close_ws(other));
    assert_ok(&close_ws(last));
}

const NO_STATE_ENV: &str = "WSFS_NO_STATE_CHILD";

/// Child half of `without_a_state_dir_one_file_per_call`: runs with `$HOME` at the root, so
/// the default state directory would be inside the workspace.
#[test]
#[ignore = "child process of without_a_state_dir_one_file_per_call"]
fn no_state_child() {
    let Ok(root) = std::env::var(NO_STATE_ENV) else {
        return;
    };
    let root = Path::new(&root);
    let v = open_raw(&json!({ "root": root }).to_string());
    let ws = assert_ok(&v)["workspace"].as_u64().unwrap();
    let warned = v["warnings"].to_string();
    assert!(warned.contains("one file per call"), "{warned}");
    fs::write(root.join("a.txt"), "a\n").unwrap();
    fs::write(root.join("b.txt"), "b\n").unwrap();
    let two = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n";
    let v = call_named(ws, "apply_patch", &json!({ "patch": two }).to_string());
    let msg = assert_err(&v, "invalid_arguments");
    assert!(msg.contains("one per call"), "{v}");
    // Issue 16 finding 10: no host path (here, the default state directory's).
    assert!(!msg.contains(root.to_str().unwrap()), "{msg}");
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a\n");
    let one = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** End Patch\n";
    let v = call_named(ws, "apply_patch", &json!({ "patch": one }).to_string());
    assert_eq!(assert_ok(&v)["applied"], json!(true));
    assert!(
        !root.join(".local").exists(),
        "a state directory was made inside the workspace"
    );
}

#[test]
fn without_a_state_dir_one_file_per_call() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap();
    let status = child_test(&crate::test_name!(no_state_child))
        .env(NO_STATE_ENV, &root)
        .env("HOME", &root)
        .env_remove("XDG_STATE_HOME")
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "the child's checks failed");
    assert_eq!(
        fs::read(root.join("a.txt")).unwrap(),
        b"A\n",
        "the child did not run"
    );
}

/// Names of `.wsfs-` files under `root`, relative to it, sorted.
fn temp_files(root: &Path) -> Vec<String> {
    let mut names: Vec<String> = wsfs_names(root)
        .into_iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
fn a_live_commit_keeps_its_files_hidden_and_through_another_opens_sweep() {
    let f = Fixture::with_state_dir(json!({}));
    three_files(&f);
    // A genuine crash leftover beside the commit's files: the sweeps must remove it.
    let leftover = ".wsfs-00000000deadbeef.tmp";
    f.write(leftover, "half a file");
    inject_commit_fault(&f.root, Some(CommitFault::PauseBeforeRenames));
    let ws = f.ws;
    let committing = std::thread::spawn(move || {
        call_named(
            ws,
            "apply_patch",
            &json!({ "patch": three_file_patch() }).to_string(),
        )
    });
    assert!(
        wait_for_paused_commit(&f.root, Duration::from_secs(30)),
        "the commit never paused"
    );
    let mut staged = temp_files(&f.root);
    staged.retain(|n| n != leftover);
    // a.txt and b.txt: staged + backup; c.txt: backup; d/e/new.txt: staged.
    assert_eq!(staged.len(), 6, "{staged:?}");
    for name in &staged {
        let leaf = Path::new(name).file_name().unwrap().to_str().unwrap();
        assert!(
            leaf.len() == ".wsfs-".len() + 16 + ".tmp".len() && leaf.ends_with(".tmp"),
            "not a wsfs temp name: {name}"
        );
    }

    // No tool shows or reaches them.
    for v in [
        f.call("list_dir", json!({})),
        f.call("list_dir", json!({"depth": 5})),
        f.call("list_dir", json!({"path": "d/e"})),
        f.call(
            "find_files",
            json!({"pattern": "**", "include_hidden": true, "respect_gitignore": false}),
        ),
        f.call(
            "search_text",
            json!({"query": "a", "include_hidden": true, "respect_gitignore": false}),
        ),
    ] {
        assert_ok(&v);
        assert!(!v.to_string().contains(".wsfs-"), "{v}");
    }
    let one = Path::new(&staged[0]).to_str().unwrap().to_string();
    assert_err(&f.call("read_file", json!({ "path": one })), "invalid_path");

    // Other opens sweep: one that knows the journal (same state directory), and one that does
    // not (another state directory), which only the files' own locks stop.
    let other_state = f.base.join("other-state");
    let knowing = open_ws(&f.root, json!({ "state_dir": f.base.join("state") }));
    let unknowing = open_ws(&f.root, json!({ "state_dir": other_state }));
    assert!(!f.p(leftover).exists(), "the sweep did not run");
    assert_eq!(
        temp_files(&f.root),
        staged,
        "a sweep took a live commit's file"
    );
    assert_eq!(f.read("a.txt"), b"a\n", "a live commit was recovered");

    resume_commit(&f.root);
    let v = committing.join().unwrap();
    assert_eq!(assert_ok(&v)["applied"], json!(true), "{v}");
    assert_eq!(f.read("a.txt"), b"A\n");
    assert_eq!(f.read("b.txt"), b"B\n");
    assert!(!f.p("c.txt").exists());
    assert_eq!(f.read("d/e/new.txt"), b"new\n");
    assert!(temp_files(&f.root).is_empty(), "{:?}", temp_files(&f.root));
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
    assert_ok(&close_ws(knowing));
    assert_ok(&close_ws(unknowing));
}
