//! An open workspace: the root's directory handle, its limits, and how tool paths are parsed.

use crate::commit::journal::recover_all;
use crate::config::{Config, Limits};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::policy::Policy;
use crate::names::{self, display_path};
use crate::paths::{absolute_root, broad_root_warning, is_broad_root};
use crate::sandbox::host::unrestricted_warnings;
use crate::sandbox::state_dir::{self, StateDir};
use crate::sandbox::tempfile::{sweep_leftovers, SweepLimits, SWEEP_LIMITS};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::borrow::Cow;
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Longest tool path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// An open workspace. Every filesystem access of a confined workspace goes through `root_dir`.
#[derive(Debug)]
pub struct Workspace {
    pub(crate) root_dir: Dir,
    /// The root with its symlinks resolved at open.
    pub(crate) root: PathBuf,
    /// The root as configured (absolute, `~` expanded), accepted as a prefix of absolute paths.
    pub(crate) configured_root: PathBuf,
    pub(crate) restrict: bool,
    pub(crate) limits: Limits,
    /// Where the journals of multi-file commits live, outside the workspace.
    pub(crate) state: StateDir,
    /// The directory holding the state directories, where calls that make directories keep
    /// their record (`commit::new_dirs`): opened, and checked to be outside, once.
    pub(crate) records_dir: OnceLock<Arc<Dir>>,
    /// Deny rules, read-only mode and the audit log (see `policy`).
    pub(crate) policy: Policy,
}

/// Where a tool path is resolved from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Anchor {
    /// Beneath the workspace's directory handle: the kernel refuses every escape.
    Root,
    /// From `/`, for `restrict_to_workspace=false`; system locations are refused.
    Host,
}

/// A validated tool path, not yet resolved.
#[derive(Debug, Clone)]
pub(crate) struct ToolPath {
    pub anchor: Anchor,
    /// Relative to the anchor: the workspace root, or `/`.
    pub rel: PathBuf,
    /// Shown to the model: workspace-relative wherever representable.
    pub display: String,
    pub trailing_slash: bool,
}

impl ToolPath {
    /// File tools refuse a trailing `/`: it names a directory.
    pub fn refuse_trailing_slash(&self) -> Result<()> {
        if self.trailing_slash {
            return Err(WsfsError::new(
                ErrorCode::NotAFile,
                format!(
                    "{}/ ends with '/', which names a directory; drop the trailing '/' to name a file",
                    self.display.trim_end_matches('/')
                ),
            ));
        }
        Ok(())
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
        let ws = Workspace {
            root_dir,
            root,
            configured_root,
            restrict: config.restrict_to_workspace,
            limits: config.limits,
            state,
            records_dir: OnceLock::new(),
            policy,
        };
        // Before anything else touches the workspace: undo or finish the commits a crash
        // interrupted. Only then the sweep of temp leftovers, which would otherwise take the
        // backups a rollback needs; the temp names of journals that could not be recovered
        // (retried at the next open) are kept too, and nothing is swept while a journal could
        // not even be read.
        let recovery = recover_all(&ws);
        warnings.extend(recovery.warnings);
        // Then the directories of calls killed part-way, once no journal needs them.
        warnings.extend(crate::sandbox::new_dirs::recover_all(&ws));
        if !recovery.names_unknown {
            sweep(&ws.root_dir, &ws.root, &recovery.unrecovered);
        }
        Ok((ws, warnings))
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn restricts_to_workspace(&self) -> bool {
        self.restrict
    }

    /// The effective policy (defaults filled in, the audit log's path absolute).
    pub fn policy(&self) -> &crate::guard::policy::PolicyConfig {
        self.policy.config()
    }

    /// Validates a tool path and decides where it resolves from. Confinement is not decided
    /// here: this only strips the root prefix from absolute paths; the kernel does the rest.
    pub(crate) fn parse_path(&self, raw: &str) -> Result<ToolPath> {
        if raw.is_empty() {
            return Err(WsfsError::new(
                ErrorCode::InvalidPath,
                "path is empty; use '.' for the workspace root or a relative path like 'src/main.go'",
            ));
        }
        if raw.len() > MAX_PATH_BYTES {
            return Err(WsfsError::new(
                ErrorCode::InvalidPath,
                format!(
                    "path is {} bytes long; the limit is {MAX_PATH_BYTES} bytes",
                    raw.len()
                ),
            ));
        }
        if raw.contains('\0') {
            return Err(WsfsError::new(
                ErrorCode::InvalidPath,
                "path contains a NUL byte",
            ));
        }
        let trailing_slash = raw.len() > 1 && raw.ends_with('/');
        let decoded = decode_path(raw)?;
        let path = decoded.as_path();
        let inside_root = if path.is_absolute() {
            self.strip_root(path)
        } else {
            Some(clean_relative(path))
        };
        match (self.restrict, inside_root) {
            (true, Some(rel)) => Ok(ToolPath {
                anchor: Anchor::Root,
                display: display_path(&rel),
                rel,
                trailing_slash,
            }),
            (true, None) => Err(WsfsError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{raw} is outside the workspace; use a path relative to the workspace root"
                ),
            )),
            (false, inside) => {
                let absolute = match &inside {
                    Some(rel) => self.root.join(rel),
                    None => path.to_path_buf(),
                };
                let display = match inside {
                    Some(rel) if !starts_with_parent(&rel) => display_path(&rel),
                    _ => display_path(&absolute),
                };
                Ok(ToolPath {
                    anchor: Anchor::Host,
                    rel: absolute
                        .strip_prefix("/")
                        .unwrap_or(&absolute)
                        .to_path_buf(),
                    display,
                    trailing_slash,
                })
            }
        }
    }

    /// The part of an absolute path below the root, compared component by component, so
    /// `/x/ws-evil` is not inside `/x/ws`.
    fn strip_root(&self, path: &Path) -> Option<PathBuf> {
        [&self.root, &self.configured_root]
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .map(clean_relative)
    }
}

/// Drops `.` components; keeps `..` for the kernel to resolve against real directories.
fn clean_relative(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| !matches!(c, Component::CurDir | Component::RootDir))
        .collect()
}

fn starts_with_parent(rel: &Path) -> bool {
    rel.components().any(|c| c == Component::ParentDir)
}

/// The tool path with each name read back from its shown form (see `names`): a name that is
/// not UTF-8 is given as `\xNN` escapes.
fn decode_path(raw: &str) -> Result<PathBuf> {
    let mut out = PathBuf::new();
    for component in Path::new(raw).components() {
        let Component::Normal(name) = component else {
            out.push(component);
            continue;
        };
        let bytes = match name.to_str() {
            Some(text) => names::decode(text).map_err(|_| {
                WsfsError::new(
                    ErrorCode::InvalidPath,
                    format!(
                        "{raw}: the name {text} has \\xNN escapes for a '/' or NUL byte, which \
                         no file name can contain"
                    ),
                )
            })?,
            None => Cow::Borrowed(name.as_bytes()),
        };
        out.push(OsStr::from_bytes(&bytes));
    }
    Ok(out)
}

/// Removes crash leftovers (see `tempfile_ops`), except the names in `keep`. A root of `/` or
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
            root: dir.to_string_lossy().into_owned(),
            restrict_to_workspace: restrict,
            limits: Limits::default(),
            state_dir: None,
            policy: Default::default(),
        };
        Workspace::open(&config).unwrap().0
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

    #[test]
    fn host_mode_keeps_relative_display_inside_root() {
        let tmp = tempfile::tempdir().unwrap();
        let w = ws(tmp.path(), false);
        let p = w.parse_path("a.txt").unwrap();
        assert_eq!(p.anchor, Anchor::Host);
        assert_eq!(p.display, "a.txt");
        assert_eq!(Path::new("/").join(&p.rel), w.root.join("a.txt"));
        let out = w.parse_path("/var/tmp/x").unwrap();
        assert_eq!(out.display, "/var/tmp/x");
    }
}
