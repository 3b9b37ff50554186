//! Benchmark of Wasm tools (bench/run.sh runs it; bench/report.py reports it), all through the
//! library's `wsfs_call` path (`wsfs::api::call`: dispatch, argument validation against the
//! manifest's schema, a fresh instance of the compiled module, the run, the envelope):
//!
//! - `noop`: a tool that prints `{}` and returns (the floor of a Wasm call);
//! - `echo`: the example tool tools/echo (reads its arguments, writes them back);
//! - `read_4k_wasm` against `read_file`: a guest that opens a 4 KiB file through `/workspace`
//!   (the resolver and the policy) and returns its content, against the built-in tool;
//! - `cpu_loop`: a guest that spins 10 million loop iterations (about 30 million fuel units)
//!   and prints `{}`: the engines' compute speed, fuel slices and watch checks included;
//! - `load`: opening a workspace with the noop tool (manifest, hash, compile) minus opening one
//!   without.
//!
//! Every case runs once per engine this build has (`wasm_policy.engine`): wasmi always, and
//! wasmtime when built with `--features wasmtime` (`make bench-wasmtime`). Samples alternate
//! between the cases. Every call's envelope is checked.
//! Configuration (environment): `WSFS_WASM_SAMPLES` (2000; `cpu_loop` takes a twentieth, at
//! least 3), `WSFS_WASM_OUT` (JSON lines: `{"case", "engine", "ns"}`).

use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::io::Write;
use std::path::Path;
use std::time::Instant;

const NOOP: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{}")
  (func (export "_start")
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#;

/// Opens `file.txt` in /workspace, reads it (up to 60 KiB) and prints {"content":"<it>"}.
const READ: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_read" (func $fd_read (param i32 i32 i32 i32) (result i32)))
  (import "wasi_snapshot_preview1" "fd_close" (func $fd_close (param i32) (result i32)))
  (import "wasi_snapshot_preview1" "path_open" (func $path_open (param i32 i32 i32 i32 i32 i64 i64 i32 i32) (result i32)))
  (memory (export "memory") 2)
  (data (i32.const 1024) "file.txt{\"content\":\"\"}")
  (func $print (param $ptr i32) (param $len i32)
    (i32.store (i32.const 0) (local.get $ptr))
    (i32.store (i32.const 4) (local.get $len))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8))))
  (func (export "_start") (local $fd i32) (local $total i32)
    (if (call $path_open (i32.const 3) (i32.const 1) (i32.const 1024) (i32.const 8)
          (i32.const 0) (i64.const 2) (i64.const 2) (i32.const 0) (i32.const 32))
      (then (unreachable)))
    (local.set $fd (i32.load (i32.const 32)))
    (block $done
      (loop $more
        (i32.store (i32.const 16) (i32.add (i32.const 4096) (local.get $total)))
        (i32.store (i32.const 20) (i32.sub (i32.const 61440) (local.get $total)))
        (br_if $done (call $fd_read (local.get $fd) (i32.const 16) (i32.const 1) (i32.const 24)))
        (br_if $done (i32.eqz (i32.load (i32.const 24))))
        (local.set $total (i32.add (local.get $total) (i32.load (i32.const 24))))
        (br $more)))
    (drop (call $fd_close (local.get $fd)))
    (call $print (i32.const 1032) (i32.const 12))
    (call $print (i32.const 4096) (local.get $total))
    (call $print (i32.const 1044) (i32.const 2))))"#;

/// 10 million turns of a loop, then `{}`.
const CPU_LOOP: &str = r#"(module
  (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
  (memory (export "memory") 1)
  (data (i32.const 64) "{}")
  (func (export "_start") (local $i i32)
    (loop $turn
      (local.set $i (i32.add (local.get $i) (i32.const 1)))
      (br_if $turn (i32.lt_u (local.get $i) (i32.const 10000000))))
    (i32.store (i32.const 0) (i32.const 64))
    (i32.store (i32.const 4) (i32.const 2))
    (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#;

/// The engines this build has.
fn engines() -> Vec<&'static str> {
    let mut engines = vec!["wasmi"];
    if cfg!(feature = "wasmtime") {
        engines.push("wasmtime");
    }
    engines
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

fn write_tool(dir: &Path, name: &str, wat: &str, caps: Value) -> Result<(), String> {
    let folder = dir.join(name);
    std::fs::create_dir_all(&folder).map_err(|e| e.to_string())?;
    std::fs::write(folder.join("module.wat"), wat).map_err(|e| e.to_string())?;
    let sha: String = Sha256::digest(wat.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    let manifest = json!({
        "name": name, "version": "0.1.0", "description": format!("The {name} benchmark tool."),
        "input_schema": {"type": "object", "properties": {}, "additionalProperties": false},
        "module_sha256": sha, "capabilities": caps,
    });
    std::fs::write(folder.join("manifest.json"), manifest.to_string()).map_err(|e| e.to_string())
}

fn open(config: &Value) -> Result<u64, String> {
    let v: Value = serde_json::from_str(&wsfs::api::workspace_open(&config.to_string()))
        .map_err(|e| e.to_string())?;
    v["data"]["workspace"]
        .as_u64()
        .ok_or_else(|| format!("open: {v}"))
}

fn call(ws: u64, tool: &str, args: &str, check: &dyn Fn(&Value) -> bool) -> Result<f64, String> {
    let t = Instant::now();
    let out = wsfs::api::call(ws, tool, args, None, None);
    let ns = t.elapsed().as_nanos() as f64;
    let v: Value = serde_json::from_str(&out).map_err(|e| e.to_string())?;
    if v["ok"] != json!(true) || !check(&v["data"]) {
        return Err(format!("{tool}: {out}"));
    }
    Ok(ns)
}

/// A case: its tool, its arguments, and the check of its envelope's data.
type Case<'a> = (&'a str, &'a str, &'a dyn Fn(&Value) -> bool);

fn main() -> Result<(), String> {
    let samples: usize = env("WSFS_WASM_SAMPLES")
        .and_then(|s| s.parse().ok())
        .unwrap_or(2000);
    let tmp = tempfile::tempdir().map_err(|e| e.to_string())?;
    let tools = tmp.path().join("tools");
    write_tool(&tools, "noop", NOOP, json!({}))?;
    write_tool(&tools, "read_4k_wasm", READ, json!({"filesystem": "read"}))?;
    write_tool(&tools, "cpu_loop", CPU_LOOP, json!({}))?;
    let examples = Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/echo");
    let root = tmp.path().join("ws");
    std::fs::create_dir_all(&root).map_err(|e| e.to_string())?;
    let content: String = (0..4096).map(|i| (b'a' + (i % 26) as u8) as char).collect();
    std::fs::write(root.join("file.txt"), &content).map_err(|e| e.to_string())?;
    let mut out: Box<dyn Write> = match env("WSFS_WASM_OUT") {
        Some(path) => Box::new(std::fs::File::create(path).map_err(|e| e.to_string())?),
        None => Box::new(std::io::stdout()),
    };
    for engine in engines() {
        let results = bench_engine(engine, samples, tmp.path(), &tools, &examples, &root)?;
        for (case, ns) in &results {
            let mut sorted = ns.clone();
            sorted.sort_by(f64::total_cmp);
            eprintln!(
                "wasm bench: {engine}: {case}: median {:.1} µs over {} samples",
                sorted.get(sorted.len() / 2).copied().unwrap_or(0.0) / 1000.0,
                sorted.len()
            );
            writeln!(out, "{}", json!({"case": case, "engine": engine, "ns": ns}))
                .map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

fn bench_engine(
    engine: &str,
    samples: usize,
    tmp: &Path,
    tools: &Path,
    examples: &Path,
    root: &Path,
) -> Result<Vec<(&'static str, Vec<f64>)>, String> {
    let policy = json!({"engine": engine});
    let config = json!({"root": root, "wasm_tools": [tools, examples],
                        "state_dir": tmp.join("state"), "wasm_policy": policy});
    let ws = open(&config)?;
    let mut results: Vec<(&str, Vec<f64>)> = [
        "noop",
        "echo",
        "read_4k_wasm",
        "read_file",
        "cpu_loop",
        "load",
    ]
    .into_iter()
    .map(|c| (c, Vec::new()))
    .collect();
    let empty = |d: &Value| d == &json!({});
    let echoed = |d: &Value| d["received"]["message"] == "hi";
    let read_back = |d: &Value| d["content"].as_str().map(str::len) == Some(4096);
    let mut push = |case: &str, ns: f64| {
        if let Some((_, v)) = results.iter_mut().find(|(c, _)| *c == case) {
            v.push(ns);
        }
    };
    // Warm-up, then alternating samples.
    for _ in 0..10 {
        call(ws, "noop", "{}", &empty)?;
        call(ws, "read_4k_wasm", "{}", &read_back)?;
    }
    for i in 0..samples {
        let order: [Case<'_>; 4] = [
            ("noop", "{}", &empty),
            ("echo", r#"{"message":"hi"}"#, &echoed),
            ("read_4k_wasm", "{}", &read_back),
            ("read_file", r#"{"path":"file.txt"}"#, &read_back),
        ];
        for k in 0..4 {
            let (tool, args, check) = order[(k + i) % 4];
            push(tool, call(ws, tool, args, check)?);
        }
    }
    call(ws, "cpu_loop", "{}", &empty)?;
    for _ in 0..(samples / 20).max(3) {
        push("cpu_loop", call(ws, "cpu_loop", "{}", &empty)?);
    }
    // Loading: a workspace with only the noop tool, against one without (each closed again).
    let plain = json!({"root": root, "state_dir": tmp.join("state")});
    let with = json!({"root": root, "state_dir": tmp.join("state"),
                      "wasm_tools": [tools.join("noop")], "wasm_policy": policy});
    for _ in 0..samples.clamp(1, 50) {
        let t = Instant::now();
        let a = open(&plain)?;
        let plain_ns = t.elapsed().as_nanos() as f64;
        let t = Instant::now();
        let b = open(&with)?;
        let with_ns = t.elapsed().as_nanos() as f64;
        wsfs::api::workspace_close(a);
        wsfs::api::workspace_close(b);
        push("load", (with_ns - plain_ns).max(0.0));
    }
    wsfs::api::workspace_close(ws);
    Ok(results)
}
