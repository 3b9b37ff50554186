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
use super::imports::{check_imports, Import};
use crate::error::{ErrorCode, Result, WsfsError};
use std::sync::Arc;

/// Fuel between two checks of the watch. A slice of a busy loop takes about 50 µs under wasmi
/// on a 2-core VM (`tests::measure`), so a cancel stops a running tool well within 10 ms (the
/// tests measure 0.1-0.3 ms, thread wake-up included), while one check per slice (a clock read
/// and an atomic load) costs about 0.1% of it.
pub const FUEL_SLICE: u64 = 200_000;

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

/// Load-time checks every engine makes of a module's interface: every import is a function the
/// host provides, with the signature it provides ([`check_imports`]), and the module exports
/// `_start` and `memory`.
pub fn check_interface(imports: &[Import], exports: &[&str]) -> Result<()> {
    check_imports(imports)?;
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
