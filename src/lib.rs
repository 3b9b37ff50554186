//! wsfs: filesystem tools for AI agents, confined to one workspace directory by the kernel.
//!
//! The C ABI lives in [`ffi`]; [`api`] is the same surface as plain Rust (JSON in, JSON out).
//! Every path is resolved beneath the workspace's directory handle with cap-std, so `..`,
//! absolute paths and symlinks cannot leave it; see `README.md` for the guarantees and limits.
//!
//! `unsafe` code is denied everywhere but where it must be (the C ABI; the developer tools'
//! system calls between fork and exec), each place allowing it for itself and giving every
//! block a `// SAFETY:` line.

#![deny(unsafe_code)]

mod abi;
mod backend;
mod commit;
mod config;
mod control;
pub mod error;
mod exec;
mod guard;
mod json;
mod lines;
mod logging;
mod names;
pub mod overlay;
mod patch;
mod paths;
mod render;
mod sandbox;
mod text;
mod tools;
mod wasm;
mod workspace;

#[cfg(test)]
mod layers;

pub use abi::{api, ffi};

pub use abi::dispatch::{run_tool, ToolResult};
pub use abi::envelope::Envelope;
pub use config::{Config, Limits, WasmPolicy};
pub use control::{token_cancel, token_free, token_new, CallControl};
pub use error::{ErrorCode, WsfsError};
pub use guard::policy::PolicyConfig;
pub use tools::contract::{ToolOutput, Warning};
pub use tools::create_directory::CreateDirectoryOutput;
pub use tools::edit_file::EditOutput;
pub use tools::list_dir::{Entry, ListOutput};
pub use tools::read_file::ReadOutput;
pub use tools::write::{AppendOutput, WriteMode, WriteOutput};
pub use workspace::Workspace;

/// Hooks for wsfs's own tests (fault injection into commits). Not part of the API: never
/// reachable through the C ABI or any tool argument.
#[doc(hidden)]
pub mod testing {
    pub use crate::commit::fault::{
        inject_commit_fault, resume_commit, set_thread_faults, take_thread_faults,
        wait_for_paused_commit, CommitFault, FaultLog, FaultPlan, Sys, SysFault,
    };
    pub use crate::exec::testing::{run_sh, TestOverlay, TestRun};
    pub use crate::sandbox::new_dirs::abandon_next_new_dirs;

    /// A detached kernel overlay mount of `base` + `upper` (with its own empty `work`), as an
    /// overlay workspace's view is made: for tests to look at the view as the tools see it.
    pub fn mount_view(
        base: &std::path::Path,
        upper: &std::path::Path,
        work: &std::path::Path,
    ) -> std::io::Result<std::os::fd::OwnedFd> {
        let open = |p: &std::path::Path| std::fs::File::open(p);
        crate::sandbox::view_mount::mount_view(&open(base)?, &open(upper)?, &open(work)?)
    }
}
