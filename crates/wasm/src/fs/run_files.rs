//! One run's workspace state, shared by every directory and file handle of the tool.

use super::{errno, errno_for, GuestFs};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::watch::Watch;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use wasmi_wasi::wasi_common::snapshots::preview_1::types::Errno;
use wasmi_wasi::wasi_common::Error;

/// Most directory and file handles a tool holds at once: past it, opens fail with `EMFILE`.
/// Each file opened for reading holds a host descriptor, and several tools may run at once in
/// a process whose descriptor limit may be 1024.
pub const MAX_HANDLES: usize = 64;

/// Refusals kept for the error message of a tool that fails.
const KEPT_REFUSALS: usize = 4;

pub struct RunFiles {
    pub fs: Arc<dyn GuestFs>,
    pub watch: Arc<Watch>,
    handles: AtomicUsize,
    /// Bytes the tool's written files may hold in host memory together (its memory limit):
    /// what is left of it.
    buffer_budget: AtomicU64,
    /// Whether closing a written file commits it: true while the tool runs; set false before a
    /// stopped or failed tool's handles are dropped, so they are discarded.
    commit_on_close: AtomicBool,
    failed_commits: Mutex<Vec<WsfsError>>,
    refusals: Mutex<Vec<String>>,
}

impl RunFiles {
    /// `buffer_budget`: how many bytes of written files the run may hold in memory.
    pub fn new(fs: Arc<dyn GuestFs>, watch: Arc<Watch>, buffer_budget: u64) -> Arc<RunFiles> {
        Arc::new(RunFiles {
            fs,
            watch,
            handles: AtomicUsize::new(0),
            buffer_budget: AtomicU64::new(buffer_budget),
            commit_on_close: AtomicBool::new(true),
            failed_commits: Mutex::default(),
            refusals: Mutex::default(),
        })
    }

    /// Runs one workspace operation for the tool: refused (with a trap) once the tool must
    /// stop; a failure is the WASI error the tool reads, except the call's own stop (deadline,
    /// cancel), which traps.
    pub fn op<T>(
        &self,
        what: &str,
        f: impl FnOnce(&dyn GuestFs) -> Result<T>,
    ) -> std::result::Result<T, Error> {
        if self.watch.check().is_err() {
            return Err(stopped());
        }
        f(self.fs.as_ref()).map_err(|e| self.refused(what, e))
    }

    /// The WASI error for `e`, noting refusals the model should hear about.
    pub fn refused(&self, what: &str, e: WsfsError) -> Error {
        if matches!(e.code, ErrorCode::Timeout | ErrorCode::Cancelled) {
            self.watch.stop(e);
            return stopped();
        }
        let worth_telling = matches!(
            e.code,
            ErrorCode::OutsideWorkspace
                | ErrorCode::PolicyDenied
                | ErrorCode::CapabilityDenied
                | ErrorCode::WritesDisabled
                | ErrorCode::TooLarge
                | ErrorCode::NoSpace
                | ErrorCode::MemoryLimit
        );
        if worth_telling {
            let mut refusals = self.refusals.lock().unwrap_or_else(|p| p.into_inner());
            if refusals.len() < KEPT_REFUSALS {
                refusals.push(format!("{what}: {e}"));
            }
        }
        errno(errno_for(e.code))
    }

    /// A handle slot, or `EMFILE` when the tool holds too many.
    pub fn claim_handle(self: &Arc<Self>) -> std::result::Result<HandleSlot, Error> {
        let held = self.handles.fetch_add(1, Ordering::AcqRel);
        if held >= MAX_HANDLES {
            self.handles.fetch_sub(1, Ordering::AcqRel);
            return Err(errno(Errno::Mfile));
        }
        Ok(HandleSlot(self.clone()))
    }

    /// Takes `bytes` from the buffer budget; `ENOMEM` (and a refusal the model hears about)
    /// when the tool's written files would hold more than its memory limit.
    pub fn reserve_buffer(&self, bytes: u64, what: &Path) -> std::result::Result<(), Error> {
        let reserved =
            self.buffer_budget
                .fetch_update(Ordering::AcqRel, Ordering::Acquire, |left| {
                    left.checked_sub(bytes)
                });
        if reserved.is_ok() {
            return Ok(());
        }
        let refusal = WsfsError::new(
            ErrorCode::MemoryLimit,
            format!(
                "{}: the files the tool is writing would hold more than its memory limit; \
                 close some, or write less",
                what.display()
            ),
        );
        self.refused("write", refusal);
        Err(errno(Errno::Nomem))
    }

    /// Gives back what [`Self::reserve_buffer`] took.
    pub fn release_buffer(&self, bytes: u64) {
        self.buffer_budget.fetch_add(bytes, Ordering::AcqRel);
    }

    pub fn commits_on_close(&self) -> bool {
        self.commit_on_close.load(Ordering::Acquire)
    }

    /// From now on, closing a written file discards it.
    pub fn discard_open_writes(&self) {
        self.commit_on_close.store(false, Ordering::Release);
    }

    pub fn note_failed_commit(&self, e: WsfsError) {
        self.failed_commits
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(e);
    }

    /// The first commit that failed, if any.
    pub fn failed_commit(&self) -> Option<WsfsError> {
        let failed = self
            .failed_commits
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        failed.first().cloned()
    }

    /// What the workspace refused the tool, for a failed tool's message.
    pub fn refusals(&self) -> Vec<String> {
        self.refusals
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

/// The trap for an operation the tool may no longer make (the reason is in the watch).
pub fn stopped() -> Error {
    Error::trap(wiggle::anyhow::anyhow!("the tool was stopped"))
}

/// One open handle, released when dropped.
pub struct HandleSlot(Arc<RunFiles>);

impl HandleSlot {
    pub fn session(&self) -> &Arc<RunFiles> {
        &self.0
    }
}

impl Drop for HandleSlot {
    fn drop(&mut self) {
        self.0.handles.fetch_sub(1, Ordering::AcqRel);
    }
}
