// The engine-generic suite: included once per engine by mod.rs, inside a module that defines
// `engine()` and `ENGINE` (so these are plain comments: an included file has no inner docs).
// Each test file below is included the same way.

use super::wat;
use crate::fs::workspace::WorkspaceFs;
use crate::fs::{FsAccess, GuestFs};
use crate::host::gateway::ModelGateway;
use crate::policy::WasmCeiling;
use crate::registry::{load_tool, LoadedTool, MANIFEST_FILE};
use crate::runner::{self, RunContext, WasmOutput};
use crate::config::{Config, Limits};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::sha256_hex;
use crate::workspace::Workspace;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// An input schema that takes anything.
pub const OPEN_SCHEMA: &str = r#"{"type":"object","properties":{}}"#;

/// Writes a tool folder: `module.wat` and a manifest with its hash, `fields` added to it.
pub fn write_tool(parent: &Path, name: &str, wat: &str, fields: &str) -> PathBuf {
    let dir = parent.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("module.wat"), wat).unwrap();
    let manifest = format!(
        r#"{{"name":"{name}","version":"0.1.0","description":"A test tool.",
             "input_schema":{OPEN_SCHEMA},"module_sha256":"{}"{fields}}}"#,
        sha256_hex(wat.as_bytes())
    );
    std::fs::write(dir.join(MANIFEST_FILE), manifest).unwrap();
    dir
}

/// A tool loaded under `host`.
pub fn tool_with(wat: &str, fields: &str, host: &WasmCeiling) -> Result<LoadedTool> {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_tool(tmp.path(), "fixture", wat, fields);
    load_tool(&dir, engine().as_ref(), host)
}

/// The host policy of the tests: the defaults, with direct network allowed (the network
/// tests use a server on 127.0.0.1).
pub fn test_host() -> WasmCeiling {
    WasmCeiling {
        allow_direct_network: true,
        ..WasmCeiling::default()
    }
}

pub fn tool(wat: &str, fields: &str) -> LoadedTool {
    tool_with(wat, fields, &test_host()).expect("the fixture loads")
}

pub fn ctl() -> CallControl {
    CallControl::new(Duration::from_secs(30), None)
}

/// Runs a tool with no workspace and no gateway.
pub fn run_plain(tool: &LoadedTool, input: &str) -> Result<WasmOutput> {
    run_with(tool, input, &ctl(), None, None)
}

pub fn run_with(
    tool: &LoadedTool,
    input: &str,
    ctl: &CallControl,
    workspace: Option<Arc<dyn GuestFs>>,
    gateway: Option<Arc<dyn ModelGateway>>,
) -> Result<WasmOutput> {
    let host = test_host();
    runner::run(
        tool,
        input,
        RunContext {
            ctl,
            host: &host,
            workspace,
            gateway,
        },
    )
}

/// The `log` a [`wat::logging`] fixture printed.
pub fn log(output: &WasmOutput) -> String {
    output.data["log"].as_str().unwrap_or_default().to_string()
}

pub fn code(result: &Result<WasmOutput>) -> ErrorCode {
    match result {
        Ok(out) => panic!("expected an error, got {}", out.data),
        Err(e) => e.code,
    }
}

/// A temporary workspace (root `ws` in a temp dir, with `outside` beside it).
pub struct TestWorkspace {
    pub tmp: tempfile::TempDir,
    pub ws: Arc<Workspace>,
}

impl TestWorkspace {
    pub fn new() -> TestWorkspace {
        Self::with(|_| {})
    }

    pub fn with(configure: impl FnOnce(&mut Config)) -> TestWorkspace {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("outside")).unwrap();
        let mut config = Config {
            root: tmp.path().join("ws").to_string_lossy().into_owned(),
            create_root: true,
            restrict_to_workspace: true,
            limits: Limits::default(),
            state_dir: Some(tmp.path().join("state").to_string_lossy().into_owned()),
            policy: Default::default(),
            wasm_tools: Vec::new(),
            wasm_policy: Default::default(),
            mode: Default::default(),
            session: None,
            session_refresh_ms: None,
            model_gateway: None,
            profile: "wsfs".into(),
        };
        configure(&mut config);
        let ws = Arc::new(Workspace::open(&config).unwrap().0);
        TestWorkspace { tmp, ws }
    }

    pub fn root(&self) -> PathBuf {
        self.ws.root().to_path_buf()
    }

    pub fn outside(&self) -> PathBuf {
        self.tmp.path().join("outside")
    }

    pub fn guest_fs(&self, access: FsAccess, ctl: &CallControl) -> Arc<WorkspaceFs> {
        Arc::new(WorkspaceFs::new(self.ws.clone(), ctl, access, "fixture").unwrap())
    }
}

pub fn err_message(result: &Result<WasmOutput>) -> String {
    match result {
        Ok(out) => panic!("expected an error, got {}", out.data),
        Err(WsfsError { message, .. }) => message.clone(),
    }
}

mod host_calls {
    include!("host_calls.rs");
}
mod limits {
    include!("limits.rs");
}
mod loading {
    include!("loading.rs");
}
mod measure {
    include!("measure.rs");
}
mod protocol_runs {
    include!("protocol_runs.rs");
}
mod workspace_fs {
    include!("workspace_fs.rs");
}
