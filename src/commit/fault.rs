//! Faults injected into a multi-file commit, for tests only: reachable from Rust (as
//! `wsfs::testing`), never through the C ABI or any tool argument, and scoped to one
//! workspace root so tests running in parallel do not disturb each other.

use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// What the next multi-file commit on a root does wrong.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitFault {
    /// The rename (or removal) after this many succeeds fails with an I/O error: the commit
    /// must roll back and report it.
    FailAfterRenames(usize),
    /// The commit stops dead after this many renames, as if the process were killed: its
    /// journal stays for `Workspace::open` to roll back.
    AbandonAfterRenames(usize),
    /// The commit stops dead right after marking itself committed: `Workspace::open`
    /// must finish it.
    AbandonAfterCommitMark,
}

static FAULTS: Lazy<Mutex<HashMap<PathBuf, CommitFault>>> = Lazy::new(Default::default);

/// Arms `fault` for the next multi-file commit of the workspace whose canonical root is
/// `root` (`None` disarms). It fires once.
pub fn inject_commit_fault(root: &Path, fault: Option<CommitFault>) {
    let mut faults = FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    match fault {
        Some(f) => faults.insert(root.to_path_buf(), f),
        None => faults.remove(root),
    };
}

/// Takes the fault armed for `root`, if any.
pub(crate) fn take(root: &Path) -> Option<CommitFault> {
    let mut faults = FAULTS.lock().unwrap_or_else(|p| p.into_inner());
    if faults.is_empty() {
        return None;
    }
    faults.remove(root)
}
