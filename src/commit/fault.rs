//! Faults injected into a multi-file commit, for tests only: reachable from Rust (as
//! `wsfs::testing`), never through the C ABI or any tool argument, and scoped to one
//! workspace root so tests running in parallel do not disturb each other.

use once_cell::sync::Lazy;
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Condvar, Mutex};
use std::time::{Duration, Instant};

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
    /// The commit waits, with every file staged and every backup made, just before its
    /// renames, until [`resume_commit`] (see [`wait_for_paused_commit`]); then it completes.
    PauseBeforeRenames,
}

static FAULTS: Lazy<Mutex<HashMap<PathBuf, CommitFault>>> = Lazy::new(Default::default);

/// Roots whose commit is paused (`false`) or told to go on (`true`).
static PAUSED: Lazy<(Mutex<HashMap<PathBuf, bool>>, Condvar)> = Lazy::new(Default::default);

/// How long a paused commit waits for [`resume_commit`] before going on by itself, so a test
/// that fails before resuming cannot hang.
const PAUSE_LIMIT: Duration = Duration::from_secs(60);

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

/// Waits (at most `timeout`) until a commit on `root` is paused by `PauseBeforeRenames`.
pub fn wait_for_paused_commit(root: &Path, timeout: Duration) -> bool {
    let (lock, changed) = &*PAUSED;
    let deadline = Instant::now() + timeout;
    let mut paused = lock.lock().unwrap_or_else(|p| p.into_inner());
    while paused.get(root) != Some(&false) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        paused = changed
            .wait_timeout(paused, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    true
}

/// Lets the commit paused on `root` go on.
pub fn resume_commit(root: &Path) {
    let (lock, changed) = &*PAUSED;
    let mut paused = lock.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(go) = paused.get_mut(root) {
        *go = true;
    }
    changed.notify_all();
}

/// Pauses the calling commit until [`resume_commit`] (or `PAUSE_LIMIT`).
pub(crate) fn pause_here(root: &Path) {
    let (lock, changed) = &*PAUSED;
    let mut paused = lock.lock().unwrap_or_else(|p| p.into_inner());
    paused.insert(root.to_path_buf(), false);
    changed.notify_all();
    let deadline = Instant::now() + PAUSE_LIMIT;
    while paused.get(root) == Some(&false) {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        paused = changed
            .wait_timeout(paused, left)
            .unwrap_or_else(|p| p.into_inner())
            .0;
    }
    paused.remove(root);
}
