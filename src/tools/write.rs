//! `write_file` and `append_file`.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::fileops::{
    atomic_replace, lock_current, open_error, open_leaf_append, open_leaf_read, require_regular,
    sync_dir,
};
use crate::resolve::Located;
use crate::workspace::{ToolPath, Workspace};
use cap_std::fs::{Metadata, MetadataExt};
use serde::Serialize;
use std::io::{self, Write};

#[derive(Debug, Serialize)]
pub struct WriteOutput {
    pub path: String,
    pub bytes_written: u64,
    pub created: bool,
}

#[derive(Debug, Serialize)]
pub struct AppendOutput {
    pub path: String,
    pub bytes_appended: u64,
    pub size: u64,
}

pub const OVERWRITE_WARNING: &str = "file exists, overwriting";

/// Refuses `len` bytes over `max_write_bytes`; `hint` tells the model what to do instead.
pub fn check_write_size(ws: &Workspace, len: u64, what: &str, hint: &str) -> Result<()> {
    let max = ws.limits.max_write_bytes;
    if len > max {
        return Err(WsfsError::new(
            ErrorCode::TooLarge,
            format!("{what} is {len} bytes; the limit is max_write_bytes = {max}. {hint}"),
        ));
    }
    Ok(())
}

pub const SPLIT_HINT: &str = "Write less, or split it across write_file and append_file calls";

/// Writes `content` atomically (see `fileops::atomic_replace`). An existing file is locked
/// while it is replaced, so an edit in progress cannot write back stale content over it.
pub fn write_file(
    ws: &Workspace,
    path: &ToolPath,
    content: &str,
    ctl: &CallControl,
) -> Result<(WriteOutput, Vec<String>)> {
    check_write_size(ws, content.len() as u64, "content", SPLIT_HINT)?;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, true, ctl)?;
    let written = replace_leaf(&located, content, &path.display, ctl);
    if written.is_err() {
        ws.undo_created(&located);
    }
    let (created, warnings) = written?;
    Ok((
        WriteOutput {
            path: path.display.clone(),
            bytes_written: content.len() as u64,
            created,
        },
        warnings,
    ))
}

/// The write itself; returns whether the file was created, and the warnings.
fn replace_leaf(
    located: &Located<'_>,
    content: &str,
    display: &str,
    ctl: &CallControl,
) -> Result<(bool, Vec<String>)> {
    let leaf = located.file_leaf(display, true)?;
    let locked = match open_leaf_read(&located.dir, leaf) {
        Ok(file) => {
            let meta = file
                .metadata()
                .map_err(|e| WsfsError::from_io(&e, display))?;
            require_regular(&meta, display)?;
            let reopen = || open_leaf_read(&located.dir, leaf);
            Some(lock_current(
                &located.dir,
                leaf,
                file,
                reopen,
                display,
                ctl,
            )?)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        // Unreadable but replaceable (a write-only file): replace it without the lock.
        Err(e) if e.kind() == io::ErrorKind::PermissionDenied && e.raw_os_error().is_some() => None,
        Err(e) => return Err(open_error(e, display)),
    };
    let existing = match &locked {
        Some(locked) => Some(locked.meta.clone()),
        None => located.dir.symlink_metadata(leaf).ok(),
    };
    let mut warnings = atomic_replace(
        &located.dir,
        leaf,
        content.as_bytes(),
        existing.as_ref(),
        display,
        ctl,
    )?;
    if existing.is_some() {
        warnings.insert(0, OVERWRITE_WARNING.to_string());
    }
    Ok((existing.is_none(), warnings))
}

/// Appends with one `O_APPEND` write under the file's lock, then fsyncs. Refuses files with
/// more than one hard link: appending in place would change the other names too.
pub fn append_file(
    ws: &Workspace,
    path: &ToolPath,
    content: &str,
    ctl: &CallControl,
) -> Result<(AppendOutput, Vec<String>)> {
    check_write_size(ws, content.len() as u64, "content", SPLIT_HINT)?;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, true, ctl)?;
    let appended = append_leaf(&located, content, &path.display, ctl);
    if appended.is_err() {
        ws.undo_created(&located);
    }
    let (size, warnings) = appended?;
    Ok((
        AppendOutput {
            path: path.display.clone(),
            bytes_appended: content.len() as u64,
            size,
        },
        warnings,
    ))
}

/// The append itself; returns the new size and the warnings. A file it created is removed
/// again if the call stops before the write.
fn append_leaf(
    located: &Located<'_>,
    content: &str,
    display: &str,
    ctl: &CallControl,
) -> Result<(u64, Vec<String>)> {
    let io_err = |e: io::Error| WsfsError::from_io(&e, display);
    let leaf = located.file_leaf(display, true)?;
    let existed = located.leaf_meta.is_some();
    let file = open_leaf_append(&located.dir, leaf).map_err(|e| open_error(e, display))?;
    let reopen = || open_leaf_append(&located.dir, leaf);
    let mut locked = require_regular(&file.metadata().map_err(io_err)?, display)
        .and_then(|()| lock_current(&located.dir, leaf, file, reopen, display, ctl))?;
    let ready = refuse_hard_links(&locked.meta, display).and_then(|()| ctl.check());
    if let Err(e) = ready {
        if !existed && locked.meta.len() == 0 {
            let _ = located.dir.remove_file(leaf);
        }
        return Err(e);
    }
    // The commit point: one write(2) with O_APPEND.
    locked.file.write_all(content.as_bytes()).map_err(io_err)?;
    let mut warnings = Vec::new();
    if let Err(e) = locked.file.sync_data() {
        warnings.push(format!("appended, but fsync failed: {e}"));
    }
    if !existed {
        if let Err(e) = sync_dir(&located.dir) {
            warnings.push(format!("appended, but syncing the directory failed: {e}"));
        }
    }
    let size = locked
        .file
        .metadata()
        .map(|m| m.len())
        .unwrap_or(locked.meta.len() + content.len() as u64);
    Ok((size, warnings))
}

fn refuse_hard_links(meta: &Metadata, display: &str) -> Result<()> {
    if meta.nlink() > 1 {
        return Err(WsfsError::new(
            ErrorCode::PermissionDenied,
            format!("{display} has {} hard links; appending in place would change the other names too. Use write_file or edit_file, which replace the file", meta.nlink()),
        ));
    }
    Ok(())
}
