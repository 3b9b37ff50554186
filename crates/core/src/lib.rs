//! wsfs's core: the policy (deny rules, read-only mode, the audit log), the configuration, an
//! open workspace (its root, backend and overlay session) and the twelve file tools with the
//! registry that lists them.

#![deny(unsafe_code)]

pub mod config;
pub mod guard;
pub mod patch;
pub mod render;
pub mod tools;
pub mod workspace;

#[cfg(feature = "overlay")]
pub use wsfs_overlay as overlay;
pub use wsfs_sandbox as sandbox;
pub use wsfs_sandbox::{commit, control, error, json, lines, names, paths, text};
