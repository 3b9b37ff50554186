//! Benchmark of the overlay session store (`wsfs::overlay`, issue 20; bench/run.sh runs it):
//!
//! - `diff` of 1,000 changed files in a 10,000- and a 100,000-file base: its time, and its
//!   system calls counted by `strace -c` on a child that opens the session and diffs once
//!   (minus one that only opens it): they must not grow with the base;
//! - a checkpoint after 100 touched files;
//! - the cost of `touch` per path: a first touch (a base file the session never touched)
//!   without a checkpoint and after one, and the first touch after a checkpoint of a path the
//!   session already changed (which takes the path's before-image);
//! - `rewind` over 100 and 1,000 changed paths (each back to its content at the checkpoint)
//!   paired with `commit` of the same paths (the same writes, committed), in one run;
//! - `commit` of 1,000 changed files against the same 1,000 writes done by `write_file`
//!   (at least 3 pairs, alternating which goes first; the median of the paired ratios)
//!   through `wsfs_call` in a host-mode workspace.
//!
//! Configuration (environment): `WSFS_OVERLAY_DIR` (required: a scratch directory),
//! `WSFS_OVERLAY_SHORT` (1: small bases, one sample), `WSFS_OVERLAY_SAMPLES` (5),
//! `WSFS_OVERLAY_OUT` (JSON lines), `WSFS_OVERLAY_ONLY` (a comma-separated list of `diff`,
//! `checkpoint`, `touch`, `rewind`, `commit`: only these).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Instant;
use wsfs::overlay::{CheckpointOptions, CommitOptions, DiffOptions, RewindOptions, Session};
use wsfs::CallControl;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// Whether the bench `name` runs (`WSFS_OVERLAY_ONLY`).
fn want(name: &str) -> bool {
    env("WSFS_OVERLAY_ONLY").is_none_or(|v| v.split(',').any(|w| w.trim() == name))
}

fn ctl() -> CallControl {
    CallControl::new(std::time::Duration::from_secs(3600), None)
}

/// A base of `files` files of 64 bytes, 100 per directory.
fn build(root: &Path, files: usize) {
    let content = "x\n".repeat(32);
    for d in 0..files.div_ceil(100) {
        let dir = root.join(format!("d{d:04}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100.min(files - d * 100) {
            std::fs::write(dir.join(format!("f{f:03}.txt")), &content).unwrap();
        }
    }
}

fn changed(i: usize) -> String {
    format!("d{:04}/f{:03}.txt", i % 10, i / 10)
}

/// The `i`th file of a base `build` made (for the commit: every one exists).
fn existing(i: usize) -> String {
    format!("d{:04}/f{:03}.txt", i / 100, i % 100)
}

/// The 1-minute load average now (the machine may be shared).
fn load() -> Option<f64> {
    std::fs::read_to_string("/proc/loadavg")
        .ok()?
        .split_whitespace()
        .next()?
        .parse()
        .ok()
}

fn median(xs: &mut [f64]) -> f64 {
    xs.sort_by(|a, b| a.partial_cmp(b).unwrap());
    xs[xs.len() / 2]
}

/// System calls of a child that opens the session and, with `diff`, diffs it once.
fn syscalls(root: &Path, state: &Path, diff: bool) -> Option<u64> {
    let exe = std::env::current_exe().ok()?;
    let out = root.with_extension("strace");
    let status = Command::new("strace")
        .args(["-f", "-c", "-o"])
        .arg(&out)
        .arg(&exe)
        .arg(if diff { "--diff-once" } else { "--open-once" })
        .arg(root)
        .arg(state)
        .status()
        .ok()?;
    if !status.success() {
        return None;
    }
    let text = std::fs::read_to_string(&out).ok()?;
    let total = text.lines().find(|l| l.trim_end().ends_with("total"))?;
    // % time, seconds, usecs/call, calls, [errors], total
    let cols: Vec<&str> = total.split_whitespace().collect();
    cols.get(3)?.parse().ok()
}

fn child(args: &[String]) {
    let (root, state) = (Path::new(&args[2]), &args[3]);
    let s = Session::open(root, Some(state), "bench").unwrap();
    if args[1] == "--diff-once" {
        let d = s.diff(&DiffOptions::default()).unwrap();
        assert_eq!(d.changes.len(), 1000);
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() == 4 && args[1].ends_with("-once") {
        return child(&args);
    }
    if args.iter().any(|a| a == "--bench") && env("WSFS_OVERLAY_DIR").is_none() {
        eprintln!("benches/overlay.rs: set WSFS_OVERLAY_DIR (bench/run.sh does)");
        return;
    }
    let scratch = PathBuf::from(env("WSFS_OVERLAY_DIR").expect("WSFS_OVERLAY_DIR"));
    let short = env("WSFS_OVERLAY_SHORT").is_some();
    let samples: usize = env("WSFS_OVERLAY_SAMPLES")
        .and_then(|v| v.parse().ok())
        .unwrap_or(if short { 1 } else { 5 });
    let mut out: Box<dyn Write> = match env("WSFS_OVERLAY_OUT") {
        Some(p) => Box::new(std::fs::File::create(p).unwrap()),
        None => Box::new(std::io::sink()),
    };
    let bases: &[usize] = if short {
        &[2_000, 4_000]
    } else {
        &[10_000, 100_000]
    };
    for &n in bases {
        if !want("diff") && !want("checkpoint") {
            break;
        }
        let case = scratch.join(format!("base{n}"));
        let _ = std::fs::remove_dir_all(&case);
        let (root, state) = (case.join("ws"), case.join("state"));
        build(&root, n);
        if want("diff") {
            let mut s = Session::open(&root, Some(state.to_str().unwrap()), "bench").unwrap();
            for i in 0..1000 {
                s.write_file(&changed(i), format!("changed {i}\n").as_bytes(), 0o644)
                    .unwrap();
            }
            let mut times = Vec::new();
            for _ in 0..samples.max(3) {
                let t = Instant::now();
                let d = s.diff(&DiffOptions::default()).unwrap();
                times.push(t.elapsed().as_nanos() as f64);
                assert_eq!(d.changes.len(), 1000);
            }
            drop(s);
            let with = syscalls(&root, &state, true);
            let without = syscalls(&root, &state, false);
            let calls = with.zip(without).map(|(a, b)| a.saturating_sub(b));
            let line = serde_json::json!({"bench": "diff", "base_files": n, "changed": 1000, "ns": median(&mut times), "syscalls": calls, "load": load()});
            println!("{line}");
            writeln!(out, "{line}").unwrap();
        }
        if !want("checkpoint") {
            let _ = std::fs::remove_dir_all(&case);
            continue;
        }
        // A checkpoint after 100 touched files (in the same base; a fresh session).
        let mut times = Vec::new();
        for k in 0..samples {
            let name = format!("ckpt{k}");
            let mut s = Session::open(&root, Some(state.to_str().unwrap()), &name).unwrap();
            for i in 0..100 {
                s.write_file(&changed(i), format!("c {i}\n").as_bytes(), 0o644)
                    .unwrap();
            }
            let t = Instant::now();
            s.checkpoint(&CheckpointOptions::default()).unwrap();
            times.push(t.elapsed().as_nanos() as f64);
            s.discard().unwrap();
        }
        let line = serde_json::json!({"bench": "checkpoint", "base_files": n, "touched": 100, "ns": median(&mut times), "load": load()});
        println!("{line}");
        writeln!(out, "{line}").unwrap();
        let _ = std::fs::remove_dir_all(&case);
    }
    if want("touch") {
        touch_costs(&scratch, samples, &mut out);
    }
    if want("rewind") {
        rewind_vs_commit(&scratch, short, samples, &mut out);
    }
    if !want("commit") {
        return;
    }
    // Commit of 1,000 files vs the same writes through write_file in host mode.
    let files = if short { 200 } else { 1000 };
    let (mut commit_t, mut host_t, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    // Disk writeback makes single pairs vary (0.9x to 1.6x seen): at least 7.
    let pairs = if short { samples } else { samples.max(7) };
    for k in 0..pairs {
        let case = scratch.join(format!("commit{k}"));
        let _ = std::fs::remove_dir_all(&case);
        let (root, state) = (case.join("ws"), case.join("state"));
        build(&root, files);
        let host = case.join("host");
        build(&host, files);
        let mut s = Session::open(&root, Some(state.to_str().unwrap()), "bench").unwrap();
        for i in 0..files {
            s.write_file(&existing(i), format!("new {i}\n").as_bytes(), 0o644)
                .unwrap();
        }
        let config = serde_json::json!({"root": host, "state_dir": case.join("hstate"), "limits": {"operation_timeout_ms": 600000}}).to_string();
        let opened: serde_json::Value =
            serde_json::from_str(&wsfs::api::workspace_open(&config)).unwrap();
        let ws = opened["data"]["workspace"].as_u64().expect("a workspace");
        let mut commit = || {
            let t = Instant::now();
            let r = s.commit(&CommitOptions::default(), &ctl()).unwrap();
            assert!(r.committed && r.files.len() == files, "{r:?}");
            t.elapsed().as_nanos() as f64
        };
        let host_writes = || {
            let t = Instant::now();
            for i in 0..files {
                let args =
                    serde_json::json!({"path": existing(i), "content": format!("new {i}\n")})
                        .to_string();
                let v = wsfs::api::call(ws, "write_file", &args, None, None);
                assert!(v.contains("\"ok\":true"), "{v}");
            }
            t.elapsed().as_nanos() as f64
        };
        // Alternating which goes first, so a disk busy with the other's writeback is shared.
        let (c, h) = if k % 2 == 0 {
            let c = commit();
            (c, host_writes())
        } else {
            let h = host_writes();
            (commit(), h)
        };
        commit_t.push(c);
        host_t.push(h);
        ratios.push(c / h);
        wsfs::api::workspace_close(ws);
        let _ = std::fs::remove_dir_all(&case);
    }
    let each: Vec<f64> = ratios.iter().map(|r| (r * 100.0).round() / 100.0).collect();
    let line = serde_json::json!({"bench": "commit", "files": files, "commit_ns": median(&mut commit_t), "host_writes_ns": median(&mut host_t), "ratio": median(&mut ratios), "ratios": each, "pairs": ratios.len(), "load": load()});
    println!("{line}");
    writeln!(out, "{line}").unwrap();
}

/// `touch` per path: the first touch of 100 base files without a checkpoint, and after one;
/// then (after another checkpoint) the first touch of the same paths again, now changed in
/// the session (each takes its before-image).
fn touch_costs(scratch: &Path, samples: usize, out: &mut dyn Write) {
    let (mut first, mut again, mut plain) = (Vec::new(), Vec::new(), Vec::new());
    for k in 0..samples {
        let case = scratch.join(format!("touch{k}"));
        let _ = std::fs::remove_dir_all(&case);
        let (root, state) = (case.join("ws"), case.join("state"));
        build(&root, 100);
        // Without a checkpoint (no before-image to take).
        let mut s = Session::open(&root, Some(state.to_str().unwrap()), "plain").unwrap();
        let t = Instant::now();
        for i in 0..100 {
            s.touch(&existing(i)).unwrap();
        }
        plain.push(t.elapsed().as_nanos() as f64 / 100.0);
        s.discard().unwrap();
        let mut s = Session::open(&root, Some(state.to_str().unwrap()), "bench").unwrap();
        s.checkpoint(&CheckpointOptions::default()).unwrap();
        let t = Instant::now();
        for i in 0..100 {
            s.touch(&existing(i)).unwrap();
        }
        first.push(t.elapsed().as_nanos() as f64 / 100.0);
        for i in 0..100 {
            s.write_file(&existing(i), format!("changed {i}\n").as_bytes(), 0o644)
                .unwrap();
        }
        s.checkpoint(&CheckpointOptions::default()).unwrap();
        let t = Instant::now();
        for i in 0..100 {
            s.touch(&existing(i)).unwrap();
        }
        again.push(t.elapsed().as_nanos() as f64 / 100.0);
        drop(s);
        let _ = std::fs::remove_dir_all(&case);
    }
    let line = serde_json::json!({"bench": "touch", "paths": 100, "first_no_checkpoint_ns": median(&mut plain), "first_ns": median(&mut first), "changed_after_checkpoint_ns": median(&mut again), "load": load()});
    println!("{line}");
    writeln!(out, "{line}").unwrap();
}

/// `rewind` of `n` paths back to their content at a checkpoint, paired (one after the other,
/// alternating which goes first) with `commit` of the same `n` paths in a twin case.
fn rewind_vs_commit(scratch: &Path, short: bool, samples: usize, out: &mut dyn Write) {
    let sizes: &[usize] = if short { &[100] } else { &[100, 1000] };
    for &n in sizes {
        let (mut rewind_t, mut commit_t) = (Vec::new(), Vec::new());
        for k in 0..samples {
            let measure_rewind = |case: &Path| -> f64 {
                let (root, state) = (case.join("ws"), case.join("state"));
                build(&root, n);
                let mut s = Session::open(&root, Some(state.to_str().unwrap()), "bench").unwrap();
                for i in 0..n {
                    s.write_file(&existing(i), format!("one {i}\n").as_bytes(), 0o644)
                        .unwrap();
                }
                let id = s.checkpoint(&CheckpointOptions::default()).unwrap().id;
                for i in 0..n {
                    s.write_file(&existing(i), format!("two {i}\n").as_bytes(), 0o644)
                        .unwrap();
                }
                let t = Instant::now();
                s.rewind(&RewindOptions { id }).unwrap();
                let ns = t.elapsed().as_nanos() as f64;
                assert_eq!(s.diff(&DiffOptions::default()).unwrap().changes.len(), n);
                ns
            };
            let measure_commit = |case: &Path| -> f64 {
                let (root, state) = (case.join("ws"), case.join("state"));
                build(&root, n);
                let mut s = Session::open(&root, Some(state.to_str().unwrap()), "bench").unwrap();
                for i in 0..n {
                    s.write_file(&existing(i), format!("two {i}\n").as_bytes(), 0o644)
                        .unwrap();
                }
                let t = Instant::now();
                let r = s.commit(&CommitOptions::default(), &ctl()).unwrap();
                let ns = t.elapsed().as_nanos() as f64;
                assert!(r.committed && r.files.len() == n, "{r:?}");
                ns
            };
            let (rc, cc) = (
                scratch.join(format!("rw{k}")),
                scratch.join(format!("cm{k}")),
            );
            let _ = std::fs::remove_dir_all(&rc);
            let _ = std::fs::remove_dir_all(&cc);
            if k % 2 == 0 {
                rewind_t.push(measure_rewind(&rc));
                commit_t.push(measure_commit(&cc));
            } else {
                commit_t.push(measure_commit(&cc));
                rewind_t.push(measure_rewind(&rc));
            }
            let _ = std::fs::remove_dir_all(&rc);
            let _ = std::fs::remove_dir_all(&cc);
        }
        let line = serde_json::json!({"bench": "rewind", "paths": n, "rewind_ns": median(&mut rewind_t), "commit_ns": median(&mut commit_t), "load": load()});
        println!("{line}");
        writeln!(out, "{line}").unwrap();
    }
}
