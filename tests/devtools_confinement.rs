//! Developer tools under attack, through the C ABI like a host's call (issue 21's confinement
//! list): a command that forks without bound, and a `cwd` swapped for a symlink to a directory
//! outside while the tool starts its program.

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

fn shell_on(extra: Value) -> Fixture {
    let mut policy = json!({"exec_enabled": true, "shell_enabled": true});
    merge(&mut policy, extra);
    Fixture::with_config(json!({ "policy": policy }))
}

fn shell(f: &Fixture, args: Value) -> Value {
    call_named(f.ws, "shell", &args.to_string())
}

/// Pids of the processes whose command line holds `marker`.
fn processes_with(marker: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for e in fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|n| n.parse::<u32>().ok()) else {
            continue;
        };
        if let Ok(cmd) = fs::read(e.path().join("cmdline")) {
            if String::from_utf8_lossy(&cmd).contains(marker) {
                found.push(pid);
            }
        }
    }
    found
}

/// Whether runs here get a pids cgroup (the sandbox report of a plain run says).
fn pids_cgroup(f: &Fixture) -> bool {
    let v = shell(f, json!({"command": "true"}));
    let data = assert_ok(&v);
    let how = data["sandbox"]["processes"]
        .as_str()
        .unwrap_or("")
        .to_string();
    if how != "cgroup" {
        eprintln!("SKIPPED: no pids cgroup here ({how}: {})", data["sandbox"]);
    }
    how == "cgroup"
}

#[test]
fn a_fork_bomb_through_shell_is_capped_killed_and_explained() {
    let _heavy = cpu_heavy();
    let f = shell_on(json!({}));
    if !pids_cgroup(&f) {
        return;
    }
    let marker = format!("bomb-{}-{}", std::process::id(), line!());
    // The classic bomb: every process starts two more, in the background, forever.
    let command = format!(": {marker}; b() {{ b | b & }}; b; sleep 30");
    let t = Instant::now();
    let v = shell(&f, json!({"command": command, "timeout_sec": 2}));
    let took = t.elapsed();
    // Killed at its wall clock at the latest, with everything it started.
    assert!(took < Duration::from_secs(20), "took {took:?}");
    std::thread::sleep(Duration::from_millis(300));
    let left = processes_with(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
    // The result says why: the process limit refused forks (timeout, or the shell's own end).
    let text = v["text"].as_str().unwrap_or_default().to_string()
        + v["data"]["stderr"].as_str().unwrap_or_default();
    assert!(
        text.contains("process limit refused"),
        "the result does not say the process limit stopped it: {v}"
    );
    // The host is unaffected: it still starts processes, and the next call runs normally.
    assert!(std::process::Command::new("true")
        .status()
        .unwrap()
        .success());
    let v = shell(&f, json!({"command": "echo after"}));
    let data = assert_ok(&v);
    assert_eq!(data["stdout"], "after\n");
}

const CWD_ATTEMPTS: u64 = 300;
const CWD_MAX_TIME: Duration = Duration::from_secs(60);
/// Programs that must have started (the resolver refuses most calls while the name flips).
const CWD_MIN_RUNS: u64 = 20;

/// Every entry of `dir` with its content, sorted.
fn contents(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| {
            let e = e.unwrap();
            let bytes = fs::read(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), bytes)
        })
        .collect();
    out.sort();
    out
}

#[test]
fn a_cwd_swapped_for_a_symlink_outside_never_runs_the_program_outside() {
    let _heavy = cpu_heavy();
    let f = shell_on(json!({}));
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    let secret = format!("OUTSIDE-{}", token());
    fs::write(outside.join("f.txt"), format!("{secret}\n")).unwrap();
    let before = contents(&outside);
    f.write("sub/f.txt", "inside\n");
    std::os::unix::fs::symlink(&outside, f.p("lnk")).unwrap();

    let stop = Arc::new(AtomicBool::new(false));
    let swaps = Arc::new(AtomicU64::new(0));
    let swapper = spawn_exchanger(&f.p("sub"), &f.p("lnk"), stop.clone(), swaps.clone());
    let outside_s = outside.to_str().unwrap().to_string();
    let (mut attempts, mut ran, mut refused) = (0u64, 0u64, 0u64);
    let started = Instant::now();
    let mut codes = std::collections::BTreeMap::<String, u64>::new();
    while (attempts < CWD_ATTEMPTS || ran < CWD_MIN_RUNS || refused == 0)
        && started.elapsed() < CWD_MAX_TIME
    {
        // Where it runs (the kernel's cwd: bash's `pwd -P` re-resolves a path string, which
        // the swapper changes under it), what it reads and writes relative to its cwd.
        let v = shell(
            &f,
            json!({"command": "readlink /proc/self/cwd; cat f.txt; echo x > planted", "cwd": "sub"}),
        );
        attempts += 1;
        let all = v.to_string();
        assert!(!all.contains(&secret), "read outside: {all}");
        if v["ok"] == json!(true) {
            ran += 1;
            let cwd = v["data"]["stdout"]
                .as_str()
                .unwrap()
                .lines()
                .next()
                .unwrap_or("");
            assert!(
                cwd.starts_with(f.root.to_str().unwrap()) && !cwd.starts_with(&outside_s),
                "the program ran in {cwd}, outside the workspace: {all}"
            );
        } else {
            // Refused: the name led outside when resolved, or when the child entered it.
            // Never `io_error`: a symlink swapped back to a directory between the resolver's
            // lstat and its readlink (EINVAL) is looked at again.
            refused += 1;
            *codes.entry(v["error"]["code"].to_string()).or_default() += 1;
            assert!(
                matches!(
                    v["error"]["code"].as_str(),
                    Some("outside_workspace" | "symlink_escape" | "path_not_found")
                ),
                "{all}"
            );
        }
    }
    stop.store(true, Ordering::Relaxed);
    swapper.join().unwrap();
    eprintln!(
        "cwd swap race: {attempts} calls, {ran} ran, {refused} refused ({codes:?}), {} swaps",
        swaps.load(Ordering::Relaxed)
    );
    // Both outcomes at least once, not a count: the loop aims at CWD_MIN_RUNS within
    // CWD_MAX_TIME, and a slow machine runs fewer.
    assert!(
        ran > 0 && refused > 0,
        "the race was not exercised: {ran} ran, {refused} refused"
    );
    assert_eq!(contents(&outside), before, "the outside directory changed");
}

const HOST_KILL_ENV: &str = "WSFS_DIES_WITH_HOST_CHILD";

/// Child of `a_program_dies_with_its_killed_host`: runs a long program with a marker in its
/// command line.
#[test]
#[ignore = "child process of a_program_dies_with_its_killed_host"]
fn dies_with_host_child() {
    let Ok(marker) = std::env::var(HOST_KILL_ENV) else {
        return;
    };
    let f = shell_on(json!({}));
    // The marker is sleep's own argument (30.<pid> seconds), so it survives the exec.
    let _ = shell(&f, json!({ "command": format!("exec sleep {marker}") }));
}

/// A host killed during a call takes its program with it: no program runs on unwatched, past
/// the wall clock its host would have enforced.
#[test]
fn a_program_dies_with_its_killed_host() {
    let marker = format!("30.{}", std::process::id());
    let mut child = child_test(&crate::test_name!(dies_with_host_child))
        .env(HOST_KILL_ENV, &marker)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    while processes_with(&marker).is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the program never started"
        );
        if child.try_wait().unwrap().is_some() {
            eprintln!("SKIPPED: the host ended before its program started (no sandbox here?)");
            return;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while !processes_with(&marker).is_empty() {
        assert!(
            Instant::now() < deadline,
            "the program outlived its killed host: {:?}",
            processes_with(&marker)
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}
