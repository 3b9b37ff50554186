//! The git tools' cores (`git_status`, `git_diff`, `git_commit`) on the hardened git of
//! `wsfs_exec::git`.

pub use crate::exec::git::*;

pub mod commit;
pub mod diff;
pub mod status;

#[cfg(test)]
mod tests;
