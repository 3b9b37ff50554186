//! What a running tool has, whichever engine runs it: its WASI context (arguments, allowed
//! environment, stdin, bounded stdout and stderr, the watched scheduler, `/workspace` when
//! granted), its host functions and its memory budget.

use super::fs::dir::GuestDir;
use super::fs::run_files::RunFiles;
use super::host::gateway::ModelGateway;
use super::host::{Grants, HostImports};
use super::policy::ToolLimits;
use super::sched::WatchedSched;
use super::stdio::{Captured, OutputPipe};
use super::watch::Watch;
use crate::error::{ErrorCode, Result, WsfsError};
use std::sync::Arc;
use wasmi_wasi::wasi_common::pipe::ReadPipe;
use wasmi_wasi::wasi_common::sync::{clocks_ctx, random_ctx};
use wasmi_wasi::wasi_common::{Table, WasiCtx};

/// The guest path of the workspace directory.
pub const WORKSPACE_DIR: &str = "/workspace";

/// Bytes of stderr kept (for a failed tool's message).
pub const STDERR_LIMIT: usize = 64 * 1024;

/// Most elements of a table a tool may have (function tables of large programs hold a few
/// thousand).
const MAX_TABLE_ELEMENTS: usize = 100_000;

/// The linear-memory ceiling of one run, and whether the tool hit it (so a failure after a
/// refused `memory.grow` is reported as `memory_limit`, not as the crash it causes).
#[derive(Debug)]
pub struct MemoryBudget {
    pub max_bytes: usize,
    /// The size a refused growth asked for.
    pub denied: Option<usize>,
}

impl MemoryBudget {
    pub fn memory_growing(&mut self, desired: usize, maximum: Option<usize>) -> bool {
        let allowed = desired <= self.max_bytes && maximum.is_none_or(|max| desired <= max);
        if !allowed {
            self.denied = Some(desired);
        }
        allowed
    }

    pub fn table_growing(&mut self, desired: usize) -> bool {
        desired <= MAX_TABLE_ELEMENTS
    }
}

/// The store data of a run.
pub struct GuestState {
    pub wasi: WasiCtx,
    pub host: HostImports,
    pub memory: MemoryBudget,
    pub watch: Arc<Watch>,
}

/// Everything a run is set up from.
pub struct GuestSetup {
    pub stdin: Vec<u8>,
    pub env: Vec<(String, String)>,
    pub workspace: Option<Arc<RunFiles>>,
    pub grants: Grants,
    pub gateway: Option<Arc<dyn ModelGateway>>,
    pub watch: Arc<Watch>,
    pub limits: ToolLimits,
}

/// What the tool wrote.
pub struct Captures {
    pub stdout: Captured,
    pub stderr: Captured,
}

fn setup_error(e: impl std::fmt::Display) -> WsfsError {
    WsfsError::new(
        ErrorCode::IoError,
        format!("could not set up the tool's WASI context: {e}"),
    )
}

impl GuestState {
    pub fn new(setup: GuestSetup) -> Result<(GuestState, Captures)> {
        let watch = setup.watch;
        let sched = Box::new(WatchedSched::new(watch.clone()));
        let mut wasi = WasiCtx::new(random_ctx(), clocks_ctx(), sched, Table::new());
        wasi.push_arg(watch.tool()).map_err(setup_error)?;
        for (name, value) in &setup.env {
            wasi.push_env(name, value).map_err(setup_error)?;
        }
        wasi.set_stdin(Box::new(ReadPipe::from(setup.stdin)));
        let (stdout, stdout_bytes) =
            OutputPipe::stdout(setup.limits.max_output_bytes, watch.clone());
        let (stderr, stderr_bytes) = OutputPipe::stderr(STDERR_LIMIT);
        wasi.set_stdout(Box::new(stdout));
        wasi.set_stderr(Box::new(stderr));
        if let Some(session) = &setup.workspace {
            let root = GuestDir::root(session).map_err(setup_error)?;
            wasi.push_preopened_dir(Box::new(root), WORKSPACE_DIR)
                .map_err(setup_error)?;
        }
        let host = HostImports::new(
            setup.grants,
            setup.gateway,
            watch.clone(),
            setup.limits.max_output_bytes,
        );
        let state = GuestState {
            wasi,
            host,
            memory: MemoryBudget {
                max_bytes: usize::try_from(setup.limits.memory_bytes).unwrap_or(usize::MAX),
                denied: None,
            },
            watch,
        };
        let captures = Captures {
            stdout: stdout_bytes,
            stderr: stderr_bytes,
        };
        Ok((state, captures))
    }
}
