//! Seed 002's execution layer: a `ToolRunner` trait with a `BuiltinRunner` (wsfs's built-in
//! tools) and a `WasmRunner` (the Wasm tools under tools/, sandboxed with their capability
//! manifests), both running a model's structured call through one dispatcher,
//! `Workspace::dispatch` (`wsfs_dispatch`). The agent picks the runner that offers the call's
//! name. Checks each outcome and exits 1 on the first wrong one.
//!
//! `cargo run --features wasm --example tool_runner` (make test runs it).

use serde_json::{json, Value};
use std::sync::Arc;
use wsfs::host::{CallOptions, Workspace};

/// The normalized result of a tool call (seed 002, P1.5): the envelope's parts.
#[derive(Debug)]
struct ToolOutput {
    ok: bool,
    /// `data` on success; `{"code", "message"}` on failure.
    value: Value,
}

/// Seed 002's common interface for tool execution.
trait ToolRunner: Send + Sync {
    fn kind(&self) -> &'static str;
    /// Whether this runner executes the tool called `name`.
    fn offers(&self, name: &str) -> bool;
    /// Runs a structured call, `{"tool_call": {"name", "arguments"}}` (or its legacy
    /// name-only form).
    fn run(&self, call_json: &str) -> ToolOutput;
}

/// Runs a call through the one dispatcher and normalizes its envelope.
fn dispatch(ws: &Workspace, call_json: &str) -> ToolOutput {
    let envelope: Value = serde_json::from_str(&ws.dispatch(call_json, CallOptions::default()))
        .unwrap_or_else(
            |e| json!({"ok": false, "error": {"code": "io_error", "message": e.to_string()}}),
        );
    let ok = envelope["ok"] == json!(true);
    let value = match ok {
        true => envelope["data"].clone(),
        false => envelope["error"].clone(),
    };
    ToolOutput { ok, value }
}

/// The names a workspace offers, split into the built-in ones and the Wasm ones.
fn offered(ws: &Workspace) -> (Vec<String>, Vec<String>) {
    let builtin: Value = serde_json::from_str(&wsfs::api::tool_specs()).unwrap_or_default();
    let builtin: Vec<&str> = (builtin.as_array().into_iter().flatten())
        .filter_map(|s| s["name"].as_str())
        .collect();
    let all: Vec<String> = ws
        .tool_specs()
        .map(|specs| specs.into_iter().map(|s| s.name).collect())
        .unwrap_or_default();
    all.into_iter().partition(|n| builtin.contains(&n.as_str()))
}

struct BuiltinRunner {
    ws: Arc<Workspace>,
    names: Vec<String>,
}

struct WasmRunner {
    ws: Arc<Workspace>,
    names: Vec<String>,
}

impl ToolRunner for BuiltinRunner {
    fn kind(&self) -> &'static str {
        "builtin"
    }
    fn offers(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
    fn run(&self, call_json: &str) -> ToolOutput {
        dispatch(&self.ws, call_json)
    }
}

impl ToolRunner for WasmRunner {
    fn kind(&self) -> &'static str {
        "wasm"
    }
    fn offers(&self, name: &str) -> bool {
        self.names.iter().any(|n| n == name)
    }
    fn run(&self, call_json: &str) -> ToolOutput {
        dispatch(&self.ws, call_json)
    }
}

/// The agent's side: route a model's call to the runner offering its name. A call whose name
/// cannot be read goes to the first runner, whose dispatcher says what is wrong with it.
fn route<'a>(runners: &'a [Box<dyn ToolRunner>], call_json: &str) -> &'a dyn ToolRunner {
    let name = wsfs::tool_call::parse(call_json)
        .map(|c| c.name)
        .unwrap_or_default();
    let found = runners.iter().find(|r| r.offers(&name));
    found.unwrap_or(&runners[0]).as_ref()
}

fn main() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| fail(&format!("tempdir: {e}")));
    let tools = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tools");
    // The workspace's Wasm tools get at most read access to it and no network.
    let config = json!({
        "root": dir.path(),
        "wasm_tools": [tools.join("echo")],
        "wasm_policy": {"filesystem": "read", "allow_direct_network": false}
    });
    let ws =
        Arc::new(Workspace::open_config(&config).unwrap_or_else(|e| fail(&format!("open: {e}"))));
    let (builtin, wasm) = offered(&ws);
    if wasm != ["echo"] || !builtin.iter().any(|n| n == "write_file") {
        fail(&format!("offered: built-in {builtin:?}, wasm {wasm:?}"));
    }
    let runners: Vec<Box<dyn ToolRunner>> = vec![
        Box::new(BuiltinRunner {
            ws: ws.clone(),
            names: builtin,
        }),
        Box::new(WasmRunner {
            ws: ws.clone(),
            names: wasm,
        }),
    ];
    // A model's turn: (call, runner expected, outcome check).
    type Check = fn(&ToolOutput) -> bool;
    let turn: [(&str, &str, Check); 6] = [
        (
            r#"{"tool_call":{"name":"write_file","arguments":{"path":"notes/a.md","content":"hello"}}}"#,
            "builtin",
            |o| o.ok && o.value["bytes_written"] == 5,
        ),
        (
            r#"{"tool_call":{"name":"read_file","arguments":"{\"path\":\"notes/a.md\"}"}}"#,
            "builtin",
            |o| o.ok && o.value["content"] == "hello",
        ),
        (
            r#"{"tool_call":{"name":"echo","arguments":{"message":"hi"}}}"#,
            "wasm",
            |o| o.ok && o.value == json!({"received": {"message": "hi"}}),
        ),
        // The legacy name-only call: list_dir's defaults list the root.
        (r#"{"tool_call":{"name":"list_dir"}}"#, "builtin", |o| {
            o.ok && o.value["entries"][0]["name"] == "notes"
        }),
        // A Wasm tool's manifest schema still checks what a name-only call leaves out.
        (r#"{"tool_call":{"name":"echo"}}"#, "wasm", |o| {
            !o.ok && o.value["code"] == "invalid_arguments"
        }),
        // A malformed call: the dispatcher names what is wrong, and nothing runs.
        (
            r#"{"tool_call":{"name":"echo","arguments":[]}}"#,
            "builtin",
            |o| {
                !o.ok
                    && o.value["code"] == "invalid_arguments"
                    && o.value["message"]
                        .as_str()
                        .is_some_and(|m| m.contains("arguments must be an object"))
            },
        ),
    ];
    for (call, kind, check) in turn {
        let runner = route(&runners, call);
        if runner.kind() != kind {
            fail(&format!(
                "{call} went to the {} runner, not {kind}",
                runner.kind()
            ));
        }
        let out = runner.run(call);
        if !check(&out) {
            fail(&format!("{call}: {out:?}"));
        }
    }
    if std::fs::read_to_string(dir.path().join("notes/a.md"))
        .ok()
        .as_deref()
        != Some("hello")
    {
        fail("notes/a.md does not hold what write_file wrote");
    }
    println!("tool_runner: the builtin and wasm runners ran every call through one dispatcher");
}

fn fail(what: &str) -> ! {
    eprintln!("tool_runner: FAILED: {what}");
    std::process::exit(1)
}
