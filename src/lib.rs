//! wsfs: filesystem tools for AI agents, confined to one workspace directory by the kernel.
//!
//! The C ABI lives in [`ffi`]; [`api`] is the same surface as plain Rust (JSON in, JSON out).
//! Every path is resolved beneath the workspace's directory handle with cap-std, so `..`,
//! absolute paths and symlinks cannot leave it; see `docs/security.md` for the guarantees and limits.
//!
//! `unsafe` code is denied everywhere but where it must be (the C ABI; the developer tools'
//! system calls between fork and exec), each place allowing it for itself and giving every
//! block a `// SAFETY:` line.

#![deny(unsafe_code)]

pub mod api;
pub mod approval;
pub mod dispatch;
pub mod envelope;
pub mod ffi;
pub mod handles;
pub mod host;
mod logging;
pub mod profiles;
pub mod session;
#[cfg(feature = "tracing")]
mod spans;
pub mod specs;
pub mod tool_call;

pub use wsfs_core::error;
#[cfg(feature = "overlay")]
pub use wsfs_core::overlay;
use wsfs_core::sandbox::json;
mod tools;
use wsfs_core::{config, control, guard, workspace};
#[cfg(feature = "wasm")]
use wsfs_wasm as wasm;

#[cfg(test)]
mod tool_handles;

pub use dispatch::{run_tool, ToolResult};
pub use envelope::Envelope;
pub use wsfs_core::config::{Config, Limits, WasmPolicy};
pub use wsfs_core::control::{token_cancel, token_free, token_new, CallControl};
pub use wsfs_core::error::{ErrorCode, WsfsError};
pub use wsfs_core::guard::policy::PolicyConfig;
pub use wsfs_core::tools::contract::{ToolOutput, Warning};
pub use wsfs_core::tools::create_directory::CreateDirectoryOutput;
pub use wsfs_core::tools::edit_file::EditOutput;
pub use wsfs_core::tools::list_dir::{Entry, ListOutput};
pub use wsfs_core::tools::read_file::ReadOutput;
pub use wsfs_core::tools::write::{AppendOutput, WriteMode, WriteOutput};
pub use wsfs_core::workspace::Workspace;

/// Hooks for wsfs's own tests (fault injection into commits). Not part of the API: never
/// reachable through the C ABI or any tool argument.
#[doc(hidden)]
pub mod testing {
    pub use wsfs_core::commit::fault::{
        inject_commit_fault, resume_commit, set_thread_faults, take_thread_faults,
        wait_for_paused_commit, CommitFault, FaultLog, FaultPlan, Sys, SysFault,
    };
    pub use wsfs_core::sandbox::new_dirs::abandon_next_new_dirs;
    #[cfg(feature = "exec")]
    pub use wsfs_exec::testing::{run_sh, TestOverlay, TestRun};

    /// A detached kernel overlay mount of `base` + `upper` (with its own empty `work`), as an
    /// overlay workspace's view is made: for tests to look at the view as the tools see it.
    pub fn mount_view(
        base: &std::path::Path,
        upper: &std::path::Path,
        work: &std::path::Path,
    ) -> std::io::Result<std::os::fd::OwnedFd> {
        let open = |p: &std::path::Path| std::fs::File::open(p);
        wsfs_core::sandbox::view_mount::mount_view(&open(base)?, &open(upper)?, &open(work)?)
    }
}
