//! Benchmarks of the walking tools (bench/run.sh runs them; bench/report.py reports them):
//!
//! - `search_text` (a literal and a regex) and `find_files "**/*.go"` over a source tree (Go's
//!   own, `$(go env GOROOT)/src`), through the library's `wsfs_call` path (`wsfs::api::call`:
//!   argument parsing, the walk, the search, the text and the JSON envelope), against ripgrep
//!   with the equivalent flags, run as a process with its output read through a pipe.
//!   Samples alternate between wsfs and rg, so both see the same conditions. Every sample's
//!   result count must equal ripgrep's.
//! - `list_dir depth=50` capped at 500 entries on generated trees of 10k, 100k and 1M
//!   entries: time per call, and peak RSS growth of one call in a fresh child process.
//!
//! Configuration (environment): `WSFS_WALK_SRC` (the source tree), `WSFS_WALK_TREES` (where
//! trees are generated), `WSFS_WALK_SIZES` (comma-separated entry counts), `WSFS_WALK_RG`
//! (ripgrep's path; empty: no comparison), `WSFS_WALK_SAMPLES` (5), `WSFS_WALK_OUT` (JSON lines).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Instant;

/// ripgrep's flags equivalent to wsfs's defaults: results in path order (`--sort path`, which
/// makes rg single-threaded), `.gitignore` files honoured outside git repositories too, never
/// global, parent or ripgrep-specific ignore files, no config file; hidden files skipped.
const RG_COMMON: &[&str] = &[
    "--sort",
    "path",
    "--no-require-git",
    "--no-ignore-global",
    "--no-ignore-parent",
    "--no-ignore-dot",
    "--no-config",
];

struct Case {
    name: &'static str,
    desc: &'static str,
    tool: &'static str,
    args: serde_json::Value,
    /// ripgrep's arguments for the same result, and for counting it.
    rg: Vec<&'static str>,
    rg_count: Vec<&'static str>,
}

fn cases() -> Vec<Case> {
    let lit = "ErrUnexpectedEOF";
    let re = "[A-Z][a-z]+Timeout";
    vec![
        Case {
            name: "search_literal",
            desc: "search_text, literal 'ErrUnexpectedEOF'",
            tool: "search_text",
            args: serde_json::json!({"query": lit, "max_matches": 1000}),
            rg: vec!["-n", "--column", "-F", lit],
            rg_count: vec!["-c", "-F", lit],
        },
        Case {
            name: "search_regex",
            desc: "search_text, regex '[A-Z][a-z]+Timeout'",
            tool: "search_text",
            args: serde_json::json!({"query": re, "use_regex": true, "max_matches": 1000}),
            rg: vec!["-n", "--column", re],
            rg_count: vec!["-c", re],
        },
        Case {
            name: "find_go",
            desc: "find_files '**/*.go'",
            tool: "find_files",
            args: serde_json::json!({"pattern": "**/*.go", "max_results": 10000}),
            rg: vec!["--files", "-g", "*.go", "-g", "!.*"],
            rg_count: vec!["--files", "-g", "*.go", "-g", "!.*"],
        },
    ]
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn open(root: &Path) -> Result<u64, String> {
    let cfg = serde_json::json!({"root": root, "limits": {"operation_timeout_ms": 600000}});
    let v: serde_json::Value = serde_json::from_str(&wsfs::api::workspace_open(&cfg.to_string()))
        .map_err(|e| e.to_string())?;
    v["data"]["workspace"]
        .as_u64()
        .ok_or_else(|| format!("opening {root:?}: {v}"))
}

/// One call through the library; returns the result count (matches or files) and the time.
fn wsfs_call(ws: u64, tool: &str, args: &str) -> Result<(usize, f64), String> {
    let t = Instant::now();
    let out = wsfs::api::call(ws, tool, args, None, None);
    let ns = t.elapsed().as_nanos() as f64;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    if v["ok"] != serde_json::json!(true) {
        return Err(format!("{tool}: {}", v["text"]));
    }
    if v["data"]["truncated"] == serde_json::json!(true) {
        return Err(format!(
            "{tool}: truncated; raise the cap to see every result"
        ));
    }
    let d = &v["data"];
    let n = d["matches"]
        .as_array()
        .or(d["files"].as_array())
        .map_or(0, Vec::len);
    Ok((n, ns))
}

fn rg_run(rg: &str, args: &[&str], src: &Path) -> Result<(String, f64), String> {
    let t = Instant::now();
    let mut child = Command::new(rg)
        .args(RG_COMMON)
        .args(args)
        .arg(".")
        .current_dir(src)
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .map_err(|e| format!("{rg}: {e}"))?;
    let mut out = String::new();
    if let Some(mut s) = child.stdout.take() {
        s.read_to_string(&mut out).map_err(|e| e.to_string())?;
    }
    child.wait().map_err(|e| e.to_string())?;
    Ok((out, t.elapsed().as_nanos() as f64))
}

/// ripgrep's result count: matching lines (summed `-c`) or listed files.
fn rg_count(rg: &str, c: &Case, src: &Path) -> Result<usize, String> {
    let (out, _) = rg_run(rg, &c.rg_count, src)?;
    if c.tool == "find_files" {
        return Ok(out.lines().count());
    }
    out.lines()
        .map(|l| {
            l.rsplit(':')
                .next()
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or(l)
        })
        .sum::<Result<usize, _>>()
        .map_err(|l| format!("rg -c printed {l:?}"))
}

/// Arguments as a shell would need them quoted.
fn shell_words(args: &[&str]) -> String {
    let quote = |a: &&str| match a.contains(['*', '!', '[', ' ', '(']) {
        true => format!("'{a}'"),
        false => a.to_string(),
    };
    args.iter().map(quote).collect::<Vec<_>>().join(" ")
}

fn emit(out: &mut Option<std::fs::File>, line: serde_json::Value) -> Result<(), String> {
    eprintln!("walk: {line}");
    match out {
        Some(f) => writeln!(f, "{line}").map_err(|e| e.to_string()),
        None => Ok(()),
    }
}

fn bench_src(src: &Path, samples: usize, out: &mut Option<std::fs::File>) -> Result<(), String> {
    let ws = open(src)?;
    let rg = env("WSFS_WALK_RG");
    for c in cases() {
        let args = c.args.to_string();
        let (n, _) = wsfs_call(ws, c.tool, &args)?; // warm the page cache and the library
        let expected = match &rg {
            Some(rg) => {
                let want = rg_count(rg, &c, src)?;
                if want != n {
                    return Err(format!("{}: wsfs found {n}, rg {want}", c.name));
                }
                rg_run(rg, &c.rg, src)?;
                Some(want)
            }
            None => None,
        };
        for k in 0..samples {
            let (got, ns) = wsfs_call(ws, c.tool, &args)?;
            if got != n {
                return Err(format!("{}: {got} results, then {n}", c.name));
            }
            emit(
                out,
                serde_json::json!({"case": c.name, "desc": c.desc, "path": "wsfs",
                "sample": k, "ns": ns, "results": got}),
            )?;
            if let Some(rg) = &rg {
                let (_, ns) = rg_run(rg, &c.rg, src)?;
                emit(
                    out,
                    serde_json::json!({"case": c.name, "desc": c.desc, "path": "rg",
                    "sample": k, "ns": ns, "results": expected,
                    "command": format!("rg {} {}", RG_COMMON.join(" "), shell_words(&c.rg))}),
                )?;
            }
        }
    }
    wsfs::api::workspace_close(ws);
    Ok(())
}

/// Subdirectories per top directory in a tree of about `n` entries.
fn subdirs(n: usize) -> usize {
    (n / 100 / 101).max(1)
}

/// Entries in the tree `make_tree(_, n)` makes.
fn tree_entries(n: usize) -> usize {
    100 + 100 * subdirs(n) * 101
}

/// A tree of about `n` entries: 100 directories, each holding directories of 100 files.
fn make_tree(dir: &Path, n: usize) -> Result<(), String> {
    let done = dir.join("zz-complete");
    if done.exists() {
        return Ok(());
    }
    let subdirs = subdirs(n);
    for t in 0..100 {
        for s in 0..subdirs {
            let d = dir.join(format!("t{t:03}/s{s:03}"));
            std::fs::create_dir_all(&d).map_err(|e| format!("{d:?}: {e}"))?;
            for f in 0..100 {
                std::fs::File::create(d.join(format!("f{f:03}.txt"))).map_err(|e| e.to_string())?;
            }
        }
    }
    std::fs::write(done, b"").map_err(|e| e.to_string())
}

const TREE_ARGS: &str = r#"{"depth":50,"max_entries":500}"#;

fn tree_call(root: &Path) -> Result<f64, String> {
    let ws = open(root)?;
    let t = Instant::now();
    let out = wsfs::api::call(ws, "list_dir", TREE_ARGS, None, None);
    let ns = t.elapsed().as_nanos() as f64;
    let v: serde_json::Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    wsfs::api::workspace_close(ws);
    if v["data"]["total"] != serde_json::json!(500) {
        return Err(format!("list_dir: {}", v["text"]));
    }
    Ok(ns)
}

/// VmRSS and VmHWM in KiB.
fn proc_status() -> (i64, i64) {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// In a child process: a warm-up listing of a small tree, then one measured call.
fn rss_child(root: &Path, warm: &Path) -> Result<(), String> {
    tree_call(warm)?;
    let reset = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (before, _) = proc_status();
    tree_call(root)?;
    let (_, peak) = proc_status();
    if !reset {
        return Err("cannot reset VmHWM (/proc/self/clear_refs)".into());
    }
    println!("{}", peak - before);
    Ok(())
}

fn bench_trees(base: &Path, samples: usize, out: &mut Option<std::fs::File>) -> Result<(), String> {
    let sizes = env("WSFS_WALK_SIZES").unwrap_or_else(|| "10000".into());
    let warm = base.join("warm");
    make_tree(&warm, 2000)?;
    for size in sizes.split(',') {
        let n: usize = size
            .trim()
            .parse()
            .map_err(|_| format!("bad size {size}"))?;
        let root = base.join(format!("tree{n}"));
        let t = Instant::now();
        make_tree(&root, n)?;
        eprintln!(
            "walk: tree of {n} entries ready in {:.1} s",
            t.elapsed().as_secs_f64()
        );
        let name = format!("tree_{n}");
        let entries = tree_entries(n);
        tree_call(&root)?;
        for k in 0..samples {
            let ns = tree_call(&root)?;
            emit(
                out,
                serde_json::json!({"case": name, "path": "wsfs", "sample": k, "ns": ns,
                "entries": entries,
                "desc": format!("list_dir depth=50, 500 of a {entries}-entry tree")}),
            )?;
        }
        let exe = std::env::current_exe().map_err(|e| e.to_string())?;
        let child = Command::new(exe)
            .env("WSFS_WALK_RSS_CHILD", &root)
            .env("WSFS_WALK_RSS_WARM", &warm)
            .output()
            .map_err(|e| e.to_string())?;
        let text = String::from_utf8_lossy(&child.stdout);
        let kib: i64 = text.trim().parse().map_err(|_| {
            format!(
                "RSS child: {text} {}",
                String::from_utf8_lossy(&child.stderr)
            )
        })?;
        emit(
            out,
            serde_json::json!({"case": name, "path": "wsfs", "rss_growth_kib": kib,
            "entries": entries}),
        )?;
    }
    Ok(())
}

fn run() -> Result<(), String> {
    if let (Some(root), Some(warm)) = (env("WSFS_WALK_RSS_CHILD"), env("WSFS_WALK_RSS_WARM")) {
        return rss_child(Path::new(&root), Path::new(&warm));
    }
    let samples: usize = env("WSFS_WALK_SAMPLES")
        .and_then(|s| s.parse().ok())
        .unwrap_or(5);
    let mut out = match env("WSFS_WALK_OUT") {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .map_err(|e| format!("{p}: {e}"))?,
        ),
        None => None,
    };
    if let Some(src) = env("WSFS_WALK_SRC") {
        bench_src(&PathBuf::from(src), samples, &mut out)?;
    }
    if let Some(trees) = env("WSFS_WALK_TREES") {
        bench_trees(&PathBuf::from(trees), samples, &mut out)?;
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("walk: {e}");
        std::process::exit(1);
    }
}
