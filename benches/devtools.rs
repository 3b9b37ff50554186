//! Benchmark of the developer tools' runner (bench/run.sh runs it; bench/report.py reports it),
//! the three figures of issue 21, each through the library's `wsfs_call` path
//! (`wsfs::api::call`: dispatch, the policy switch, resolution of `cwd`, the sandbox, the
//! spawn, the capture, the text and the JSON envelope):
//!
//! - `runner_overhead`: `shell {"command": "true"}` (bash runs `true` under Landlock, seccomp,
//!   a pids cgroup, rlimits, a rebuilt environment and a private temp directory) against
//!   `std::process::Command` running the same `bash --noprofile --norc -c true` with piped
//!   output; paired samples, alternating which runs first; the figure is the median of the
//!   paired differences.
//! - `workspace_info_cached`: `workspace_info {}` after a first call probed (the cached
//!   answer, serialised into the envelope).
//! - `overlay_run` and `overlay_adopt_1000`: overlay mode's cost per program (see
//!   `overlay_runs`): `shell` on an overlay session against `shell` on a host-mode workspace,
//!   paired, alternating. Skipped, with a line saying why, where the kernel cannot make the
//!   view.
//! - `git_status_<N>`: `git_status {}` on a repository of N committed files (100 directories)
//!   with 10 of them modified, against `git status --porcelain=v2 --branch -z` run directly in
//!   it; paired, alternating.
//!
//! Configuration (environment): `WSFS_DEVTOOLS_DIR` (required: a scratch directory),
//! `WSFS_DEVTOOLS_FILES` (100000; a multiple of 100), `WSFS_DEVTOOLS_SAMPLES` (15: git_status
//! pairs; the runner gets 20 times as many, workspace_info 200 times), `WSFS_DEVTOOLS_OUT`
//! (JSON lines). Where Landlock is missing the bench fails: it measures the sandboxed path.

use serde_json::{json, Value};
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Instant;

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn open(root: &Path, state: &Path) -> Result<u64, String> {
    let cfg = json!({"root": root, "state_dir": state,
        "policy": {"exec_enabled": true, "shell_enabled": true, "exec_timeout_sec": 600}});
    let opened: Value = serde_json::from_str(&wsfs::api::workspace_open(&cfg.to_string()))
        .map_err(|e| e.to_string())?;
    opened["data"]["workspace"]
        .as_u64()
        .ok_or(format!("open: {opened}"))
}

/// One call through the C ABI's path; its data, or the error.
fn call(ws: u64, tool: &str, args: &str) -> Result<(f64, Value), String> {
    let t = Instant::now();
    let out = wsfs::api::call(ws, tool, args, None, None);
    let ns = t.elapsed().as_nanos() as f64;
    let v: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    if v["ok"] != json!(true) {
        return Err(format!("{tool}: {out}"));
    }
    Ok((ns, v["data"].clone()))
}

fn plain(cmd: &mut Command) -> Result<f64, String> {
    let t = Instant::now();
    let out = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| e.to_string())?;
    let ns = t.elapsed().as_nanos() as f64;
    if !out.status.success() {
        return Err(format!("{cmd:?}: {}", out.status));
    }
    Ok(ns)
}

struct Out(Option<std::fs::File>);

impl Out {
    fn emit(&mut self, line: Value) -> Result<(), String> {
        eprintln!("devtools: {line}");
        match &mut self.0 {
            Some(f) => writeln!(f, "{line}").map_err(|e| e.to_string()),
            None => Ok(()),
        }
    }

    fn pair(
        &mut self,
        case: &str,
        desc: &str,
        k: usize,
        tool: f64,
        plain: f64,
    ) -> Result<(), String> {
        for (path, ns) in [("tool", tool), ("plain", plain)] {
            self.emit(json!({"case": case, "desc": desc, "sample": k, "path": path, "ns": ns}))?;
        }
        Ok(())
    }
}

fn runner_overhead(ws: u64, root: &Path, samples: usize, out: &mut Out) -> Result<(), String> {
    let desc = "shell `true` (bash -c true) vs std::process::Command of the same";
    let bash = || {
        plain(
            Command::new("bash")
                .args(["--noprofile", "--norc", "-c", "true"])
                .current_dir(root),
        )
    };
    let tool = || -> Result<f64, String> {
        let (ns, data) = call(ws, "shell", r#"{"command":"true"}"#)?;
        let sandbox = data["sandbox"]["sandbox"].as_str().unwrap_or("");
        if data["exit_code"] != json!(0) || !sandbox.starts_with("landlock") {
            return Err(format!("shell true: {data}"));
        }
        Ok(ns)
    };
    // Warm both paths (page cache, the first cgroup).
    tool()?;
    bash()?;
    for k in 0..samples {
        let (t, p) = if k % 2 == 0 {
            let t = tool()?;
            (t, bash()?)
        } else {
            let p = bash()?;
            (tool()?, p)
        };
        out.pair("runner_overhead", desc, k, t, p)?;
    }
    Ok(())
}

fn workspace_info_cached(ws: u64, samples: usize, out: &mut Out) -> Result<(), String> {
    let (first, data) = call(ws, "workspace_info", "{}")?;
    out.emit(
        json!({"case": "workspace_info_probe", "desc": "workspace_info, first call (probes)",
        "sample": 0, "path": "tool", "ns": first}),
    )?;
    if data["tools"]["git"]["available"] != json!(true) {
        return Err(format!("workspace_info found no git: {data}"));
    }
    for k in 0..samples {
        let (ns, again) = call(ws, "workspace_info", "{}")?;
        if again != data {
            return Err("the cached answer changed".into());
        }
        out.emit(json!({"case": "workspace_info_cached",
            "desc": "workspace_info, cached (no process started)", "sample": k,
            "path": "tool", "ns": ns}))?;
    }
    Ok(())
}

fn open_mode(root: &Path, state: &Path, overlay: bool) -> Result<u64, String> {
    let mut cfg = json!({"root": root, "state_dir": state,
        "policy": {"exec_enabled": true, "shell_enabled": true, "exec_timeout_sec": 600}});
    if overlay {
        cfg["mode"] = json!("overlay");
        cfg["session"] = json!("bench");
    }
    let opened: Value = serde_json::from_str(&wsfs::api::workspace_open(&cfg.to_string()))
        .map_err(|e| e.to_string())?;
    opened["data"]["workspace"]
        .as_u64()
        .ok_or(format!("open: {opened}"))
}

/// Overlay mode's cost per program: `shell` on an overlay session against `shell` on a
/// host-mode workspace of the same files, paired and alternating. `overlay_run`: `true` (the
/// run's directories, the namespaces, the mount of run upper + session + base, nothing to
/// adopt). `overlay_adopt_1000`: a script writing 1,000 new files (each then touched and
/// renamed into the session, two `syncfs`).
fn overlay_runs(scratch: &Path, samples: usize, out: &mut Out) -> Result<(), String> {
    let base = scratch.join("overlay-base");
    let host = scratch.join("overlay-host");
    for d in [&base, &host] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
        std::fs::write(d.join("base.txt"), "base\n").map_err(|e| e.to_string())?;
    }
    let ows = match open_mode(&base, &scratch.join("overlay-state"), true) {
        Ok(ws) => ws,
        Err(e) if e.contains("overlay_unavailable") => {
            eprintln!("devtools: overlay runs skipped: {e}");
            return Ok(());
        }
        Err(e) => return Err(e),
    };
    let hws = open_mode(&host, &scratch.join("overlay-host-state"), false)?;
    let shell = |ws: u64, command: &str| -> Result<f64, String> {
        let args = json!({ "command": command }).to_string();
        let (ns, data) = call(ws, "shell", &args)?;
        if data["exit_code"] != json!(0) {
            return Err(format!("shell {command}: {data}"));
        }
        Ok(ns)
    };
    let cases: [(&str, &str, usize); 2] = [
        (
            "overlay_run",
            "shell `true` on an overlay session vs on a host-mode workspace",
            samples,
        ),
        (
            "overlay_adopt_1000",
            "shell writing 1,000 new files on an overlay session (adopted into it) vs on a \
             host-mode workspace",
            samples / 10,
        ),
    ];
    for (case, desc, n) in cases {
        let command = |k: usize| match case {
            "overlay_run" => "true".to_string(),
            _ => format!(
                "mkdir out{k} && cd out{k} && i=0; while [ $i -lt 1000 ]; do echo $i > f$i; \
                 i=$((i+1)); done"
            ),
        };
        shell(ows, &command(n + 1))?;
        shell(hws, &command(n + 1))?;
        for k in 0..n {
            let (t, p) = if k % 2 == 0 {
                let t = shell(ows, &command(k))?;
                (t, shell(hws, &command(k))?)
            } else {
                let p = shell(hws, &command(k))?;
                (shell(ows, &command(k))?, p)
            };
            out.pair(case, desc, k, t, p)?;
        }
    }
    wsfs::api::workspace_close(ows);
    wsfs::api::workspace_close(hws);
    Ok(())
}

fn git(dir: &Path, args: &[&str]) -> Result<(), String> {
    let status = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .stdout(Stdio::null())
        .status()
        .map_err(|e| e.to_string())?;
    if !status.success() {
        return Err(format!("git {args:?}: {status}"));
    }
    Ok(())
}

fn git_status(scratch: &Path, files: usize, samples: usize, out: &mut Out) -> Result<(), String> {
    let repo = scratch.join(format!("repo-{files}"));
    if !repo.join(".git").exists() {
        for d in 0..100 {
            let dir = repo.join(format!("dir{d:03}"));
            std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
            for f in 0..files / 100 {
                std::fs::write(dir.join(format!("file{f:05}.txt")), format!("{d} {f}\n"))
                    .map_err(|e| e.to_string())?;
            }
        }
        git(&repo, &["init", "-q", "-b", "main"])?;
        git(&repo, &["config", "user.email", "bench@example.com"])?;
        git(&repo, &["config", "user.name", "bench"])?;
        git(&repo, &["add", "-A"])?;
        git(&repo, &["commit", "-q", "-m", "files"])?;
    }
    for d in 0..10 {
        std::fs::write(repo.join(format!("dir{d:03}/file00000.txt")), "changed\n")
            .map_err(|e| e.to_string())?;
    }
    let ws = open(&repo, &scratch.join("state"))?;
    let case = format!("git_status_{}k", files / 1000);
    let desc = format!(
        "git_status on {files} committed files, 10 modified, vs git status --porcelain=v2 run directly"
    );
    let direct = || {
        plain(
            Command::new("git")
                .args(["status", "--porcelain=v2", "--branch", "-z"])
                .current_dir(&repo)
                .env("GIT_CONFIG_NOSYSTEM", "1"),
        )
    };
    let tool = || -> Result<f64, String> {
        let (ns, data) = call(ws, "git_status", "{}")?;
        if data["unstaged"].as_array().map(Vec::len) != Some(10) {
            return Err(format!("git_status: {data}"));
        }
        Ok(ns)
    };
    tool()?;
    direct()?;
    for k in 0..samples {
        let (t, p) = if k % 2 == 0 {
            let t = tool()?;
            (t, direct()?)
        } else {
            let p = direct()?;
            (tool()?, p)
        };
        out.pair(&case, &desc, k, t, p)?;
    }
    wsfs::api::workspace_close(ws);
    Ok(())
}

fn run() -> Result<(), String> {
    let scratch = env("WSFS_DEVTOOLS_DIR").ok_or("WSFS_DEVTOOLS_DIR is not set")?;
    let scratch = Path::new(&scratch);
    let files: usize = env("WSFS_DEVTOOLS_FILES")
        .map_or(Ok(100_000), |v| v.parse())
        .map_err(|e| format!("WSFS_DEVTOOLS_FILES: {e}"))?;
    let samples: usize = env("WSFS_DEVTOOLS_SAMPLES")
        .map_or(Ok(15), |v| v.parse())
        .map_err(|e| format!("WSFS_DEVTOOLS_SAMPLES: {e}"))?;
    let mut out = Out(match env("WSFS_DEVTOOLS_OUT") {
        Some(p) => Some(std::fs::File::create(&p).map_err(|e| format!("{p}: {e}"))?),
        None => None,
    });
    let root = scratch.join("ws");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let ws = open(&root, &scratch.join("state"))?;
    runner_overhead(ws, &root, samples * 20, &mut out)?;
    workspace_info_cached(ws, samples * 200, &mut out)?;
    wsfs::api::workspace_close(ws);
    overlay_runs(scratch, samples * 20, &mut out)?;
    git_status(scratch, files / 100 * 100, samples, &mut out)?;
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("devtools bench: {e}");
        std::process::exit(1);
    }
}
