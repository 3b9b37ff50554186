//! `read_file` ranges and `get_path_info` while a directory, and separately a file, keep being
//! swapped for symlinks to outside the workspace: nothing outside is ever read or reported.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Attempts the calls aim for (a quarter on the overlay, [`race_attempts`]).
const ATTEMPTS: u64 = 3000;
const MAX_TIME: Duration = Duration::from_secs(20);
/// Swaps the racing threads aim to make during the calls.
const MIN_SWAPS: u64 = 1000;

crate::backend_tests! {
#[test]
fn swapped_symlinks_never_lead_range_reads_or_path_info_outside() {
    let _heavy = cpu_heavy();
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    let secret = format!("OUTSIDE-{}\n", token()).repeat(7);
    fs::write(outside.join("f.txt"), &secret).unwrap();
    let inside = "inside\n".repeat(3);
    // d/ is swapped with s (an absolute symlink to the outside directory), e/f.txt with e/lnk
    // (a symlink to the outside file), and r (a relative one) stays, for good measure.
    f.write("d/f.txt", &inside);
    f.write("e/f.txt", &inside);
    std::os::unix::fs::symlink(&outside, f.p("s")).unwrap();
    std::os::unix::fs::symlink(outside.join("f.txt"), f.p("e/lnk")).unwrap();
    let secret_len = secret.len() as u64;
    let inside_len = inside.len() as u64;
    assert_ne!(
        secret_len,
        fs::symlink_metadata(f.p("e/lnk")).unwrap().len()
    );
    let inside_sha = {
        let v = f.call("get_path_info", json!({"path": "d/f.txt"}));
        assert_ok(&v)["sha256"].clone()
    };

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swappers = [
        spawn_exchanger(&f.p("d"), &f.p("s"), stop.clone(), swaps.clone()),
        spawn_exchanger(&f.p("e/f.txt"), &f.p("e/lnk"), stop.clone(), swaps.clone()),
    ];
    let calls: [(&str, Value); 6] = [
        ("read_file", json!({"path": "d/f.txt", "start_line": 1})),
        (
            "read_file",
            json!({"path": "e/f.txt", "start_line": 2, "line_numbers": true}),
        ),
        ("get_path_info", json!({"path": "d/f.txt"})),
        ("get_path_info", json!({"path": "e/f.txt"})),
        ("get_path_info", json!({"path": "d"})),
        ("get_path_info", json!({"path": "e/lnk"})),
    ];
    let (mut attempts, mut ok) = (0u64, 0u64);
    // Both sides should run a good while: on a loaded machine the swappers can lag the calls,
    // so the calls go on until the swappers have made MIN_SWAPS swaps too, within MAX_TIME.
    let budget = RaceBudget::start(
        "read_file/get_path_info swap race",
        race_attempts(ATTEMPTS),
        MIN_SWAPS,
        MAX_TIME,
        &swaps,
    );
    while budget.go_on(attempts, &swaps) {
        for (tool, args) in &calls {
            let v = f.call(tool, args.clone());
            attempts += 1;
            let all = v.to_string();
            assert!(
                !all.contains("OUTSIDE"),
                "{tool} {args}: read outside: {all}"
            );
            assert!(
                !all.contains(outside.to_str().unwrap()),
                "{tool} {args}: {all}"
            );
            if v["ok"] != json!(true) {
                continue;
            }
            ok += 1;
            let d = &v["data"];
            if *tool == "read_file" {
                assert!(
                    d["content"].as_str().unwrap().starts_with("inside\n"),
                    "{all}"
                );
                assert_eq!(d["total_bytes"], json!(inside_len), "{all}");
                continue;
            }
            match d["type"].as_str() {
                Some("file") => {
                    assert_eq!(d["size"], json!(inside_len), "{all}");
                    if d.get("sha256").is_some() {
                        assert_eq!(d["sha256"], inside_sha, "{all}");
                    }
                    if d.get("line_count").is_some() {
                        assert_eq!(d["line_count"], json!(3), "{all}");
                    }
                }
                Some("symlink") => {
                    assert!(d.get("symlink_target").is_none(), "{all}");
                    assert_ne!(d["size"], json!(secret_len), "{all}");
                }
                Some("dir") => assert_eq!(args["path"], json!("d"), "{all}"),
                _ => assert_eq!(d["exists"], json!(false), "{all}"),
            }
        }
    }
    let report = budget.finish(attempts, &swaps);
    stop.store(true, Ordering::Relaxed);
    for s in swappers {
        s.join().unwrap();
    }
    report.assert_exercised();
    assert!(ok > 0, "no call succeeded: the race was not exercised");
    assert_eq!(fs::read_to_string(outside.join("f.txt")).unwrap(), secret);
}
}
