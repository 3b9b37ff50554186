//! An open workspace: the composition of its root (the sandbox), its policy (the gate of
//! every resolution, and the audit log) and its limits. The tools reach the file system only
//! through the operations here, each a one-line call into the sandbox with the policy as its
//! gate.

use crate::backend::overlay::open::open_overlay;
use crate::backend::overlay::SessionView;
use crate::backend::{Backend, FileId, Host, Listed};
use crate::commit::journal::recover_all;
use crate::commit::{CommitError, Committed, Op};
use crate::config::{Config, Limits};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::policy::Policy;
use crate::paths::{absolute_root, broad_root_warning, is_broad_root};
use crate::sandbox::gate::Access;
use crate::sandbox::host::{contains_protected, unrestricted_warnings};
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Anchor, DirRef, Root, ToolPath};
use crate::sandbox::state_dir;
use crate::sandbox::tempfile::{sweep_leftovers, SweepLimits, SWEEP_LIMITS};
use crate::sandbox::walk::deny::{StartPaths, WalkFilter};
use crate::sandbox::walk::dfs::{Entry as WalkEntry, Flow, Walked};
use crate::sandbox::walk::filter::WalkOptions;
use crate::sandbox::walk::remove::{Removal, RemoveOptions};
use crate::sandbox::walk::tree::Tree;
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rustix::fs::RenameFlags;
use std::any::Any;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::BorrowedFd;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

/// An open workspace.
#[derive(Debug)]
pub struct Workspace {
    /// Where the files are: the operations of the backend contract (see `crate::backend`).
    /// Private: the tools reach it only through the facades below.
    backend: Box<dyn Backend>,
    pub limits: Limits,
    /// Deny rules, read-only mode and the audit log (see `policy`).
    pub policy: Policy,
    /// State the layers above keep per workspace (see [`Workspace::slot`]).
    slots: Slots,
    /// The overlay session, in overlay mode (see `session`).
    session: Option<Arc<SessionView>>,
}

#[cfg(test)]
mod sandbox_tests;
mod session;

/// Per-workspace values of types this layer does not know (the exec tools' runner and probe
/// cache): one of each type, made on first use, dropped with the workspace.
#[derive(Default)]
struct Slots(Mutex<Vec<Arc<dyn Any + Send + Sync>>>);

impl std::fmt::Debug for Slots {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Slots")
    }
}

impl Workspace {
    /// Opens (creating if needed) the configured root. Returns the workspace and its warnings.
    pub fn open(config: &Config) -> Result<(Workspace, Vec<String>)> {
        let configured_root = absolute_root(&config.root)?;
        let shown = configured_root.display().to_string();
        match std::fs::metadata(&configured_root) {
            Ok(meta) if !meta.is_dir() => {
                return Err(WsfsError::new(
                    ErrorCode::NotADirectory,
                    format!("workspace root {shown} exists and is not a directory"),
                ))
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                std::fs::create_dir_all(&configured_root)
                    .map_err(|e| WsfsError::from_io(&e, &shown))?;
            }
            Err(e) => return Err(WsfsError::from_io(&e, &shown)),
        }
        let root = configured_root
            .canonicalize()
            .map_err(|e| WsfsError::from_io(&e, &shown))?;
        let root_dir = Dir::open_ambient_dir(&root, ambient_authority())
            .map_err(|e| WsfsError::from_io(&e, &shown))?;
        let policy = Policy::open(&config.policy, &root)?;
        crate::sandbox::proc::proc_fd_dir();
        let mut warnings: Vec<String> = broad_root_warning(&root).into_iter().collect();
        if !config.restrict_to_workspace {
            warnings.extend(unrestricted_warnings(&root));
        }
        let (state, state_warnings) =
            state_dir::choose(&root_dir, &root, config.state_dir.as_deref())?;
        warnings.extend(state_warnings);
        let protects = !config.restrict_to_workspace || contains_protected(&root);
        let root = Root {
            dir: root_dir,
            kernel_path: root.clone(),
            path: root,
            configured: configured_root,
            restrict: config.restrict_to_workspace,
            protects,
            state,
            records_dir: OnceLock::new(),
            state_pinned: None,
        };
        // Before anything else touches the workspace: undo or finish the commits a crash
        // interrupted. Only then the sweep of temp leftovers, which would otherwise take the
        // backups a rollback needs; the temp names of journals that could not be recovered
        // (retried at the next open) are kept too, and nothing is swept while a journal could
        // not even be read.
        let recovery = recover_all(&root, config.limits.max_write_bytes);
        warnings.extend(recovery.warnings);
        // Then the directories of calls killed part-way, once no journal needs them.
        warnings.extend(crate::sandbox::new_dirs::recover_all(&root));
        if !recovery.names_unknown {
            sweep(&root.dir, &root.path, &recovery.unrecovered);
        }
        let (backend, session): (Box<dyn Backend>, _) = match config.session_name() {
            None => (Box::new(Host { root }), None),
            Some(name) => {
                let (overlay, overlay_warnings) = open_overlay(
                    root,
                    name,
                    config.limits.max_write_bytes,
                    config.session_refresh_ms,
                )?;
                warnings.extend(overlay_warnings);
                let view = overlay.view.clone();
                (Box::new(overlay), Some(view))
            }
        };
        let ws = Workspace {
            backend,
            limits: config.limits,
            policy,
            slots: Slots::default(),
            session,
        };
        Ok((ws, warnings))
    }

    pub fn root(&self) -> &Path {
        &self.backend.root().path
    }

    /// The backend's root, for the unit tests of the layers below.
    #[cfg(test)]
    pub fn test_root(&self) -> &Root {
        self.backend.root()
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn restricts_to_workspace(&self) -> bool {
        self.backend.root().restrict
    }

    /// The effective policy (defaults filled in, the audit log's path absolute).
    pub fn policy(&self) -> &crate::guard::policy::PolicyConfig {
        self.policy.config()
    }

    /// This workspace's value of type `T`, made by `make` the first time it is asked for.
    pub fn slot<T: Any + Send + Sync>(&self, make: impl FnOnce() -> T) -> Arc<T> {
        // A poisoned lock only means a `make` panicked; the list itself is whole.
        let mut slots = self.slots.0.lock().unwrap_or_else(|p| p.into_inner());
        for slot in slots.iter() {
            if let Ok(found) = Arc::clone(slot).downcast::<T>() {
                return found;
            }
        }
        let made = Arc::new(make());
        slots.push(made.clone());
        made
    }

    /// The state directory's path, when the workspace has one.
    pub fn state_path(&self) -> Option<&Path> {
        match &self.backend.root().state {
            crate::sandbox::state_dir::StateDir::At(p) => Some(p),
            crate::sandbox::state_dir::StateDir::Unavailable(_) => None,
        }
    }

    /// The directory `path` names, for a program to run in: resolved beneath the root with
    /// the policy as gate like every tool path, then given as the absolute real path of what
    /// was resolved (a program takes a path, not a handle). In overlay mode that path is
    /// the base's, and the program runs on a view mounted over it in its own namespaces
    /// (`exec::overlay`), where it leads to the session's directory. Refused when it is not a
    /// directory or lies outside the workspace (unrestricted mode included): programs are
    /// confined to the workspace.
    pub fn program_dir(&self, path: &ToolPath, ctl: &CallControl) -> Result<PathBuf> {
        let located = self.resolve(path, Access::READ, false, ctl)?;
        if located.leaf.is_some() {
            match &located.leaf_meta {
                Some(meta) if meta.is_dir() => {}
                Some(_) => {
                    return Err(WsfsError::new(
                        ErrorCode::NotADirectory,
                        format!("{} is not a directory", path.display),
                    ))
                }
                None => {
                    return Err(WsfsError::new(
                        ErrorCode::PathNotFound,
                        format!("{} does not exist", path.display),
                    ))
                }
            }
        }
        let rel = self.program_rel(path, &located)?;
        Ok(self.backend.root().path.join(rel))
    }

    /// The workspace-relative real path `path` resolves to for `access` (so `deny_write`'s
    /// `.git/**` refuses a path into `.git` as it does for the file tools), for a program's
    /// argument. A missing leaf is fine (a deleted file to stage).
    pub fn program_path(
        &self,
        path: &ToolPath,
        access: Access,
        ctl: &CallControl,
    ) -> Result<PathBuf> {
        let located = self.resolve(path, access, false, ctl)?;
        self.program_rel(path, &located)
    }

    fn program_rel(&self, path: &ToolPath, located: &Located<'_>) -> Result<PathBuf> {
        let (rel, inside) = self
            .backend
            .root()
            .path_of(&located.dir, located.leaf.as_deref())?;
        if !inside {
            return Err(WsfsError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{} is outside the workspace, and programs run only inside it",
                    path.display
                ),
            ));
        }
        Ok(rel)
    }

    /// Validates a tool path and decides where it resolves from (see `Root::parse_path`).
    pub fn parse_path(&self, raw: &str) -> Result<ToolPath> {
        self.backend.root().parse_path(raw)
    }

    /// Resolves `path` for `access`, following a symlinked leaf (see `Root::resolve`).
    pub fn resolve(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        self.backend
            .resolve(path, access, create_parents, &self.policy, ctl)
    }

    /// Resolves the entry `path` names itself, never following its leaf (`move_file`,
    /// `delete_file`).
    pub fn resolve_entry(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        self.backend
            .resolve_entry(path, access, create_parents, &self.policy, ctl)
    }

    /// Resolves `path` for describing it, not following its leaf (`get_path_info`).
    pub fn resolve_no_follow(&self, path: &ToolPath, ctl: &CallControl) -> Result<Located<'_>> {
        self.backend.resolve_info(path, &self.policy, ctl)
    }

    /// Where the symlink `located` names leads, when it stays inside the workspace.
    pub fn link_target(&self, located: &Located<'_>, ctl: &CallControl) -> Option<String> {
        self.backend.link_target(located, &self.policy, ctl)
    }

    /// Removes the directories `located`'s resolution created (a call that failed).
    pub fn undo_created(&self, located: Located<'_>) {
        self.backend.undo_created(located)
    }

    /// What a listing or walk of `start` leaves out (see `WalkFilter::new`).
    pub fn walk_filter(
        &self,
        start: &DirRef<'_>,
        known: StartPaths,
    ) -> Result<Option<WalkFilter<'_>>> {
        self.backend.walk_filter(&self.policy, start, known)
    }

    /// Commits `ops` together (see `commit`).
    pub fn commit(
        &self,
        anchor: Anchor,
        ops: Vec<Op<'_>>,
        ctl: &CallControl,
    ) -> std::result::Result<Committed, CommitError> {
        self.backend.commit(&self.policy, anchor, ops, ctl)
    }

    /// The resolved workspace-relative path of `dir` (plus `leaf`).
    pub fn resolved_rel(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<PathBuf> {
        self.backend.rel_of(dir, leaf)
    }

    /// The resolved path as shown (for the audit log); `fallback` if it cannot be known.
    pub fn shown_resolved(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>, fallback: &str) -> String {
        self.backend.shown_of(dir, leaf, fallback)
    }

    /// How the audit log names a directory a call created.
    pub fn shown_anchored(&self, anchor: Anchor, rel: &Path) -> String {
        self.backend.shown_anchored(anchor, rel)
    }

    /// Opens the directory `name` in `dir`, not following a symlink (`ENOTDIR` otherwise).
    pub fn open_child_dir<'a>(&'a self, dir: &Dir, name: &OsStr) -> io::Result<DirRef<'a>> {
        self.backend.open_child_dir(dir, name)
    }

    /// Opens the directory `rel` below the root, for suggestions (see `Backend::open_at_root`).
    pub fn open_at_root(&self, rel: &Path) -> io::Result<DirRef<'_>> {
        self.backend.open_at_root(rel)
    }

    /// The parent of `dir`, for identity checks.
    pub fn parent_dir(&self, dir: &Dir) -> io::Result<Dir> {
        self.backend.parent_dir(dir)
    }

    /// The root directory's identity.
    pub fn root_id(&self) -> io::Result<FileId> {
        self.backend.root_id()
    }

    /// Whether `name` exists in `dir` (not followed).
    pub fn has_entry(&self, dir: &Dir, name: &OsStr) -> bool {
        self.backend.has_entry(dir, name)
    }

    /// Whether `rel` below the root exists.
    pub fn exists(&self, rel: &Path) -> bool {
        self.backend.exists(rel)
    }

    /// Lists one directory level (see `Backend::list`).
    pub fn list(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        mut visit: impl FnMut(Listed<'_>) -> Result<bool>,
    ) -> Result<()> {
        self.backend.list(dir, display, ctl, &mut visit)
    }

    /// Walks the tree below `dir` (see `Backend::walk`).
    pub fn walk(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        ctl: &CallControl,
        mut visit: impl FnMut(&WalkEntry<'_>) -> Result<Flow>,
    ) -> Result<Walked> {
        self.backend
            .walk(dir, display, opts, false, ctl, &mut visit)
    }

    /// Walks everything below `dir`, leaving nothing out (see `Backend::walk`).
    pub fn walk_all(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        mut visit: impl FnMut(&WalkEntry<'_>) -> Result<Flow>,
    ) -> Result<Walked> {
        let opts = WalkOptions::new(true, false);
        self.backend
            .walk(dir, display, &opts, true, ctl, &mut visit)
    }

    /// Lists the tree below `dir` (see `Backend::list_tree`).
    pub fn list_tree(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        cap: usize,
        ctl: &CallControl,
    ) -> Result<Tree> {
        self.backend.list_tree(dir, display, opts, cap, ctl)
    }

    /// Removes the file or symlink `name` in `dir`.
    pub fn remove_file(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        self.backend.remove_file(dir, name)
    }

    /// Removes the directory `name` in `dir` if it is empty (a Wasm tool's `rmdir`).
    pub fn remove_empty_dir(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        self.backend.remove_empty_dir(dir, name)
    }

    /// Removes the directory `name` in `parent` and everything in it (see `Backend::remove_tree`).
    pub fn remove_tree(
        &self,
        parent: &Dir,
        name: &OsStr,
        id: FileId,
        opts: &RemoveOptions<'_>,
        ctl: &CallControl,
    ) -> io::Result<Removal> {
        self.backend.remove_tree(parent, name, id, opts, ctl)
    }

    /// Renames `from` in `from_dir` to `to` in `to_dir` in one step.
    pub fn rename(
        &self,
        from_dir: &Dir,
        from: &OsStr,
        to_dir: &Dir,
        to: &OsStr,
        flags: RenameFlags,
    ) -> rustix::io::Result<()> {
        self.backend.rename(from_dir, from, to_dir, to, flags)
    }

    /// Creates the directory `name` in `dir`.
    pub fn make_dir(&self, dir: &Dir, name: &OsStr) -> io::Result<()> {
        self.backend.create_dir(dir, name)
    }

    /// Whether a change below a directory must ask `refuses_inside` about each entry.
    pub fn checks_inside(&self, access: Access) -> bool {
        self.policy.checks_inside(access)
    }

    /// What refuses `access` to an entry a recursive change reaches, if anything.
    pub fn refuses_inside(
        &self,
        rel: &Path,
        is_dir: bool,
        access: Access,
        ctl: &CallControl,
    ) -> Option<String> {
        self.policy.refuses_inside(rel, is_dir, access, ctl)
    }

    /// Whether the directory `rel` is denied to reading (see `Policy::dir_denied`).
    pub fn dir_denied(&self, rel: &Path, ctl: &CallControl) -> bool {
        self.policy.dir_denied(rel, ctl)
    }
}

/// Removes crash leftovers (see `tempfile`), except the names in `keep`. A root of `/` or
/// the home directory gets only its own directory swept, so opening it never walks the disk.
fn sweep(root_dir: &Dir, root: &Path, keep: &HashSet<OsString>) {
    let limits = if is_broad_root(root) {
        SweepLimits {
            max_depth: 0,
            ..SWEEP_LIMITS
        }
    } else {
        SWEEP_LIMITS
    };
    let report = sweep_leftovers(root_dir, limits, keep);
    tracing::debug!(
        target: "wsfs",
        removed = report.removed,
        stopped_early = report.stopped_early,
        "swept leftover temp files"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ws(dir: &Path, restrict: bool) -> Workspace {
        let config = Config {
            restrict_to_workspace: restrict,
            ..ws_config(dir)
        };
        Workspace::open(&config).unwrap().0
    }

    fn ws_config(dir: &Path) -> Config {
        Config {
            root: dir.to_string_lossy().into_owned(),
            restrict_to_workspace: true,
            limits: Limits::default(),
            state_dir: None,
            policy: Default::default(),
            profile: "wsfs".into(),
            wasm_tools: Vec::new(),
            wasm_policy: Default::default(),
            mode: Default::default(),
            session: None,
            session_refresh_ms: None,
        }
    }

    #[test]
    fn absolute_paths_must_be_inside_component_wise() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("ws");
        let w = ws(&root, true);
        let inside = w
            .parse_path(&format!("{}/a/b.txt", root.display()))
            .unwrap();
        assert_eq!(inside.rel, PathBuf::from("a/b.txt"));
        assert_eq!(inside.display, "a/b.txt");
        let evil = w
            .parse_path(&format!("{}-evil/x", root.display()))
            .unwrap_err();
        assert_eq!(evil.code, ErrorCode::OutsideWorkspace);
        assert_eq!(
            w.parse_path("/etc/passwd").unwrap_err().code,
            ErrorCode::OutsideWorkspace
        );
    }

    #[test]
    fn rejects_bad_strings() {
        let tmp = tempfile::tempdir().unwrap();
        let w = ws(tmp.path(), true);
        assert_eq!(w.parse_path("").unwrap_err().code, ErrorCode::InvalidPath);
        assert_eq!(
            w.parse_path("a\0b").unwrap_err().code,
            ErrorCode::InvalidPath
        );
        let long = "a/".repeat(3000);
        assert_eq!(
            w.parse_path(&long).unwrap_err().code,
            ErrorCode::InvalidPath
        );
    }

    #[test]
    fn relative_forms() {
        let tmp = tempfile::tempdir().unwrap();
        let w = ws(tmp.path(), true);
        let p = w.parse_path("./a/./b/").unwrap();
        assert_eq!(p.rel, PathBuf::from("a/b"));
        assert!(p.trailing_slash);
        assert_eq!(w.parse_path(".").unwrap().display, ".");
        // `~` and `$HOME` are literal names.
        assert_eq!(w.parse_path("~/x").unwrap().rel, PathBuf::from("~/x"));
        assert_eq!(w.parse_path("$HOME").unwrap().rel, PathBuf::from("$HOME"));
        // `..` is kept for the kernel, which refuses it at the root.
        assert_eq!(w.parse_path("../x").unwrap().rel, PathBuf::from("../x"));
    }

    /// A gate that lets everything and notes each `check_new_dir`: the path, and whether
    /// the workspace already showed it then.
    struct NewDirs<'w> {
        ws: &'w Workspace,
        seen: std::cell::RefCell<Vec<(PathBuf, bool)>>,
    }

    impl crate::sandbox::gate::Gate for NewDirs<'_> {
        fn wants_path(&self, _: Access) -> bool {
            false
        }
        fn check(
            &self,
            _: &crate::sandbox::gate::Reached<'_>,
            _: Access,
            _: &str,
            _: &CallControl,
        ) -> Result<()> {
            Ok(())
        }
        fn check_new_dir(
            &self,
            at: &crate::sandbox::gate::Reached<'_>,
            _: &str,
            _: &CallControl,
        ) -> Result<()> {
            let (rel, inside) = at.path()?;
            assert!(inside, "{}", rel.display());
            let shown = self.ws.backend.exists(rel);
            self.seen.borrow_mut().push((rel.to_path_buf(), shown));
            Ok(())
        }
        fn walk_needs(&self) -> crate::sandbox::gate::WalkNeeds {
            Default::default()
        }
        fn walk_skip(
            &self,
            _: &Path,
            _: bool,
            _: Option<(u64, u64)>,
        ) -> Option<crate::sandbox::gate::Skipped> {
            None
        }
    }

    /// The backend contract (docs/ARCHITECTURE.md): a resolution that makes missing parents
    /// asks `gate.check_new_dir` about each, outermost first, by its workspace-relative
    /// path, while it does not exist yet. The overlay backend touches each new directory
    /// there, so its before-image is what the session had (never the directory the call
    /// made): every backend must keep this order.
    #[test]
    fn every_backend_asks_about_each_new_directory_before_making_it() {
        use crate::config::Mode;
        for mode in [Mode::Host, Mode::Overlay] {
            let tmp = tempfile::tempdir().unwrap();
            let config = Config {
                mode,
                state_dir: Some(tmp.path().join("state").to_string_lossy().into_owned()),
                ..ws_config(&tmp.path().join("ws"))
            };
            let w = Workspace::open(&config).unwrap().0;
            let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
            for (path, entry, made) in [
                ("a/b/c/x.txt", false, &["a", "a/b", "a/b/c"][..]),
                ("a/d/y", true, &["a/d"][..]),
            ] {
                let gate = NewDirs {
                    ws: &w,
                    seen: Default::default(),
                };
                let p = w.parse_path(path).unwrap();
                let located = match entry {
                    false => w.backend.resolve(&p, Access::WRITE, true, &gate, &ctl),
                    true => w
                        .backend
                        .resolve_entry(&p, Access::WRITE, true, &gate, &ctl),
                }
                .unwrap();
                let expected: Vec<(PathBuf, bool)> =
                    made.iter().map(|m| (PathBuf::from(m), false)).collect();
                assert_eq!(*gate.seen.borrow(), expected, "{mode:?} {path}");
                assert_eq!(located.created.len(), made.len(), "{mode:?} {path}");
                for m in made {
                    assert!(w.backend.exists(Path::new(m)), "{mode:?} {m}");
                }
            }
        }
    }

    #[test]
    fn host_mode_keeps_relative_display_inside_root() {
        let tmp = tempfile::tempdir().unwrap();
        let w = ws(tmp.path(), false);
        let p = w.parse_path("a.txt").unwrap();
        assert_eq!(p.anchor, Anchor::Host);
        assert_eq!(p.display, "a.txt");
        assert_eq!(Path::new("/").join(&p.rel), w.root().join("a.txt"));
        let out = w.parse_path("/var/tmp/x").unwrap();
        assert_eq!(out.display, "/var/tmp/x");
    }
}
