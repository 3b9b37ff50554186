//! Walks under attack and at the limits: a directory swapped for a symlink to an outside
//! directory (holding canary files) thousands of times during `search_text`, `find_files`
//! and `list_dir` tree walks must never read, list or match anything outside; and a
//! 1,500-deep tree walked under a 64-descriptor limit.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;

/// Ten nested levels (deeper than the walker keeps handles for), each with a file before
/// and after its subdirectory, so walks return to levels whose handles were closed.
fn nested(top: &Path, content: &str, names: &str) {
    let mut dir = top.to_path_buf();
    for level in ["a", "b", "c", "d", "e", "f", "g", "h", "i", "j"] {
        fs::create_dir_all(dir.join(level)).unwrap();
        fs::write(dir.join(format!("0{names}.txt")), content).unwrap();
        fs::write(dir.join(format!("z{names}.txt")), content).unwrap();
        dir = dir.join(level);
    }
    fs::write(dir.join(format!("bottom{names}.txt")), content).unwrap();
}

crate::backend_tests! {
#[test]
fn swapping_a_directory_for_a_symlink_never_leads_a_walk_outside() {
    let _heavy = cpu_heavy();
    let f = Fixture::new();
    let canary = format!("canary{}", token());
    let outside = f.base.join("outside");
    nested(&outside, &format!("{canary}\n"), &canary);
    nested(&f.p("sw"), "inside\n", "in");
    std::os::unix::fs::symlink(&outside, f.p("sw_link")).unwrap();
    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = spawn_exchanger(&f.p("sw"), &f.p("sw_link"), stop.clone(), swaps.clone());
    const ATTEMPTS: u64 = 2000;
    let (mut saw_link, mut saw_dir, mut refused) = (0, 0, 0);
    let search = json!({"query": canary, "include_hidden": true, "respect_gitignore": false, "max_matches": 1000}).to_string();
    let find = json!({"pattern": "**/*", "include_hidden": true, "respect_gitignore": false, "max_results": 10000}).to_string();
    let tree = json!({"depth": 13, "max_entries": 1000}).to_string();
    let attempts = race_attempts(ATTEMPTS);
    for i in 0..attempts {
        let v = call_named(f.ws, "search_text", &search);
        let d = assert_ok(&v);
        assert_eq!(
            d["matches"],
            json!([]),
            "attempt {i}: read outside: {}",
            short(&v)
        );
        refused += d["files_skipped"].as_u64().unwrap();
        let v = call_named(f.ws, "find_files", &find);
        let listed = assert_ok(&v)["files"].to_string();
        assert!(
            !listed.contains(&canary),
            "attempt {i}: listed outside: {}",
            short(&v)
        );
        if listed.contains("\"sw/0in.txt\"") {
            saw_dir += 1;
        }
        if listed.contains("\"sw\"") {
            saw_link += 1;
        }
        let v = call_named(f.ws, "list_dir", &tree);
        let text = assert_ok(&v).to_string() + v["text"].as_str().unwrap();
        assert!(
            !text.contains(&canary),
            "attempt {i}: tree shows outside: {}",
            short(&v)
        );
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!(
        "{attempts} attempts x 3 walks, {} swaps; sw seen as a directory {saw_dir} times, as a symlink {saw_link} times; {refused} files/directories refused mid-search",
        swaps.load(Ordering::Relaxed)
    );
    // The swap really raced with the walks: both states were seen.
    assert!(
        saw_dir > 0 && saw_link > 0,
        "the swap never raced the walks"
    );
}
}

const DEEP_ENV: &str = "WSFS_DEEP_WALK_CHILD";
const DEPTH: usize = 1500;

/// Child half of `deep_trees_walk_under_a_low_fd_limit` (runs only when re-invoked).
#[test]
#[ignore = "child process of deep_trees_walk_under_a_low_fd_limit"]
fn deep_walk_child() {
    let Ok(dir) = std::env::var(DEEP_ENV) else {
        return;
    };
    limit_open_files(64);
    let ws = open_ws(
        Path::new(&dir),
        json!({"limits": {"max_list_entries": 100000}}),
    );
    let run = |tool: &str, args: Value| {
        let v = call_named(ws, tool, &args.to_string());
        assert_ok(&v);
        v
    };
    // Every level's z.txt comes after its subdirectory: the walk returns to all 1,500
    // levels, reopening those whose handles it closed.
    let v = run(
        "find_files",
        json!({"pattern": "**/z.txt", "max_results": 10000}),
    );
    assert_eq!(
        v["data"]["files"].as_array().unwrap().len(),
        DEPTH,
        "{}",
        short(&v)
    );
    let v = run("search_text", json!({"query": "deepest"}));
    assert_eq!(
        v["data"]["matches"].as_array().unwrap().len(),
        1,
        "{}",
        short(&v)
    );
    assert_eq!(v["data"]["files_skipped"], json!(0));
    let v = run("search_text", json!({"query": "zz", "max_matches": 1000}));
    assert_eq!(v["data"]["matches"].as_array().unwrap().len(), 1000);
    assert_eq!(v["data"]["truncated"], json!(true));
    let v = run(
        "list_dir",
        json!({"path": "d/".repeat(DEPTH - 59), "depth": 60, "max_entries": 100000}),
    );
    assert_eq!(v["data"]["truncated"], json!(false), "{}", short(&v));
    // 59 levels of {d, z.txt}, then bottom.txt: the deepest tree list_dir returns.
    assert_eq!(v["data"]["total"], json!(59 * 2 + 1), "{}", short(&v));
    assert_ok(&close_ws(ws));
}

#[test]
fn deep_trees_walk_under_a_low_fd_limit() {
    let tmp = tempfile::tempdir().unwrap();
    deep_chain(tmp.path(), DEPTH);
    run_child_test(&crate::test_name!(deep_walk_child), DEEP_ENV, tmp.path());
}
