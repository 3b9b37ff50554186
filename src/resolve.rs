//! Resolution of a tool path to a directory handle plus one leaf name.
//!
//! Confinement is the kernel's job: a confined path is only ever opened beneath the workspace's
//! directory handle (cap-std uses `openat2(RESOLVE_BENEATH | RESOLVE_NO_MAGICLINKS)`), and the
//! final step of every tool works on a single name inside an already-open directory, with
//! `O_NOFOLLOW`. A symlink in the leaf position is read and its target resolved again the same
//! way, so links are followed only while they stay beneath the root, and nothing is ever
//! checked first and opened by path afterwards.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::workspace::{Anchor, ToolPath, Workspace};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use std::ffi::OsString;
use std::io;
use std::os::fd::AsRawFd;
use std::path::{Component, Path, PathBuf};

/// Symlinks followed in the leaf position before giving up (Linux's own limit).
const MAX_SYMLINK_HOPS: usize = 40;

/// System locations refused when `restrict_to_workspace` is false.
const PROTECTED_PREFIXES: &[&str] = &[
    "/etc", "/root", "/proc", "/sys", "/dev", "/boot", "/bin", "/sbin", "/lib", "/lib64", "/usr",
];

/// A resolved path: an open directory and the name inside it (`None` for the directory itself).
#[derive(Debug)]
pub(crate) struct Located {
    pub dir: Dir,
    pub leaf: Option<OsString>,
    /// The directory, relative to the anchor (kept to resolve relative symlink targets).
    parent_rel: PathBuf,
    anchor: Anchor,
}

impl Located {
    /// The leaf name, or `not_a_file` when the path names a directory such as `.` or `a/..`.
    pub fn leaf_name(&self, display: &str) -> Result<&OsString> {
        self.leaf.as_ref().ok_or_else(|| {
            WsfsError::new(
                ErrorCode::NotAFile,
                format!("{display} is a directory, not a file; use list_dir"),
            )
        })
    }
}

impl Workspace {
    /// Resolves `path` to its directory and leaf, following a symlinked leaf while it stays
    /// allowed. The leaf need not exist. With `create_parents`, missing directories are made.
    pub(crate) fn resolve(
        &self,
        path: &ToolPath,
        create_parents: bool,
        ctl: &CallControl,
    ) -> Result<Located> {
        let mut rel = path.rel.clone();
        for _ in 0..MAX_SYMLINK_HOPS {
            ctl.check()?;
            let located = self.locate(path.anchor, &rel, create_parents, &path.display)?;
            let Some(leaf) = &located.leaf else {
                return Ok(located);
            };
            match located.dir.symlink_metadata(leaf) {
                Ok(meta) if meta.file_type().is_symlink() => {
                    let target = located
                        .dir
                        .read_link_contents(leaf)
                        .map_err(|e| WsfsError::from_io(&e, &path.display))?;
                    rel = self.symlink_target(&located, &target, &path.display)?;
                }
                Ok(_) => return Ok(located),
                Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(located),
                Err(e) => return Err(WsfsError::from_io(&e, &path.display)),
            }
        }
        Err(WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{}: too many levels of symbolic links", path.display),
        ))
    }

    /// Opens the directory part of `rel` and splits off the leaf.
    fn locate(
        &self,
        anchor: Anchor,
        rel: &Path,
        create_parents: bool,
        display: &str,
    ) -> Result<Located> {
        let (parent_rel, leaf) = split_leaf(rel);
        let opened = self.open_anchored_dir(anchor, &parent_rel);
        let dir = match opened {
            Err(e) if create_parents && e.kind() == io::ErrorKind::NotFound => {
                self.create_dirs(anchor, &parent_rel, display)?;
                self.open_anchored_dir(anchor, &parent_rel)
            }
            other => other,
        }
        .map_err(|e| WsfsError::from_io(&e, display))?;
        if anchor == Anchor::Host {
            let real = real_path(&dir).map_err(|e| WsfsError::from_io(&e, display))?;
            let full = match &leaf {
                Some(name) => real.join(name),
                None => real,
            };
            self.check_host_path(&full, display)?;
        }
        Ok(Located {
            dir,
            leaf,
            parent_rel,
            anchor,
        })
    }

    fn open_anchored_dir(&self, anchor: Anchor, rel: &Path) -> io::Result<Dir> {
        match anchor {
            Anchor::Root if rel.as_os_str().is_empty() => self.root_dir.try_clone(),
            Anchor::Root => self.root_dir.open_dir(rel),
            Anchor::Host => Dir::open_ambient_dir(Path::new("/").join(rel), ambient_authority()),
        }
    }

    fn create_dirs(&self, anchor: Anchor, rel: &Path, display: &str) -> Result<()> {
        match anchor {
            Anchor::Root => self
                .root_dir
                .create_dir_all(rel)
                .map_err(|e| WsfsError::from_io(&e, display)),
            Anchor::Host => self.create_host_dirs(rel, display),
        }
    }

    /// Creates missing directories one at a time, each inside a handle whose real path was
    /// checked first, so a symlink cannot steer creation into a protected location.
    fn create_host_dirs(&self, rel: &Path, display: &str) -> Result<()> {
        let io_err = |e: io::Error| WsfsError::from_io(&e, display);
        let mut dir = Dir::open_ambient_dir("/", ambient_authority()).map_err(io_err)?;
        for component in rel.components() {
            let name = match component {
                Component::Normal(name) => name,
                Component::ParentDir => {
                    // Not confinement (this is the unrestricted mode): step up through the
                    // handle's real path, as the kernel would.
                    let real = real_path(&dir).map_err(io_err)?;
                    let up = real.parent().unwrap_or(Path::new("/"));
                    dir = Dir::open_ambient_dir(up, ambient_authority()).map_err(io_err)?;
                    continue;
                }
                _ => continue,
            };
            match dir.open_dir(name) {
                Ok(next) => dir = next,
                Err(e) if e.kind() == io::ErrorKind::NotFound => {
                    let real = real_path(&dir).map_err(io_err)?;
                    self.check_host_path(&real.join(name), display)?;
                    match dir.create_dir(name) {
                        Ok(()) => {}
                        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                        Err(e) => return Err(io_err(e)),
                    }
                    dir = dir.open_dir(name).map_err(io_err)?;
                }
                Err(e) => return Err(io_err(e)),
            }
        }
        Ok(())
    }

    /// The anchor-relative path a symlink in the leaf position points to.
    fn symlink_target(&self, located: &Located, target: &Path, display: &str) -> Result<PathBuf> {
        if !target.is_absolute() {
            return Ok(located.parent_rel.join(target));
        }
        match located.anchor {
            Anchor::Host => Ok(target.strip_prefix("/").unwrap_or(target).to_path_buf()),
            // Like Go's os.Root: an absolute target is never followed, even into the root,
            // because the kernel's beneath-resolution refuses it in every other position too.
            Anchor::Root => Err(WsfsError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{display} is a symlink with an absolute target; only relative symlinks that \
                     stay inside the workspace are followed"
                ),
            )),
        }
    }

    /// Refuses protected system locations in unrestricted mode; the workspace itself is
    /// always allowed (it may live under `/root`).
    pub(crate) fn check_host_path(&self, real: &Path, display: &str) -> Result<()> {
        if real.starts_with(&self.root) {
            return Ok(());
        }
        if PROTECTED_PREFIXES.iter().any(|p| real.starts_with(p)) {
            return Err(WsfsError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "{display} resolves to {}, a protected system location",
                    real.display()
                ),
            ));
        }
        Ok(())
    }
}

/// Splits `rel` into its directory part and last name; `.`/`..` endings name directories.
fn split_leaf(rel: &Path) -> (PathBuf, Option<OsString>) {
    match rel.components().next_back() {
        Some(Component::Normal(name)) => {
            let parent = rel.parent().map(Path::to_path_buf).unwrap_or_default();
            (parent, Some(name.to_os_string()))
        }
        _ => (rel.to_path_buf(), None),
    }
}

/// The path the kernel has for an open handle. Used only to refuse protected locations in
/// unrestricted mode, after opening, so there is no window between check and use.
pub(crate) fn real_path(handle: &impl AsRawFd) -> io::Result<PathBuf> {
    std::fs::read_link(format!("/proc/self/fd/{}", handle.as_raw_fd()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_leaf_forms() {
        assert_eq!(
            split_leaf(Path::new("a/b.txt")),
            (PathBuf::from("a"), Some(OsString::from("b.txt")))
        );
        assert_eq!(
            split_leaf(Path::new("b.txt")),
            (PathBuf::new(), Some(OsString::from("b.txt")))
        );
        assert_eq!(split_leaf(Path::new("a/..")), (PathBuf::from("a/.."), None));
        assert_eq!(split_leaf(Path::new("")), (PathBuf::new(), None));
    }
}
