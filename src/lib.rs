//! wsfs: filesystem tools for AI agents, confined to one workspace directory by the kernel.
//!
//! The C ABI lives in [`ffi`]; [`api`] is the same surface as plain Rust (JSON in, JSON out).
//! Every path is resolved beneath the workspace's directory handle with cap-std, so `..`,
//! absolute paths and symlinks cannot leave it; see `README.md` for the guarantees and limits.

pub mod api;
mod audit;
mod commit;
mod config;
mod control;
mod create_dirs;
mod dispatch;
mod edit_hints;
mod envelope;
pub mod error;
pub mod ffi;
mod fileops;
mod handles;
mod hints;
mod json;
mod lines;
mod logging;
mod names;
mod patch;
mod policy;
// The profile engine and data (issue 18); the ABI edge uses it once the layers land.
#[allow(dead_code)]
mod profiles;
mod render;
mod resolve;
mod specs;
mod tempfile_ops;
mod text;
mod tool;
mod tools;
mod walk;
mod workspace;

pub use config::{Config, Limits};
pub use control::{token_cancel, token_free, token_new, CallControl};
pub use dispatch::{run_tool, ToolResult};
pub use envelope::Envelope;
pub use error::{ErrorCode, WsfsError};
pub use policy::PolicyConfig;
pub use tool::ToolOutput;
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
    pub use crate::commit::new_dirs::abandon_next_new_dirs;
}
