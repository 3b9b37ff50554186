//! wsfs: filesystem tools for AI agents, confined to one workspace directory by the kernel.
//!
//! The C ABI lives in [`ffi`]; [`api`] is the same surface as plain Rust (JSON in, JSON out).
//! Every path is resolved beneath the workspace's directory handle with cap-std, so `..`,
//! absolute paths and symlinks cannot leave it; see `README.md` for the guarantees and limits.

pub mod api;
mod config;
mod control;
mod create_dirs;
mod dispatch;
mod envelope;
pub mod error;
pub mod ffi;
mod fileops;
mod json;
mod logging;
mod names;
mod registry;
mod render;
mod resolve;
mod specs;
mod tempfile_ops;
mod tools;
mod workspace;

pub use config::{Config, Limits};
pub use control::{token_cancel, token_free, token_new, CallControl};
pub use dispatch::{run_tool, ToolData};
pub use error::{ErrorCode, WsfsError};
pub use tools::edit::EditOutput;
pub use tools::list::{Entry, ListOutput};
pub use tools::read::ReadOutput;
pub use tools::write::{AppendOutput, WriteOutput};
pub use workspace::Workspace;
