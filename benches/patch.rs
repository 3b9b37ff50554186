//! apply_patch against `git apply`: a 100-hunk unified diff applied to a 10,000-line file,
//! and a 10-file patch (10 hunks in each 1,000-line file), on each filesystem given.
//!
//! Each timed call applies the forward patch or its reverse in turn, so every call does the
//! same work from the state the previous one left. wsfs is measured as the Rust core
//! (`wsfs::run_tool`) and through the C ABI (`wsfs_call`, the whole envelope); `git apply` is
//! a process started per call, as an agent's shell tool would start it. Samples of the three
//! alternate. `git apply` does not fsync; wsfs fsyncs the new file and its directory (and, for
//! several files, its journal), so on a disk the difference is mostly fsync.
//!
//! Configuration (environment):
//! - `WSFS_PATCH_BENCH_DIRS`: `label=dir` pairs separated by spaces (e.g.
//!   `tmpfs=/dev/shm/x disk=/tmp/y`); each dir is created and emptied;
//! - `WSFS_PATCH_BENCH_OUT`: JSON lines of results (appended);
//! - `WSFS_BENCH_SHORT=1`: one call per path, no timing (`bench/run.sh --short`);
//! - `WSFS_PATCH_BENCH_SAMPLES` (5) and `WSFS_BENCH_SAMPLE_MS` (300): samples per path and the
//!   target duration of one sample.

use serde_json::json;
use std::ffi::{c_char, CStr, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

struct Case {
    name: &'static str,
    desc: &'static str,
    files: usize,
    lines: usize,
    hunks_per_file: usize,
}

const CASES: [Case; 2] = [
    Case {
        name: "patch_100_hunks_10k_lines",
        desc: "100-hunk unified diff, one 10,000-line file",
        files: 1,
        lines: 10_000,
        hunks_per_file: 100,
    },
    Case {
        name: "patch_10_files_10_hunks",
        desc: "10 files of 1,000 lines, 10 hunks each (journaled commit)",
        files: 10,
        lines: 1_000,
        hunks_per_file: 10,
    },
];

fn file_text(f: usize, lines: usize) -> String {
    (0..lines)
        .map(|i| format!("file {f} line {i:05}: the quick brown fox jumps over the lazy dog\n"))
        .collect()
}

/// The forward and reverse unified diffs of `c`: every changed line is rewritten, with three
/// lines of context, as `git diff` would show it.
fn patches(c: &Case) -> (String, String) {
    let (mut fwd, mut rev) = (String::new(), String::new());
    for f in 0..c.files {
        let old = file_text(f, c.lines);
        let new: String = old
            .lines()
            .enumerate()
            .map(|(i, l)| {
                if i % (c.lines / c.hunks_per_file) == c.lines / c.hunks_per_file / 2 {
                    format!("{l} (changed)\n")
                } else {
                    format!("{l}\n")
                }
            })
            .collect();
        let name = format!("f{f}.txt");
        let diff = |a: &str, b: &str| {
            similar::TextDiff::from_lines(a, b)
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{name}"), &format!("b/{name}"))
                .to_string()
        };
        fwd.push_str(&format!(
            "diff --git a/{name} b/{name}\n{}",
            diff(&old, &new)
        ));
        rev.push_str(&format!(
            "diff --git a/{name} b/{name}\n{}",
            diff(&new, &old)
        ));
    }
    (fwd, rev)
}

fn take(p: *mut c_char) -> String {
    // SAFETY: a NUL-terminated string returned by wsfs (never NULL), freed once here.
    unsafe {
        let s = CStr::from_ptr(p).to_string_lossy().into_owned();
        wsfs::ffi::wsfs_string_free(p);
        s
    }
}

struct Paths {
    core: wsfs::Workspace,
    handle: u64,
    root: PathBuf,
    patch_files: [PathBuf; 2],
    args: [String; 2],
    c_args: [CString; 2],
}

impl Paths {
    fn open(dir: &Path, c: &Case) -> Result<Paths, String> {
        let root = dir.join(c.name);
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).map_err(|e| format!("{root:?}: {e}"))?;
        for f in 0..c.files {
            std::fs::write(root.join(format!("f{f}.txt")), file_text(f, c.lines))
                .map_err(|e| e.to_string())?;
        }
        let (fwd, rev) = patches(c);
        let patch_files = [
            dir.join(format!("{}.fwd.patch", c.name)),
            dir.join(format!("{}.rev.patch", c.name)),
        ];
        std::fs::write(&patch_files[0], &fwd).map_err(|e| e.to_string())?;
        std::fs::write(&patch_files[1], &rev).map_err(|e| e.to_string())?;
        let state = dir.join(format!("{}.state", c.name));
        let config = wsfs::Config {
            root: root.to_string_lossy().into_owned(),
            create_root: false,
            restrict_to_workspace: true,
            limits: wsfs::Limits::default(),
            state_dir: Some(state.to_string_lossy().into_owned()),
            policy: wsfs::PolicyConfig::default(),
            profile: "wsfs".into(),
            wasm_tools: Vec::new(),
            wasm_policy: Default::default(),
            mode: Default::default(),
            session: None,
            session_refresh_ms: None,
            model_gateway: None,
        };
        let (core, _) = wsfs::Workspace::open(&config).map_err(|e| e.to_string())?;
        let cfg =
            CString::new(json!({"root": config.root, "state_dir": config.state_dir}).to_string())
                .map_err(|e| e.to_string())?;
        // SAFETY: a valid NUL-terminated string; the result is freed by `take`.
        let opened = take(unsafe { wsfs::ffi::wsfs_workspace_open(cfg.as_ptr()) });
        let v: serde_json::Value = serde_json::from_str(&opened).map_err(|e| e.to_string())?;
        let handle = v["data"]["workspace"].as_u64().ok_or(opened)?;
        let args = [
            json!({ "patch": fwd }).to_string(),
            json!({ "patch": rev }).to_string(),
        ];
        let c_args = [
            CString::new(args[0].clone()).map_err(|e| e.to_string())?,
            CString::new(args[1].clone()).map_err(|e| e.to_string())?,
        ];
        Ok(Paths {
            core,
            handle,
            root,
            patch_files,
            args,
            c_args,
        })
    }

    /// Applies patch `i % 2` through `path`.
    fn call(&self, path: &str, i: usize) -> Result<(), String> {
        let k = i % 2;
        match path {
            "core" => {
                let ctl = wsfs::CallControl::new(Duration::from_secs(60), None);
                let (out, _) = wsfs::run_tool(&self.core, "apply_patch", &self.args[k], &ctl)
                    .map_err(|e| e.to_string())?;
                let text = out.text();
                if !text.starts_with("applied") {
                    return Err(format!("core: {text}"));
                }
            }
            "cabi" => {
                let tool = c"apply_patch";
                // SAFETY: valid NUL-terminated strings that outlive the call.
                let out = take(unsafe {
                    wsfs::ffi::wsfs_call(self.handle, tool.as_ptr(), self.c_args[k].as_ptr())
                });
                if !out.contains("\"applied\":true") {
                    return Err(format!("C ABI: {}", &out[..out.len().min(300)]));
                }
            }
            "git_apply" => {
                let status = Command::new("git")
                    .arg("apply")
                    .arg(&self.patch_files[k])
                    .current_dir(&self.root)
                    .env("GIT_CEILING_DIRECTORIES", &self.root)
                    .status()
                    .map_err(|e| format!("git apply: {e}"))?;
                if !status.success() {
                    return Err(format!("git apply failed: {status}"));
                }
            }
            other => return Err(format!("unknown path {other}")),
        }
        Ok(())
    }
}

impl Drop for Paths {
    fn drop(&mut self) {
        take(wsfs::ffi::wsfs_workspace_close(self.handle));
    }
}

const PATHS: [&str; 3] = ["core", "cabi", "git_apply"];

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

fn run() -> Result<(), String> {
    let dirs = std::env::var("WSFS_PATCH_BENCH_DIRS")
        .map_err(|_| "set WSFS_PATCH_BENCH_DIRS to label=dir pairs (bench/run.sh does)")?;
    let short = std::env::var("WSFS_BENCH_SHORT").is_ok_and(|v| v == "1");
    let samples = if short {
        1
    } else {
        env_u64("WSFS_PATCH_BENCH_SAMPLES", 5)
    };
    let target = Duration::from_millis(env_u64("WSFS_BENCH_SAMPLE_MS", 300));
    let mut out = match std::env::var_os("WSFS_PATCH_BENCH_OUT") {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .map_err(|e| format!("{p:?}: {e}"))?,
        ),
        None => None,
    };
    let git = Command::new("git")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !git {
        eprintln!("patch bench: git is not installed; git apply is not measured");
    }
    for spec in dirs.split_whitespace() {
        let (label, dir) = spec.split_once('=').ok_or(format!("bad dir spec {spec}"))?;
        let dir = Path::new(dir);
        for c in &CASES {
            let p = Paths::open(dir, c)?;
            let paths: Vec<&str> = PATHS
                .iter()
                .copied()
                .filter(|p| git || *p != "git_apply")
                .collect();
            let mut calls = 0usize;
            let mut iters = Vec::new();
            for path in &paths {
                // Warm up (and calibrate) with a forward and a reverse call.
                let start = Instant::now();
                p.call(path, calls)?;
                p.call(path, calls + 1)?;
                calls += 2;
                let one = start.elapsed() / 2;
                let n = if short {
                    1
                } else {
                    (target.as_nanos() / one.as_nanos().max(1)).clamp(2, 10_000) as usize & !1
                };
                iters.push(n.max(if short { 1 } else { 2 }));
            }
            for k in 0..samples {
                for (j, path) in paths.iter().enumerate() {
                    let start = Instant::now();
                    for _ in 0..iters[j] {
                        p.call(path, calls)?;
                        calls += 1;
                    }
                    let ns = start.elapsed().as_nanos() as f64 / iters[j] as f64;
                    eprintln!(
                        "patch bench: {label} {}/{path}: {:.2} ms/op ({} iters)",
                        c.name,
                        ns / 1e6,
                        iters[j]
                    );
                    let line = json!({"case": c.name, "desc": c.desc, "fs_label": label, "path": path, "sample": k, "iters": iters[j], "ns_per_op": ns, "short": short});
                    if let Some(f) = out.as_mut() {
                        writeln!(f, "{line}").map_err(|e| e.to_string())?;
                    }
                }
            }
            // Back to the original state for the next run.
            if calls % 2 == 1 {
                p.call("core", calls)?;
            }
        }
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("patch bench: {e}");
        std::process::exit(1);
    }
}
