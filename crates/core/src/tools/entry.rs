//! The entry a change tool (`move_file`, `delete_file`) works on: one name inside a directory
//! opened beneath the workspace root, never followed (a symlink is the entry itself), never the
//! workspace root nor, in unrestricted mode, a directory holding it. Entries are identified by
//! device and inode, so later steps can tell them from a replacement; nothing here compares
//! path strings.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::names::display_path;
use crate::sandbox::fileops::{lock_current, open_error, open_leaf_read, LockedFile};
use crate::sandbox::gate::Access;
use crate::sandbox::resolve::Located;
use crate::sandbox::root::{Anchor, DirRef, ToolPath};
use crate::sandbox::sys;
use crate::tools::kind::FileKind;
use crate::workspace::Workspace;
use cap_std::fs::{Dir, Metadata, MetadataExt};
use std::ffi::OsString;
use std::io;
use std::os::fd::AsFd;
use std::path::Path;

/// Device and inode.
pub type FileId = (u64, u64);

/// Steps up through `..` before giving up on finding an ancestor (deeper than any real tree:
/// a path is at most 4096 bytes, 2048 components).
const MAX_ANCESTORS: usize = 4096;

/// An existing entry: its directory, its name there and its own metadata (`lstat`).
pub struct Entry<'a> {
    pub located: Located<'a>,
    pub leaf: OsString,
    pub meta: Metadata,
}

impl Entry<'_> {
    pub fn id(&self) -> FileId {
        (self.meta.dev(), self.meta.ino())
    }

    pub fn is_dir(&self) -> bool {
        self.meta.is_dir()
    }

    pub fn dir(&self) -> &Dir {
        &self.located.dir
    }
}

/// Resolves `path` to an existing entry for `action` ("move", "delete"). Refuses the
/// workspace root in every form (`.`, `a/..`, its absolute path), a path ending in `..`, a
/// missing name, a trailing `/` on something that is not a directory and, in unrestricted
/// mode, a directory that holds the workspace root.
pub fn existing_entry<'a>(
    ws: &'a Workspace,
    path: &ToolPath,
    access: Access,
    action: &str,
    ctl: &CallControl,
) -> Result<Entry<'a>> {
    let display = &path.display;
    let mut located = ws.resolve_entry(path, access, false, ctl)?;
    let Some(leaf) = located.leaf.clone() else {
        return Err(unnamed(ws, &located.dir, display, action));
    };
    let Some(meta) = located.leaf_meta.take() else {
        return Err(WsfsError::new(
            ErrorCode::PathNotFound,
            format!("{display} does not exist; use list_dir to see what exists"),
        ));
    };
    if path.trailing_slash && !meta.is_dir() {
        return Err(WsfsError::new(
            ErrorCode::NotADirectory,
            format!(
                "{}/ ends with '/', which names a directory, but it is {}; drop the '/'",
                display.trim_end_matches('/'),
                FileKind::of(&meta).phrase()
            ),
        ));
    }
    let entry = Entry {
        located,
        leaf,
        meta,
    };
    if entry.is_dir() {
        let root = root_id(ws, display)?;
        let holds_root = entry.id() == root
            || (path.anchor == Anchor::Host
                && is_at_or_above(ws, &*root_handle(ws, display)?, entry.id(), None, ctl)?);
        if holds_root {
            return Err(is_root(display, action, entry.id() != root));
        }
    }
    Ok(entry)
}

/// The error for a path with no last name: the root itself (`.`, `a/..`), or another
/// directory named through `..`.
pub fn unnamed(ws: &Workspace, dir: &Dir, display: &str, action: &str) -> WsfsError {
    let id = sys::identity(dir.as_fd()).ok();
    if id.is_some() && id == ws.root_id().ok() {
        return is_root(display, action, false);
    }
    WsfsError::new(
        ErrorCode::InvalidPath,
        format!(
            "{display} ends with '..'; name the directory by its own path (without '..') to \
             {action} it"
        ),
    )
}

fn is_root(display: &str, action: &str, ancestor: bool) -> WsfsError {
    let what = if ancestor {
        "holds the workspace root"
    } else {
        "is the workspace root"
    };
    WsfsError::new(
        ErrorCode::InvalidPath,
        format!("{display} {what}, which cannot be {action}d; name a file or directory inside it"),
    )
}

pub fn root_id(ws: &Workspace, display: &str) -> Result<FileId> {
    ws.root_id().map_err(|e| WsfsError::from_io(&e, display))
}

/// The root directory's handle, for stepping up from it.
fn root_handle<'a>(ws: &'a Workspace, display: &str) -> Result<DirRef<'a>> {
    ws.open_at_root(Path::new(""))
        .map_err(|e| WsfsError::from_io(&e, display))
}

/// Whether the directory `id` is `dir` itself or one of its ancestors, found by stepping up
/// through `..` one handle at a time (`O_PATH`, only identities are read) until `stop` (the
/// workspace root, not checked itself) or the top of the file system. At most two
/// descriptors are open.
pub fn is_at_or_above(
    ws: &Workspace,
    dir: &Dir,
    id: FileId,
    stop: Option<FileId>,
    ctl: &CallControl,
) -> Result<bool> {
    let io_err = |e: io::Error| WsfsError::from_io(&e, "a parent directory");
    let mut current_id = sys::identity(dir.as_fd()).map_err(io_err)?;
    let mut held: Option<Dir> = None;
    for _ in 0..MAX_ANCESTORS {
        if current_id == id {
            return Ok(true);
        }
        if Some(current_id) == stop {
            return Ok(false);
        }
        ctl.check()?;
        let parent = ws
            .parent_dir(held.as_ref().unwrap_or(dir))
            .map_err(io_err)?;
        let parent_id = sys::identity(parent.as_fd()).map_err(io_err)?;
        if parent_id == current_id {
            return Ok(false); // the top of the file system
        }
        current_id = parent_id;
        held = Some(parent);
    }
    Ok(false)
}

/// Locks the regular file `leaf` names in `dir` the way writers and editors do (see
/// `fileops::lock_current`), so a write or edit in flight finishes before the name is moved or
/// removed, and one that starts later finds the name gone instead of recreating it. `None`
/// for a file this process may not open for reading (it is changed without the lock, as
/// `write_file` replaces such a file).
pub fn lock_file(
    dir: &Dir,
    leaf: &OsString,
    display: &str,
    ctl: &CallControl,
) -> Result<Option<LockedFile>> {
    match open_leaf_read(dir, leaf) {
        Ok(file) => {
            let reopen = || open_leaf_read(dir, leaf);
            lock_current(dir, leaf, file, reopen, display, ctl).map(Some)
        }
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_some() => {
            Ok(None)
        }
        Err(e) => Err(open_error(e, display)),
    }
}

/// A path relative to `anchor` as the model is shown it: workspace-relative when inside the
/// root, absolute otherwise (unrestricted mode).
pub fn shown_rel(ws: &Workspace, anchor: Anchor, rel: &Path) -> String {
    match anchor {
        Anchor::Root => display_path(rel),
        Anchor::Host => {
            let absolute = Path::new("/").join(rel);
            match absolute.strip_prefix(ws.root()) {
                Ok(inside) => display_path(inside),
                Err(_) => display_path(&absolute),
            }
        }
    }
}
