//! Overlay sessions under symlink swaps (issue 20, Reliability): while tools write and the host
//! diffs, checkpoints, rewinds, commits and discards, a thread keeps swapping a directory of
//! the base, and directories of the session's state (a directory of the upper tree, the
//! checkpoints, the originals, the kernel's work directory, the view's own journals and
//! records), for symlinks to a directory outside.
//! Nothing outside the workspace and the session's state is ever read or changed, and the
//! session works again once the swapping stops.
#![allow(unused_unsafe)]

use crate::common::*;
use crate::overlay_view::session;
use serde_json::{json, Value};
use std::ffi::CString;
use std::fs;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long the operations run under the swapping, at least.
const PHASE: Duration = Duration::from_secs(3);
/// Rounds (each: the tools, then one session operation) the phase makes at least.
const ROUNDS: u64 = 150;

/// Each directory's mtime and ctime (seconds, nanoseconds).
type DirTimes = Vec<(PathBuf, i64, i64, i64, i64)>;

/// Every entry below `dir` with its kind, bytes, mode and inode (`snapshot`), and every
/// directory's mtime and ctime: a name created and removed again changes them.
fn outside_state(dir: &Path) -> (Snapshot, DirTimes) {
    let snap = snapshot(dir);
    let mut times = Vec::new();
    let dirs = std::iter::once(PathBuf::new()).chain(
        snap.iter()
            .filter(|(_, e)| e.0 == "dir")
            .map(|(p, _)| p.clone()),
    );
    for rel in dirs {
        let m = fs::symlink_metadata(dir.join(&rel)).unwrap();
        times.push((rel, m.mtime(), m.mtime_nsec(), m.ctime(), m.ctime_nsec()));
    }
    (snap, times)
}

/// The pairs the swapper exchanges: each a real directory and a symlink to outside beside
/// it (`RENAME_EXCHANGE`: both names exist between swaps; a pair whose directory an
/// operation removed or replaced meanwhile is skipped until it is back).
fn pairs(root: &Path, session: &Path, outside: &Path) -> Vec<(PathBuf, PathBuf)> {
    let mut out = vec![(root.join("d"), root.join("s"))];
    for (dir, link) in [
        ("upper/d", "swap-upper-d"),
        ("checkpoints", "swap-checkpoints"),
        ("view-state", "swap-view-state"),
        ("work", "swap-work"),
        ("meta/objects", "swap-objects"),
    ] {
        let link = session.join(link);
        std::os::unix::fs::symlink(outside, &link).unwrap();
        out.push((session.join(dir), link));
    }
    out
}

#[test]
fn symlink_swaps_in_the_base_and_the_session_state_reach_nothing_outside() {
    let _heavy = cpu_heavy();
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let (root, state, outside) = (base.join("ws"), base.join("state"), base.join("outside"));
    let secret = format!("OUTSIDE-{}", token());
    fs::create_dir_all(outside.join("sub")).unwrap();
    for name in ["f.txt", "sub/g.txt", "new.txt"] {
        fs::write(outside.join(name), format!("{secret}\n")).unwrap();
    }
    fs::create_dir_all(root.join("d/sub")).unwrap();
    fs::write(root.join("d/f.txt"), "inside\n").unwrap();
    fs::write(root.join("d/sub/g.txt"), "g\n").unwrap();
    fs::write(root.join("top.txt"), "top\n").unwrap();
    std::os::unix::fs::symlink(&outside, root.join("s")).unwrap();
    let config = json!({"mode": "overlay", "state_dir": state.to_str().unwrap()});
    let ws = open_ws(&root, config);
    // The session has every directory the swapper swaps before it starts.
    let call = |tool: &str, args: Value| call(ws, tool, args);
    assert_ok(&call(
        "write_file",
        json!({"path": "d/f.txt", "content": "one\n"}),
    ));
    assert_ok(&session(ws, "checkpoint", Some(json!({"label": "start"}))));
    assert_ok(&call(
        "write_file",
        json!({"path": "d/f.txt", "content": "two\n"}),
    ));
    let session_dir = fs::read_dir(&state)
        .unwrap()
        .map(|e| e.unwrap().path().join("sessions/default"))
        .find(|p| p.is_dir())
        .expect("the session's directory");
    assert!(session_dir.join("view-state").is_dir());
    assert!(session_dir.join("meta/objects").is_dir());
    let pairs = pairs(&root, &session_dir, &outside);
    let before = outside_state(&outside);
    let base_names = sorted_names(&base);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let c: Vec<(CString, CString)> =
            pairs.iter().map(|(a, b)| (c_path(a), c_path(b))).collect();
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                // One pair at a time, each left swapped for a moment: every operation meets
                // some directory as the symlink.
                let (a, b) = &c[(n as usize) % c.len()];
                if exchange(a, b) {
                    swaps.fetch_add(1, Ordering::Relaxed);
                }
                n += 1;
                std::thread::sleep(Duration::from_micros(50 + (n % 7) * 50));
            }
        })
    };

    // A tool never names where a symlink to outside leads; the diff may (a base symlink's
    // target is the base's content).
    let leaked = |what: &str, v: &Value, tool: bool| {
        let all = v.to_string();
        assert!(!all.contains(&secret), "{what}: read outside: {}", short(v));
        assert!(
            !tool || !all.contains(outside.to_str().unwrap()),
            "{what}: names outside: {}",
            short(v)
        );
    };
    let mut outcomes: std::collections::BTreeMap<String, u64> = Default::default();
    let mut checkpoint_id: Option<Value> = None;
    let started = Instant::now();
    let mut round = 0u64;
    while round < ROUNDS || started.elapsed() < PHASE {
        round += 1;
        let tools = [
            (
                "write_file",
                json!({"path": "d/f.txt", "content": format!("r{round}\n")}),
            ),
            (
                "write_file",
                json!({"path": format!("d/sub/n{round}.txt"), "content": "n\n"}),
            ),
            (
                "append_file",
                json!({"path": "d/new.txt", "content": "a\n"}),
            ),
            (
                "edit_file",
                json!({"path": "top.txt", "old_text": "top", "new_text": "top"}),
            ),
            ("read_file", json!({"path": "d/f.txt"})),
            ("read_file", json!({"path": "d/new.txt"})),
            ("list_dir", json!({"path": "d/sub"})),
            ("get_path_info", json!({"path": "d/sub/g.txt"})),
            (
                "delete_file",
                json!({"path": format!("d/sub/n{}.txt", round - 1)}),
            ),
            (
                "apply_patch",
                json!({"patch": "*** Begin Patch\n*** Add File: d/p.txt\n+p\n*** Update File: top.txt\n@@\n-top\n+top\n*** End Patch\n"}),
            ),
            ("delete_file", json!({"path": "d/p.txt"})),
        ];
        for (tool, args) in tools {
            let v = call(tool, args.clone());
            leaked(&format!("{tool} {args}"), &v, true);
            let key = format!("{tool}:{}", err_code(&v).unwrap_or("ok"));
            *outcomes.entry(key).or_default() += 1;
        }
        let (op, options) = match round % 6 {
            0 => ("diff", None),
            1 => ("checkpoint", Some(json!({"label": format!("r{round}")}))),
            2 => match &checkpoint_id {
                Some(id) => ("rewind", Some(json!({ "id": id }))),
                None => ("checkpoints", None),
            },
            3 => ("commit", Some(json!({"paths": ["d/f.txt", "d/new.txt"]}))),
            4 => ("checkpoints", None),
            _ if round % 30 == 5 => ("discard", None),
            _ => ("commit", None),
        };
        let v = session(ws, op, options);
        leaked(op, &v, false);
        if op == "checkpoint" && v["ok"] == json!(true) {
            checkpoint_id = Some(v["data"]["id"].clone());
        }
        if op == "discard" && v["ok"] == json!(true) {
            checkpoint_id = None;
        }
        let key = format!("session {op}:{}", err_code(&v).unwrap_or("ok"));
        *outcomes.entry(key).or_default() += 1;
        assert_eq!(
            outside_state(&outside),
            before,
            "round {round}: after {op}, something outside changed"
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!("{round} rounds, {swaps} swaps; outcomes:");
    for (k, n) in &outcomes {
        eprintln!("  {k}: {n}");
    }
    assert_eq!(outside_state(&outside), before, "something outside changed");
    assert_eq!(
        sorted_names(&base),
        base_names,
        "something was created next to the workspace"
    );
    // At least one swap, not a count: a slow machine swaps less in the phase.
    assert!(swaps > 0, "the swapper never ran ({swaps} swaps)");
    // The swaps were met: some operations failed on them, and some got through.
    let failed: u64 = outcomes
        .iter()
        .filter(|(k, _)| !k.ends_with(":ok"))
        .map(|(_, n)| n)
        .sum();
    let ok: u64 = outcomes
        .iter()
        .filter(|(k, _)| k.ends_with(":ok"))
        .map(|(_, n)| n)
        .sum();
    assert!(failed > 0 && ok > 0, "the swaps were not met: {outcomes:?}");
    for op in ["diff", "checkpoint", "commit"] {
        assert!(
            outcomes.contains_key(&format!("session {op}:ok")),
            "no {op} got through the swapping: {outcomes:?}"
        );
    }

    // Every directory back in place: the session works again.
    // (A directory an operation removed meanwhile, such as `upper/d` after a discard or a
    // rewind, is simply absent: the session makes it again when it needs it.)
    let swapped = |p: &Path| fs::symlink_metadata(p).is_ok_and(|m| m.file_type().is_symlink());
    for pair in &pairs {
        if swapped(&pair.0) {
            assert!(exchange(&c_path(&pair.0), &c_path(&pair.1)));
        }
        assert!(!swapped(&pair.0), "{} is still swapped", pair.0.display());
    }
    assert_ok(&session(ws, "discard", None));
    assert_ok(&call(
        "write_file",
        json!({"path": "d/f.txt", "content": "last\n"}),
    ));
    assert_eq!(
        assert_ok(&call("read_file", json!({"path": "d/f.txt"})))["content"],
        json!("last\n")
    );
    assert_ok(&session(ws, "commit", None));
    assert_eq!(fs::read_to_string(root.join("d/f.txt")).unwrap(), "last\n");
    assert_eq!(outside_state(&outside), before, "something outside changed");
    assert_ok(&close_ws(ws));
}
