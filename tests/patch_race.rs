//! `apply_patch` while a directory it patches keeps being swapped for a symlink to a directory
//! outside the workspace: single-file and journaled multi-file commits, updates, adds and
//! deletes. Nothing outside is ever read, changed, created or removed.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// What the race aims for, within MAX_TIME ([`RaceBudget`]).
const ATTEMPTS: u64 = 1500;
const MAX_TIME: Duration = Duration::from_secs(30);
const MIN_SWAPS: u64 = 500;

/// Every file in `dir`, with its content, sorted.
fn snapshot(dir: &std::path::Path) -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            (name, fs::read_to_string(e.path()).unwrap())
        })
        .collect();
    files.sort();
    files
}

crate::backend_tests! {
#[test]
fn swapped_directories_never_lead_a_patch_outside() {
    let _heavy = cpu_heavy();
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    let secret = format!("OUTSIDE-{}\n", token());
    for name in ["f.txt", "gone.txt"] {
        fs::write(outside.join(name), &secret).unwrap();
    }
    let before = snapshot(&outside);
    f.write("d/f.txt", "one\n");
    f.write("top.txt", "top\n");
    std::os::unix::fs::symlink(&outside, f.p("s")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = spawn_exchanger(&f.p("d"), &f.p("s"), stop.clone(), swaps.clone());
    let patches = [
        // One file: an update that flips the line back and forth.
        "*** Begin Patch\n*** Update File: d/f.txt\n@@\n-one\n+two\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: d/f.txt\n@@\n-two\n+one\n*** End Patch\n",
        // Several files, journaled: an add and an update in the swapped directory.
        "*** Begin Patch\n*** Add File: d/new.txt\n+new\n*** Update File: top.txt\n@@\n-top\n+TOP\n*** End Patch\n",
        "*** Begin Patch\n*** Delete File: d/new.txt\n*** Update File: top.txt\n@@\n-TOP\n+top\n*** End Patch\n",
        // Deleting a name that exists only outside.
        "*** Begin Patch\n*** Delete File: d/gone.txt\n*** End Patch\n",
    ];
    let (mut attempts, mut applied) = (0u64, 0u64);
    let budget = RaceBudget::start(
        "apply_patch swap race",
        race_attempts(ATTEMPTS),
        MIN_SWAPS,
        MAX_TIME,
        &swaps,
    );
    while budget.go_on(attempts, &swaps) {
        for p in patches {
            let v = call_named(f.ws, "apply_patch", &json!({ "patch": p }).to_string());
            attempts += 1;
            let all = v.to_string();
            assert!(!all.contains("OUTSIDE"), "read outside: {all}");
            assert!(!all.contains(outside.to_str().unwrap()), "{all}");
            if v["ok"] == json!(true) && v["data"]["applied"] == json!(true) {
                applied += 1;
            }
        }
        assert_eq!(snapshot(&outside), before, "the outside directory changed");
    }
    let report = budget.finish(attempts, &swaps);
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    report.assert_exercised();
    assert!(applied > 0, "no patch applied: the race was not exercised");
    assert_eq!(snapshot(&outside), before, "the outside directory changed");
}
}
