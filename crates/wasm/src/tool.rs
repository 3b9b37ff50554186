//! The Wasm tools of one open workspace, each a [`ToolRunner`] like a built-in tool: dispatch
//! finds them by name after the built-ins, applies the same checks, gives them the same
//! [`Call`] (deadline, cancel token, audit notes) and frames their result in the same envelope;
//! the specs list them with their manifest's description and input schema.

use super::engine::Engine;
use super::fs::workspace::WorkspaceFs;
use super::fs::{FsAccess, GuestFs};
use super::host::gateway::ModelGateway;
use super::policy::{FsCapability, WasmCeiling};
use super::registry::{LoadedTool, WasmRegistry};
use super::runner::{self, RunContext};
use super::wasmi_engine::WasmiEngine;
use crate::config::WasmPolicy;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::tools::contract::{Annotations, Call, ToolOutput, ToolResult, ToolRunner};
use crate::workspace::Workspace;
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;
use std::path::Path;
use std::sync::{Arc, OnceLock, RwLock};

type OnceEngine<T> = OnceLock<std::result::Result<Arc<T>, WsfsError>>;

/// The engine a workspace's tools are compiled with, by `wasm_policy.engine` (one of each per
/// process: its configuration is the same for every workspace).
pub fn engine(name: &str) -> Result<Arc<dyn Engine>> {
    static WASMI: OnceEngine<WasmiEngine> = OnceLock::new();
    match name {
        "wasmi" => Ok(WASMI
            .get_or_init(|| WasmiEngine::new().map(Arc::new))
            .clone()?),
        #[cfg(feature = "wasmtime")]
        "wasmtime" => {
            use super::wasmtime_engine::WasmtimeEngine;
            static WASMTIME: OnceEngine<WasmtimeEngine> = OnceLock::new();
            Ok(WASMTIME
                .get_or_init(|| WasmtimeEngine::new().map(Arc::new))
                .clone()?)
        }
        other => Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("wasm_policy.engine {other:?} is not an engine this library has"),
        )),
    }
}

/// The host's ceiling, from the workspace config's `wasm_policy`.
pub fn wasm_ceiling(config: &WasmPolicy) -> WasmCeiling {
    WasmCeiling {
        filesystem: match config.filesystem.as_str() {
            "none" => FsCapability::None,
            "read" => FsCapability::Read,
            _ => FsCapability::Write,
        },
        allow_model_access: config.allow_model_access,
        allow_direct_network: config.allow_direct_network,
        allowed_env: config.allowed_env.clone(),
        max_timeout_ms: config.timeout_ms,
        max_memory_mb: config.memory_mb,
        max_fuel: config.fuel,
        ..WasmCeiling::default()
    }
}

/// What every tool of a workspace shares: the workspace (a tool's `/workspace`), the host's
/// ceiling and the model gateway the host set (none until it sets one), else the one the
/// configuration's `model_gateway` describes.
struct Shared {
    ws: Arc<Workspace>,
    host: WasmCeiling,
    gateway: RwLock<Option<Arc<dyn ModelGateway>>>,
    configured: OnceLock<Arc<dyn ModelGateway>>,
}

/// The Wasm tools a workspace loaded from its config's `wasm_tools`.
pub struct WasmTools {
    shared: Arc<Shared>,
    tools: Vec<WasmTool>,
}

impl WasmTools {
    /// Loads every folder of `folders` (host paths) for `ws`; the first tool that fails to
    /// load fails the whole load with its code (`manifest_invalid`, `module_mismatch`,
    /// `capability_denied`), naming its folder.
    pub fn load(ws: Arc<Workspace>, folders: &[String], policy: &WasmPolicy) -> Result<WasmTools> {
        let host = wasm_ceiling(policy);
        let mut registry = WasmRegistry::new(engine(&policy.engine)?, host.clone());
        for folder in folders {
            registry.load_folder(Path::new(folder))?;
        }
        let shared = Arc::new(Shared {
            ws,
            host,
            gateway: RwLock::new(None),
            configured: OnceLock::new(),
        });
        let tools = registry
            .into_tools()
            .into_iter()
            .map(|loaded| WasmTool {
                loaded,
                shared: shared.clone(),
            })
            .collect();
        Ok(WasmTools { shared, tools })
    }

    pub fn find(&self, name: &str) -> Option<&WasmTool> {
        self.tools.iter().find(|t| t.loaded.name() == name)
    }

    pub fn tools(&self) -> &[WasmTool] {
        &self.tools
    }

    /// The gateway the configuration's `model_gateway` describes, used while the host sets
    /// none (set once, when the workspace opens).
    pub fn configure_gateway(&self, gateway: Arc<dyn ModelGateway>) {
        // A second call changes nothing: the configuration is read once.
        let _ = self.shared.configured.set(gateway);
    }

    /// Sets (or, with `None`, removes) the model gateway `model_generate` calls; it takes
    /// precedence over the configured one. Calls already running keep the gateway they
    /// started with.
    pub fn set_gateway(&self, gateway: Option<Arc<dyn ModelGateway>>) {
        *self
            .shared
            .gateway
            .write()
            .unwrap_or_else(|p| p.into_inner()) = gateway;
    }
}

/// One loaded Wasm tool, as dispatch runs it.
pub struct WasmTool {
    loaded: LoadedTool,
    shared: Arc<Shared>,
}

impl WasmTool {
    pub fn loaded(&self) -> &LoadedTool {
        &self.loaded
    }

    /// The workspace as this tool may use it, when its manifest asks for it.
    fn workspace(&self, call: &Call<'_>) -> Result<Option<Arc<WorkspaceFs>>> {
        let access = match self.loaded.manifest.capabilities.filesystem {
            FsCapability::None => return Ok(None),
            FsCapability::Read => FsAccess::Read,
            FsCapability::Write => FsAccess::Write,
        };
        let fs = WorkspaceFs::new(self.shared.ws.clone(), call.ctl, access, self.loaded.name())?;
        Ok(Some(Arc::new(fs)))
    }
}

impl ToolRunner for WasmTool {
    fn name(&self) -> &str {
        self.loaded.name()
    }

    fn annotations(&self) -> Annotations {
        let read_only = self.loaded.read_only();
        Annotations {
            read_only,
            destructive: !read_only,
            idempotent: false,
        }
    }

    fn open_world(&self) -> bool {
        let caps = &self.loaded.manifest.capabilities;
        caps.model_access || caps.network.is_some()
    }

    fn description(&self) -> String {
        self.loaded.manifest.description.clone()
    }

    fn parameters(&self) -> Value {
        self.loaded.manifest.input_schema.clone()
    }

    /// Runs on the workspace its tools were loaded for: a workspace's tool set (`ToolSet` in
    /// the C ABI crate) holds them beside that workspace, and is the only way to reach them.
    fn run(&self, call: &mut Call<'_>, args_json: &str) -> Result<ToolResult> {
        debug_assert!(
            std::ptr::eq(call.ws, &*self.shared.ws),
            "a tool of another workspace"
        );
        let fs = self.workspace(call)?;
        let gateway = self
            .shared
            .gateway
            .read()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
            .or_else(|| self.shared.configured.get().cloned());
        let result = runner::run(
            &self.loaded,
            args_json,
            RunContext {
                ctl: call.ctl,
                host: &self.shared.host,
                workspace: fs.clone().map(|fs| fs as Arc<dyn GuestFs>),
                gateway,
            },
        );
        // What the tool touched goes into the call's audit line like a built-in tool's.
        if let Some(fs) = fs {
            let noted = fs.take_notes();
            if let Some(notes) = &mut call.audit {
                notes.paths.extend(noted.notes.paths);
                notes.changes.extend(noted.notes.changes);
            }
            if noted.paths_omitted > 0 || noted.changes_omitted > 0 {
                log::info!(
                    target: "wsfs",
                    "wasm tool touched more than the audit line keeps: tool={} paths_omitted={} changes_omitted={}",
                    self.name(),
                    noted.paths_omitted,
                    noted.changes_omitted
                );
            }
        }
        let output = result?;
        Ok((Box::new(WasmResult { data: output.data }), Vec::new()))
    }
}

/// A Wasm tool's result: its JSON is the envelope's `data`; the model reads a string result as
/// it is and any other value as compact JSON.
#[derive(Debug, Serialize)]
#[serde(transparent)]
pub struct WasmResult {
    pub data: Value,
}

impl ToolOutput for WasmResult {
    fn text(&self) -> Cow<'_, str> {
        match &self.data {
            Value::String(text) => Cow::Borrowed(text),
            other => Cow::Owned(other.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::CallControl;
    use crate::host::gateway::GatewayFailure;
    use crate::tools::contract::Frame;
    use std::time::Duration;

    struct NoFrame;
    impl Frame for NoFrame {
        fn raw_head_len(&self, _meta: &dyn erased_serde::Serialize) -> usize {
            0
        }
    }

    /// The gateway a workspace's tools reach is the one the host set last; none is a
    /// `gateway_error` the tool passes on.
    #[test]
    fn the_gateway_the_host_sets_is_the_one_tools_reach() {
        let tmp = tempfile::tempdir().unwrap();
        let config =
            crate::config::Config::from_json(&serde_json::json!({"root": tmp.path()}).to_string())
                .unwrap();
        let ws = Arc::new(Workspace::open(&config).unwrap().0);
        let examples = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/ask_model").to_string();
        let tools = WasmTools::load(ws.clone(), &[examples], &WasmPolicy::default()).unwrap();
        let ask = tools.find("ask_model").unwrap();
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let run = |args: &str| {
            let mut call = Call::new(&ws, &ctl, None, &NoFrame);
            ask.run(&mut call, args)
                .map(|(out, _)| out.text().into_owned())
        };
        let e = run(r#"{"prompt":"hi"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::GatewayError, "{}", e.message);
        tools.set_gateway(Some(Arc::new(|request: &str, _deadline| {
            Ok(serde_json::json!({"text": format!("asked {request}")}).to_string())
        })));
        let text = run(r#"{"prompt":"hi"}"#).unwrap();
        assert!(text.contains(r#"asked {\"prompt\":\"hi\"}"#), "{text}");
        tools.set_gateway(Some(Arc::new(|_: &str, _deadline| {
            Err(GatewayFailure::new(
                ErrorCode::GatewayError,
                "provider down",
            ))
        })));
        let e = run(r#"{"prompt":"hi"}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::GatewayError);
        assert!(e.message.contains("provider down"), "{}", e.message);
    }

    /// `wasm_policy.engine` picks the engine that compiles and runs a workspace's tools;
    /// wasmtime only in a build with the feature, and no other name.
    #[test]
    fn the_policy_picks_the_engine() {
        let tmp = tempfile::tempdir().unwrap();
        let config = |engine: &str| {
            crate::config::Config::from_json(
                &serde_json::json!({"root": tmp.path(), "wasm_policy": {"engine": engine}})
                    .to_string(),
            )
        };
        let mut engines = vec!["wasmi"];
        let built_with_wasmtime = cfg!(feature = "wasmtime");
        match config("wasmtime") {
            Ok(_) => {
                assert!(built_with_wasmtime, "accepted without the feature");
                engines.push("wasmtime");
            }
            Err(e) => {
                assert!(!built_with_wasmtime, "{}", e.message);
                assert_eq!(e.code, ErrorCode::FeatureNotBuilt);
                assert!(e.message.contains("--features wasmtime"), "{}", e.message);
            }
        }
        let e = config("v8").unwrap_err();
        assert!(e.message.contains("wasmi or wasmtime"), "{}", e.message);
        assert_eq!(WasmPolicy::default().engine, "wasmi");
        for engine in engines {
            let config = config(engine).unwrap();
            let ws = Arc::new(Workspace::open(&config).unwrap().0);
            let echo = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tools/echo").to_string();
            let tools = WasmTools::load(ws.clone(), &[echo], &config.wasm_policy).unwrap();
            let tool = tools.find("echo").unwrap();
            assert_eq!(tool.loaded().engine, engine);
            let ctl = CallControl::new(Duration::from_secs(10), None);
            let mut call = Call::new(&ws, &ctl, None, &NoFrame);
            let (out, _) = tool.run(&mut call, r#"{"message":"hi"}"#).unwrap();
            assert_eq!(out.text(), r#"{"received":{"message":"hi"}}"#);
        }
    }
}
