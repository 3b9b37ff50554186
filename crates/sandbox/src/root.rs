//! The workspace root: its directory handle, how it was configured, and how tool paths are
//! read against it (parsed, never compared as strings to decide what is inside).

use crate::error::{ErrorCode, Result, WsfsError};
use crate::names::{self, display_path};
use crate::proc::real_path;
use crate::state_dir::StateDir;
use cap_std::fs::Dir;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, OnceLock};

/// Longest tool path accepted, in bytes (Linux `PATH_MAX`).
pub const MAX_PATH_BYTES: usize = 4096;

/// The root of a workspace. Every file system access of a confined workspace goes through
/// `dir`; nothing here decides policy.
#[derive(Debug)]
pub struct Root {
    /// The root's directory handle.
    pub dir: Dir,
    /// The root with its symlinks resolved at open.
    pub path: PathBuf,
    /// The root's path as the kernel names its handle in `/proc/self/fd`: `path` for a
    /// directory of the host's tree, `/` for an overlay workspace's view (a mount attached
    /// nowhere, whose paths start at its own root).
    pub kernel_path: PathBuf,
    /// The root as configured (absolute, `~` expanded), accepted as a prefix of absolute paths.
    pub configured: PathBuf,
    /// `restrict_to_workspace`: paths resolve beneath `dir`; else from `/` (see `protected`).
    pub restrict: bool,
    /// The protected system locations are refused (`protected::check_host_path`): always in
    /// unrestricted mode, and in restricted mode when the root is one of them or contains one
    /// (a root of `/`), so that no root reaches them where unrestricted mode would not.
    pub protects: bool,
    /// Where the journals of multi-file commits live, outside the workspace.
    pub state: StateDir,
    /// The directory holding the state directories, where calls that make directories keep
    /// their record (`new_dirs`): opened, and checked to be outside, once.
    pub records_dir: OnceLock<Arc<Dir>>,
    /// The state directory held by handle rather than found by `state`'s path (an overlay
    /// view's, which a symlink swapped into the session's directory must not redirect): the
    /// journals and the records of new directories go there.
    pub state_pinned: Option<crate::state_dir::PinnedState>,
}

/// Where a tool path is resolved from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Anchor {
    /// Beneath the workspace's directory handle: the kernel refuses every escape.
    Root,
    /// From `/`, for `restrict_to_workspace=false`; system locations are refused.
    Host,
}

/// A validated tool path, not yet resolved.
#[derive(Debug, Clone)]
pub struct ToolPath {
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

/// A directory handle: the workspace root's own (borrowed, saving a `dup` per call on the
/// root) or one opened for this call.
#[derive(Debug)]
pub enum DirRef<'a> {
    Root(&'a Dir),
    Opened(Dir),
    /// Opened beneath the root with no symlink on the way, so its workspace-relative path is
    /// the one it was opened by: the policy need not ask the kernel (`real_path`) for it.
    Known(Dir, PathBuf),
}

impl std::ops::Deref for DirRef<'_> {
    type Target = Dir;

    fn deref(&self) -> &Dir {
        match self {
            DirRef::Root(dir) => dir,
            DirRef::Opened(dir) | DirRef::Known(dir, _) => dir,
        }
    }
}

impl Root {
    /// Validates a tool path and decides where it resolves from. Confinement is not decided
    /// here: this only strips the root prefix from absolute paths; the kernel does the rest.
    pub fn parse_path(&self, raw: &str) -> Result<ToolPath> {
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
                    Some(rel) => self.path.join(rel),
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

    /// Whether the root is an overlay session's view (a mount attached nowhere): its device
    /// number is new at every mount, so an identity recorded by an earlier open is its inode.
    pub fn is_view(&self) -> bool {
        self.kernel_path != self.path
    }

    /// The part of an absolute path below the root, compared component by component, so
    /// `/x/ws-evil` is not inside `/x/ws`.
    fn strip_root(&self, path: &Path) -> Option<PathBuf> {
        [&self.path, &self.configured]
            .iter()
            .find_map(|root| path.strip_prefix(root).ok())
            .map(clean_relative)
    }

    /// The workspace-relative path of the directory `dir` (plus `leaf`), from the real path of
    /// the open handle: what the kernel resolved, not what the model wrote. A path outside the
    /// root (unrestricted mode, or a directory moved out during the call) is given as its
    /// absolute path without the leading `/`, so unanchored rules (`.env`, `**/*.pem`) still
    /// match it. With whether the path is inside the root.
    pub fn path_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<(PathBuf, bool)> {
        let (mut rel, inside) = match dir {
            DirRef::Root(_) => (PathBuf::new(), true),
            DirRef::Known(_, rel) => (rel.clone(), true),
            DirRef::Opened(handle) => {
                let real = real_path(handle).map_err(|e| {
                    WsfsError::new(
                        ErrorCode::IoError,
                        format!(
                            "the workspace policy cannot check this path: the resolved \
                             directory is unknown ({e}; is /proc mounted?)"
                        ),
                    )
                })?;
                match real.strip_prefix(&self.kernel_path) {
                    Ok(inside) => (inside.to_path_buf(), true),
                    Err(_) => (real.strip_prefix("/").unwrap_or(&real).to_path_buf(), false),
                }
            }
        };
        if let Some(leaf) = leaf {
            rel.push(leaf);
        }
        Ok((rel, inside))
    }

    /// `path_of` without whether it is inside.
    pub fn rel_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<PathBuf> {
        self.path_of(dir, leaf).map(|(rel, _)| rel)
    }

    /// The resolved workspace-relative path as shown (for the audit log's changes); `fallback`
    /// if it cannot be known.
    pub fn shown_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>, fallback: &str) -> String {
        match self.path_of(dir, leaf) {
            Ok((rel, inside)) => shown(&rel, inside),
            Err(_) => fallback.to_string(),
        }
    }

    /// How the audit log names a directory a call created: `rel` is anchor-relative as the
    /// path named it (in unrestricted mode, relative to `/`), shown like every other path.
    pub fn shown_anchored(&self, anchor: Anchor, rel: &Path) -> String {
        match anchor {
            Anchor::Root => shown(rel, true),
            Anchor::Host => {
                let absolute = Path::new("/").join(rel);
                match absolute.strip_prefix(&self.path) {
                    Ok(inside) => shown(inside, true),
                    Err(_) => shown(rel, false),
                }
            }
        }
    }
}

/// A resolved path as the model sees paths: workspace-relative (`.` for the root), or
/// absolute outside the root.
pub fn shown(rel: &Path, inside: bool) -> String {
    match (inside, rel.as_os_str().is_empty()) {
        (true, true) => ".".to_string(),
        (true, false) => display_path(rel),
        (false, _) => display_path(&Path::new("/").join(rel)),
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
