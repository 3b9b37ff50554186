//! Overlay mode: opening the session and its view, and the host's session operations (diff,
//! commit, checkpoint, rewind, checkpoints, discard). See `backend::overlay` for the view and
//! `overlay` for the store.

use super::Workspace;
use crate::backend::{BaseSpec, Host, Overlay, SessionView, REFRESH_AFTER};
use crate::commit::journal::recover_all;
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::overlay::{
    CheckpointInfo, CheckpointOptions, CheckpointResult, CommitOptions, CommitResult, DiffOptions,
    DiffResult, RewindOptions, Session,
};
use crate::sandbox::root::Root;
use crate::sandbox::state_dir::StateDir;
use crate::sandbox::view_mount;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, RwLockReadGuard, Weak};

/// The sessions open in this process, by their directory: a second workspace on the same
/// session shares it (its view, its lock and its calls' exclusion) instead of being refused
/// by the session's lock, which keeps other processes out.
static OPEN_SESSIONS: Mutex<Vec<(PathBuf, Weak<SessionView>)>> = Mutex::new(Vec::new());

/// Opens the session `name` over the base `root` (or joins it, when this process has it
/// open) and mounts its view. Returns the backend and the warnings of the view's recovery.
pub(super) fn open_overlay(
    root: Root,
    name: &str,
    max_write_bytes: u64,
    refresh_ms: Option<u64>,
) -> Result<(Overlay, Vec<String>)> {
    let StateDir::At(state_path) = root.state.clone() else {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "mode overlay keeps the session in the state directory, and this workspace has none \
             outside it: set state_dir to a directory outside the workspace",
        ));
    };
    let session_dir = state_path.join("sessions").join(name);
    let mut open = OPEN_SESSIONS.lock().unwrap_or_else(|p| p.into_inner());
    open.retain(|(_, view)| view.strong_count() > 0);
    let shared = open
        .iter()
        .find(|(dir, _)| *dir == session_dir)
        .and_then(|(_, view)| view.upgrade());
    let (view, view_fd) = match shared {
        Some(view) => {
            // The same mount as the workspaces already on it.
            // The same mount as the workspaces already on it (duplicated under the lock
            // their handles are registered under, so none closes meanwhile).
            let roots = view.roots.lock().unwrap_or_else(|p| p.into_inner());
            let fd = match roots.first() {
                Some(&fd) => dup_raw(fd)?,
                None => view.with(|s| mount(&view.base, s))?,
            };
            drop(roots);
            (view, fd)
        }
        None => {
            let dup = |dir: &Dir| {
                dir.try_clone()
                    .map_err(|e| WsfsError::from_io(&e, "the workspace root"))
            };
            let base = BaseSpec {
                dir: dup(&root.dir)?,
                path: root.path.clone(),
                configured: root.configured.clone(),
                protects: root.protects,
                state: root.state.clone(),
                state_path: state_path.clone(),
                name: name.to_string(),
            };
            let session = Session::open_in(root, &state_path, name)?;
            let fd = mount(&base, &session)?;
            let refresh = refresh_ms.map_or(REFRESH_AFTER, std::time::Duration::from_millis);
            let view = Arc::new(SessionView::new(session, base, refresh));
            open.push((session_dir.clone(), Arc::downgrade(&view)));
            (view, fd)
        }
    };
    drop(open);
    let view_state = session_dir.join("view-state");
    std::fs::create_dir_all(&view_state)
        .map_err(|e| WsfsError::from_io(&e, &view_state.display().to_string()))?;
    let view_root = Root {
        dir: Dir::from_std_file(std::fs::File::from(view_fd)),
        path: view.base.path.clone(),
        kernel_path: PathBuf::from("/"),
        configured: view.base.configured.clone(),
        restrict: true,
        protects: view.base.protects,
        state: StateDir::At(view_state),
        records_dir: OnceLock::new(),
    };
    {
        use std::os::fd::AsRawFd;
        let mut roots = view.roots.lock().unwrap_or_else(|p| p.into_inner());
        roots.push(view_root.dir.as_raw_fd());
    }
    // The view's own multi-file commits and new directories a crash interrupted.
    let recovery = recover_all(&view_root, max_write_bytes);
    let mut warnings = recovery.warnings;
    warnings.extend(crate::sandbox::new_dirs::recover_all(&view_root));
    let overlay = Overlay {
        host: Host { root: view_root },
        view,
    };
    Ok((overlay, warnings))
}

/// A new descriptor on what `fd` (owned by a live workspace) is open on.
fn dup_raw(fd: std::os::fd::RawFd) -> Result<std::os::fd::OwnedFd> {
    view_mount::dup_of(fd).map_err(|e| WsfsError::from_io(&e, "the session's view"))
}

/// A new kernel overlay mount of the base and the session's upper tree.
fn mount(base: &BaseSpec, session: &Session) -> Result<std::os::fd::OwnedFd> {
    let (_, _, work_path) = session.mount_dirs()?;
    let work = Dir::open_ambient_dir(&work_path, ambient_authority())
        .map_err(|e| WsfsError::from_io(&e, &work_path.display().to_string()))?;
    view_mount::mount_view(&base.dir, session.upper(), &work).map_err(|e| {
        WsfsError::new(
            ErrorCode::OverlayUnavailable,
            format!(
                "mode overlay needs a kernel overlay mount of the workspace and its session \
                 (unprivileged user namespaces and overlayfs), and the kernel refused it: {e}; \
                 open the workspace in mode host instead"
            ),
        )
    })
}

impl Workspace {
    /// Held shared by every tool call for its whole run (see `SessionView::calls`); `None` in
    /// host mode.
    /// A view that may show what is no longer so is mounted afresh first: when dirty, after
    /// the calls in flight end; when merely old, only if none is in flight.
    pub(crate) fn call_guard(&self) -> Option<RwLockReadGuard<'_, ()>> {
        let view = self.session.as_ref()?;
        if let Some(must) = view.wants_remount() {
            let exclusive = match must {
                true => Some(view.calls.write().unwrap_or_else(|p| p.into_inner())),
                false => view.calls.try_write().ok(),
            };
            if let Some(_calls) = exclusive {
                if let Err(e) = self.remount(view) {
                    tracing::warn!(target: "wsfs", error = %e.message, "the session's view could not be mounted afresh; the calls go on on the one they have");
                }
            }
        }
        Some(view.calls.read().unwrap_or_else(|p| p.into_inner()))
    }

    /// Mounts the view afresh, for every workspace on the session (the caller holds
    /// `calls` exclusively).
    fn remount(&self, view: &SessionView) -> Result<()> {
        let fresh = view.with(|s| mount(&view.base, s))?;
        let roots = view.roots.lock().unwrap_or_else(|p| p.into_inner());
        for &fd in roots.iter() {
            view_mount::replace_raw(fd, &fresh)
                .map_err(|e| WsfsError::from_io(&e, "the session's view"))?;
        }
        drop(roots);
        view.mounted();
        Ok(())
    }

    /// Shows the base as it is now: for a host that changed the base itself (the view shows
    /// outside changes within about a second on its own).
    pub fn session_refresh(&self) -> Result<()> {
        self.exclusive(true, |_| Ok(()))
    }

    /// Whether the workspace is in overlay mode, and its session's name.
    pub fn session_name(&self) -> Option<String> {
        let view = self.session.as_ref()?;
        Some(view.base.name.clone())
    }

    fn view(&self) -> Result<&SessionView> {
        self.session.as_deref().ok_or_else(|| {
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
            self.remount(view)?;
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
            v.with(|s| s.commit_gated(opts, &self.policy, ctl))
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
