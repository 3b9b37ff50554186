//! The backend contract: every operation a tool performs on the workspace's files, and the
//! one backend that implements it today, [`Host`] (the workspace root on the host file
//! system, through [`Root`]).
//!
//! The tools never hold the root's handle, list a directory or walk a tree themselves: they
//! call the workspace's one-line facades (`crate::workspace`), which pass the policy as the
//! gate to the backend's operation. A second backend (the copy-on-write overlay of issue 20)
//! implements this trait and no tool changes. What each operation guarantees, and what a
//! backend must do to keep it, is written in docs/ARCHITECTURE.md ("The backend contract").
//!
//! Operations on a handle a resolution already returned (open the leaf for reading, lock it,
//! stage a temp file beside it and rename it over the leaf) are not here: they are the same
//! in every backend, because a resolution for writing hands back a location the backend has
//! made writable (the overlay copies it up first).

use crate::commit::{self, CommitError, Committed, Op, Scope};
use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::sandbox::create_dirs::open_parent;
use crate::sandbox::gate::{Access, Gate};
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Anchor, DirRef, Root, ToolPath};
use crate::sandbox::sys;
use crate::sandbox::walk::deny::{StartPaths, WalkFilter};
use crate::sandbox::walk::dfs;
pub use crate::sandbox::walk::dfs::{Entry, Flow, Walked};
use crate::sandbox::walk::filter::WalkOptions;
use crate::sandbox::walk::names::DIRENT_BUFFER;
use crate::sandbox::walk::remove;
pub use crate::sandbox::walk::remove::{Halt, NotRemoved, Removal, RemoveDenyHook, RemoveOptions};
use crate::sandbox::walk::tree;
pub use crate::sandbox::walk::tree::{Tree, Unlisted};
use crate::sandbox::walk::Kind;
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, RawDir, RenameFlags};
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

pub mod overlay;

/// A directory's or file's identity: (device, inode).
pub type FileId = (u64, u64);

/// Entries read from a directory between two cancellation checks: 128 of the longest names
/// fill half of `DIRENT_BUFFER`, so at most one `getdents64` call runs between two checks.
const CHECK_EVERY: u64 = 128;

/// One entry of a directory listing ([`Backend::list`]): its name, its type as the directory
/// records it (`Kind::Unknown` when the file system does not say) and its inode number.
pub struct Listed<'a> {
    pub name: &'a [u8],
    pub kind: Kind,
    pub ino: u64,
}

/// The operations a workspace backend provides. Every path is resolved beneath the backend's
/// root by handle, and every resolution asks `gate` (the policy) once, with the
/// workspace-relative path the backend computed. See docs/ARCHITECTURE.md.
pub trait Backend: std::fmt::Debug + Send + Sync {
    /// The root: its handle, real and configured paths, mode and state directory.
    fn root(&self) -> &Root;

    /// Resolves `path` for `access`, following a symlinked leaf while it stays inside,
    /// creating missing parents when `create_parents` (reading, writing, creating).
    fn resolve<'a>(
        &'a self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>>;

    /// Resolves the entry `path` names itself, never following its leaf (move, delete).
    fn resolve_entry<'a>(
        &'a self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>>;

    /// Resolves `path` for describing it (info), not following its leaf.
    fn resolve_info<'a>(
        &'a self,
        path: &ToolPath,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>>;

    /// Where the symlink `located` names leads, when that stays inside the workspace.
    fn link_target(
        &self,
        located: &Located<'_>,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Option<String>;

    /// Removes the directories `located`'s resolution created (its call failed).
    fn undo_created(&self, located: Located<'_>);

    /// Opens the directory `name` in `dir`, never following a symlink (`ENOTDIR` for
    /// anything else).
    fn open_child_dir<'a>(&'a self, dir: &Dir, name: &OsStr) -> io::Result<DirRef<'a>>;

    /// Opens the directory at `rel` below the root (symlinks followed while inside), the
    /// root itself for an empty `rel`: for suggestions only, never for a change.
    fn open_at_root(&self, rel: &Path) -> io::Result<DirRef<'_>>;

    /// The parent directory of `dir` (`..`, as an `O_PATH` handle: identities only).
    fn parent_dir(&self, dir: &Dir) -> io::Result<Dir>;

    /// The identity of the root directory.
    fn root_id(&self) -> io::Result<FileId>;

    /// Whether `name` exists in `dir` (not following it).
    fn has_entry(&self, dir: &Dir, name: &OsStr) -> bool;

    /// Whether `rel` below the root exists (symlinks followed while inside).
    fn exists(&self, rel: &Path) -> bool;

    /// Lists one directory level: `visit` is called once per entry (`.`, `..` left out) in
    /// the directory's order and returns whether to go on. The call is checked for
    /// cancellation every few entries; errors are mapped with `display`.
    fn list(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        visit: &mut dyn FnMut(Listed<'_>) -> Result<bool>,
    ) -> Result<()>;

    /// Walks the tree below `dir` depth first (see `sandbox::walk::dfs::walk`); `all` leaves
    /// nothing out (the checks of a directory move).
    fn walk(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        all: bool,
        ctl: &CallControl,
        visit: &mut dyn FnMut(&Entry<'_>) -> Result<Flow>,
    ) -> Result<Walked>;

    /// Lists the tree below `dir` breadth first, at most `cap` entries (`list_dir` depth > 1).
    fn list_tree(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        cap: usize,
        ctl: &CallControl,
    ) -> Result<Tree>;

    /// What a listing or walk of `start` leaves out for `gate` (see `WalkFilter::new`).
    fn walk_filter<'a>(
        &'a self,
        gate: &'a dyn Gate,
        start: &DirRef<'_>,
        known: StartPaths,
    ) -> Result<Option<WalkFilter<'a>>>;

    /// Removes the file (or symlink) `name` in `dir`.
    fn remove_file(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()>;

    /// Removes the directory `name` in `dir` if it is empty (`ENOTEMPTY` otherwise): a Wasm
    /// tool's `rmdir`.
    fn remove_empty_dir(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()>;

    /// Removes the directory `name` in `parent`, which must still be the directory `id`, and
    /// everything in it (see `sandbox::walk::remove::remove_tree`).
    fn remove_tree(
        &self,
        parent: &Dir,
        name: &OsStr,
        id: FileId,
        opts: &RemoveOptions<'_>,
        ctl: &CallControl,
    ) -> io::Result<Removal>;

    /// Renames `from` in `from_dir` to `to` in `to_dir`, in one step.
    fn rename(
        &self,
        from_dir: &Dir,
        from: &OsStr,
        to_dir: &Dir,
        to: &OsStr,
        flags: RenameFlags,
    ) -> rustix::io::Result<()>;

    /// Creates the directory `name` in `dir`.
    fn create_dir(&self, dir: &Dir, name: &OsStr) -> io::Result<()>;

    /// Commits `ops` together, each checked by `gate` (see `commit::commit`).
    fn commit(
        &self,
        gate: &dyn Gate,
        anchor: Anchor,
        ops: Vec<Op<'_>>,
        ctl: &CallControl,
    ) -> std::result::Result<Committed, CommitError>;

    /// The resolved workspace-relative path of `dir` (plus `leaf`).
    fn rel_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<PathBuf>;

    /// The resolved path as shown (for the audit log); `fallback` if it cannot be known.
    fn shown_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>, fallback: &str) -> String;

    /// How the audit log names a directory a call created.
    fn shown_anchored(&self, anchor: Anchor, rel: &Path) -> String;
}

/// The host backend: the workspace root is a directory of the host file system, changed in
/// place.
#[derive(Debug)]
pub struct Host {
    pub root: Root,
}

impl Backend for Host {
    fn root(&self) -> &Root {
        &self.root
    }

    fn resolve<'a>(
        &'a self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>> {
        self.root.resolve(path, access, create_parents, gate, ctl)
    }

    fn resolve_entry<'a>(
        &'a self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>> {
        self.root
            .resolve_entry(path, access, create_parents, gate, ctl)
    }

    fn resolve_info<'a>(
        &'a self,
        path: &ToolPath,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<Located<'a>> {
        self.root.resolve_no_follow(path, gate, ctl)
    }

    fn link_target(
        &self,
        located: &Located<'_>,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Option<String> {
        self.root.link_target(located, gate, ctl)
    }

    fn undo_created(&self, located: Located<'_>) {
        self.root.undo_created(located)
    }

    fn open_child_dir<'a>(&'a self, dir: &Dir, name: &OsStr) -> io::Result<DirRef<'a>> {
        use cap_fs_ext::DirExt;
        dir.open_dir_nofollow(name).map(DirRef::Opened)
    }

    fn open_at_root(&self, rel: &Path) -> io::Result<DirRef<'_>> {
        if rel.as_os_str().is_empty() {
            return Ok(DirRef::Root(&self.root.dir));
        }
        self.root.dir.open_dir(rel).map(DirRef::Opened)
    }

    fn parent_dir(&self, dir: &Dir) -> io::Result<Dir> {
        open_parent(dir)
    }

    fn root_id(&self) -> io::Result<FileId> {
        sys::identity(self.root.dir.as_fd())
    }

    fn has_entry(&self, dir: &Dir, name: &OsStr) -> bool {
        dir.symlink_metadata(name).is_ok()
    }

    fn exists(&self, rel: &Path) -> bool {
        self.root.dir.metadata(rel).is_ok()
    }

    fn list(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        visit: &mut dyn FnMut(Listed<'_>) -> Result<bool>,
    ) -> Result<()> {
        let io_err = |e: io::Error| WsfsError::from_io(&e, display);
        // The handle may be O_PATH; getdents needs the directory open for reading. Entries
        // are read straight from the kernel's buffer: a name is copied only if kept.
        let readable = sys::open_readable(dir).map_err(io_err)?;
        let mut buf = Vec::with_capacity(DIRENT_BUFFER);
        let mut entries = RawDir::new(readable, buf.spare_capacity_mut());
        let mut seen = 0u64;
        while let Some(entry) = entries.next() {
            if seen.is_multiple_of(CHECK_EVERY) {
                ctl.check()?;
            }
            seen += 1;
            let entry = entry.map_err(|e| io_err(e.into()))?;
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            let listed = Listed {
                name,
                kind: Kind::from_file_type(entry.file_type()),
                ino: entry.ino(),
            };
            if !visit(listed)? {
                break;
            }
        }
        Ok(())
    }

    fn walk(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        all: bool,
        ctl: &CallControl,
        visit: &mut dyn FnMut(&Entry<'_>) -> Result<Flow>,
    ) -> Result<Walked> {
        match all {
            true => dfs::walk_all(dir, display, ctl, visit),
            false => dfs::walk(dir, display, opts, ctl, visit),
        }
    }

    fn list_tree(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        cap: usize,
        ctl: &CallControl,
    ) -> Result<Tree> {
        tree::list_tree(dir, display, opts, cap, ctl)
    }

    fn walk_filter<'a>(
        &'a self,
        gate: &'a dyn Gate,
        start: &DirRef<'_>,
        known: StartPaths,
    ) -> Result<Option<WalkFilter<'a>>> {
        WalkFilter::new(&self.root, gate, start, known)
    }

    fn remove_file(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        rustix::fs::unlinkat(dir, name, AtFlags::empty())
    }

    fn remove_empty_dir(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
    }

    fn remove_tree(
        &self,
        parent: &Dir,
        name: &OsStr,
        id: FileId,
        opts: &RemoveOptions<'_>,
        ctl: &CallControl,
    ) -> io::Result<Removal> {
        remove::remove_tree(parent, name, id, opts, ctl)
    }

    fn rename(
        &self,
        from_dir: &Dir,
        from: &OsStr,
        to_dir: &Dir,
        to: &OsStr,
        flags: RenameFlags,
    ) -> rustix::io::Result<()> {
        rustix::fs::renameat_with(from_dir, from, to_dir, to, flags)
    }

    fn create_dir(&self, dir: &Dir, name: &OsStr) -> io::Result<()> {
        dir.create_dir(name)
    }

    fn commit(
        &self,
        gate: &dyn Gate,
        anchor: Anchor,
        ops: Vec<Op<'_>>,
        ctl: &CallControl,
    ) -> std::result::Result<Committed, CommitError> {
        let scope = Scope {
            root: &self.root,
            gate,
        };
        commit::commit(&scope, anchor, ops, ctl)
    }

    fn rel_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<PathBuf> {
        self.root.rel_of(dir, leaf)
    }

    fn shown_of(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>, fallback: &str) -> String {
        self.root.shown_of(dir, leaf, fallback)
    }

    fn shown_anchored(&self, anchor: Anchor, rel: &Path) -> String {
        self.root.shown_anchored(anchor, rel)
    }
}
