//! Commits the files of one patch together.
//!
//! Every new content is already in memory. One changed name commits with a single rename
//! (or `unlink`), which is atomic by itself. Several names commit under a journal kept in the
//! state directory (see [`journal`]):
//!
//! 1. the journal, listing every target, staged name, backup name and directory to create,
//!    is written and fsynced (nothing in the workspace has changed yet);
//! 2. missing directories are created, each new content is staged in its target's directory
//!    (an unnamed temp file, written, fsynced, with the old file's mode and owner, then linked
//!    under the staged name the journal chose for it), and each file to be replaced or removed
//!    gets a backup hard link under the backup name the journal chose; the directories are
//!    fsynced;
//! 3. the deadline is checked a last time, then the renames (and removals) run: the commit
//!    point. A failure here rolls everything back from the journal and reports the error;
//! 4. the directories are fsynced and the journal is marked committed (renamed to
//!    `<id>.committed`, fsynced);
//! 5. backups and the journal are removed.
//!
//! A crash at any point is rolled back (before step 4) or finished (after it) the next time
//! the workspace is opened. Each file changes atomically, but a reader looking during step
//! 3 may see some files new and others still old.
//!
//! Staged and backup names are ordinary wsfs temp names (`.wsfs-<16 hex>.tmp`, random, see
//! `tempfile_ops`), so no tool lists, reads or writes them. While the commit runs no sweep
//! removes them: a staged file keeps the `flock` it was created with until the commit is over,
//! and a backup is a second name of a file the caller holds locked (`apply_patch` keeps every
//! file it replaces or removes locked until the commit returns). `Workspace::open` recovers
//! journals before it sweeps, and keeps every name a journal it could not recover records.

pub mod fault;
pub mod journal;
pub mod new_dirs;
pub mod state;

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::fileops::{check_file_size_limit, fill_staged, sync_dir};
use crate::policy::Access;
use crate::resolve::Located;
use crate::tempfile_ops::{random_u64, temp_name, Staged};
use crate::workspace::{Anchor, ToolPath, Workspace};
use cap_std::fs::{Dir, Metadata};
use fault::CommitFault;
use journal::{created_list, path_bytes, Entry, EntryOp, Journal};
use rustix::fs::{AtFlags, RenameFlags};
use state::StateDir;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Path, PathBuf};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpKind {
    /// Replace an existing file with new content.
    Replace,
    /// Create a file that must not exist.
    Create,
    /// Remove an existing file.
    Remove,
}

/// Where an operation's file is.
pub enum Place<'w> {
    /// In an existing directory: the resolved directory and name.
    Resolved(Box<Located<'w>>),
    /// A new file whose parent directories are missing: `missing` (anchor-relative,
    /// outermost first) are created during the commit.
    Pending {
        path: ToolPath,
        missing: Vec<PathBuf>,
    },
}

/// One name a commit changes.
pub struct Op<'w> {
    pub kind: OpKind,
    pub place: Place<'w>,
    /// The new content (`Replace`, `Create`).
    pub content: Vec<u8>,
    /// Mode and owner the new file keeps (the replaced file's, or a moved file's).
    pub keep: Option<Metadata>,
    /// Workspace-relative path, as the model sees it.
    pub display: String,
    pub sha256_before: Option<String>,
    pub sha256_after: Option<String>,
}

/// One changed file as an audit log records it: its path and its content hash before and
/// after (`None`: it did not exist). Every commit returns these, in the order of its ops.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChangeRecord {
    pub path: String,
    pub sha256_before: Option<String>,
    pub sha256_after: Option<String>,
}

pub struct Committed {
    pub warnings: Vec<String>,
    pub changes: Vec<ChangeRecord>,
}

#[derive(Debug)]
pub enum CommitError {
    /// Op `k` creates a name that appeared since the patch was planned; nothing changed.
    Exists(usize),
    /// Anything else; nothing changed unless the message says otherwise.
    Failed(WsfsError),
}

impl From<WsfsError> for CommitError {
    fn from(e: WsfsError) -> Self {
        CommitError::Failed(e)
    }
}

/// Commits `ops` (all in the workspace's anchor) together; see the module documentation.
pub fn commit(
    ws: &Workspace,
    anchor: Anchor,
    ops: Vec<Op<'_>>,
    ctl: &CallControl,
) -> std::result::Result<Committed, CommitError> {
    let changes = ops
        .iter()
        .map(|op| ChangeRecord {
            path: op.display.clone(),
            sha256_before: op.sha256_before.clone(),
            sha256_after: op.sha256_after.clone(),
        })
        .collect();
    let warnings = match ops.len() {
        0 => Vec::new(),
        1 => commit_one(ws, ops.into_iter().next().expect("one op"), ctl)?,
        _ => commit_journaled(ws, anchor, ops, ctl)?,
    };
    Ok(Committed { warnings, changes })
}

/// Stages `content` for a file in `dir` (see `tempfile_ops::Staged`): with `keep`'s owner and
/// mode, fsynced, invisible to the tools.
fn stage<'d>(
    dir: &'d Dir,
    content: &[u8],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<Staged<'d>> {
    check_file_size_limit(content.len() as u64, display)?;
    ctl.check()?;
    let mut staged = Staged::create(dir).map_err(|e| WsfsError::from_io(&e, display))?;
    fill_staged(&mut staged, content, keep, display, ctl)?;
    Ok(staged)
}

/// The one place a journaled commit creates a file: `content` staged in `dir` and named
/// `name`, the temp name its journal recorded. The returned file holds the staged file's lock:
/// keep it open until the commit is over, so no sweep takes the file meanwhile.
fn stage_file(
    dir: &Dir,
    name: &str,
    content: &[u8],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<std::fs::File> {
    stage(dir, content, keep, display, ctl)?
        .name_as(name)
        .map_err(|e| WsfsError::from_io(&e, display))
}

/// A random id for journals.
fn new_id() -> String {
    format!("{:016x}", random_u64())
}

/// An op's place, resolved (creating missing parent directories) if it was pending.
fn resolve_place<'w>(
    ws: &'w Workspace,
    place: Place<'w>,
    ctl: &CallControl,
) -> Result<(Located<'w>, OsString)> {
    let located = match place {
        Place::Resolved(located) => *located,
        Place::Pending { path, .. } => ws.resolve(&path, Access::WRITE, true, ctl)?,
    };
    let leaf = located.leaf_name("the target")?.clone();
    Ok((located, leaf))
}

fn commit_one(
    ws: &Workspace,
    op: Op<'_>,
    ctl: &CallControl,
) -> std::result::Result<Vec<String>, CommitError> {
    let (located, leaf) = resolve_place(ws, op.place, ctl)?;
    let outcome = commit_one_at(
        &located.dir,
        &leaf,
        op.kind,
        &op.content,
        op.keep.as_ref(),
        &op.display,
        ctl,
    );
    if let Err(e) = outcome {
        ws.undo_created(located);
        return Err(e);
    }
    Ok(sync_dir(&located.dir)
        .err()
        .map(|e| format!("written, but syncing the directory failed: {e}"))
        .into_iter()
        .collect())
}

/// A single name's change: one rename, link or unlink, atomic by itself.
fn commit_one_at(
    dir: &Dir,
    leaf: &OsStr,
    kind: OpKind,
    content: &[u8],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> std::result::Result<(), CommitError> {
    let io_err = |e: io::Error| -> CommitError { WsfsError::from_io(&e, display).into() };
    if kind == OpKind::Remove {
        ctl.check()?;
        return dir.remove_file(leaf).map_err(io_err);
    }
    let staged = stage(dir, content, keep, display, ctl)?;
    ctl.check()?;
    match kind {
        OpKind::Create => staged.commit_new(leaf).map_err(|e| match e.raw_os_error() {
            Some(libc::EEXIST) => CommitError::Exists(0),
            _ => io_err(e),
        }),
        _ => staged.commit(leaf, false).map_err(io_err),
    }
}

/// `from` over `to` in `dir`; with `no_replace`, never over an existing name.
fn rename(dir: &Dir, from: &str, to: &OsStr, no_replace: bool) -> io::Result<()> {
    if no_replace {
        return Ok(rustix::fs::renameat_with(
            dir,
            from,
            dir,
            to,
            RenameFlags::NOREPLACE,
        )?);
    }
    dir.rename(from, dir, to)
}

fn commit_journaled(
    ws: &Workspace,
    anchor: Anchor,
    ops: Vec<Op<'_>>,
    ctl: &CallControl,
) -> std::result::Result<Vec<String>, CommitError> {
    let state_path = match &ws.state {
        StateDir::At(path) => path,
        StateDir::Unavailable(why) => {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("this patch changes {} files, which must commit together under a journal, but this workspace has no state directory ({why}); apply the files one per call, or have the host set state_dir outside the workspace", ops.len()),
            )
            .into())
        }
    };
    let state = state::open_for_commit(&ws.root_dir, state_path).map_err(|e| {
        WsfsError::new(
            ErrorCode::IoError,
            format!(
                "cannot use the state directory {}: {e}",
                state_path.display()
            ),
        )
    })?;
    let id = new_id();
    let journal = plan_journal(ws, anchor, &id, &ops);
    let lock = journal.write_new(&state).map_err(|e| {
        WsfsError::new(
            ErrorCode::IoError,
            format!("cannot write the commit journal: {e}"),
        )
    })?;
    // The staged files' locks, held until the commit is over (a crash releases them).
    let mut held = Vec::new();
    let outcome = run(ws, &state, &journal, ops, &mut held, ctl);
    let result = match outcome {
        Ok(()) => journal::recover(ws, &state, &journal, true)
            .err()
            .map(|e| format!("committed, but cleaning up the journal failed ({e}); it is finished when the workspace is next opened"))
            .into_iter()
            .collect(),
        Err(Step::Abandoned(e)) => return Err(e.into()),
        Err(Step::Failed(e)) => {
            if let Err(undo) = journal::recover(ws, &state, &journal, false) {
                let what = match &e {
                    CommitError::Exists(_) => "a file to create appeared meanwhile".to_string(),
                    CommitError::Failed(e) => e.message.clone(),
                };
                return Err(WsfsError::new(
                    ErrorCode::IoError,
                    format!("{what}; undoing the partial commit also failed ({undo}), so some files may be new and others old until the workspace is next opened, which finishes the undo"),
                )
                .into());
            }
            return Err(e);
        }
    };
    drop(held);
    drop(lock);
    Ok(result)
}

fn plan_journal(ws: &Workspace, anchor: Anchor, id: &str, ops: &[Op<'_>]) -> Journal {
    let mut journal = Journal::new(id.to_string(), &ws.root, anchor);
    for op in ops {
        let (dir, leaf) = match &op.place {
            Place::Resolved(located) => (
                path_bytes(located.dir_rel()),
                located
                    .leaf
                    .as_deref()
                    .map(|l| path_bytes(Path::new(l)))
                    .unwrap_or_default(),
            ),
            Place::Pending { path, missing } => {
                for m in created_list(missing) {
                    if !journal.created_dirs.contains(&m) {
                        journal.created_dirs.push(m);
                    }
                }
                let parent = path.rel.parent().map(path_bytes).unwrap_or_default();
                let leaf = path
                    .rel
                    .file_name()
                    .map(|l| path_bytes(Path::new(l)))
                    .unwrap_or_default();
                (parent, leaf)
            }
        };
        let op_kind = match op.kind {
            OpKind::Replace => EntryOp::Replace,
            OpKind::Create => EntryOp::Create,
            OpKind::Remove => EntryOp::Remove,
        };
        journal.entries.push(Entry {
            dir,
            leaf,
            op: op_kind,
            staged: (op.kind != OpKind::Remove).then(temp_name),
            backup: (op.kind != OpKind::Create).then(temp_name),
            new_sha256: op.sha256_after.clone(),
        });
    }
    journal.created_dirs.sort_by_key(|d| d.len());
    journal
}

enum Step {
    /// Roll back from the journal, then report.
    Failed(CommitError),
    /// An injected crash: leave everything as a killed process would.
    Abandoned(WsfsError),
}

impl From<CommitError> for Step {
    fn from(e: CommitError) -> Self {
        Step::Failed(e)
    }
}

impl From<WsfsError> for Step {
    fn from(e: WsfsError) -> Self {
        Step::Failed(e.into())
    }
}

/// Steps 2 to 4 of the protocol. The staged files' locks go to `held`.
fn run(
    ws: &Workspace,
    state: &Dir,
    journal: &Journal,
    ops: Vec<Op<'_>>,
    held: &mut Vec<std::fs::File>,
    ctl: &CallControl,
) -> std::result::Result<(), Step> {
    let mut ready = Vec::with_capacity(ops.len());
    for op in ops {
        ctl.check()?;
        let (located, leaf) = resolve_place(ws, op.place, ctl)?;
        ready.push((located, leaf, op.kind, op.content, op.keep, op.display));
    }
    for ((located, leaf, _, content, keep, display), entry) in ready.iter().zip(&journal.entries) {
        ctl.check()?;
        let io_err = |e: io::Error| WsfsError::from_io(&e, display);
        if let Some(staged) = &entry.staged {
            held.push(stage_file(
                &located.dir,
                staged,
                content,
                keep.as_ref(),
                display,
                ctl,
            )?);
        }
        if let Some(backup) = &entry.backup {
            // A second name of the file the caller holds locked: the lock covers it too.
            rustix::fs::linkat(
                &*located.dir,
                leaf.as_os_str(),
                &*located.dir,
                backup.as_str(),
                AtFlags::empty(),
            )
            .map_err(|e| io_err(e.into()))?;
        }
    }
    let dirs = distinct_dirs(&ready.iter().map(|r| &*r.0.dir).collect::<Vec<_>>());
    for dir in &dirs {
        sync_dir(dir).map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("syncing a directory failed: {e}"),
            )
        })?;
    }
    ctl.check()?;
    // The commit point: from here on the commit completes or is undone, never stopped.
    let fault = fault::take(&ws.root);
    if fault == Some(CommitFault::PauseBeforeRenames) {
        fault::pause_here(&ws.root);
    }
    for (k, ((located, leaf, kind, _, _, display), entry)) in
        ready.iter().zip(&journal.entries).enumerate()
    {
        match fault {
            Some(CommitFault::FailAfterRenames(n)) if n == k => {
                return Err(WsfsError::new(
                    ErrorCode::IoError,
                    format!("{display}: injected failure"),
                )
                .into())
            }
            Some(CommitFault::AbandonAfterRenames(n)) if n == k => {
                return Err(Step::Abandoned(WsfsError::new(
                    ErrorCode::IoError,
                    "injected crash",
                )))
            }
            _ => {}
        }
        let dir: &Dir = &located.dir;
        let done = match &entry.staged {
            Some(staged) => rename(dir, staged, leaf, *kind == OpKind::Create),
            None => dir.remove_file(leaf),
        };
        done.map_err(|e| match e.raw_os_error() {
            Some(libc::EEXIST) => CommitError::Exists(k),
            _ => WsfsError::from_io(&e, display).into(),
        })?;
    }
    for dir in &dirs {
        sync_dir(dir).map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("syncing a directory failed: {e}"),
            )
        })?;
    }
    journal::mark_committed(state, &journal.id).map_err(|e| {
        WsfsError::new(
            ErrorCode::IoError,
            format!("cannot mark the commit journal committed: {e}"),
        )
    })?;
    if fault == Some(CommitFault::AbandonAfterCommitMark) {
        return Err(Step::Abandoned(WsfsError::new(
            ErrorCode::IoError,
            "injected crash",
        )));
    }
    Ok(())
}

/// The directories among `dirs`, each once (by device and inode).
pub(crate) fn distinct_dirs<'d>(dirs: &[&'d Dir]) -> Vec<&'d Dir> {
    let mut seen = Vec::new();
    let mut out = Vec::new();
    for &dir in dirs {
        let key = rustix::fs::fstat(dir).map(|s| (s.st_dev, s.st_ino)).ok();
        if key.is_none() || !seen.contains(&key) {
            seen.push(key);
            out.push(dir);
        }
    }
    out
}
