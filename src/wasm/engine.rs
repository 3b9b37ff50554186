//! The engine behind a trait: wasmi by default ([`super::wasmi_engine`]); wasmtime can be
//! another implementation behind a cargo feature. An engine compiles a module once and runs it
//! many times, each run in a fresh instance with its own [`GuestState`].
//!
//! What every engine must do with a run: meter fuel in slices of at most [`FUEL_SLICE`] and,
//! between slices, ask the run's watch whether to stop (the call's deadline and cancel token,
//! the tool's timeout); hold linear memory to the [`GuestState::memory`] budget; give the
//! WASI preview 1 imports and the `wsfs` host functions ([`super::host`]); refuse modules
//! with a start section (a command starts at its `_start` export, inside the fuel slices).

use super::guest::GuestState;
use super::host;
use crate::error::{ErrorCode, Result, WsfsError};
use std::sync::Arc;

/// Fuel between two checks of the watch. A slice of a busy loop takes about 50 µs under wasmi
/// on a 2-core VM (`tests::measure`), so a cancel stops a running tool well within 10 ms (the
/// tests measure 0.1-0.3 ms, thread wake-up included), while one check per slice (a clock read
/// and an atomic load) costs about 0.1% of it.
pub const FUEL_SLICE: u64 = 200_000;

/// The WASI preview 1 import module.
pub const WASI_MODULE: &str = "wasi_snapshot_preview1";

/// How a run ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ended {
    /// `_start` returned (status 0), or the tool called `proc_exit`.
    Exited(i32),
    /// The fuel budget ran out.
    OutOfFuel,
    /// The watch (or a host function) stopped it; the reason is in the watch.
    Stopped,
    /// The tool trapped (or could not be instantiated): the engine's words.
    Trapped(String),
}

/// A finished run: how it ended, the fuel it used, and its state (so the runner decides
/// what happens to files still open before the state is dropped).
pub struct RunReport {
    pub ended: Ended,
    pub fuel_used: u64,
    pub state: GuestState,
}

pub trait Engine: Send + Sync {
    fn name(&self) -> &'static str;
    /// Validates and compiles a module: `manifest_invalid` when it is not valid WebAssembly or
    /// not a WASI command the host can run.
    fn compile(&self, wasm: &[u8]) -> Result<Arc<dyn CompiledModule>>;
}

pub trait CompiledModule: Send + Sync {
    /// Runs the module's `_start` in a fresh instance with at most `fuel`.
    fn run(&self, state: GuestState, fuel: u64) -> RunReport;
}

/// Load-time checks every engine makes of a module's interface: it imports only WASI preview
/// 1 and the `wsfs` host functions, and exports `_start` and `memory`.
pub fn check_interface<'a>(
    imports: impl IntoIterator<Item = (&'a str, &'a str)>,
    exports: &[&str],
) -> Result<()> {
    for (module, name) in imports {
        let known = match module {
            WASI_MODULE => true,
            host::MODULE => host::FUNCTIONS.contains(&name),
            _ => false,
        };
        if !known {
            return Err(WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!(
                    "the module imports {module}::{name}, which the host does not provide (only \
                     {WASI_MODULE} and {}::{{{}}})",
                    host::MODULE,
                    host::FUNCTIONS.join(", ")
                ),
            ));
        }
    }
    for needed in ["_start", "memory"] {
        if !exports.contains(&needed) {
            return Err(WsfsError::new(
                ErrorCode::ManifestInvalid,
                format!(
                    "the module does not export {needed}: a tool is a WASI command (build it \
                     for wasm32-wasip1 as a binary, not a library)"
                ),
            ));
        }
    }
    Ok(())
}
