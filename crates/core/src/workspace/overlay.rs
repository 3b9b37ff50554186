//! Overlay mode (issue 20): an overlay workspace's tools work on a kernel overlay
//! mount of the base (the workspace root, lower and never changed through the mount) and the
//! session's upper tree, made detached for this process alone (`sandbox::view_mount`). Every
//! tool runs host mode's code unchanged on the mount's root, so each keeps its
//! arguments, results, texts, codes and guarantees; the kernel merges directories, copies a
//! file up before its first change and records deletions as whiteouts.
//!
//! What overlay mode adds: before anything is changed, the session records the base
//! fingerprint of the path at its first touch and that it changed since the last checkpoint
//! (`Session::touch`), for the commit's conflict check and the checkpoints' before-images.
//! Every change a tool makes is reached through a resolution for writing (`resolve` with
//! `writes`, `resolve_entry`), so the touch happens there, before the tool changes anything.
//! A missing directory a resolution makes on the way is touched just before it is made
//! (`TouchingGate`, through the gate's `check_new_dir`), not after, so its before-image is
//! what the session had there ("absent", or a deleted base directory's whiteout).
//! A directory about to be moved or removed touches every path the session holds below it.
//!
//! The one operation overlayfs refuses is renaming a directory the base has (without
//! `redirect_dir`, which the unprivileged `userxattr` format does not allow): `rename` then
//! copies the directory to its new name and removes the old one (see `move_dir_by_copy`).

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::overlay::{session_path, Session};
use crate::sandbox::gate::{Access, Gate, Reached, Skipped, WalkNeeds};
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Root, ToolPath};
use cap_std::fs::Dir;
use std::cell::Cell;
use std::io;
use std::os::fd::RawFd;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

mod copy;
pub mod open;
pub mod runs;

pub use copy::move_dir_by_copy;

/// The session an overlay workspace works in, shared by its operations (which touch paths)
/// and the workspace's session operations (diff, commit, checkpoint, rewind, discard).
#[derive(Debug)]
pub struct SessionView {
    /// `None` only after a discard whose fresh session could not be opened.
    session: Mutex<Option<Session>>,
    /// Tool calls hold it shared for their whole run; a session operation that changes the
    /// upper tree or the base behind the mount (commit, rewind, discard) holds it exclusively
    /// and then mounts the view afresh, so no call straddles two mounts.
    pub calls: RwLock<()>,
    /// What opens the session again (after a discard) and mounts the view again.
    pub base: BaseSpec,
    /// The mount may show what is no longer so (a program changed the upper tree through a
    /// mount of its own, or a write found the base changed behind the view): the next call
    /// waits for the calls in flight and mounts the view afresh before it starts.
    pub dirty: AtomicBool,
    /// When the view was last mounted.
    pub mounted_at: Mutex<Instant>,
    /// The root handle of every open workspace on this session in this process (each a
    /// descriptor on the same mount, so all share the kernel's caches and locks): a remount
    /// moves them all to the new mount at once.
    pub roots: Mutex<Vec<std::os::fd::RawFd>>,
    /// A view older than this is mounted afresh by the next call that starts while no other
    /// runs, so base changes made outside the session show within about this long (the
    /// kernel caches the base's names; see docs/decisions/overlay-view.md).
    pub refresh_after: Duration,
}

/// `refresh_after` unless the config says otherwise.
pub const REFRESH_AFTER: Duration = Duration::from_secs(1);

thread_local! {
    /// This thread's call met a stale view before changing anything (see `Overlay::touched`):
    /// the dispatcher mounts afresh and runs the call once more.
    static MET_STALE_VIEW: Cell<bool> = const { Cell::new(false) };
}

/// Whether this thread's call met a stale view (and forgets it).
pub fn take_met_stale_view() -> bool {
    MET_STALE_VIEW.with(|c| c.replace(false))
}

/// The base as the session opened it: its handle and settings, to make its `Root` again.
#[derive(Debug)]
pub struct BaseSpec {
    pub dir: Dir,
    pub path: PathBuf,
    pub configured: PathBuf,
    pub protects: bool,
    pub state: crate::sandbox::state_dir::StateDir,
    /// The workspace's state directory (the session lives in `sessions/<name>` below it).
    pub state_path: PathBuf,
    pub name: String,
}

impl BaseSpec {
    /// A `Root` on the base (for a session to commit into).
    pub fn root(&self) -> io::Result<Root> {
        Ok(Root {
            dir: self.dir.try_clone()?,
            path: self.path.clone(),
            kernel_path: self.path.clone(),
            configured: self.configured.clone(),
            restrict: true,
            protects: self.protects,
            state: self.state.clone(),
            records_dir: std::sync::OnceLock::new(),
            state_pinned: None,
        })
    }
}

impl SessionView {
    /// The call met a view older than the base at `display` (which `happened` there) before
    /// changing anything: the view is mounted afresh and the dispatcher runs the call again.
    fn met_stale(&self, display: &str, happened: &str) -> WsfsError {
        self.dirty.store(true, Ordering::Release);
        MET_STALE_VIEW.with(|c| c.set(true));
        WsfsError::new(
            ErrorCode::IoError,
            format!(
                "{display} {happened} in the workspace outside this session after the \
                 session's view was made; nothing was changed: retry the call"
            ),
        )
    }

    pub fn new(session: Session, base: BaseSpec, refresh_after: Duration) -> SessionView {
        SessionView {
            session: Mutex::new(Some(session)),
            calls: RwLock::new(()),
            base,
            dirty: AtomicBool::new(false),
            mounted_at: Mutex::new(Instant::now()),
            roots: Mutex::new(Vec::new()),
            refresh_after,
        }
    }

    /// Whether the next call should mount the view afresh, and whether it must (dirty) or
    /// may if no call is in flight (old).
    pub fn wants_remount(&self) -> Option<bool> {
        if self.dirty.load(Ordering::Acquire) {
            return Some(true);
        }
        let at = *self.mounted_at.lock().unwrap_or_else(|p| p.into_inner());
        (at.elapsed() >= self.refresh_after).then_some(false)
    }

    /// Records a fresh mount.
    pub fn mounted(&self) {
        self.dirty.store(false, Ordering::Release);
        *self.mounted_at.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
    }

    /// Replaces the session (after a discard).
    pub fn set(&self, session: Option<Session>) {
        *self.lock() = session;
    }

    /// The session, locked.
    pub fn lock(&self) -> MutexGuard<'_, Option<Session>> {
        self.session.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the open session.
    pub fn with<T>(&self, f: impl FnOnce(&mut Session) -> Result<T>) -> Result<T> {
        let mut guard = self.lock();
        let session = guard.as_mut().ok_or_else(|| {
            WsfsError::new(
                ErrorCode::IoError,
                "the overlay session could not be opened again after its discard; reopen the workspace",
            )
        })?;
        f(session)
    }

    /// Records `rel`'s base fingerprint and that it changes, before the caller changes it.
    /// `rel` is the raw workspace-relative path; the session keys it by its session path
    /// (each name escaped as the tools show it: `overlay::session`).
    fn touch(&self, rel: &Path) -> Result<()> {
        let rel = session_path(rel);
        if rel.is_empty() {
            return Ok(());
        }
        self.with(|s| s.touch(&rel))
    }

    /// Touches `rel` and every path the session holds below it (a directory about to be
    /// moved or removed).
    fn touch_tree(&self, rel: &Path) -> Result<()> {
        let rel = session_path(rel);
        if rel.is_empty() {
            return Ok(());
        }
        self.with(|s| {
            s.touch(&rel)?;
            for path in s.upper_paths_below(&rel)? {
                s.touch(&path)?;
            }
            Ok(())
        })
    }
}

/// Overlay mode's part of a workspace: the session, and the root handle (a descriptor on the
/// view's mount) this workspace registered with it.
#[derive(Debug)]
pub struct Overlay {
    pub view: Arc<SessionView>,
    pub root_fd: RawFd,
}

impl Drop for Overlay {
    fn drop(&mut self) {
        let mut roots = self.view.roots.lock().unwrap_or_else(|p| p.into_inner());
        roots.retain(|&r| r != self.root_fd);
    }
}

impl Overlay {
    /// Resolves `path` on the view (`entry`: the entry itself, its leaf not followed) and,
    /// for writing, touches what it reached before the caller changes it. Missing parents it
    /// makes are touched just before each is made (`TouchingGate`).
    #[allow(clippy::too_many_arguments)]
    pub fn resolve<'a>(
        &self,
        root: &'a Root,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
        entry: bool,
    ) -> Result<Located<'a>> {
        let touching = TouchingGate {
            gate,
            view: &self.view,
            leaves: false,
        };
        let gate: &dyn Gate = if create_parents { &touching } else { gate };
        let located = match entry {
            true => root.resolve_entry(path, access, create_parents, gate, ctl)?,
            false => root.resolve(path, access, create_parents, gate, ctl)?,
        };
        match access.writes {
            true => self.touched_or_refused(root, located, entry, path, create_parents, gate, ctl),
            false => Ok(located),
        }
    }

    /// The gate of a commit on the view: `gate`, and the touch of each path it writes.
    pub fn commit_gate<'g>(&'g self, gate: &'g dyn Gate) -> impl Gate + 'g {
        TouchingGate {
            gate,
            view: &self.view,
            leaves: true,
        }
    }

    /// The workspace-relative path a resolution reached.
    fn located_rel(root: &Root, located: &Located<'_>) -> Result<PathBuf> {
        match &located.resolved_rel {
            Some(rel) => Ok(rel.clone()),
            None => root.rel_of(&located.dir, located.leaf.as_deref()),
        }
    }

    /// Touches what a resolution for writing reached, or undoes the resolution. (The
    /// directories it created were touched before each was made: `TouchingGate`.)
    fn touched<'a>(
        &self,
        root: &'a Root,
        located: Located<'a>,
        tree: bool,
        display: &str,
    ) -> Result<Located<'a>> {
        let touch = || -> Result<()> {
            // A path that names a directory by `.`/`..` (no leaf) names no entry a tool
            // changes: the tools refuse it after resolution.
            match located.leaf.as_ref() {
                None => return Ok(()),
                Some(l) if l.as_os_str() == "." || l.as_os_str() == ".." => return Ok(()),
                Some(_) => {}
            }
            let rel = Self::located_rel(root, &located)?;
            let is_dir = located.leaf_meta.as_ref().is_some_and(|m| m.is_dir());
            match tree && is_dir {
                true => self.view.touch_tree(&rel)?,
                false => self.view.touch(&rel)?,
            }
            // What the kernel would copy up must be what was just fingerprinted.
            let text = session_path(&rel);
            if text.is_empty() {
                return Ok(());
            }
            if self
                .view
                .with(|s| s.view_shows_now(&text, located.leaf_meta.as_ref()))?
            {
                return Ok(());
            }
            Err(self.view.met_stale(display, "changed"))
        };
        match touch() {
            Ok(()) => Ok(located),
            Err(e) => {
                root.undo_created(located);
                Err(e)
            }
        }
    }

    /// `touched`, and when the view was stale: host mode's refusal of `path` on the base as
    /// it is now, if it has one that a fresh view would give too (a directory on the way
    /// swapped for a symlink leading outside, or for a file; a missing one, unless the call
    /// makes missing parents). Else the call is run again on a fresh view (see
    /// `MET_STALE_VIEW`). Nothing was changed either way.
    #[allow(clippy::too_many_arguments)]
    fn touched_or_refused<'a>(
        &self,
        root: &'a Root,
        located: Located<'a>,
        tree: bool,
        path: &ToolPath,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>> {
        let stale = match self.touched(root, located, tree, &path.display) {
            Err(e) if MET_STALE_VIEW.with(Cell::get) => e,
            other => return other,
        };
        let Ok(base) = self.view.base.root() else {
            return Err(stale);
        };
        let Err(refused) = base.resolve_no_follow(path, gate, ctl) else {
            return Err(stale);
        };
        match refused.code {
            ErrorCode::OutsideWorkspace | ErrorCode::NotADirectory => {}
            ErrorCode::PathNotFound if !create_parents => {}
            _ => return Err(stale),
        }
        // The answer is the base's now: nothing to run again (the next call mounts afresh).
        MET_STALE_VIEW.with(|c| c.set(false));
        Err(refused)
    }
}

/// The gate of a resolution that may create directories: the workspace's own, and then, just
/// before `create_dirs` makes each missing directory (once the policy let it), the touch of
/// that directory. Its first touch thus sees what the session had there before the call: no
/// entry (before-image "absent"), or the whiteout of a deleted base directory that the kernel
/// is about to replace with an opaque directory; never the directory the call made. A
/// resolution that creates nothing costs nothing more.
///
/// With `leaves` (the commit's own resolutions, of new files whose directories are missing,
/// which no `Overlay::resolve` touched), a resolution for writing also touches the path it
/// reached, at its policy check, before the commit writes there, and checks that the view's
/// "nothing there" is still so in the base (as `Overlay::touched` does).
struct TouchingGate<'g> {
    gate: &'g dyn Gate,
    view: &'g SessionView,
    leaves: bool,
}

impl TouchingGate<'_> {
    /// The workspace-relative path `at` names (the view's root is confined: always inside).
    fn rel<'r>(at: &'r Reached<'_>, display: &str) -> Result<&'r Path> {
        match at.path()? {
            (rel, true) => Ok(rel),
            (rel, false) => Err(WsfsError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{display} reaches /{}, outside the workspace",
                    rel.display()
                ),
            )),
        }
    }
}

impl Gate for TouchingGate<'_> {
    fn wants_path(&self, access: Access) -> bool {
        self.gate.wants_path(access)
    }

    fn check(
        &self,
        at: &Reached<'_>,
        access: Access,
        display: &str,
        ctl: &CallControl,
    ) -> Result<()> {
        self.gate.check(at, access, display, ctl)?;
        if !(self.leaves && access.writes) {
            return Ok(());
        }
        let rel = Self::rel(at, display)?;
        self.view.touch(rel)?;
        let text = session_path(rel);
        // An entry there already: the commit refuses to replace it.
        if at.file.is_some()
            || text.is_empty()
            || self.view.with(|s| s.view_shows_now(&text, None))?
        {
            return Ok(());
        }
        Err(self.view.met_stale(display, "was created"))
    }

    fn check_new_dir(&self, at: &Reached<'_>, display: &str, ctl: &CallControl) -> Result<()> {
        self.gate.check_new_dir(at, display, ctl)?;
        self.view.touch(Self::rel(at, display)?)
    }

    fn walk_needs(&self) -> WalkNeeds {
        self.gate.walk_needs()
    }

    fn walk_skip(&self, rel: &Path, is_dir: bool, file: Option<(u64, u64)>) -> Option<Skipped> {
        self.gate.walk_skip(rel, is_dir, file)
    }
}
