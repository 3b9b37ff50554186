//! Opening an overlay workspace's session and view: a second workspace of this process on
//! the same session joins it (see `SessionView::roots`), and mounting the view.

use super::{BaseSpec, Overlay, SessionView, REFRESH_AFTER};
use crate::commit::journal::recover_all;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::overlay::Session;
use crate::sandbox::root::Root;
use crate::sandbox::state_dir::StateDir;
use crate::sandbox::view_mount;
use cap_std::fs::Dir;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock, Weak};

/// The sessions open in this process, by their directory: a second workspace on the same
/// session shares it (its view, its lock and its calls' exclusion) instead of being refused
/// by the session's lock, which keeps other processes out.
static OPEN_SESSIONS: Mutex<Vec<(PathBuf, Weak<SessionView>)>> = Mutex::new(Vec::new());

/// Opens the session `name` over the base `root` (or joins it, when this process has it
/// open) and mounts its view. Returns the view's root (what the workspace's operations work
/// on), the overlay and the warnings of the view's recovery.
pub fn open_overlay(
    root: Root,
    name: &str,
    max_write_bytes: u64,
    refresh_ms: Option<u64>,
) -> Result<(Root, Overlay, Vec<String>)> {
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
            // One mount for all the workspaces on it, made afresh now (the new workspace's
            // recovery must see the base as it is), with no call in flight on the old one.
            let calls = view.calls.write().unwrap_or_else(|p| p.into_inner());
            let fresh = view.remount()?;
            drop(calls);
            (view, fresh)
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
    let pinned = view.with(|s| s.view_state())?;
    pinned
        .open(false)
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
        state_pinned: Some(pinned),
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
        root_fd: std::os::fd::AsRawFd::as_raw_fd(&view_root.dir),
        view,
    };
    Ok((view_root, overlay, warnings))
}

impl SessionView {
    /// Mounts the view afresh and moves every workspace on the session to the new mount (the
    /// caller holds `calls` exclusively); returns a descriptor on the new mount's root.
    pub fn remount(&self) -> Result<std::os::fd::OwnedFd> {
        let fresh = self.with(|s| mount(&self.base, s))?;
        let roots = self.roots.lock().unwrap_or_else(|p| p.into_inner());
        for &fd in roots.iter() {
            view_mount::replace_raw(fd, &fresh)
                .map_err(|e| WsfsError::from_io(&e, "the session's view"))?;
        }
        drop(roots);
        self.mounted();
        Ok(fresh)
    }
}

/// A new kernel overlay mount of the base and the session's upper tree.
fn mount(base: &BaseSpec, session: &Session) -> Result<std::os::fd::OwnedFd> {
    let work = session.work_dir()?;
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
