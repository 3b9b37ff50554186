//! `move_file`: rename a file, directory or symlink inside the workspace with one `renameat2`.
//!
//! - Rename semantics: `dst` is the entry's new path, never a directory to move into. Both
//!   ends are one name inside a directory opened beneath the root; neither is followed (a
//!   symlink is moved itself; with `overwrite`, a symlink at `dst` is replaced itself).
//! - Without `overwrite` the kernel decides atomically (`RENAME_NOREPLACE`): an existing `dst`,
//!   even one created a moment before by someone else, is `file_exists` and is never replaced.
//! - With `overwrite`: a file, symlink or special file replaces another; a directory replaces
//!   only an empty directory. A non-directory over a directory is `not_a_file`, a directory
//!   over a non-directory `not_a_directory`, a directory over a non-empty one `file_exists`.
//! - Never a copy: `src` and `dst` on different file systems (a mount inside the workspace)
//!   is an error, and nothing is moved.
//! - The workspace root is neither moved nor replaced, and a directory is never moved into
//!   itself: checked by identity (stepping up from `dst`'s directory), and by the kernel
//!   (`EINVAL`) at the rename itself.
//! - The regular files moved or replaced are locked like writers lock them, so an edit in
//!   flight lands before the move or fails, and never recreates the old name afterwards.
//! - Missing parents of `dst` are created, and removed again if the move fails. Both
//!   directories are fsynced after the rename.

use super::entry::{self, Entry, FileId};
use super::write::hash_same_file;
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::Change;
use crate::sandbox::fileops::sync_dir;
use crate::sandbox::gate::Access;
use crate::sandbox::resolve::Located;
use crate::sandbox::root::ToolPath;
use crate::sandbox::sys::{self, Kind};
use crate::tools::contract::{Annotations, Call, Tool, ToolOutput, Warning};
use crate::tools::hints::shown_name;
use crate::tools::kind::FileKind;
use crate::workspace::Flow;
use crate::workspace::Workspace;
use cap_std::fs::{Dir, Metadata};
use rustix::fs::RenameFlags;
use rustix::io::Errno;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

pub struct MoveFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct MoveFileArgs {
    /// File, directory or symlink to move, e.g. 'notes/draft.md'.
    pub src: String,
    /// Its new path (the full path, not a directory to move into), e.g. 'notes/final.md'.
    pub dst: String,
    /// Replace an existing file or symlink (or empty directory) at dst. Default false: an existing dst is an error.
    #[serde(default)]
    pub overwrite: bool,
}

/// `data` of `move_file`.
#[derive(Debug, Serialize)]
pub struct MoveOutput {
    pub moved_from: String,
    pub moved_to: String,
    /// What was moved: `file`, `dir`, `symlink` or `other`.
    #[serde(rename = "type")]
    pub kind: FileKind,
    /// An existing entry at `dst` was replaced (only with `overwrite`).
    pub replaced: bool,
    /// Parent directories of `dst` that were created, outermost first.
    pub dirs_created: Vec<String>,
    /// For the audit log (only when the workspace keeps one).
    #[serde(skip)]
    audit: Vec<Change>,
}

impl Tool for MoveFile {
    const NAME: &'static str = "move_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
    };
    type Args = MoveFileArgs;
    type Output = MoveOutput;

    fn description() -> String {
        format!("Move or rename a file, directory or symlink within the workspace, in one atomic rename (nothing is copied). dst is the complete new path, not a folder to move into: to move a.txt into docs/, use dst 'docs/a.txt'. Missing parent directories of dst are created. An existing dst is an error unless overwrite is true, which replaces a file or symlink (or an empty directory) but never a non-empty directory. A symlink is moved itself, not what it points to. The workspace root cannot be moved, and a directory cannot be moved into itself. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: MoveFileArgs) -> Result<(MoveOutput, Vec<Warning>)> {
        let src = call.path(&args.src)?;
        let dst = call.path(&args.dst)?;
        let (mut out, warnings) =
            move_entry(call.ws, &src, &dst, args.overwrite, call.audits(), call.ctl)?;
        for change in std::mem::take(&mut out.audit) {
            call.record_change(change);
        }
        Ok((out, crate::tools::contract::warnings(warnings)))
    }
}

impl ToolOutput for MoveOutput {
    fn text(&self) -> Cow<'_, str> {
        let what = match self.kind {
            FileKind::Dir => "directory ",
            FileKind::Symlink => "symlink ",
            FileKind::Other => "special file ",
            FileKind::File => "",
        };
        let mut text = format!("moved {what}{} to {}", self.moved_from, self.moved_to);
        if self.replaced {
            text.push_str(&format!(" (replaced the existing {})", self.moved_to));
        }
        if !self.dirs_created.is_empty() {
            text.push_str(&format!(
                "; created {}",
                crate::render::count(self.dirs_created.len() as u64, "directory", "directories")
            ));
            text.push_str(&format!(": {}", self.dirs_created.join(", ")));
        }
        Cow::Owned(text)
    }
}

/// Moves `src` to `dst` (see the module documentation).
pub fn move_entry(
    ws: &Workspace,
    src: &ToolPath,
    dst: &ToolPath,
    overwrite: bool,
    audits: bool,
    ctl: &CallControl,
) -> Result<(MoveOutput, Vec<String>)> {
    // The policy checks both ends (resolve_entry): src may be neither read nor changed if
    // denied (a move would change what it is named, and could make it readable), dst may
    // not be changed; a directory's contents are checked by `check_moved_tree`.
    let from = entry::existing_entry(ws, src, Access::READ_WRITE, "move", ctl)?;
    if dst.trailing_slash && !from.is_dir() {
        return Err(WsfsError::new(
            ErrorCode::NotAFile,
            format!(
                "{}/ ends with '/', but {} is {}: dst is its complete new path, e.g. '{}/{}'",
                dst.display.trim_end_matches('/'),
                src.display,
                FileKind::of(&from.meta).phrase(),
                dst.display.trim_end_matches('/'),
                shown_name(&from.leaf)
            ),
        ));
    }
    let dst_access = Access {
        reads: false,
        writes: true,
        new_is_dir: from.is_dir(),
    };
    let to = ws.resolve_entry(dst, dst_access, true, ctl)?;
    let audit = match audits {
        true => audit_records(ws, &from, &to, src, dst, ctl),
        false => Ok(Vec::new()),
    };
    let checked = audit.and_then(|audit| {
        check_moved_tree(ws, &from, &to, src, ctl)?;
        Ok(audit)
    });
    let moved = checked.and_then(|audit| {
        rename_entry(ws, &from, &to, src, dst, overwrite, ctl).map(|done| (done, audit))
    });
    match moved {
        Ok(((replaced, warnings), mut audit)) => {
            let dirs_created = to
                .created
                .iter()
                .map(|d| entry::shown_rel(ws, dst.anchor, d.rel()))
                .collect();
            if audits {
                let dirs = to.created.iter();
                audit.extend(dirs.map(|d| Change::dir(ws.shown_anchored(dst.anchor, d.rel()))));
            }
            Ok((
                MoveOutput {
                    moved_from: src.display.clone(),
                    moved_to: dst.display.clone(),
                    kind: FileKind::of(&from.meta),
                    replaced,
                    dirs_created,
                    audit,
                },
                warnings,
            ))
        }
        Err(e) => {
            drop(from);
            ws.undo_created(to);
            Err(e)
        }
    }
}

/// Everything after both ends are resolved: the checks, the locks, the rename (the commit
/// point) and the fsyncs. Returns whether an entry was replaced, and the warnings.
fn rename_entry(
    ws: &Workspace,
    from: &Entry<'_>,
    to: &Located<'_>,
    src: &ToolPath,
    dst: &ToolPath,
    overwrite: bool,
    ctl: &CallControl,
) -> Result<(bool, Vec<String>)> {
    let Some(to_leaf) = &to.leaf else {
        return Err(entry::unnamed(ws, &to.dir, &dst.display, "replace"));
    };
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, &dst.display);
    let from_dir_id = sys::identity(from.dir().as_fd()).map_err(io_err)?;
    let to_dir_id = sys::identity(to.dir.as_fd()).map_err(io_err)?;
    if from_dir_id == to_dir_id && from.leaf == *to_leaf {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("src and dst both name {}; nothing to move", src.display),
        ));
    }
    if let Some(existing) = &to.leaf_meta {
        check_replaceable(from, existing, src, dst, overwrite)?;
    }
    if from.is_dir() {
        let root = entry::root_id(ws, &dst.display)?;
        if entry::is_at_or_above(ws, &to.dir, from.id(), Some(root), ctl)? {
            return Err(into_itself(src, dst));
        }
    }
    let _locks = lock_files(from, to, to_leaf, src, dst, overwrite, ctl)?;
    ctl.check()?;
    let flags = if overwrite {
        RenameFlags::empty()
    } else {
        RenameFlags::NOREPLACE
    };
    ws.rename(from.dir(), &from.leaf, &to.dir, to_leaf, flags)
        .map_err(|e| rename_error(e, ws, from, to, src, dst, overwrite, ctl))?;
    // Committed: from here on the call succeeds; a failed fsync is a warning.
    let mut warnings = Vec::new();
    let mut sync = |dir: &Dir| {
        if let Err(e) = sync_dir(dir) {
            warnings.push(format!("moved, but syncing a directory failed: {e}"));
        }
    };
    sync(&to.dir);
    if from_dir_id != to_dir_id {
        sync(from.dir());
    }
    Ok((to.leaf_meta.is_some(), warnings))
}

/// Refuses, before trying, a move onto an existing entry that the rename would not or must
/// not replace (the kernel decides again at the rename, so a race ends the same way).
fn check_replaceable(
    from: &Entry<'_>,
    existing: &Metadata,
    src: &ToolPath,
    dst: &ToolPath,
    overwrite: bool,
) -> Result<()> {
    use cap_std::fs::MetadataExt;
    if (existing.dev(), existing.ino()) == from.id() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!(
                "{} and {} are the same file (two hard links to it); a rename between them \
                 changes nothing. To drop the name {}, use delete_file",
                src.display, dst.display, src.display
            ),
        ));
    }
    if !overwrite {
        return Err(taken(from, Some(existing), src, dst));
    }
    match (from.is_dir(), existing.is_dir()) {
        (false, true) => Err(file_over_dir(from, src, dst)),
        (true, false) => Err(dir_over_file(existing, src, dst)),
        _ => Ok(()),
    }
}

/// Locks the regular files the rename moves or replaces, in inode order (so two moves
/// locking the same pair cannot wait on each other).
fn lock_files(
    from: &Entry<'_>,
    to: &Located<'_>,
    to_leaf: &std::ffi::OsString,
    src: &ToolPath,
    dst: &ToolPath,
    overwrite: bool,
    ctl: &CallControl,
) -> Result<Vec<crate::sandbox::fileops::LockedFile>> {
    use cap_std::fs::MetadataExt;
    let mut files: Vec<(FileId, &Dir, &std::ffi::OsString, &str)> = Vec::new();
    if from.meta.is_file() {
        files.push((from.id(), from.dir(), &from.leaf, &src.display));
    }
    if let Some(existing) = to.leaf_meta.as_ref().filter(|m| overwrite && m.is_file()) {
        files.push((
            (existing.dev(), existing.ino()),
            &to.dir,
            to_leaf,
            &dst.display,
        ));
    }
    files.sort_by_key(|f| f.0);
    let mut locks = Vec::new();
    for (_, dir, leaf, display) in files {
        locks.extend(entry::lock_file(dir, leaf, display, ctl)?);
    }
    Ok(locks)
}

/// The error for a failed `renameat2`, in the model's terms: nothing was moved.
#[allow(clippy::too_many_arguments)]
fn rename_error(
    errno: Errno,
    ws: &Workspace,
    from: &Entry<'_>,
    to: &Located<'_>,
    src: &ToolPath,
    dst: &ToolPath,
    overwrite: bool,
    ctl: &CallControl,
) -> WsfsError {
    let existing = || {
        to.leaf
            .as_ref()
            .and_then(|leaf| to.dir.symlink_metadata(leaf).ok())
    };
    match errno {
        Errno::EXIST | Errno::NOTEMPTY if overwrite => WsfsError::new(
            ErrorCode::FileExists,
            format!(
                "{} is a directory that is not empty; move_file replaces only files, symlinks \
                 and empty directories, never a directory's contents. Delete it first \
                 (delete_file with recursive: true) or choose another dst; nothing was moved",
                dst.display
            ),
        ),
        Errno::EXIST | Errno::NOTEMPTY => taken(from, existing().as_ref(), src, dst),
        Errno::ISDIR => file_over_dir(from, src, dst),
        Errno::NOTDIR => match existing() {
            Some(meta) => dir_over_file(&meta, src, dst),
            None => WsfsError::from_io(&errno.into(), &dst.display),
        },
        Errno::XDEV => WsfsError::new(
            ErrorCode::IoError,
            format!(
                "{} and {} are on different file systems (a mount point inside the workspace); \
                 move_file only renames and never copies. To move the content anyway, write \
                 it to {} and delete {}; nothing was moved",
                src.display, dst.display, dst.display, src.display
            ),
        ),
        Errno::INVAL if from.is_dir() && moved_into_itself(ws, from, to, dst, ctl) => {
            into_itself(src, dst)
        }
        Errno::INVAL | Errno::NOSYS if !overwrite => WsfsError::new(
            ErrorCode::IoError,
            format!(
                "the file system holding {} cannot rename without replacing (no \
                 RENAME_NOREPLACE), so move_file cannot guarantee an existing dst is kept; \
                 nothing was moved",
                dst.display
            ),
        ),
        Errno::NOENT => WsfsError::new(
            ErrorCode::PathNotFound,
            format!(
                "{} (or the directory of {}) was moved or deleted during the call; nothing \
                 was moved",
                src.display, dst.display
            ),
        ),
        Errno::BUSY => WsfsError::new(
            ErrorCode::IoError,
            format!(
                "{} or {} is a mount point or otherwise in use by the system; nothing was moved",
                src.display, dst.display
            ),
        ),
        other => WsfsError::from_io(&other.into(), &src.display),
    }
}

fn moved_into_itself(
    ws: &Workspace,
    from: &Entry<'_>,
    to: &Located<'_>,
    dst: &ToolPath,
    ctl: &CallControl,
) -> bool {
    let Ok(root) = entry::root_id(ws, &dst.display) else {
        return false;
    };
    entry::is_at_or_above(ws, &to.dir, from.id(), Some(root), ctl).unwrap_or(false)
}

/// `file_exists`: `dst` is taken and `overwrite` is false.
fn taken(
    from: &Entry<'_>,
    existing: Option<&Metadata>,
    src: &ToolPath,
    dst: &ToolPath,
) -> WsfsError {
    let what = existing.map_or("an entry", |m| FileKind::of(m).phrase());
    let mut message = format!("{} already exists ({what})", dst.display);
    if existing.is_some_and(Metadata::is_dir) && !from.is_dir() {
        message.push_str(&format!(
            ". dst is the complete new path, not a folder to move into: to move {} into it, \
             use dst '{}'",
            src.display,
            into(dst, from)
        ));
    } else {
        message.push_str("; pass overwrite: true to replace it, or choose another dst");
    }
    message.push_str("; nothing was moved");
    WsfsError::new(ErrorCode::FileExists, message)
}

fn file_over_dir(from: &Entry<'_>, src: &ToolPath, dst: &ToolPath) -> WsfsError {
    WsfsError::new(
        ErrorCode::NotAFile,
        format!(
            "{} is a directory, and {} is {}, which cannot replace a directory, even with \
             overwrite. To move it into that directory, use dst '{}'; nothing was moved",
            dst.display,
            src.display,
            FileKind::of(&from.meta).phrase(),
            into(dst, from)
        ),
    )
}

fn dir_over_file(existing: &Metadata, src: &ToolPath, dst: &ToolPath) -> WsfsError {
    WsfsError::new(
        ErrorCode::NotADirectory,
        format!(
            "{} is {}, and the directory {} cannot replace it, even with overwrite. Delete it \
             first or choose another dst; nothing was moved",
            dst.display,
            FileKind::of(existing).phrase(),
            src.display
        ),
    )
}

fn into_itself(src: &ToolPath, dst: &ToolPath) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidPath,
        format!(
            "{} is inside {}: a directory cannot be moved into itself; choose a dst outside \
             it; nothing was moved",
            dst.display, src.display
        ),
    )
}

/// `dst/<src's name>`: where the model probably meant to move `src`.
fn into(dst: &ToolPath, from: &Entry<'_>) -> String {
    let name: &OsStr = &from.leaf;
    format!("{}/{}", dst.display.trim_end_matches('/'), shown_name(name))
}

/// The audit log's two records of a move: `src` gone (with a file's hash), `dst` there (with
/// the same hash; `existed_before` when it replaced something). Computed before the rename.
fn audit_records(
    ws: &Workspace,
    from: &Entry<'_>,
    to: &Located<'_>,
    src: &ToolPath,
    dst: &ToolPath,
    ctl: &CallControl,
) -> Result<Vec<Change>> {
    let kind = FileKind::file_or_dir(from.is_dir());
    let sha256 = match from.meta.is_file() {
        true => hash_same_file(from.dir(), &from.leaf, &from.meta, ctl)?.map(|h| h.hex()),
        false => None,
    };
    let src_shown = ws.shown_resolved(&from.located.dir, Some(&from.leaf), &src.display);
    let dst_shown = ws.shown_resolved(&to.dir, to.leaf.as_deref(), &dst.display);
    Ok(vec![
        Change {
            path: src_shown,
            kind,
            existed_before: true,
            sha256_before: sha256.clone(),
            sha256_after: None,
        },
        Change {
            path: dst_shown,
            kind,
            existed_before: to.leaf_meta.is_some(),
            sha256_before: None,
            sha256_after: sha256,
        },
    ])
}

/// A directory move renames everything inside it: with deny rules (or an audit log inside
/// the workspace), every entry is checked, under its current path (it may be neither read
/// nor changed if denied) and its new one (it may not be changed there). The first refusal
/// is `policy_denied` and nothing moves. Bounded by the deadline; a subdirectory that cannot
/// be read is refused too, since what it holds cannot be checked.
fn check_moved_tree(
    ws: &Workspace,
    from: &Entry<'_>,
    to: &Located<'_>,
    src: &ToolPath,
    ctl: &CallControl,
) -> Result<()> {
    if !from.is_dir() || !ws.checks_inside(Access::READ_WRITE) {
        return Ok(());
    }
    let src_base = ws.resolved_rel(&from.located.dir, Some(&from.leaf))?;
    let dst_base = ws.resolved_rel(&to.dir, to.leaf.as_deref())?;
    let dir = sys::open_child_dir(from.dir().as_fd(), from.leaf.as_bytes())
        .map_err(|e| WsfsError::from_io(&e, &src.display))?;
    let mut refused: Option<(String, String)> = None;
    // Every entry the move carries, `.git` directories and temp files included.
    let walked = ws.walk_all(dir.as_fd(), &src.display, ctl, |e| {
        let rel = OsStr::from_bytes(e.rel);
        let is_dir = e.kind == Kind::Dir;
        let why = ws
            .refuses_inside(&src_base.join(rel), is_dir, Access::READ_WRITE, ctl)
            .or_else(|| ws.refuses_inside(&dst_base.join(rel), is_dir, Access::WRITE, ctl));
        match why {
            Some(why) => {
                refused = Some((String::from_utf8_lossy(e.rel).into_owned(), why));
                Ok(Flow::Stop)
            }
            None => Ok(Flow::Continue),
        }
    })?;
    if let Some((inner, why)) = refused {
        return Err(WsfsError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} holds {inner}, which the workspace policy does not let this move rename \
                 ({why}); nothing was moved. Move the other entries one by one instead",
                src.display
            ),
        ));
    }
    if walked.stats.refused > 0 {
        return Err(WsfsError::new(
            ErrorCode::PolicyDenied,
            format!(
                "{} holds directories that could not be read, so the workspace policy cannot \
                 be checked for them; nothing was moved",
                src.display
            ),
        ));
    }
    Ok(())
}
