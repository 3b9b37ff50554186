//! An open workspace: the composition of its root (the sandbox), its policy (the gate of
//! every resolution, and the audit log), its limits and, in overlay mode, its session. The
//! tools reach the file system only through its operations (`files`).

use crate::commit::journal::recover_all;
use crate::config::{Config, Limits};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::policy::Policy;
use crate::paths::{broad_root_warning, is_broad_root};
use crate::sandbox::gate::Access;
use crate::sandbox::protected::{contains_protected, unrestricted_warnings};
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Root, ToolPath};
use crate::sandbox::state_dir;
use crate::sandbox::tempfile::{sweep_leftovers, SweepLimits, SWEEP_LIMITS};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::any::Any;
use std::collections::HashSet;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

pub use crate::sandbox::walk::dfs::{Entry as WalkEntry, Flow, Walked};
pub use crate::sandbox::walk::remove::{Halt, NotRemoved, Removal, RemoveDenyHook, RemoveOptions};
pub use crate::sandbox::walk::tree::{Tree, Unlisted};
pub use files::{FileId, Listed};

/// An open workspace.
#[derive(Debug)]
pub struct Workspace {
    /// The root every path is resolved beneath (in overlay mode, the session's view).
    /// Private: the tools reach it only through the operations in `files`.
    root: Root,
    pub limits: Limits,
    /// Deny rules, read-only mode and the audit log (see `policy`).
    pub policy: Policy,
    /// State the layers above keep per workspace (see [`Workspace::slot`]).
    slots: Slots,
    /// The session, in overlay mode (see `overlay`, `session`).
    #[cfg(feature = "overlay")]
    overlay: Option<overlay::Overlay>,
}

mod files;
mod open_root;
#[cfg(feature = "overlay")]
pub mod overlay;
#[cfg(test)]
mod sandbox_tests;
#[cfg(feature = "overlay")]
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
    /// Opens the configured root (made first only with `create_root`). Returns the workspace and its warnings.
    pub fn open(config: &Config) -> Result<(Workspace, Vec<String>)> {
        config.check_mode()?;
        let (configured_root, root) = open_root::open_root(config)?;
        let shown = configured_root.display().to_string();
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
        #[cfg(feature = "overlay")]
        let (root, overlay) = match config.session_name() {
            None => (root, None),
            Some(name) => {
                let (view_root, overlay, overlay_warnings) = overlay::open::open_overlay(
                    root,
                    name,
                    config.limits.max_write_bytes,
                    config.session_refresh_ms,
                )?;
                warnings.extend(overlay_warnings);
                (view_root, Some(overlay))
            }
        };
        let ws = Workspace {
            root,
            limits: config.limits,
            policy,
            slots: Slots::default(),
            #[cfg(feature = "overlay")]
            overlay,
        };
        Ok((ws, warnings))
    }

    pub fn root(&self) -> &Path {
        &self.root.path
    }

    /// The root, for the unit tests of the layers below.
    #[cfg(test)]
    pub fn test_root(&self) -> &Root {
        &self.root
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn restricts_to_workspace(&self) -> bool {
        self.root.restrict
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
        match &self.root.state {
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
        Ok(self.root.path.join(rel))
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
        let (rel, inside) = self.root.path_of(&located.dir, located.leaf.as_deref())?;
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
        self.root.parse_path(raw)
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
    log::debug!(
        target: "wsfs",
        "swept leftover temp files: removed={} stopped_early={}",
        report.removed,
        report.stopped_early
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::root::Anchor;

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
            create_root: true,
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
            model_gateway: None,
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
            let shown = self.ws.exists(rel);
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

    /// The workspace's operations (docs/ARCHITECTURE.md): a resolution that makes missing
    /// parents asks `gate.check_new_dir` about each, outermost first, by its workspace-relative
    /// path, while it does not exist yet. Overlay mode touches each new directory
    /// there, so its before-image is what the session had (never the directory the call
    /// made): every backend must keep this order.
    #[test]
    fn every_mode_asks_about_each_new_directory_before_making_it() {
        use crate::config::Mode;
        for mode in [
            Mode::Host,
            #[cfg(feature = "overlay")]
            Mode::Overlay,
        ] {
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
                let located = w
                    .resolve_gated(&p, Access::WRITE, true, &gate, &ctl, entry)
                    .unwrap();
                let expected: Vec<(PathBuf, bool)> =
                    made.iter().map(|m| (PathBuf::from(m), false)).collect();
                assert_eq!(*gate.seen.borrow(), expected, "{mode:?} {path}");
                assert_eq!(located.created.len(), made.len(), "{mode:?} {path}");
                for m in made {
                    assert!(w.exists(Path::new(m)), "{mode:?} {m}");
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
