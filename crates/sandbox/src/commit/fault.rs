//! Faults injected into a multi-file commit, for tests only: reachable from Rust (as
//! `wsfs::testing`), never through the C ABI or any tool argument, and scoped so tests running
//! in parallel do not disturb each other: a [`CommitFault`] to one workspace root, a
//! [`FaultPlan`] to the calling thread.
//!
//! A `FaultPlan` works on the system calls of a journaled commit, of its rollback and clean-up,
//! of its state directory and of recovery at `Workspace::open`: each calls [`sys`] just before
//! it runs, which counts it, may fail it with an injected errno, or kill the process there
//! (SIGKILL), so a test can reach every call site and every kill point in turn.

use std::cell::RefCell;
use std::collections::HashMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::LazyLock;
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

static FAULTS: LazyLock<Mutex<HashMap<PathBuf, CommitFault>>> = LazyLock::new(Default::default);

/// Roots whose commit is paused (`false`) or told to go on (`true`).
static PAUSED: LazyLock<(Mutex<HashMap<PathBuf, bool>>, Condvar)> = LazyLock::new(Default::default);

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
pub fn take(root: &Path) -> Option<CommitFault> {
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
pub fn pause_here(root: &Path) {
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

/// A system call as the fault hooks name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Sys {
    Mkdir,
    Open,
    Write,
    Fsync,
    Link,
    Rename,
    Unlink,
    Rmdir,
    Stat,
    Read,
}

/// An injected failure: the hooked call number `at` (counted from 0 since the plan was set)
/// fails with `errno`; with `persistent`, so does every later call of the same kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SysFault {
    pub at: usize,
    pub errno: i32,
    pub persistent: bool,
}

/// What the hooked calls of the calling thread do, until [`take_thread_faults`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FaultPlan {
    pub fail: Option<SysFault>,
    /// The process kills itself (SIGKILL) just before hooked call number `kill_at`.
    pub kill_at: Option<usize>,
}

/// What the hooked calls did under a plan: each call's kind, in order, and which failed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FaultLog {
    pub calls: Vec<Sys>,
    pub failed: Vec<usize>,
}

struct Armed {
    plan: FaultPlan,
    log: FaultLog,
    /// The kind of the call that failed first, for a persistent fault.
    failing: Option<Sys>,
}

/// Threads with a plan: the hooks cost one atomic load while it is 0.
static ARMED_THREADS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    static PLAN: RefCell<Option<Armed>> = const { RefCell::new(None) };
}

/// Arms `plan` for the hooked calls this thread makes from now on (replacing any plan).
pub fn set_thread_faults(plan: FaultPlan) {
    PLAN.with(|p| {
        let previous = p.borrow_mut().replace(Armed {
            plan,
            log: FaultLog::default(),
            failing: None,
        });
        if previous.is_none() {
            ARMED_THREADS.fetch_add(1, Ordering::SeqCst);
        }
    });
}

/// Disarms this thread's plan and returns what its hooked calls did.
pub fn take_thread_faults() -> FaultLog {
    PLAN.with(|p| match p.borrow_mut().take() {
        Some(armed) => {
            ARMED_THREADS.fetch_sub(1, Ordering::SeqCst);
            armed.log
        }
        None => FaultLog::default(),
    })
}

/// The hook every instrumented system call runs first: an injected error, or the process
/// killed here, when this thread's plan says so.
pub fn sys(call: Sys) -> io::Result<()> {
    if ARMED_THREADS.load(Ordering::Relaxed) == 0 {
        return Ok(());
    }
    PLAN.with(|p| {
        let mut p = p.borrow_mut();
        let Some(armed) = p.as_mut() else {
            return Ok(());
        };
        let step = armed.log.calls.len();
        armed.log.calls.push(call);
        if armed.plan.kill_at == Some(step) {
            let _ = rustix::process::kill_process(
                rustix::process::getpid(),
                rustix::process::Signal::KILL,
            );
            std::process::abort();
        }
        let Some(fault) = armed.plan.fail else {
            return Ok(());
        };
        let fails = step == fault.at || (fault.persistent && armed.failing == Some(call));
        if !fails {
            return Ok(());
        }
        if step == fault.at {
            armed.failing = Some(call);
        }
        armed.log.failed.push(step);
        Err(io::Error::from_raw_os_error(fault.errno))
    })
}
