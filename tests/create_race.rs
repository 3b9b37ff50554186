//! `create_directory` and `write_file` (every mode) while a thread keeps swapping a directory in
//! the workspace with a symlink to an outside directory: thousands of attempts, and nothing is
//! ever created or changed outside, nor left under a temp name.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

crate::backend_tests! {
#[test]
fn swapping_a_directory_for_a_symlink_never_creates_outside() {
    let _heavy = cpu_heavy();
    const ATTEMPTS: u64 = 3000;
    let f = Fixture::new();
    let outside = swap_pair(&f, "OUTSIDE\n");
    let before = snapshot(&outside);
    let base_before = sorted_names(&f.base);

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = {
        let (d, s) = (c_path(&f.p("d")), c_path(&f.p("s")));
        let (stop, swaps) = (stop.clone(), swaps.clone());
        std::thread::spawn(move || {
            // A pause between swap pairs lets calls through (openat2 gives up with EAGAIN
            // while renames keep happening anywhere on the host), so both outcomes happen:
            // calls that create (the directory held) and calls that meet the symlink.
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                assert!(exchange(&d, &s), "{}", std::io::Error::last_os_error());
                std::thread::yield_now();
                assert!(exchange(&d, &s), "{}", std::io::Error::last_os_error());
                swaps.fetch_add(1, Ordering::Relaxed);
                n += 1;
                std::thread::sleep(std::time::Duration::from_micros(200 + (n % 8) * 100));
            }
        })
    };
    let backend = f.backend;
    let floor = race_attempts(ATTEMPTS);
    let workers: Vec<_> = (0..2)
        .map(|w| {
            let ws = f.ws;
            let swaps = swaps.clone();
            std::thread::spawn(move || {
                let mut created = 0u64;
                // Aiming at ATTEMPTS calls and on until the swapper has run enough to race
                // them (a loaded machine starves it), within a time budget: a slow machine
                // makes fewer, and the checks below fail only on a wrong outcome.
                let started = std::time::Instant::now();
                let racing = |i: u64| {
                    let short = i < floor / 2 || swaps.load(Ordering::Relaxed) <= 150;
                    i == 0 || (short && started.elapsed() < std::time::Duration::from_secs(30))
                };
                let mut i = 0u64;
                while racing(i) {
                    i += 1;
                    // Overlay: the first change below d copies d up to the session, whose
                    // directory then decides what the view shows there, whatever the base
                    // does; dropped now and then, the view shows the swapped base again.
                    if backend == Backend::Overlay {
                        discard_session(ws);
                    }
                    let calls = [
                        ("create_directory", json!({"path": format!("d/n{w}-{i}")})),
                        ("create_directory", json!({"path": format!("d/sub/p{w}-{i}/q")})),
                        (
                            "write_file",
                            json!({"path": format!("d/c{w}-{i}.txt"), "content": "C", "mode": "create"}),
                        ),
                        (
                            "write_file",
                            json!({"path": format!("d/sub/o{w}-{i}/x.txt"), "content": "O"}),
                        ),
                        ("write_file", json!({"path": "d/f.txt", "content": "INSIDE\n"})),
                        (
                            "write_file",
                            json!({"path": format!("d/a{w}.txt"), "content": "A", "mode": "append"}),
                        ),
                    ];
                    for (tool, args) in calls {
                        let v = call_named(ws, tool, &args.to_string());
                        match err_code(&v) {
                            None => created += 1,
                            Some("outside_workspace" | "path_not_found" | "not_a_directory") => {}
                            Some(other) => panic!("{tool} {args}: {other}: {v}"),
                        }
                    }
                }
                (created, i * 6)
            })
        })
        .collect();
    let (mut succeeded, mut attempted) = (0, 0);
    for w in workers {
        let (created, made) = w.join().expect("worker panicked");
        succeeded += created;
        attempted += made;
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().expect("swapper panicked");
    let swaps = swaps.load(Ordering::Relaxed);
    eprintln!(
        "{swaps} swaps, {succeeded} of {} calls succeeded",
        attempted
    );
    assert_eq!(
        snapshot(&outside),
        before,
        "something was created or changed outside"
    );
    assert_eq!(
        sorted_names(&f.base),
        base_before,
        "something was created next to the workspace"
    );
    assert!(swaps > 0, "the swapper never ran: the race was not exercised");
    // Both outcomes must happen, or the race was not exercised: calls that created under the
    // swapping, and calls that met the symlink (or a rename mid-lookup) and were refused. (At
    // least one each, not a count: a slow machine makes fewer calls in the budget.)
    assert!(
        succeeded > 0,
        "no call succeeded: the test proves nothing"
    );
    assert!(
        attempted > succeeded,
        "every call succeeded: the swapper did not interfere"
    );
    assert_eq!(f.read("d/f.txt"), b"INSIDE\n");
    // Directories are made under temp names and renamed: none is left under one, whatever
    // the swaps did to the directory they were made in.
    assert_eq!(wsfs_names(&f.root), Vec::<std::path::PathBuf>::new());
}
}
