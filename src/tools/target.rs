//! Resolving the `path` argument of the walking tools to an open directory (or, for
//! `search_text`, a file) beneath the workspace's handle.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::policy::{Access, Skipped};
use crate::resolve::DirRef;
use crate::walk::filter::Skip;
use crate::walk::Kind;
use crate::workspace::{ToolPath, Workspace};
use cap_fs_ext::DirExt;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// What a path names.
pub(crate) enum Target<'a> {
    Dir(DirRef<'a>),
    /// A regular file: its directory and name.
    File(DirRef<'a>, OsString),
}

/// Resolves `path` like every tool does (a symlink as the last component is followed while
/// it stays inside the workspace) and opens it without following anything further.
pub(crate) fn open_target<'a>(
    ws: &'a Workspace,
    path: &ToolPath,
    ctl: &CallControl,
) -> Result<Target<'a>> {
    let display = &path.display;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let Some(leaf) = located.leaf.clone() else {
        return Ok(Target::Dir(located.dir));
    };
    match &located.leaf_meta {
        None => Err(WsfsError::new(
            ErrorCode::PathNotFound,
            format!("{display} does not exist; use list_dir to see what exists"),
        )),
        Some(meta) if meta.is_dir() => match located.dir.open_dir_nofollow(&leaf) {
            Ok(dir) => Ok(Target::Dir(DirRef::Opened(dir))),
            Err(e) => Err(WsfsError::from_io(&e, display)),
        },
        Some(meta) => {
            crate::fileops::require_regular(meta, display)?;
            Ok(Target::File(located.dir, leaf))
        }
    }
}

/// `path` as a directory to walk; anything else is `not_a_directory` with `hint`.
pub(crate) fn open_walk_dir<'a>(
    ws: &'a Workspace,
    path: &ToolPath,
    ctl: &CallControl,
    hint: &str,
) -> Result<DirRef<'a>> {
    let display = &path.display;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let Some(leaf) = &located.leaf else {
        return Ok(located.dir);
    };
    // O_DIRECTORY refuses a FIFO or device before opening it, so nothing blocks.
    match located.dir.open_dir_nofollow(leaf) {
        Ok(dir) => Ok(DirRef::Opened(dir)),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(WsfsError::new(
            ErrorCode::NotADirectory,
            format!("{display} is not a directory; {hint}"),
        )),
        Err(e) => Err(WsfsError::from_io(&e, display)),
    }
}

/// The workspace policy as a walk's deny hook: each entry's walk-relative path, prefixed
/// with the resolved path of the directory the walk starts at, goes to
/// [`Workspace::walk_skip`]. Denied entries are left out (not descended into) and counted;
/// the audit log is left out silently. `None` when the policy can never skip anything, so an
/// unrestricted walk pays nothing.
pub(crate) struct WalkDeny<'w> {
    ws: &'w Workspace,
    base: PathBuf,
}

impl<'w> WalkDeny<'w> {
    pub(crate) fn new(ws: &'w Workspace, start: &DirRef<'_>) -> Result<Option<Self>> {
        if !ws.walks_filtered() {
            return Ok(None);
        }
        let base = ws.resolved_rel(start, None)?;
        Ok(Some(WalkDeny { ws, base }))
    }

    pub(crate) fn skip(&self, rel: &[u8], kind: Kind) -> Option<Skip> {
        let path = self.base.join(OsStr::from_bytes(rel));
        match self.ws.walk_skip(&path, kind == Kind::Dir, None)? {
            Skipped::Denied(_) => Some(Skip::Denied),
            Skipped::Reserved => Some(Skip::Internal),
        }
    }
}
