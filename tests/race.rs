//! Concurrent symlink swaps: a thread keeps swapping a directory inside the workspace with a
//! symlink to an outside directory while other threads run every tool through it. The library
//! must never read, list, create in or change the outside directory. A deliberately naive
//! check-then-open resolver run under the same swapping must be caught, proving the race is real.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::collections::BTreeMap;
use std::ffi::CString;
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

const LIB_PHASE: Duration = Duration::from_secs(2);
const NAIVE_BOUND: Duration = Duration::from_secs(60);

/// Renames `a` to `b`; if a tool call created `b` meanwhile (write_file creates missing parent
/// directories), that directory is moved aside to `junk*` inside the workspace first.
fn rename_into(a: &CString, b: &CString, root: &Path, junk: &mut u64) {
    loop {
        if renameat2(a, b, libc::RENAME_NOREPLACE) {
            return;
        }
        let err = std::io::Error::last_os_error();
        assert_eq!(err.raw_os_error(), Some(libc::EEXIST), "rename: {err}");
        *junk += 1;
        let j = c_path(&root.join(format!("junk{junk}")));
        let _ = renameat2(b, &j, libc::RENAME_NOREPLACE);
    }
}

/// Keeps swapping `root/d` (a directory) with `root/s` (a symlink to outside) until `stop`.
/// Alternates an atomic exchange with the non-atomic "rename the dir away, put the symlink in,
/// swap back" sequence. Between iterations `d` is the directory again.
fn spawn_swapper(
    root: &Path,
    stop: Arc<AtomicBool>,
    swaps: Arc<AtomicU64>,
) -> std::thread::JoinHandle<()> {
    let root = root.to_path_buf();
    let (d, s, hold) = (
        c_path(&root.join("d")),
        c_path(&root.join("s")),
        c_path(&root.join("hold")),
    );
    std::thread::spawn(move || {
        let (mut i, mut junk) = (0u64, 0u64);
        while !stop.load(Ordering::Relaxed) {
            if (i / 512) % 2 == 0 {
                assert!(
                    exchange(&d, &s),
                    "renameat2: {}",
                    std::io::Error::last_os_error()
                );
                assert!(
                    exchange(&d, &s),
                    "renameat2: {}",
                    std::io::Error::last_os_error()
                );
            } else {
                rename_into(&d, &hold, &root, &mut junk);
                rename_into(&s, &d, &root, &mut junk);
                rename_into(&d, &s, &root, &mut junk);
                rename_into(&hold, &d, &root, &mut junk);
            }
            i += 1;
            swaps.fetch_add(1, Ordering::Relaxed);
        }
    })
}

crate::backend_tests! {
#[test]
fn symlink_swaps_never_escape_the_workspace() {
    let _heavy = cpu_heavy();
    let f = Fixture::new();
    let secret_tok = token();
    let canary_tok = token();
    let outside = swap_pair(&f, &format!("OUTSIDE-{secret_tok}\n"));
    fs::write(
        outside.join(format!("canary-{canary_tok}")),
        format!("OUTSIDE-{secret_tok}\n"),
    )
    .unwrap();
    let before = snapshot(&outside);
    let base_before = sorted_names(&f.base);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = spawn_swapper(&f.root, stop.clone(), swaps.clone());

    // Phase 1: the library under the swapping.
    let leaks = Arc::new(Mutex::new(Vec::<String>::new()));
    let outcomes = Arc::new(Mutex::new(BTreeMap::<String, (u64, String)>::new()));
    let deadline = Instant::now() + LIB_PHASE;
    let workers: Vec<_> = (0..3)
        .map(|w| {
            let (leaks, outcomes, secret_tok, canary_tok) = (
                leaks.clone(),
                outcomes.clone(),
                secret_tok.clone(),
                canary_tok.clone(),
            );
            let ws = f.ws;
            std::thread::spawn(move || {
                let mut n = 0u64;
                while Instant::now() < deadline {
                    n += 1;
                    let calls = [
                        ("read_file", json!({"path": "d/f.txt"})),
                        ("list_dir", json!({"path": "d"})),
                        ("list_dir", json!({"path": "d/sub"})),
                        ("read_file", json!({"path": "d/sub/../f.txt"})),
                        (
                            "write_file",
                            json!({"path": format!("d/w{w}.txt"), "content": "W\n"}),
                        ),
                        (
                            "write_file",
                            json!({"path": "d/f.txt", "content": "INSIDE\n"}),
                        ),
                        (
                            "write_file",
                            json!({"path": format!("d/sub/new{w}/x.txt"), "content": "N\n"}),
                        ),
                        (
                            "append_file",
                            json!({"path": format!("d/a{w}.txt"), "content": "A\n"}),
                        ),
                        (
                            "edit_file",
                            json!({"path": "d/f.txt", "old_text": "OUTSIDE-", "new_text": "PWNED"}),
                        ),
                        (
                            "edit_file",
                            json!({"path": "d/f.txt", "old_text": "INSIDE", "new_text": "INSIDE"}),
                        ),
                    ];
                    for (tool, args) in calls {
                        let v = call(ws, tool, args.clone());
                        let s = v.to_string();
                        if s.contains(&secret_tok) || s.contains(&canary_tok) {
                            leaks
                                .lock()
                                .unwrap()
                                .push(format!("{tool} {args} (iteration {n}) -> {}", short(&v)));
                        }
                        if tool == "read_file" && v["ok"] == json!(true) {
                            assert_eq!(
                                v["data"]["content"],
                                json!("INSIDE\n"),
                                "read returned foreign content: {}",
                                short(&v)
                            );
                        }
                        let key = format!("{tool}:{}", err_code(&v).unwrap_or("ok"));
                        let mut o = outcomes.lock().unwrap();
                        let slot = o
                            .entry(key)
                            .or_insert_with(|| (0, format!("{tool} {args}: {}", v["text"])));
                        slot.0 += 1;
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().expect("worker panicked");
    }
    let lib_swaps = swaps.load(Ordering::Relaxed);

    // Phase 2: a naive resolver (canonicalize + string prefix check, then open by path) under
    // the same swapping must be caught reading the secret.
    let target = f.root.join("d/f.txt");
    let root_str = f.root.to_str().unwrap().to_owned();
    let start = Instant::now();
    let (mut attempts, mut passed_check, mut caught) = (0u64, 0u64, false);
    while start.elapsed() < NAIVE_BOUND {
        attempts += 1;
        let Ok(canon) = fs::canonicalize(&target) else {
            continue;
        };
        if !canon.to_str().unwrap().starts_with(&root_str) {
            continue; // the naive check refuses
        }
        passed_check += 1;
        if let Ok(bytes) = fs::read(&target) {
            if String::from_utf8_lossy(&bytes).contains(&secret_tok) {
                caught = true;
                break;
            }
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper panicked");

    let outcomes = outcomes.lock().unwrap().clone();
    eprintln!("swaps during library phase: {lib_swaps}; outcomes (count, first example):");
    for (k, (n, example)) in &outcomes {
        let example: String = example.chars().take(300).collect();
        eprintln!("  {k}: {n}  e.g. {example}");
    }
    eprintln!(
        "naive resolver: {attempts} attempts, {passed_check} passed the check, caught={caught}"
    );

    let leaks = leaks.lock().unwrap();
    assert!(
        leaks.is_empty(),
        "{} results leaked outside data:\n{}",
        leaks.len(),
        leaks.join("\n")
    );
    assert_eq!(
        snapshot(&outside),
        before,
        "the outside directory was changed or created in"
    );
    assert_eq!(
        sorted_names(&f.base),
        base_before,
        "something was created next to the workspace"
    );
    // At least one swap, not a count: a slow machine swaps less in LIB_PHASE, and the checks
    // above fail only on a wrong outcome.
    assert!(
        lib_swaps > 0,
        "the swapper never ran ({lib_swaps} swaps): the test proves nothing"
    );
    let reads_ok = outcomes.get("read_file:ok").map_or(0, |o| o.0);
    assert!(
        reads_ok > 0,
        "no read ever succeeded under the race: {outcomes:?}"
    );
    assert!(
        caught,
        "the naive resolver was never caught in {attempts} attempts: the race is not effective"
    );
    // The workspace is still usable and consistent afterwards.
    assert!(fs::symlink_metadata(f.p("d")).unwrap().is_dir());
    assert_eq!(
        assert_ok(&f.call("read_file", json!({"path": "d/f.txt"})))["content"],
        json!("INSIDE\n")
    );
}
}
