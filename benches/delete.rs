//! Benchmark of recursive deletion (bench/run.sh runs it; bench/report.py reports it):
//! `delete_file {recursive: true}` on a tree of 100 directories of 100 small files (10,000
//! files), through the library's `wsfs_call` path (`wsfs::api::call`: argument parsing,
//! resolution, the deletion walk, the final fsync of the parent directory, the text and the
//! JSON envelope), against `rm -rf` on an identical tree, run as a process.
//!
//! Each sample builds both trees, flushes them to disk (`sync`), then deletes them one after
//! the other, alternating which goes first. Every wsfs sample must report `deleted: true` with
//! every entry counted; every `rm` must leave nothing behind. Each scratch directory is a
//! case: on a disk both are mostly waiting for the file system; on a tmpfs what is left is
//! their own cost.
//!
//! Configuration (environment): `WSFS_DELETE_DIRS` (required: comma-separated `label=dir`
//! scratch directories, e.g. `ext4=/tmp/x,tmpfs=/dev/shm/y`), `WSFS_DELETE_FILES` (10000; a
//! multiple of 100), `WSFS_DELETE_SAMPLES` (5), `WSFS_DELETE_OUT` (JSON lines).

use std::io::Write;
use std::path::Path;
use std::process::Command;
use std::time::Instant;

const DIRS: usize = 100;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// `DIRS` directories holding `files / DIRS` files of 64 bytes each.
fn build(top: &Path, files: usize) -> Result<(), String> {
    let content = [b'x'; 64];
    for d in 0..DIRS {
        let dir = top.join(format!("dir{d:03}"));
        std::fs::create_dir_all(&dir).map_err(|e| format!("{dir:?}: {e}"))?;
        for f in 0..files / DIRS {
            let p = dir.join(format!("file{f:04}.txt"));
            std::fs::write(&p, content).map_err(|e| format!("{p:?}: {e}"))?;
        }
    }
    Ok(())
}

fn sync() {
    // SAFETY: sync(2) takes no arguments and cannot fail.
    unsafe { libc::sync() };
}

fn wsfs_delete(ws: u64, expected: u64) -> Result<f64, String> {
    let t = Instant::now();
    let out = wsfs::api::call(
        ws,
        "delete_file",
        r#"{"path":"tree","recursive":true}"#,
        None,
        None,
    );
    let ns = t.elapsed().as_nanos() as f64;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    let d = &v["data"];
    if d["deleted"] != serde_json::json!(true) || d["entries_removed"] != expected {
        return Err(format!("delete_file: {out}"));
    }
    Ok(ns)
}

fn rm_rf(tree: &Path) -> Result<f64, String> {
    let t = Instant::now();
    let status = Command::new("rm")
        .arg("-rf")
        .arg(tree)
        .status()
        .map_err(|e| format!("rm: {e}"))?;
    let ns = t.elapsed().as_nanos() as f64;
    if !status.success() || tree.exists() {
        return Err(format!("rm -rf {tree:?}: {status}"));
    }
    Ok(ns)
}

fn emit(out: &mut Option<std::fs::File>, line: serde_json::Value) -> Result<(), String> {
    eprintln!("delete: {line}");
    match out {
        Some(f) => writeln!(f, "{line}").map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

fn run() -> Result<(), String> {
    let dirs = env("WSFS_DELETE_DIRS").ok_or("WSFS_DELETE_DIRS is not set")?;
    let files: usize = env("WSFS_DELETE_FILES")
        .map_or(Ok(10_000), |v| v.parse())
        .map_err(|e| format!("WSFS_DELETE_FILES: {e}"))?;
    let samples: usize = env("WSFS_DELETE_SAMPLES")
        .map_or(Ok(5), |v| v.parse())
        .map_err(|e| format!("WSFS_DELETE_SAMPLES: {e}"))?;
    let mut out = match env("WSFS_DELETE_OUT") {
        Some(p) => Some(std::fs::File::create(&p).map_err(|e| format!("{p}: {e}"))?),
        None => None,
    };
    for case in dirs.split(',') {
        let (label, dir) = case
            .split_once('=')
            .ok_or(format!("WSFS_DELETE_DIRS: {case:?} is not label=dir"))?;
        bench_dir(
            label,
            Path::new(dir),
            files / DIRS * DIRS,
            samples,
            &mut out,
        )?;
    }
    Ok(())
}

fn bench_dir(
    label: &str,
    scratch: &Path,
    files: usize,
    samples: usize,
    out: &mut Option<std::fs::File>,
) -> Result<(), String> {
    let root = scratch.join("ws");
    let rm_tree = scratch.join("rm-tree");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let cfg = serde_json::json!({"root": root, "limits": {"operation_timeout_ms": 600000}});
    let opened: serde_json::Value =
        serde_json::from_str(&wsfs::api::workspace_open(&cfg.to_string()))
            .map_err(|e| e.to_string())?;
    let ws = opened["data"]["workspace"]
        .as_u64()
        .ok_or(format!("open: {opened}"))?;
    // The files, the directories and the tree itself.
    let entries = (files + DIRS + 1) as u64;
    let case = format!("delete_{}k_{label}", files / 1000);
    let desc = format!("delete a tree of {files} files in {DIRS} directories, {label}");
    for k in 0..samples {
        build(&root.join("tree"), files)?;
        build(&rm_tree, files)?;
        sync();
        let (wsfs_ns, rm_ns) = if k % 2 == 0 {
            let w = wsfs_delete(ws, entries)?;
            (w, rm_rf(&rm_tree)?)
        } else {
            let r = rm_rf(&rm_tree)?;
            (wsfs_delete(ws, entries)?, r)
        };
        let common = serde_json::json!({"case": case, "desc": desc, "sample": k,
            "files": files, "entries": entries, "fs": label});
        for (path, ns) in [("wsfs", wsfs_ns), ("rm", rm_ns)] {
            let mut line = common.clone();
            line["path"] = path.into();
            line["ns"] = ns.into();
            emit(out, line)?;
        }
    }
    wsfs::api::workspace_close(ws);
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("delete bench: {e}");
        std::process::exit(1);
    }
}
