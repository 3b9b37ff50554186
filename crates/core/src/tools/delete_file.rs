//! `delete_file`: remove a file, symlink or special file, or with `recursive` a directory and
//! everything in it.
//!
//! - The name itself is removed (`unlinkat` on its directory's handle): a symlink is removed,
//!   never its target; FIFOs and sockets are never opened. The workspace root is never
//!   deleted, in any spelling (`.`, `a/..`, its absolute path).
//! - A regular file is locked like writers lock it, so an edit in flight finishes first and
//!   one that starts later finds the file gone instead of recreating it.
//! - A directory needs `recursive: true` (`recursive_required` otherwise), then goes through
//!   [`crate::sandbox::walk::remove`]: handles only, no symlink followed, no other file system entered,
//!   a few descriptors however deep, at most `MAX_DELETE_ENTRIES` removals per call.
//! - Deletion is not all or nothing. An error means nothing was removed (`timeout` and
//!   `cancelled` included). A recursive deletion that removed something and then stopped
//!   (deadline, cancellation, the entry limit, entries it could not remove) succeeds with
//!   `deleted: false`, saying how much was removed, why it stopped and what remains.
//! - After a complete deletion the parent directory is fsynced.

use super::entry::{self, Entry};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::Change;
use crate::lines::FileHash;
use crate::sandbox::fileops::sync_dir;
use crate::sandbox::gate::Access;
use crate::sandbox::root::ToolPath;
use crate::sandbox::sys::Kind;
use crate::sandbox::walk::filter::is_internal_name;
use crate::tools::contract::{Annotations, Call, HostApproval, Tool, ToolOutput, Warning};
use crate::tools::kind::FileKind;
use crate::workspace::Workspace;
use crate::workspace::{Halt, NotRemoved, Removal, RemoveDenyHook, RemoveOptions};
use rustix::io::Errno;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

/// Entries one call removes at most; a larger tree takes several calls.
pub const MAX_DELETE_ENTRIES: u64 = 1_000_000;

/// Entries of a directory counted for the `recursive_required` message, at most.
const MAX_COUNTED: u64 = 10_000;

pub struct DeleteFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct DeleteFileArgs {
    /// File, symlink or directory to delete, e.g. 'build/old.log'.
    pub path: String,
    /// Required to delete a directory: deletes it and everything in it. Default false.
    #[serde(default)]
    pub recursive: bool,
}

/// `data` of `delete_file`.
#[derive(Debug, Serialize)]
pub struct DeleteOutput {
    pub path: String,
    /// The path no longer exists: everything was removed.
    pub deleted: bool,
    pub was_directory: bool,
    /// Entries removed, the directory itself included (1 for a file or symlink).
    pub entries_removed: u64,
    /// Why a deletion stopped part-way (only when `deleted` is false): `timeout`,
    /// `cancelled`, `entry_limit` or `not_removed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stopped: Option<&'static str>,
    /// With `stopped: not_removed`: the first entries that could not be removed.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_removed: Vec<NotRemovedEntry>,
    /// With `stopped: not_removed`: how many entries could not be removed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub not_removed_count: Option<u64>,
    #[serde(skip)]
    kind: FileKind,
    /// For the audit log (only when the workspace keeps one): the resolved path, and a
    /// deleted file's hash.
    #[serde(skip)]
    audit: Option<(String, Option<String>)>,
}

/// An entry a recursive deletion left in place.
#[derive(Debug, Serialize)]
pub struct NotRemovedEntry {
    pub path: String,
    pub reason: String,
}

impl Tool for DeleteFile {
    const NAME: &'static str = "delete_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: true,
    };
    const HOST_APPROVAL: HostApproval = HostApproval::WhenTrue {
        argument: "recursive",
        why: "a recursive delete_file removes a whole directory tree",
    };
    type Args = DeleteFileArgs;
    type Output = DeleteOutput;

    fn description() -> String {
        format!("Delete a file, symlink or directory. A directory needs recursive: true, which deletes it and everything in it; symlinks are removed themselves, never followed, so nothing outside the path is touched. The workspace root cannot be deleted. If a recursive delete stops early (deadline, cancellation, something it cannot remove), the result says deleted: false, how many entries were removed and what remains; call again to continue. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: DeleteFileArgs) -> Result<(DeleteOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        let (mut out, warnings) =
            delete_path(call.ws, &path, args.recursive, call.audits(), call.ctl)?;
        if let Some((path, sha256_before)) = out.audit.take() {
            // A recursive deletion is one change, the directory's (per-entry lines would not
            // fit the log's line limit); `entries_removed` is in the result.
            call.record_change(Change {
                path,
                kind: FileKind::file_or_dir(out.was_directory),
                existed_before: true,
                sha256_before,
                sha256_after: None,
            });
        }
        Ok((out, crate::tools::contract::warnings(warnings)))
    }
}

/// Deletes `path` (see the module documentation).
pub fn delete_path(
    ws: &Workspace,
    path: &ToolPath,
    recursive: bool,
    audits: bool,
    ctl: &CallControl,
) -> Result<(DeleteOutput, Vec<String>)> {
    // The policy checks `path` itself here (deny_write, the audit log); paths inside a
    // directory go through `RemoveOptions::deny` below.
    let entry = entry::existing_entry(ws, path, Access::WRITE, "delete", ctl)?;
    let display = &path.display;
    let audited_path = audits
        .then(|| ws.shown_resolved(&entry.located.dir, Some(entry.leaf.as_os_str()), display));
    if entry.is_dir() {
        if !recursive {
            return Err(recursive_required(ws, &entry, path, ctl));
        }
        let (mut out, warnings) = delete_tree(ws, &entry, path, ctl)?;
        out.audit = audited_path.map(|p| (p, None));
        return Ok((out, warnings));
    }
    let mut lock = match entry.meta.is_file() {
        true => entry::lock_file(entry.dir(), &entry.leaf, display, ctl)?,
        false => None,
    };
    let sha256_before = match (&audited_path, &mut lock) {
        (Some(_), Some(locked)) => FileHash::of(&mut locked.file, ctl)?.map(|h| h.hex()),
        _ => None,
    };
    ctl.check()?;
    match ws.remove_file(entry.dir(), entry.leaf.as_os_str()) {
        Ok(()) => {}
        Err(Errno::ISDIR) => {
            return Err(WsfsError::new(
                ErrorCode::IoError,
                format!(
                    "{display} was replaced by a directory during the call; nothing was \
                     deleted. Call again (a directory needs recursive: true)"
                ),
            ))
        }
        Err(Errno::NOENT) => {
            return Err(WsfsError::new(
                ErrorCode::PathNotFound,
                format!("{display} was deleted or moved by someone else during the call"),
            ))
        }
        Err(e) => return Err(WsfsError::from_io(&e.into(), display)),
    }
    drop(lock);
    let output = DeleteOutput {
        path: display.clone(),
        deleted: true,
        was_directory: false,
        entries_removed: 1,
        stopped: None,
        not_removed: Vec::new(),
        not_removed_count: None,
        kind: FileKind::of(&entry.meta),
        audit: audited_path.map(|p| (p, sha256_before)),
    };
    Ok((output, sync_warning(&entry)))
}

fn sync_warning(entry: &Entry<'_>) -> Vec<String> {
    sync_dir(entry.dir())
        .err()
        .map(|e| format!("deleted, but syncing the directory failed: {e}"))
        .into_iter()
        .collect()
}

fn delete_tree(
    ws: &Workspace,
    entry: &Entry<'_>,
    path: &ToolPath,
    ctl: &CallControl,
) -> Result<(DeleteOutput, Vec<String>)> {
    let display = &path.display;
    // The policy on every path inside the directory: a denied entry (and the directories
    // holding it) stays, reported as not removed.
    let base = match ws.checks_inside(Access::WRITE) {
        true => Some(ws.resolved_rel(&entry.located.dir, Some(entry.leaf.as_os_str()))?),
        false => None,
    };
    let deny = |rel: &[u8], kind: Kind| {
        base.as_ref().is_some_and(|base| {
            let rel = base.join(OsStr::from_bytes(rel));
            ws.refuses_inside(&rel, kind == Kind::Dir, Access::WRITE, ctl)
                .is_some()
        })
    };
    let opts = RemoveOptions {
        max_entries: MAX_DELETE_ENTRIES,
        protect: Some(entry::root_id(ws, display)?),
        deny: base.is_some().then_some(&deny as RemoveDenyHook<'_>),
    };
    let removal = ws
        .remove_tree(entry.dir(), &entry.leaf, entry.id(), &opts, ctl)
        .map_err(|e| match e.raw_os_error() {
            Some(libc::ESTALE | libc::ELOOP | libc::ENOTDIR) => WsfsError::new(
                ErrorCode::IoError,
                format!(
                    "{display} was replaced during the call; nothing was deleted. Call \
                         again to delete what it is now"
                ),
            ),
            Some(libc::EXDEV) => WsfsError::new(
                ErrorCode::PermissionDenied,
                format!(
                    "{display} is a mount point (its contents belong to another file \
                         system or directory); delete_file never deletes across one. Nothing \
                         was deleted"
                ),
            ),
            _ => WsfsError::from_io(&e, display),
        })?;
    let Removal {
        removed,
        halt,
        not_removed,
        not_removed_count,
    } = removal;
    let shown = |rel: &str| match rel {
        "" => display.clone(),
        rel => format!("{}/{rel}", display.trim_end_matches('/')),
    };
    let stopped = match &halt {
        None => None,
        Some(Halt::Call(e)) if removed == 0 => return Err(e.clone()),
        Some(Halt::Call(e)) if e.code == ErrorCode::Cancelled => Some("cancelled"),
        Some(Halt::Call(_)) => Some("timeout"),
        Some(Halt::EntryLimit) => Some("entry_limit"),
        Some(Halt::NotRemoved) if removed == 0 => {
            return Err(nothing_removed(
                display,
                &not_removed,
                not_removed_count,
                &shown,
            ))
        }
        Some(Halt::NotRemoved) => Some("not_removed"),
    };
    let warnings = match stopped {
        None => sync_warning(entry),
        Some(_) => Vec::new(),
    };
    let is_not_removed = stopped == Some("not_removed");
    let output = DeleteOutput {
        path: display.clone(),
        deleted: stopped.is_none(),
        was_directory: true,
        entries_removed: removed,
        stopped,
        not_removed: not_removed
            .into_iter()
            .filter(|_| is_not_removed)
            .map(|n| NotRemovedEntry {
                path: shown(&n.rel),
                reason: n.reason,
            })
            .collect(),
        not_removed_count: is_not_removed.then_some(not_removed_count),
        kind: FileKind::Dir,
        audit: None,
    };
    Ok((output, warnings))
}

/// The error for a recursive deletion that could not remove anything: nothing changed.
fn nothing_removed(
    display: &str,
    not_removed: &[NotRemoved],
    count: u64,
    shown: &dyn Fn(&str) -> String,
) -> WsfsError {
    let Some(first) = not_removed.first() else {
        return WsfsError::new(
            ErrorCode::IoError,
            format!("{display}: nothing could be deleted"),
        );
    };
    let mut message = format!(
        "nothing was deleted: {}: {}",
        shown(&first.rel),
        first.reason
    );
    if count > 1 {
        let _ = write!(
            message,
            " (and {} more entries could not be removed)",
            count - 1
        );
    }
    WsfsError::new(first.code, message)
}

/// `recursive_required`, saying how much the directory holds.
fn recursive_required(
    ws: &Workspace,
    entry: &Entry<'_>,
    path: &ToolPath,
    ctl: &CallControl,
) -> WsfsError {
    let holding = match count_entries(ws, entry, ctl) {
        Some((0, _)) => "an empty directory".to_string(),
        Some((1, false)) => "a directory holding 1 entry".to_string(),
        Some((n, false)) => format!("a directory holding {n} entries"),
        Some((n, true)) => format!("a directory holding more than {n} entries"),
        None => "a directory".to_string(),
    };
    WsfsError::new(
        ErrorCode::RecursiveRequired,
        format!(
            "{} is {holding}; pass recursive: true to delete it and everything in it",
            path.display
        ),
    )
}

/// How many entries the directory holds directly (at most `MAX_COUNTED`, and whether there
/// are more); `None` if it cannot be read.
fn count_entries(ws: &Workspace, entry: &Entry<'_>, ctl: &CallControl) -> Option<(u64, bool)> {
    let dir = ws.open_child_dir(entry.dir(), &entry.leaf).ok()?;
    let mut count = 0u64;
    let mut more = false;
    ws.list(dir.as_fd(), "", ctl, |item| {
        if is_internal_name(item.name) {
            return Ok(true);
        }
        if count == MAX_COUNTED {
            more = true;
            return Ok(false);
        }
        count += 1;
        Ok(true)
    })
    .ok()?;
    Some((count, more))
}

impl ToolOutput for DeleteOutput {
    fn text(&self) -> Cow<'_, str> {
        let path = &self.path;
        let n = self.entries_removed;
        let Some(stopped) = self.stopped else {
            return Cow::Owned(match self.kind {
                FileKind::Dir => format!(
                    "deleted directory {path} and everything in it ({n} entries removed, the \
                     directory included)"
                ),
                FileKind::Symlink => {
                    format!("deleted symlink {path} (what it pointed to was not touched)")
                }
                FileKind::Other => format!("deleted special file {path}"),
                FileKind::File => format!("deleted {path}"),
            });
        };
        let mut text = format!("{path} was NOT fully deleted: {n} entries were removed, ");
        let again = format!(
            "{path} and the rest of its contents remain; call delete_file again to continue"
        );
        match stopped {
            "timeout" => {
                let _ = write!(text, "then the call's deadline passed. {again}");
            }
            "cancelled" => {
                let _ = write!(text, "then the call was cancelled. {again}");
            }
            "entry_limit" => {
                let _ = write!(
                    text,
                    "the most one call removes ({MAX_DELETE_ENTRIES}). {again}"
                );
            }
            _ => {
                let count = self.not_removed_count.unwrap_or(0);
                let _ = write!(
                    text,
                    "but {count} could not be, so they and the directories holding them \
                     remain:"
                );
                for entry in &self.not_removed {
                    let _ = write!(text, "\n- {}: {}", entry.path, entry.reason);
                }
                let more = count.saturating_sub(self.not_removed.len() as u64);
                if more > 0 {
                    let _ = write!(text, "\n- and {more} more");
                }
            }
        }
        Cow::Owned(text)
    }
}
