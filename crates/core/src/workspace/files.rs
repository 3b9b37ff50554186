//! Every operation a tool performs on the workspace's files. The tools never hold the root's
//! handle, list a directory or walk a tree themselves: they call these, and each resolution
//! asks the policy (the gate) once, with the workspace-relative path computed here.
//!
//! Host and overlay mode run the same code: in overlay mode the root is the session's view
//! (a kernel overlay mount of the base and the session's upper tree), and only what differs
//! is done differently (`super::overlay`): a resolution for writing touches the session
//! before anything changes, a commit touches each path it reaches, and a directory the base
//! has is renamed by copying it. What each operation guarantees is written in
//! docs/ARCHITECTURE.md ("The workspace's operations").
//!
//! Operations on a handle a resolution already returned (open the leaf for reading, lock it,
//! stage a temp file beside it and rename it over the leaf) are not here: they are the same
//! in both modes, because a resolution for writing hands back a location that is writable
//! (the kernel copies an overlay's file up first).

use super::Workspace;
use crate::commit::{self, CommitError, Committed, Op, Scope};
use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::sandbox::create_dirs::open_parent;
use crate::sandbox::gate::{Access, Gate};
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Anchor, DirRef, ToolPath};
use crate::sandbox::sys;
use crate::sandbox::walk::deny::{StartPaths, WalkFilter};
use crate::sandbox::walk::dfs::{self, Entry, Flow, Walked};
use crate::sandbox::walk::filter::WalkOptions;
use crate::sandbox::walk::names::DIRENT_BUFFER;
use crate::sandbox::walk::remove::{self, Removal, RemoveOptions};
use crate::sandbox::walk::tree::{self, Tree};
use crate::sandbox::walk::Kind;
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, RawDir, RenameFlags};
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

/// A directory's or file's identity: (device, inode).
pub type FileId = (u64, u64);

/// Entries read from a directory between two cancellation checks: 128 of the longest names
/// fill half of `DIRENT_BUFFER`, so at most one `getdents64` call runs between two checks.
const CHECK_EVERY: u64 = 128;

/// One entry of a directory listing ([`Workspace::list`]): its name, its type as the
/// directory records it (`Kind::Unknown` when the file system does not say) and its inode.
pub struct Listed<'a> {
    pub name: &'a [u8],
    pub kind: Kind,
    pub ino: u64,
}

impl Workspace {
    /// Resolves `path` for `access`, following a symlinked leaf while it stays inside,
    /// creating missing parents when `create_parents` (see `Root::resolve`).
    pub fn resolve(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        ctl: &CallControl,
    ) -> Result<Located<'_>> {
        self.resolve_gated(path, access, create_parents, &self.policy, ctl, false)
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
        self.resolve_gated(path, access, create_parents, &self.policy, ctl, true)
    }

    /// [`Workspace::resolve`] (or, with `entry`, [`Workspace::resolve_entry`]) with `gate` in
    /// place of the policy.
    pub(crate) fn resolve_gated(
        &self,
        path: &ToolPath,
        access: Access,
        create_parents: bool,
        gate: &dyn Gate,
        ctl: &CallControl,
        entry: bool,
    ) -> Result<Located<'_>> {
        #[cfg(feature = "overlay")]
        if let Some(overlay) = &self.overlay {
            return overlay.resolve(&self.root, path, access, create_parents, gate, ctl, entry);
        }
        match entry {
            true => self
                .root
                .resolve_entry(path, access, create_parents, gate, ctl),
            false => self.root.resolve(path, access, create_parents, gate, ctl),
        }
    }

    /// Resolves `path` for describing it, not following its leaf (`get_path_info`).
    pub fn resolve_no_follow(&self, path: &ToolPath, ctl: &CallControl) -> Result<Located<'_>> {
        self.root.resolve_no_follow(path, &self.policy, ctl)
    }

    /// Where the symlink `located` names leads, when it stays inside the workspace.
    pub fn link_target(&self, located: &Located<'_>, ctl: &CallControl) -> Option<String> {
        self.root.link_target(located, &self.policy, ctl)
    }

    /// Removes the directories `located`'s resolution created (a call that failed).
    pub fn undo_created(&self, located: Located<'_>) {
        self.root.undo_created(located)
    }

    /// What a listing or walk of `start` leaves out (see `WalkFilter::new`).
    pub fn walk_filter(
        &self,
        start: &DirRef<'_>,
        known: StartPaths,
    ) -> Result<Option<WalkFilter<'_>>> {
        WalkFilter::new(&self.root, &self.policy, start, known)
    }

    /// Commits `ops` together, each checked by the policy (see `commit::commit`).
    pub fn commit(
        &self,
        anchor: Anchor,
        ops: Vec<Op<'_>>,
        ctl: &CallControl,
    ) -> std::result::Result<Committed, CommitError> {
        #[cfg(feature = "overlay")]
        if let Some(overlay) = &self.overlay {
            let gate = overlay.commit_gate(&self.policy);
            return commit::commit(
                &Scope {
                    root: &self.root,
                    gate: &gate,
                },
                anchor,
                ops,
                ctl,
            );
        }
        let scope = Scope {
            root: &self.root,
            gate: &self.policy,
        };
        commit::commit(&scope, anchor, ops, ctl)
    }

    /// The resolved workspace-relative path of `dir` (plus `leaf`).
    pub fn resolved_rel(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>) -> Result<PathBuf> {
        self.root.rel_of(dir, leaf)
    }

    /// The resolved path as shown (for the audit log); `fallback` if it cannot be known.
    pub fn shown_resolved(&self, dir: &DirRef<'_>, leaf: Option<&OsStr>, fallback: &str) -> String {
        self.root.shown_of(dir, leaf, fallback)
    }

    /// How the audit log names a directory a call created.
    pub fn shown_anchored(&self, anchor: Anchor, rel: &Path) -> String {
        self.root.shown_anchored(anchor, rel)
    }

    /// Opens the directory `name` in `dir`, never following a symlink (`ENOTDIR` for
    /// anything else).
    pub fn open_child_dir<'a>(&'a self, dir: &Dir, name: &OsStr) -> io::Result<DirRef<'a>> {
        use cap_fs_ext::DirExt;
        dir.open_dir_nofollow(name).map(DirRef::Opened)
    }

    /// Opens the directory at `rel` below the root (symlinks followed while inside), the root
    /// itself for an empty `rel`: for suggestions only, never for a change.
    pub fn open_at_root(&self, rel: &Path) -> io::Result<DirRef<'_>> {
        if rel.as_os_str().is_empty() {
            return Ok(DirRef::Root(&self.root.dir));
        }
        self.root.dir.open_dir(rel).map(DirRef::Opened)
    }

    /// The parent directory of `dir` (`..`, as an `O_PATH` handle: identities only).
    pub fn parent_dir(&self, dir: &Dir) -> io::Result<Dir> {
        open_parent(dir)
    }

    /// The root directory's identity.
    pub fn root_id(&self) -> io::Result<FileId> {
        sys::identity(self.root.dir.as_fd())
    }

    /// Whether `name` exists in `dir` (not followed).
    pub fn has_entry(&self, dir: &Dir, name: &OsStr) -> bool {
        dir.symlink_metadata(name).is_ok()
    }

    /// Whether `rel` below the root exists (symlinks followed while inside).
    pub fn exists(&self, rel: &Path) -> bool {
        self.root.dir.metadata(rel).is_ok()
    }

    /// Lists one directory level: `visit` is called once per entry (`.`, `..` left out) in
    /// the directory's order and returns whether to go on. The call is checked for
    /// cancellation every few entries; errors are mapped with `display`.
    pub fn list(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        mut visit: impl FnMut(Listed<'_>) -> Result<bool>,
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

    /// Walks the tree below `dir` depth first (see `sandbox::walk::dfs::walk`).
    pub fn walk(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        ctl: &CallControl,
        mut visit: impl FnMut(&Entry<'_>) -> Result<Flow>,
    ) -> Result<Walked> {
        dfs::walk(dir, display, opts, ctl, &mut visit)
    }

    /// Walks everything below `dir`, leaving nothing out (the checks of a directory move).
    pub fn walk_all(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        ctl: &CallControl,
        mut visit: impl FnMut(&Entry<'_>) -> Result<Flow>,
    ) -> Result<Walked> {
        dfs::walk_all(dir, display, ctl, &mut visit)
    }

    /// Lists the tree below `dir` breadth first, at most `cap` entries (`list_dir` depth > 1).
    pub fn list_tree(
        &self,
        dir: BorrowedFd<'_>,
        display: &str,
        opts: &WalkOptions<'_>,
        cap: usize,
        ctl: &CallControl,
    ) -> Result<Tree> {
        tree::list_tree(dir, display, opts, cap, ctl)
    }

    /// Removes the file (or symlink) `name` in `dir`.
    pub fn remove_file(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        rustix::fs::unlinkat(dir, name, AtFlags::empty())
    }

    /// Removes the directory `name` in `dir` if it is empty (`ENOTEMPTY` otherwise): a Wasm
    /// tool's `rmdir`.
    pub fn remove_empty_dir(&self, dir: &Dir, name: &OsStr) -> rustix::io::Result<()> {
        rustix::fs::unlinkat(dir, name, AtFlags::REMOVEDIR)
    }

    /// Removes the directory `name` in `parent`, which must still be the directory `id`, and
    /// everything in it (see `sandbox::walk::remove::remove_tree`).
    pub fn remove_tree(
        &self,
        parent: &Dir,
        name: &OsStr,
        id: FileId,
        opts: &RemoveOptions<'_>,
        ctl: &CallControl,
    ) -> io::Result<Removal> {
        remove::remove_tree(parent, name, id, opts, ctl)
    }

    /// Renames `from` in `from_dir` to `to` in `to_dir`, in one step.
    pub fn rename(
        &self,
        from_dir: &Dir,
        from: &OsStr,
        to_dir: &Dir,
        to: &OsStr,
        flags: RenameFlags,
    ) -> rustix::io::Result<()> {
        let renamed = rustix::fs::renameat_with(from_dir, from, to_dir, to, flags);
        #[cfg(feature = "overlay")]
        if let (Some(_), Err(rustix::io::Errno::XDEV)) = (&self.overlay, renamed) {
            // overlayfs renames no directory the base has (see `overlay`).
            return super::overlay::move_dir_by_copy(from_dir, from, to_dir, to, flags);
        }
        renamed
    }

    /// Creates the directory `name` in `dir`.
    pub fn make_dir(&self, dir: &Dir, name: &OsStr) -> io::Result<()> {
        dir.create_dir(name)
    }
}
