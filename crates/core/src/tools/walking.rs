//! Resolving the `path` argument of the walking tools to an open directory (or, for
//! `search_text`, a file) beneath the workspace's handle.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::render;
use crate::sandbox::gate::{Access, Skipped};
use crate::sandbox::root::DirRef;
use crate::sandbox::root::ToolPath;
use crate::sandbox::walk::deny::{StartPaths, WalkFilter};
use crate::sandbox::walk::filter::{Candidate, Skip};
use crate::sandbox::walk::{Kind, WalkStats};
use crate::workspace::Workspace;
use std::ffi::OsString;
use std::fmt::Write;

/// What a path names.
pub enum Target<'a> {
    /// A directory, and what the resolver knows of its paths (for the walk's filter).
    Dir(DirRef<'a>, StartPaths),
    /// A regular file: its directory and name.
    File(DirRef<'a>, OsString),
}

/// Resolves `path` like every tool does (a symlink as the last component is followed while
/// it stays inside the workspace) and opens it without following anything further.
pub fn open_target<'a>(
    ws: &'a Workspace,
    path: &ToolPath,
    ctl: &CallControl,
) -> Result<Target<'a>> {
    let display = &path.display;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let known = located.start_paths();
    let Some(leaf) = located.leaf.clone() else {
        return Ok(Target::Dir(located.dir, known));
    };
    match &located.leaf_meta {
        None => Err(WsfsError::new(
            ErrorCode::PathNotFound,
            format!("{display} does not exist; use list_dir to see what exists"),
        )),
        Some(meta) if meta.is_dir() => match ws.open_child_dir(&located.dir, &leaf) {
            Ok(dir) => Ok(Target::Dir(dir, known)),
            Err(e) => Err(WsfsError::from_io(&e, display)),
        },
        Some(meta) => {
            crate::sandbox::fileops::require_regular(meta, display)?;
            Ok(Target::File(located.dir, leaf))
        }
    }
}

/// `path` as a directory to walk, and what the resolver knows of its paths; anything else is
/// `not_a_directory` with `hint`.
pub fn open_walk_dir<'a>(
    ws: &'a Workspace,
    path: &ToolPath,
    ctl: &CallControl,
    hint: &str,
) -> Result<(DirRef<'a>, StartPaths)> {
    let display = &path.display;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let known = located.start_paths();
    let Some(leaf) = &located.leaf else {
        return Ok((located.dir, known));
    };
    // O_DIRECTORY refuses a FIFO or device before opening it, so nothing blocks.
    match ws.open_child_dir(&located.dir, leaf) {
        Ok(dir) => Ok((dir, known)),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => Err(WsfsError::new(
            ErrorCode::NotADirectory,
            format!("{display} is not a directory; {hint}"),
        )),
        Err(e) => Err(WsfsError::from_io(&e, display)),
    }
}

/// The workspace policy as a walk's deny hook ([`Workspace::walk_filter`]): denied entries and
/// protected locations are left out (not descended into) and counted; the audit log is left
/// out silently. `None` when the policy can never skip anything, so a default walk pays
/// nothing.
pub struct WalkDeny<'w>(WalkFilter<'w>);

impl<'w> WalkDeny<'w> {
    pub fn new(ws: &'w Workspace, start: &DirRef<'_>, known: StartPaths) -> Result<Option<Self>> {
        Ok(ws.walk_filter(start, known)?.map(WalkDeny))
    }

    pub fn skip(&self, entry: &Candidate<'_>) -> Option<Skip> {
        let is_dir = entry.kind == Kind::Dir;
        let skipped = self
            .0
            .skip(entry.dir, entry.name, entry.rel, is_dir, entry.ino)?;
        Some(match skipped {
            Skipped::Denied(_) => Skip::Denied,
            Skipped::Protected => Skip::Protected,
            Skipped::Reserved => Skip::Internal,
        })
    }
}

/// The lines saying what the policy left out of a listing or walk (`shown`: "not shown",
/// "not searched" says what the tool did not do with them).
pub fn left_out_note(text: &mut String, denied: u64, protected: u64, shown: &str) {
    if denied > 0 {
        let what = render::count(denied, "entry", "entries");
        let _ = writeln!(text, "[{what} not {shown}: denied by the workspace policy]");
    }
    if protected > 0 {
        let what = render::count(protected, "entry", "entries");
        let _ = writeln!(
            text,
            "[{what} not {shown}: protected system locations, which wsfs never reads]"
        );
    }
}

pub fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// `display` as the prefix of the paths below it: "" for the root, else "dir/".
pub fn path_prefix(display: &str) -> String {
    match display {
        "." => String::new(),
        d if d.ends_with('/') => d.to_string(),
        d => format!("{d}/"),
    }
}

/// Tells the model what the filters left out, when that may explain an empty result.
pub fn skipped_hint(
    text: &mut String,
    stats: &WalkStats,
    include_hidden: bool,
    respect_gitignore: bool,
) {
    if !include_hidden && stats.hidden > 0 {
        let _ = writeln!(
            text,
            "({} skipped; set include_hidden=true to include them)",
            render::count(stats.hidden, "hidden entry was", "hidden entries were")
        );
    }
    if respect_gitignore && stats.ignored > 0 {
        let _ = writeln!(
            text,
            "({} ignored by .gitignore; set respect_gitignore=false to include them)",
            render::count(stats.ignored, "entry was", "entries were")
        );
    }
}
