//! Benchmarks of wsfs's Rust layers, on the fixture the Go benchmarks use
//! (`go/internal/benchmarks`, built by `bench/run.sh`):
//!
//! - `core`: `wsfs::run_tool` on a `wsfs::Workspace` (no handle registry, no envelope);
//! - `cabi_typed`: the C ABI (`wsfs::ffi::wsfs_call_with_options`, or `wsfs_call_with_content`
//!   for a content buffer) + `wsfs_string_free`, called with the output mode and arguments the
//!   typed Go API uses for the case (the manifest's `typed` call mode);
//! - `cabi_fantasy`: the same, as the Go fantasy tools call it (`fantasy` call mode: the
//!   model's JSON arguments, `text_raw` output).
//!
//! Each case's calls come from the fixture's `manifest.json`, so Rust and Go run exactly the
//! same calls on the same files. A counting global allocator reports bytes and allocations per
//! call (counted on an extra, untimed call). Configuration is by environment, so the same invocation works with or without the
//! libtest harness (argv is ignored):
//!
//! - `WSFS_BENCH_DIR` (required): the fixture directory;
//! - `WSFS_BENCH_OUT`: JSON lines of timing samples (appended);
//! - `WSFS_BENCH_SHORT=1`: every case once per layer, no timing (`bench/run.sh --short`);
//! - `WSFS_BENCH_SAMPLES` (5) and `WSFS_BENCH_SAMPLE_MS` (150): samples per case and layer
//!   (0: no timing, e.g. to measure only RSS), and the target duration of one sample;
//! - `WSFS_BENCH_RSS_OUT`: also measure the peak RSS growth of one call per case and layer,
//!   each in a fresh child process, as JSON lines.
//!
//! `cargo bench --bench layers` (with `harness = false`) or
//! `cargo test --release --bench layers -- --ignored --nocapture` (without) runs it.

use serde::Deserialize;
use std::alloc::{GlobalAlloc, Layout, System};
use std::ffi::{c_char, CString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

/// Counts allocations and allocated bytes (reallocations count as one allocation of the new
/// size) while `COUNTING` is set. Counting is off during timed calls, so the atomic updates
/// never slow down what is timed; the allocations of a call are measured on a separate call.
struct Counting;

static COUNTING: AtomicBool = AtomicBool::new(false);
static ALLOCS: AtomicU64 = AtomicU64::new(0);
static ALLOC_BYTES: AtomicU64 = AtomicU64::new(0);

fn count(size: usize) {
    if COUNTING.load(Ordering::Relaxed) {
        ALLOCS.fetch_add(1, Ordering::Relaxed);
        ALLOC_BYTES.fetch_add(size as u64, Ordering::Relaxed);
    }
}

// SAFETY: forwards every call to `System` unchanged; only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        count(layout.size());
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count(new_size);
        // SAFETY: the caller's contract is forwarded.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const LAYERS: [&str; 3] = ["core", "cabi_typed", "cabi_fantasy"];
/// Layers whose peak RSS growth is measured.
const RSS_LAYERS: [&str; 2] = ["core", "cabi_typed"];

/// How a path calls the C ABI (see `CallMode` in go/internal/benchmarks/fixtures.go).
#[derive(Debug, Clone, Deserialize)]
struct CallMode {
    output: String,
    #[serde(default)]
    content_buffer: bool,
}

#[derive(Debug, Clone, Deserialize)]
struct Case {
    name: String,
    tool: String,
    path: String,
    /// read_file's range, when the case reads one (0: absent).
    #[serde(default)]
    start_line: u64,
    #[serde(default)]
    max_lines: u64,
    #[serde(default)]
    content_file: Option<String>,
    #[serde(default)]
    reset_from: Option<String>,
    #[serde(default)]
    edits: Vec<(String, String)>,
    expect_ok: bool,
    #[serde(default)]
    expect_bytes: u64,
    #[serde(default)]
    expect_entries: usize,
    #[serde(default)]
    expect_total: u64,
    warm: String,
    typed: CallMode,
    fantasy: CallMode,
    /// `"tmpfs"`: the case's workspace is the fixture's one on tmpfs.
    #[serde(default)]
    fs: String,
    /// A probe of the Go context's cost: nothing to measure here but the call.
    #[serde(default)]
    probe: bool,
}

#[derive(Debug, Deserialize)]
struct Manifest {
    workspace: String,
    #[serde(default)]
    workspace_tmpfs: Option<PathBuf>,
    cases: Vec<Case>,
}

struct Fixture {
    dir: PathBuf,
    ws: PathBuf,
    ws_tmpfs: Option<PathBuf>,
    cases: Vec<Case>,
}

impl Fixture {
    fn load(dir: &Path) -> Result<Fixture, String> {
        let path = dir.join("manifest.json");
        let text = std::fs::read_to_string(&path).map_err(|e| format!("{path:?}: {e}"))?;
        let m: Manifest = serde_json::from_str(&text).map_err(|e| format!("{path:?}: {e}"))?;
        Ok(Fixture {
            dir: dir.to_path_buf(),
            ws: dir.join(&m.workspace),
            ws_tmpfs: m.workspace_tmpfs,
            cases: m.cases,
        })
    }

    /// The workspace of `c`: on the scratch disk, or on tmpfs.
    fn ws_of(&self, c: &Case) -> Result<&Path, String> {
        if c.fs == "tmpfs" {
            return self
                .ws_tmpfs
                .as_deref()
                .ok_or_else(|| format!("{}: the fixture has no tmpfs workspace", c.name));
        }
        Ok(&self.ws)
    }

    fn case(&self, name: &str) -> Result<&Case, String> {
        self.cases
            .iter()
            .find(|c| c.name == name)
            .ok_or_else(|| format!("no case {name}"))
    }

    fn tool_path(&self, c: &Case, layer: &str) -> String {
        c.path.replace("{layer}", layer)
    }

    /// Puts the case's file back in its initial state.
    fn reset(&self, c: &Case, layer: &str) -> Result<(), String> {
        if let Some(from) = &c.reset_from {
            let to = self.ws_of(c)?.join(self.tool_path(c, layer));
            let data = std::fs::read(self.dir.join(from)).map_err(|e| format!("{from}: {e}"))?;
            std::fs::write(&to, data).map_err(|e| format!("{to:?}: {e}"))?;
        }
        Ok(())
    }

    /// The case's calls for `layer` (two for edits, which alternate): the argument JSON, and
    /// the content when `mode` passes it as a separate buffer (then absent from the JSON).
    fn calls(&self, c: &Case, layer: &str, mode: Option<&CallMode>) -> Result<Vec<Call>, String> {
        let path = self.tool_path(c, layer);
        let content = match &c.content_file {
            Some(f) => {
                std::fs::read_to_string(self.dir.join(f)).map_err(|e| format!("{f}: {e}"))?
            }
            None => String::new(),
        };
        let buffer = mode.is_some_and(|m| m.content_buffer);
        let args = match c.tool.as_str() {
            "read_file" if c.start_line != 0 || c.max_lines != 0 => {
                let mut args = serde_json::json!({ "path": path });
                for (key, value) in [("start_line", c.start_line), ("max_lines", c.max_lines)] {
                    if value != 0 {
                        args[key] = value.into();
                    }
                }
                vec![args]
            }
            "read_file" | "list_dir" => vec![serde_json::json!({ "path": path })],
            "write_file" | "append_file" if buffer => vec![serde_json::json!({ "path": path })],
            "write_file" | "append_file" => {
                vec![serde_json::json!({ "path": path, "content": content })]
            }
            "edit_file" => c
                .edits
                .iter()
                .map(|(old, new)| {
                    serde_json::json!({ "path": path, "old_text": old, "new_text": new })
                })
                .collect(),
            other => return Err(format!("unknown tool {other}")),
        };
        Ok(args
            .iter()
            .map(|a| (a.to_string(), buffer.then(|| content.clone().into_bytes())))
            .collect())
    }
}

/// One call's argument JSON and, for a content buffer, the content.
type Call = (String, Option<Vec<u8>>);

/// Makes call `i` of a case through one layer and checks its outcome.
type Runner<'a> = Box<dyn FnMut(usize) -> Result<(), String> + 'a>;

/// The layers under test, on one workspace directory.
struct Opened {
    core: wsfs::Workspace,
    handle: u64,
}

impl Opened {
    fn open(root: &Path) -> Result<Opened, String> {
        let config = wsfs::Config {
            root: root.to_string_lossy().into_owned(),
            create_root: false,
            restrict_to_workspace: true,
            limits: wsfs::Limits::default(),
            state_dir: None,
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
        let cfg = CString::new(serde_json::json!({ "root": config.root }).to_string())
            .map_err(|e| e.to_string())?;
        // SAFETY: a valid NUL-terminated string; the result is freed by `take`.
        let opened = take(unsafe { wsfs::ffi::wsfs_workspace_open(cfg.as_ptr()) });
        let v: serde_json::Value = serde_json::from_str(&opened).map_err(|e| e.to_string())?;
        let handle = v["data"]["workspace"]
            .as_u64()
            .ok_or_else(|| format!("wsfs_workspace_open: {opened}"))?;
        Ok(Opened { core, handle })
    }
}

impl Drop for Opened {
    fn drop(&mut self) {
        take(wsfs::ffi::wsfs_workspace_close(self.handle));
    }
}

/// The layers under test, on the fixture's workspaces (scratch disk, and tmpfs if present).
struct Layers {
    disk: Opened,
    tmpfs: Option<Opened>,
    ctl_timeout: Duration,
}

impl Layers {
    fn open(fx: &Fixture) -> Result<Layers, String> {
        Ok(Layers {
            disk: Opened::open(&fx.ws)?,
            tmpfs: fx.ws_tmpfs.as_deref().map(Opened::open).transpose()?,
            ctl_timeout: Duration::from_millis(wsfs::Limits::default().operation_timeout_ms),
        })
    }

    fn on(&self, c: &Case) -> Result<&Opened, String> {
        if c.fs == "tmpfs" {
            return self
                .tmpfs
                .as_ref()
                .ok_or_else(|| format!("{}: no tmpfs workspace", c.name));
        }
        Ok(&self.disk)
    }

    /// A function making call `i` of `c` through `layer` and checking its outcome.
    fn runner<'a>(&'a self, fx: &Fixture, c: &'a Case, layer: &str) -> Result<Runner<'a>, String> {
        let on = self.on(c)?;
        let mode = match layer {
            "core" => None,
            "cabi_typed" => Some(&c.typed),
            "cabi_fantasy" => Some(&c.fantasy),
            other => return Err(format!("unknown layer {other}")),
        };
        let calls = fx.calls(c, layer, mode)?;
        let n = calls.len();
        let Some(mode) = mode else {
            let args: Vec<String> = calls.into_iter().map(|(a, _)| a).collect();
            return Ok(Box::new(move |i| {
                let ctl = wsfs::CallControl::new(self.ctl_timeout, None);
                let result = wsfs::run_tool(&on.core, &c.tool, &args[i % n], &ctl);
                check_core(c, result)
            }));
        };
        let tool = CString::new(c.tool.as_str()).map_err(|e| e.to_string())?;
        let opts = CString::new(serde_json::json!({ "output": mode.output }).to_string())
            .map_err(|e| e.to_string())?;
        let calls: Vec<(CString, Option<Vec<u8>>)> = calls
            .into_iter()
            .map(|(a, content)| Ok((CString::new(a).map_err(|e| e.to_string())?, content)))
            .collect::<Result<_, String>>()?;
        let handle = on.handle;
        Ok(Box::new(move |i| {
            let (args, content) = &calls[i % n];
            // SAFETY: valid NUL-terminated strings and a content buffer that outlive the call.
            let out = unsafe {
                match content {
                    Some(buf) => wsfs::ffi::wsfs_call_with_content(
                        handle,
                        tool.as_ptr(),
                        args.as_ptr(),
                        opts.as_ptr(),
                        buf.as_ptr().cast(),
                        buf.len(),
                    ),
                    None => wsfs::ffi::wsfs_call_with_options(
                        handle,
                        tool.as_ptr(),
                        args.as_ptr(),
                        opts.as_ptr(),
                    ),
                }
            };
            // SAFETY: `out` is a wsfs string, inspected before it is freed once.
            let ok = unsafe { starts_with(out, b"{\"ok\":true") };
            // SAFETY: returned by wsfs and not freed before.
            unsafe { wsfs::ffi::wsfs_string_free(out) };
            if ok == c.expect_ok {
                Ok(())
            } else {
                Err(format!("{}: unexpected envelope (ok={ok})", c.name))
            }
        }))
    }
}

/// Copies and frees a string returned by wsfs.
fn take(p: *mut c_char) -> String {
    // SAFETY: `p` is a NUL-terminated string returned by wsfs (never NULL), freed once here.
    unsafe {
        let s = std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned();
        wsfs::ffi::wsfs_string_free(p);
        s
    }
}

/// Whether the NUL-terminated string `p` starts with `prefix`, reading no further than
/// needed (no strlen of a large envelope).
///
/// # Safety
/// `p` must point to a NUL-terminated string.
unsafe fn starts_with(p: *const c_char, prefix: &[u8]) -> bool {
    for (i, &b) in prefix.iter().enumerate() {
        // SAFETY: every byte up to and including the first NUL is readable; we stop at a
        // mismatch, and NUL never matches a prefix byte.
        if unsafe { *p.add(i) } as u8 != b {
            return false;
        }
    }
    true
}

fn check_core(c: &Case, result: Result<wsfs::ToolResult, wsfs::WsfsError>) -> Result<(), String> {
    match (c.expect_ok, result) {
        (false, Err(_)) => Ok(()),
        (false, Ok(_)) => Err(format!("{}: succeeded, want an error", c.name)),
        (true, Err(e)) => Err(format!("{}: {e}", c.name)),
        (true, Ok((data, _))) => {
            let data: &dyn std::any::Any = data.as_ref();
            if let Some(r) = data.downcast_ref::<wsfs::ReadOutput>() {
                if r.bytes != c.expect_bytes {
                    return Err(format!(
                        "{}: read {} bytes, want {}",
                        c.name, r.bytes, c.expect_bytes
                    ));
                }
            }
            if let Some(l) = data.downcast_ref::<wsfs::ListOutput>() {
                if l.entries.len() != c.expect_entries || l.total != c.expect_total {
                    return Err(format!(
                        "{}: listed {} of {}, want {} of {}",
                        c.name,
                        l.entries.len(),
                        l.total,
                        c.expect_entries,
                        c.expect_total
                    ));
                }
            }
            Ok(())
        }
    }
}

fn env_u64(name: &str, default: u64) -> u64 {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

struct Sample {
    iters: u64,
    ns_per_op: f64,
    bytes_per_op: f64,
    allocs_per_op: f64,
}

/// Times `iters` calls starting from the case's initial state, then counts the allocations
/// of one more call.
fn sample(
    fx: &Fixture,
    c: &Case,
    layer: &str,
    run: &mut dyn FnMut(usize) -> Result<(), String>,
    iters: u64,
) -> Result<Sample, String> {
    fx.reset(c, layer)?;
    let start = Instant::now();
    for i in 0..iters {
        run(i as usize)?;
    }
    let elapsed = start.elapsed();
    let (a0, b0) = (
        ALLOCS.load(Ordering::Relaxed),
        ALLOC_BYTES.load(Ordering::Relaxed),
    );
    COUNTING.store(true, Ordering::Relaxed);
    let counted = run(iters as usize);
    COUNTING.store(false, Ordering::Relaxed);
    counted?;
    let (a1, b1) = (
        ALLOCS.load(Ordering::Relaxed),
        ALLOC_BYTES.load(Ordering::Relaxed),
    );
    Ok(Sample {
        iters,
        ns_per_op: elapsed.as_nanos() as f64 / iters as f64,
        bytes_per_op: (b1 - b0) as f64,
        allocs_per_op: (a1 - a0) as f64,
    })
}

fn run_timings(fx: &Fixture, layers: &Layers) -> Result<(), String> {
    let short = std::env::var("WSFS_BENCH_SHORT").is_ok_and(|v| v == "1");
    let samples = if short {
        1
    } else {
        env_u64("WSFS_BENCH_SAMPLES", 5)
    };
    if samples == 0 {
        return Ok(());
    }
    let target = Duration::from_millis(env_u64("WSFS_BENCH_SAMPLE_MS", 150));
    let mut out = match std::env::var_os("WSFS_BENCH_OUT") {
        Some(p) => Some(
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&p)
                .map_err(|e| format!("{p:?}: {e}"))?,
        ),
        None => None,
    };
    for c in &fx.cases {
        let mut runners = Vec::new();
        let mut iters = Vec::new();
        for layer in LAYERS {
            let mut run = layers.runner(fx, c, layer)?;
            // Warm up and calibrate: one call, then enough calls to fill `target`.
            let first = sample(fx, c, layer, &mut *run, 1)?;
            let n = if short {
                1
            } else {
                (target.as_nanos() as f64 / first.ns_per_op.max(1.0)).clamp(1.0, 1e6) as u64
            };
            runners.push(run);
            iters.push(n);
        }
        // Interleave the layers sample by sample, so drift affects them alike.
        for k in 0..samples {
            for (j, layer) in LAYERS.iter().enumerate() {
                let s = sample(fx, c, layer, &mut *runners[j], iters[j])?;
                let line = serde_json::json!({
                    "case": c.name, "layer": layer, "sample": k, "iters": s.iters,
                    "ns_per_op": s.ns_per_op, "bytes_per_op": s.bytes_per_op,
                    "allocs_per_op": s.allocs_per_op, "short": short,
                });
                if let Some(f) = out.as_mut() {
                    writeln!(f, "{line}").map_err(|e| e.to_string())?;
                }
                eprintln!(
                    "layers: {}/{layer}: {:.1} us/op ({} iters)",
                    c.name,
                    s.ns_per_op / 1e3,
                    s.iters
                );
            }
        }
    }
    Ok(())
}

/// VmRSS and VmHWM in KiB.
fn proc_status() -> (u64, u64) {
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

/// In a child: warm up with the case's small counterpart, then measure one call.
fn rss_child(fx: &Fixture, spec: &str, out: &Path) -> Result<(), String> {
    let (name, layer) = spec.split_once('/').ok_or("bad WSFS_BENCH_RSS_CHILD")?;
    let layers = Layers::open(fx)?;
    let c = fx.case(name)?;
    let warm = fx.case(&c.warm)?;
    fx.reset(warm, layer)?;
    layers.runner(fx, warm, layer)?(0)?;
    fx.reset(c, layer)?;
    let mut run = layers.runner(fx, c, layer)?;
    let reset_ok = std::fs::write("/proc/self/clear_refs", "5").is_ok();
    let (before, _) = proc_status();
    let result = run(0);
    let (_, peak) = proc_status();
    let mut error = result.err().unwrap_or_default();
    if !reset_ok {
        error = "cannot reset VmHWM (/proc/self/clear_refs)".into();
    }
    let line = serde_json::json!({
        "case": name, "path": layer, "lang": "rust", "rss_before_kib": before,
        "hwm_kib": peak, "growth_kib": peak as i64 - before as i64,
        "hwm_reset_ok": reset_ok, "error": error,
    });
    std::fs::write(out, format!("{line}\n")).map_err(|e| e.to_string())
}

fn run_rss(fx: &Fixture, out: &Path) -> Result<(), String> {
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    let mut lines = String::new();
    let tmp = out.with_extension("child");
    // The tmpfs cases use the memory their disk twins use.
    for c in fx.cases.iter().filter(|c| c.fs != "tmpfs" && !c.probe) {
        for layer in RSS_LAYERS {
            let status = std::process::Command::new(&exe)
                .args(std::env::args_os().skip(1))
                .env("WSFS_BENCH_RSS_CHILD", format!("{}/{layer}", c.name))
                .env("WSFS_BENCH_RSS_CHILD_OUT", &tmp)
                .env_remove("WSFS_BENCH_RSS_OUT")
                .status()
                .map_err(|e| e.to_string())?;
            let line = std::fs::read_to_string(&tmp).map_err(|e| format!("{tmp:?}: {e}"))?;
            std::fs::remove_file(&tmp).ok();
            if !status.success() {
                return Err(format!("RSS child {}/{layer} failed: {line}", c.name));
            }
            let v: serde_json::Value = serde_json::from_str(&line).map_err(|e| e.to_string())?;
            if v["error"].as_str().is_some_and(|e| !e.is_empty()) {
                return Err(format!("RSS child {}/{layer}: {}", c.name, v["error"]));
            }
            eprintln!(
                "layers: peak RSS {}/{layer}: +{} KiB",
                c.name, v["growth_kib"]
            );
            lines.push_str(&line);
        }
    }
    std::fs::write(out, lines).map_err(|e| format!("{out:?}: {e}"))
}

fn run() -> Result<(), String> {
    let dir = std::env::var_os("WSFS_BENCH_DIR").ok_or(
        "set WSFS_BENCH_DIR to a fixture built by go/internal/benchmarks (bench/run.sh does)",
    )?;
    let fx = Fixture::load(Path::new(&dir))?;
    if let Ok(spec) = std::env::var("WSFS_BENCH_RSS_CHILD") {
        let out = std::env::var_os("WSFS_BENCH_RSS_CHILD_OUT").ok_or("no child output")?;
        return rss_child(&fx, &spec, Path::new(&out));
    }
    {
        let layers = Layers::open(&fx)?;
        run_timings(&fx, &layers)?;
    }
    if let Some(out) = std::env::var_os("WSFS_BENCH_RSS_OUT") {
        run_rss(&fx, Path::new(&out))?;
    }
    Ok(())
}

fn main() {
    if let Err(e) = run() {
        eprintln!("layers: {e}");
        std::process::exit(1);
    }
}

/// The same, when Cargo.toml has no `harness = false` entry for this bench and libtest
/// drives it (its `main` is then unused).
#[test]
#[ignore = "a benchmark: bench/run.sh runs it"]
fn bench_layers() {
    if let Err(e) = run() {
        panic!("layers: {e}");
    }
}
