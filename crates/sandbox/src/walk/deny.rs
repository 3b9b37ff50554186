//! What a listing or walk leaves out for the host: what the gate denies (`deny_read`, the
//! audit log by identity) and, in unrestricted mode or under a restricted root that contains
//! them (`Root::protects`), the protected system locations.

use crate::error::Result;
use crate::gate::{Gate, Skipped};
use crate::protected::PROTECTED_LOCATIONS;
use crate::root::{DirRef, Root};
use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What the resolver already knows about the directory a walk starts at, so that the walk's
/// filter need not ask the kernel again (`Located::start_paths`).
#[derive(Debug, Default)]
pub struct StartPaths {
    /// Its resolved workspace-relative path (as `Root::rel_of` gives it).
    pub rel: Option<PathBuf>,
    /// Its absolute real path (unrestricted mode).
    pub host: Option<PathBuf>,
}

/// What one listing or walk leaves out (see [`WalkFilter::new`]).
pub struct WalkFilter<'w> {
    root: &'w Root,
    gate: &'w dyn Gate,
    /// The start's resolved workspace-relative path, when `deny_read` rules or a log inside
    /// the workspace can match below it.
    base: Option<PathBuf>,
    /// The start's absolute path, when a protected location can lie below it (unrestricted
    /// mode).
    host: Option<PathBuf>,
    /// The audit log's (device, inode), wherever it is: a hard link to it may be anywhere.
    log: Option<(u64, u64)>,
}

impl<'w> WalkFilter<'w> {
    /// **The walkers' hook** (list_dir, list_dir depth > 1, find_files, search_text, the
    /// suggestions after `path_not_found`, and later tools): what a listing or walk of the
    /// directory `start` must leave out (see [`WalkFilter::skip`]), or `None` when it can leave
    /// out nothing, so a walk without rules, audit log or unrestricted mode pays nothing.
    /// `known` is what the resolver already has of `start`'s paths (the rest is asked of the
    /// kernel once).
    pub fn new(
        root: &'w Root,
        gate: &'w dyn Gate,
        start: &DirRef<'_>,
        known: StartPaths,
    ) -> Result<Option<WalkFilter<'w>>> {
        let needs = gate.walk_needs();
        let rules = needs.paths;
        let protects = root.protects;
        let log = needs.hidden_file;
        if !rules && !protects && log.is_none() {
            return Ok(None);
        }
        let asked = match (rules && known.rel.is_none()) || (protects && known.host.is_none()) {
            true => Some(root.path_of(start, None)?),
            false => None,
        };
        let base = match rules {
            true => known
                .rel
                .or_else(|| asked.as_ref().map(|(rel, _)| rel.clone())),
            false => None,
        };
        let host = match protects {
            true => known.host.or_else(|| {
                asked.map(|(rel, inside)| match inside {
                    true => root.path.join(rel),
                    false => Path::new("/").join(rel),
                })
            }),
            false => None,
        };
        // Every protected location is a directory of `/`: most walks start where none can be
        // below them, and then no entry needs the check.
        let host = host.filter(|start| {
            PROTECTED_LOCATIONS
                .iter()
                .any(|location| Path::new(location).starts_with(start))
        });
        if base.is_none() && host.is_none() && log.is_none() {
            return Ok(None);
        }
        Ok(Some(WalkFilter {
            root,
            gate,
            base,
            host,
            log,
        }))
    }

    /// Whether the entry `name` of the open directory `dir`, at `rel` below the walk's start
    /// (`/`-separated bytes), is left out: a protected location in unrestricted mode (as a
    /// direct call refuses it, so a walk from `/` never enters `/etc`), the audit log (by
    /// identity: `ino` is the entry's inode from `getdents`, which is its `st_ino` for every
    /// non-directory, even on overlayfs; only an equal number costs an `lstat`, for the
    /// device), or what `deny_read` denies. `is_dir`: the entry's own type is a directory.
    pub fn skip(
        &self,
        dir: BorrowedFd<'_>,
        name: &[u8],
        rel: &[u8],
        is_dir: bool,
        ino: u64,
    ) -> Option<Skipped> {
        let rel = Path::new(OsStr::from_bytes(rel));
        if let Some(host) = &self.host {
            if self.root.protected_refusal(&host.join(rel)).is_some() {
                return Some(Skipped::Protected);
            }
        }
        if let Some((dev, log_ino)) = self.log {
            if !is_dir && ino == log_ino && is_file(dir, name, (dev, log_ino)) {
                return Some(Skipped::Reserved);
            }
        }
        let base = self.base.as_ref()?;
        self.gate.walk_skip(&base.join(rel), is_dir, None)
    }
}

/// Whether `name` in `dir` is the file with this (device, inode), not following a link.
fn is_file(dir: BorrowedFd<'_>, name: &[u8], id: (u64, u64)) -> bool {
    use rustix::fs::{statat, AtFlags};
    statat(dir, OsStr::from_bytes(name), AtFlags::SYMLINK_NOFOLLOW)
        .is_ok_and(|st| (st.st_dev, st.st_ino) == id)
}
