//! Overlay mode: the host's session operations (diff, commit, checkpoint, rewind,
//! checkpoints, discard, refresh) and the guard every tool call holds. See `super::overlay`
//! for the view and `wsfs_overlay` for the store.

use super::overlay::SessionView;
use super::Workspace;
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::policy::SessionCommitGate;
use crate::overlay::{
    CheckpointInfo, CheckpointOptions, CheckpointResult, CommitOptions, CommitResult, DiffOptions,
    DiffResult, RewindOptions, Session,
};
use std::sync::RwLockReadGuard;

impl Workspace {
    /// Held shared by every tool call for its whole run (see `SessionView::calls`); `None` in
    /// host mode.
    /// A view that may show what is no longer so is mounted afresh first: when dirty, after
    /// the calls in flight end; when merely old, only if none is in flight.
    pub fn call_guard(&self) -> Option<RwLockReadGuard<'_, ()>> {
        let view = &self.overlay.as_ref()?.view;
        if let Some(must) = view.wants_remount() {
            let exclusive = match must {
                true => Some(view.calls.write().unwrap_or_else(|p| p.into_inner())),
                false => view.calls.try_write().ok(),
            };
            if let Some(_calls) = exclusive {
                if let Err(e) = view.remount() {
                    log::warn!(target: "wsfs", "the session's view could not be mounted afresh; the calls go on on the one they have: error={}", e.message);
                }
            }
        }
        Some(view.calls.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Shows the base as it is now: for a host that changed the base itself (the view shows
    /// outside changes within about a second on its own).
    pub fn session_refresh(&self) -> Result<()> {
        self.exclusive(true, |_| Ok(()))
    }

    /// Whether the workspace is in overlay mode, and its session's name.
    pub fn session_name(&self) -> Option<String> {
        let view = &self.overlay.as_ref()?.view;
        Some(view.base.name.clone())
    }

    /// The session, in overlay mode: the developer tools run programs on it.
    pub fn session_view(&self) -> Option<std::sync::Arc<SessionView>> {
        self.overlay.as_ref().map(|o| o.view.clone())
    }

    fn view(&self) -> Result<&SessionView> {
        self.overlay.as_ref().map(|o| &*o.view).ok_or_else(|| {
            WsfsError::new(
                ErrorCode::NoSession,
                "this workspace is in host mode and has no session: open it with \
                 \"mode\": \"overlay\" to work in one",
            )
        })
    }

    /// Runs `f` on the session with no tool call in flight; with `remount`, mounts the view
    /// afresh after it (the operation changed the upper tree or the base behind the mount).
    fn exclusive<T>(&self, remount: bool, f: impl FnOnce(&SessionView) -> Result<T>) -> Result<T> {
        let view = self.view()?;
        let _calls = view.calls.write().unwrap_or_else(|p| p.into_inner());
        let out = f(view);
        if remount {
            view.remount()?;
        }
        out
    }

    /// The session's changes against the base (see `overlay::diff`).
    pub fn session_diff(&self, opts: &DiffOptions) -> Result<DiffResult> {
        self.exclusive(false, |v| v.with(|s| s.diff(opts)))
    }

    /// Commits all, some files or some hunks of the session into the base (see
    /// `overlay::commit`); the workspace's policy is the gate of every base path.
    pub fn session_commit(&self, opts: &CommitOptions, ctl: &CallControl) -> Result<CommitResult> {
        self.exclusive(true, |v| {
            v.with(|s| s.commit_gated(opts, &SessionCommitGate(&self.policy), ctl))
        })
    }

    /// A checkpoint of the session (see `overlay::checkpoint`).
    pub fn session_checkpoint(&self, opts: &CheckpointOptions) -> Result<CheckpointResult> {
        self.exclusive(false, |v| v.with(|s| s.checkpoint(opts)))
    }

    /// Rewinds the session's view to a checkpoint.
    pub fn session_rewind(&self, opts: &RewindOptions) -> Result<()> {
        self.exclusive(true, |v| v.with(|s| s.rewind(opts)))
    }

    /// The session's checkpoints, oldest first.
    pub fn session_checkpoints(&self) -> Result<Vec<CheckpointInfo>> {
        self.exclusive(false, |v| v.with(|s| s.checkpoints()))
    }

    /// Drops every change of the session and goes on in a new, empty one of the same name.
    pub fn session_discard(&self) -> Result<()> {
        self.exclusive(true, |v| {
            if let Some(old) = v.lock().take() {
                old.discard()?;
            }
            let root = v
                .base
                .root()
                .map_err(|e| WsfsError::from_io(&e, "the workspace root"))?;
            let fresh = Session::open_in(root, &v.base.state_path, &v.base.name)?;
            v.set(Some(fresh));
            Ok(())
        })
    }
}
