//! Commits the files of one patch together.
//!
//! Every new content is already in memory. One changed name commits with a single rename
//! (or `unlink`), which is atomic by itself. Several names commit under a journal kept in the
//! state directory (see [`journal`]).
//!
//! # The journal's state machine
//!
//! A journaled commit has **one commit point: the rename of `<id>.journal` to
//! `<id>.committed`** in the state directory. Before it, every failure rolls back before the
//! call returns, and a crash is rolled back at the next open; after it, nothing is ever rolled
//! back: the call succeeds, and whatever it could not clean up (or a crash) is finished at the
//! next open. The journal's name on disk always says which way recovery goes.
//!
//! 1. **Journal.** The journal (every target, its staged name and backup name, the
//!    directories to create) is staged as a temp file, locked, written and fsynced, and only
//!    then named `<id>.journal`; the state directory is fsynced. On disk: the workspace is
//!    untouched. A failure leaves no journal; after a crash, recovery removes one (there is
//!    nothing to undo).
//! 2. **Prepare.** Missing directories are created; each new content is staged in its
//!    target's directory (an unnamed temp file, written, fsynced, with the old file's mode and
//!    owner, then linked under its staged name); each file to be replaced or removed gets a
//!    hard-link backup under its backup name; the directories are fsynced. On disk: every file
//!    is old; hidden temp names and empty new directories are there.
//! 3. **Renames.** The deadline is checked a last time; then each staged name is renamed over
//!    its target (a new name with `RENAME_NOREPLACE`) and each removed name unlinked. On disk:
//!    a mix of new and old files, each one whole.
//! 4. **Sync.** The directories are fsynced. On disk: every file is new, durably.
//! 5. **Commit point.** `<id>.journal` is renamed to `<id>.committed`.
//! 6. **Clean-up.** The state directory is fsynced (until then a power loss could bring back
//!    the uncommitted name, whose rollback needs the backups), the backups are removed, the
//!    directories fsynced, and the journal removed. A failure here is a warning on a
//!    successful call; the next open removes what is left.
//!
//! **Rollback** (a failure in steps 1 to 5, before returning; recovery of an uncommitted
//! journal at open takes the same steps from what it finds on disk): each renamed target, last
//! first, is put back (its backup renamed over it: the old inode returns; a created file
//! removed if its name still holds the staged file); staged names and backups are removed; if
//! anything had been renamed, the directories are fsynced; the created directories are removed
//! (if empty) and their parents fsynced; the journal is removed last. Each step looks at what
//! is there, so a rollback that is interrupted (by a crash, or by a failing disk: the journal
//! then stays and the error says exactly which files are changed) is finished by the next
//! open. Recovery of a committed journal removes the backups and the journal.
//!
//! **Descriptors.** A commit holds, per target, at most one directory handle (shared by the
//! targets in one directory, opened readable so it can be fsynced) and its staged file (whose
//! `flock` keeps sweeps away); the caller holds the lock of each file it replaces or removes.
//! The rollback opens nothing to undo the renames, and the few descriptors it needs to remove
//! created directories are reserved before anything changes (`ROLLBACK_RESERVE`).
//!
//! Each file changes atomically, but a reader looking during step 3 may see some files new
//! and others still old.
//!
//! Staged and backup names are ordinary wsfs temp names (`.wsfs-<16 hex>.tmp`, random, see
//! `tempfile_ops`), so no tool lists, reads or writes them. While the commit runs no sweep
//! removes them: a staged file keeps the `flock` it was created with until the commit is over,
//! and a backup is a second name of a file the caller holds locked (`apply_patch` keeps every
//! file it replaces or removes locked until the commit returns). `Workspace::open` recovers
//! journals before it sweeps, and keeps every name a journal it could not recover records.

pub mod fault;
pub mod journal;

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError, NO_SPACE_HINT};
use crate::fileops::{check_file_size_limit, fill_staged, sync_dir};
use crate::gate::{Access, Gate};
use crate::resolve::Located;
use crate::root::{Anchor, Root, ToolPath};
use crate::state_dir::{self, StateDir};
use crate::tempfile::{random_u64, temp_name, Staged};
use cap_std::fs::{Dir, Metadata};
use fault::{CommitFault, Sys};
use journal::{created_list, path_bytes, Entry, EntryOp, Journal};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use std::ffi::{OsStr, OsString};
use std::io;
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

/// What a commit works beneath: the root it resolves in, and the gate every name it creates
/// passes.
pub struct Scope<'w> {
    pub root: &'w Root,
    pub gate: &'w dyn Gate,
}

/// Descriptors set aside before a journaled commit changes anything and released for its
/// rollback, which may have to open a directory or two (to remove the directories the commit
/// created, and fsync their parents) in a process that has run out of them.
const ROLLBACK_RESERVE: usize = 4;

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
    scope: &Scope<'_>,
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
        1 => commit_one(scope, ops.into_iter().next().expect("one op"), ctl)?,
        _ => commit_journaled(scope, anchor, ops, ctl)?,
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
    let io_err = |e: io::Error| WsfsError::from_io(&e, display);
    check_file_size_limit(content.len() as u64, display)?;
    ctl.check()?;
    fault::sys(Sys::Open).map_err(io_err)?;
    let mut staged = Staged::create(dir).map_err(io_err)?;
    fault::sys(Sys::Write).map_err(io_err)?;
    fault::sys(Sys::Fsync).map_err(io_err)?;
    fill_staged(&mut staged, &[content], keep, display, ctl)?;
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
    let staged = stage(dir, content, keep, display, ctl)?;
    fault::sys(Sys::Link)
        .and_then(|()| staged.name_as(name))
        .map_err(|e| WsfsError::from_io(&e, display))
}

/// A failure of the commit's own machinery (the state directory, the journal, a directory's
/// fsync), where no path of the model's is at fault and no host path is shown: `no_space` for
/// a full disk or quota, else `io_error`.
fn machinery_error(what: &str, e: &io::Error) -> WsfsError {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => {
            WsfsError::new(ErrorCode::NoSpace, format!("{what}: {e}. {NO_SPACE_HINT}"))
        }
        _ => WsfsError::new(ErrorCode::IoError, format!("{what}: {e}")),
    }
}

/// A random id for journals.
fn new_id() -> String {
    format!("{:016x}", random_u64())
}

/// An op's place, resolved (creating missing parent directories) if it was pending.
fn resolve_place<'w>(
    scope: &Scope<'w>,
    place: Place<'w>,
    display: &str,
    ctl: &CallControl,
) -> Result<(Located<'w>, OsString)> {
    let located = match place {
        Place::Resolved(located) => *located,
        Place::Pending { path, .. } => {
            fault::sys(Sys::Mkdir).map_err(|e| WsfsError::from_io(&e, &path.display))?;
            scope
                .root
                .resolve(&path, Access::WRITE, true, scope.gate, ctl)?
        }
    };
    match located.leaf.clone() {
        Some(leaf) => Ok((located, leaf)),
        None => {
            scope.root.undo_created(located);
            Err(WsfsError::new(
                ErrorCode::NotAFile,
                format!("{display} is a directory, not a file; use list_dir"),
            ))
        }
    }
}

fn commit_one(
    scope: &Scope<'_>,
    op: Op<'_>,
    ctl: &CallControl,
) -> std::result::Result<Vec<String>, CommitError> {
    let (located, leaf) = resolve_place(scope, op.place, &op.display, ctl)?;
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
        scope.root.undo_created(located);
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

/// Removes `name` from `dir`; a name already gone is fine.
fn remove_name(dir: &Dir, name: &str) -> io::Result<()> {
    fault::sys(Sys::Unlink)?;
    match dir.remove_file(name) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// A handle on `dir` that can be fsynced (cap-std may hold directories as `O_PATH`).
pub fn readable_dir(dir: &Dir) -> io::Result<Dir> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(Dir::from(rustix::fs::openat(
        dir,
        ".",
        flags,
        Mode::empty(),
    )?))
}

/// The state directory, created if needed, as a handle that can be fsynced.
fn open_state(scope: &Scope<'_>, path: &Path) -> Result<Dir> {
    fault::sys(Sys::Mkdir)
        .and_then(|()| match &scope.root.state_pinned {
            Some(pinned) => pinned.open(false),
            None => state_dir::open_for_commit(&scope.root.dir, path),
        })
        .and_then(|dir| fault::sys(Sys::Open).and_then(|()| readable_dir(&dir)))
        .map_err(|e| machinery_error("cannot create or open wsfs's state directory", &e))
}

/// `ROLLBACK_RESERVE` descriptors, duplicates of the root's handle.
fn reserve_descriptors(root: &Dir) -> Result<Vec<OwnedFd>> {
    let reserve = (0..ROLLBACK_RESERVE)
        .map(|_| {
            fault::sys(Sys::Open)?;
            Ok(rustix::io::fcntl_dupfd_cloexec(root, 0)?)
        })
        .collect::<io::Result<Vec<_>>>();
    reserve.map_err(|e| {
        machinery_error(
            "this process has too few file descriptors left to commit the patch safely",
            &e,
        )
    })
}

fn commit_journaled(
    scope: &Scope<'_>,
    anchor: Anchor,
    ops: Vec<Op<'_>>,
    ctl: &CallControl,
) -> std::result::Result<Vec<String>, CommitError> {
    let state_path = match &scope.root.state {
        StateDir::At(path) => path,
        // Why is in the warning of the workspace's open: it may name a host path.
        StateDir::Unavailable(_) => {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("this patch changes {} files, which must commit together under a journal, but this workspace has no state directory (the host was warned why when it opened the workspace); apply the files one per call, or have the host set state_dir outside the workspace", ops.len()),
            )
            .into())
        }
    };
    let journal = plan_journal(scope, anchor, &new_id(), &ops)?;
    let reserve = reserve_descriptors(&scope.root.dir)?;
    let state = open_state(scope, state_path)?;
    // Held (with its `flock`) until the commit is over, so no open recovers a live commit.
    let lock = journal
        .write_new(&state)
        .map_err(|e| machinery_error("cannot write the commit journal", &e))?;
    let mut commit = Journaled {
        scope,
        state: &state,
        journal: &journal,
        dirs: Vec::new(),
        targets: Vec::new(),
        reserve,
    };
    let result = match commit.run(ops, ctl) {
        Ok(warnings) => Ok(warnings),
        Err(Step::Abandoned(e)) => Err(e.into()),
        Err(Step::Failed(cause)) => Err(commit.roll_back(cause)),
    };
    drop(commit);
    drop(lock);
    result
}

/// The journal of `ops`, refused unless recovery could replay every name in it.
fn plan_journal(scope: &Scope<'_>, anchor: Anchor, id: &str, ops: &[Op<'_>]) -> Result<Journal> {
    let mut journal = Journal::new(id.to_string(), &scope.root.path, anchor);
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
    journal.validate().map_err(|e| {
        WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("this patch cannot be committed ({e}); nothing was changed: name each file by a plain path"),
        )
    })?;
    Ok(journal)
}

enum Step {
    /// Roll back, then report.
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

/// A journaled commit under way: what it holds open, and how far each target got.
struct Journaled<'c, 'w> {
    scope: &'c Scope<'w>,
    /// The state directory, readable (it is fsynced).
    state: &'c Dir,
    journal: &'c Journal,
    /// Every directory holding a target, once (by device and inode), readable: the rollback
    /// renames, unlinks and fsyncs through these, opening nothing.
    dirs: Vec<(Dir, (u64, u64))>,
    /// The targets prepared so far, in the journal's order.
    targets: Vec<Target>,
    /// Released for the rollback (see `ROLLBACK_RESERVE`).
    reserve: Vec<OwnedFd>,
}

/// One name the commit changes, and how far the commit got with it.
struct Target {
    /// Its directory, in `Journaled::dirs`.
    dir: usize,
    leaf: OsString,
    kind: OpKind,
    display: String,
    /// The staged file, open: it keeps its `flock` (no sweep takes it), and tells a rollback
    /// whether the target's name still holds it.
    staged: Option<std::fs::File>,
    staged_named: bool,
    backup_named: bool,
    /// Its rename (or removal) is done and not undone.
    applied: bool,
}

impl Journaled<'_, '_> {
    /// Steps 2 to 5 of the protocol; the clean-up's warnings.
    fn run(
        &mut self,
        ops: Vec<Op<'_>>,
        ctl: &CallControl,
    ) -> std::result::Result<Vec<String>, Step> {
        for op in ops {
            ctl.check()?;
            self.prepare(op, ctl)?;
        }
        self.sync_dirs()
            .map_err(|e| machinery_error("syncing a directory failed", &e))?;
        ctl.check()?;
        // From here on the commit completes or is rolled back, never stopped.
        let fault = fault::take(&self.scope.root.path);
        if fault == Some(CommitFault::PauseBeforeRenames) {
            fault::pause_here(&self.scope.root.path);
        }
        for k in 0..self.targets.len() {
            match fault {
                Some(CommitFault::FailAfterRenames(n)) if n == k => {
                    return Err(WsfsError::new(
                        ErrorCode::IoError,
                        format!("{}: injected failure", self.targets[k].display),
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
            self.apply(k)?;
        }
        self.sync_dirs()
            .map_err(|e| machinery_error("syncing a directory failed", &e))?;
        // The commit point.
        fault::sys(Sys::Rename)
            .and_then(|()| journal::mark_committed(self.state, &self.journal.id))
            .map_err(|e| machinery_error("cannot mark the commit journal committed", &e))?;
        if fault == Some(CommitFault::AbandonAfterCommitMark) {
            return Err(Step::Abandoned(WsfsError::new(
                ErrorCode::IoError,
                "injected crash",
            )));
        }
        Ok(self.finish())
    }

    /// Step 2 for one op: its place resolved (creating missing directories), its content
    /// staged under its staged name, its old file linked under its backup name.
    fn prepare(&mut self, op: Op<'_>, ctl: &CallControl) -> std::result::Result<(), Step> {
        let k = self.targets.len();
        let entry = &self.journal.entries[k];
        let Op {
            kind,
            place,
            content,
            keep,
            display,
            ..
        } = op;
        let (located, leaf) = resolve_place(self.scope, place, &display, ctl)?;
        // Only the names the journal recorded: a symlink that appeared at a new name, or a
        // directory that must be created and is not in the journal, would be a change no
        // recovery could undo.
        if path_bytes(located.dir_rel()) != entry.dir || leaf.as_bytes() != entry.leaf {
            self.scope.root.undo_created(located);
            return Err(CommitError::Exists(k).into());
        }
        let unrecorded = located
            .created
            .iter()
            .any(|c| !self.journal.created_dirs.contains(&path_bytes(c.rel())));
        if unrecorded {
            self.scope.root.undo_created(located);
            return Err(WsfsError::new(
                ErrorCode::IoError,
                format!("a directory on the way to {display} changed while the patch was being applied; apply it again"),
            )
            .into());
        }
        let dir = self
            .dir_of(&located)
            .map_err(|e| WsfsError::from_io(&e, &display))?;
        drop(located);
        self.targets.push(Target {
            dir,
            leaf,
            kind,
            display,
            staged: None,
            staged_named: false,
            backup_named: false,
            applied: false,
        });
        let t = self.targets.last_mut().expect("just pushed");
        let dir = &self.dirs[t.dir].0;
        if let Some(staged) = &entry.staged {
            let file = stage_file(dir, staged, &content, keep.as_ref(), &t.display, ctl)?;
            t.staged = Some(file);
            t.staged_named = true;
        }
        if let Some(backup) = &entry.backup {
            // A second name of the file the caller holds locked: the lock covers it too.
            fault::sys(Sys::Link)
                .and_then(|()| {
                    rustix::fs::linkat(dir, &t.leaf, dir, backup.as_str(), AtFlags::empty())
                        .map_err(io::Error::from)
                })
                .map_err(|e| WsfsError::from_io(&e, &t.display))?;
            t.backup_named = true;
        }
        Ok(())
    }

    /// The index in `dirs` of `located`'s directory, opened readable the first time.
    fn dir_of(&mut self, located: &Located<'_>) -> io::Result<usize> {
        let stat = rustix::fs::fstat(&*located.dir)?;
        let id = (stat.st_dev, stat.st_ino);
        if let Some(known) = self.dirs.iter().position(|(_, d)| *d == id) {
            return Ok(known);
        }
        fault::sys(Sys::Open)?;
        self.dirs.push((readable_dir(&located.dir)?, id));
        Ok(self.dirs.len() - 1)
    }

    /// Step 3 for target `k`: its rename (or removal).
    fn apply(&mut self, k: usize) -> std::result::Result<(), Step> {
        let entry = &self.journal.entries[k];
        let t = &mut self.targets[k];
        let dir = &self.dirs[t.dir].0;
        let done = match &entry.staged {
            Some(staged) => fault::sys(Sys::Rename)
                .and_then(|()| rename(dir, staged, &t.leaf, t.kind == OpKind::Create)),
            None => fault::sys(Sys::Unlink).and_then(|()| dir.remove_file(&t.leaf)),
        };
        match done {
            Ok(()) => {
                t.applied = true;
                t.staged_named = false;
                Ok(())
            }
            Err(e) if e.raw_os_error() == Some(libc::EEXIST) => Err(CommitError::Exists(k).into()),
            Err(e) => Err(WsfsError::from_io(&e, &t.display).into()),
        }
    }

    fn sync_dirs(&self) -> io::Result<()> {
        for (dir, _) in &self.dirs {
            fault::sys(Sys::Fsync)?;
            rustix::fs::fsync(dir)?;
        }
        Ok(())
    }

    /// Step 6, after the commit point: never undoes anything. What fails is left for the
    /// next open, which finishes the commit; a warning says so.
    fn finish(&mut self) -> Vec<String> {
        match self.clean_up() {
            Ok(()) => Vec::new(),
            Err(e) => vec![format!("the patch is applied, but cleaning up after it failed ({e}): wsfs's hidden backup files and its journal stay until the workspace is next opened, which removes them")],
        }
    }

    fn clean_up(&mut self) -> io::Result<()> {
        // Until the committed name is durable, a power loss could bring back the uncommitted
        // one, whose rollback needs the backups: they stay unless this succeeds.
        fault::sys(Sys::Fsync)?;
        rustix::fs::fsync(self.state)?;
        for (t, entry) in self.targets.iter_mut().zip(&self.journal.entries) {
            if let (true, Some(backup)) = (t.backup_named, &entry.backup) {
                remove_name(&self.dirs[t.dir].0, backup)?;
                t.backup_named = false;
            }
        }
        self.sync_dirs()?;
        remove_name(self.state, &journal::committed_name(&self.journal.id))
    }

    /// Rolls back a commit that failed before its commit point, before the call returns, and
    /// returns the error to report: `cause` when everything is as it was, or an error that
    /// says what is not (the journal then stays for the next open).
    fn roll_back(&mut self, cause: CommitError) -> CommitError {
        let any_applied = self.targets.iter().any(|t| t.applied);
        let mut failure = None;
        for k in (0..self.targets.len()).rev() {
            if let Err(e) = self.undo(k) {
                failure.get_or_insert(e);
            }
        }
        // Undone renames are made durable before the journal that would redo them goes.
        if failure.is_none() && any_applied {
            failure = self.sync_dirs().err();
        }
        // Removing created directories may need a descriptor or two: these.
        self.reserve.clear();
        if failure.is_none() {
            failure = journal::remove_created_dirs(self.scope.root, self.journal).err();
        }
        if failure.is_none() {
            failure = remove_name(self.state, &journal::journal_name(&self.journal.id)).err();
            // Best effort: a journal that comes back after a power loss rolls back nothing.
            let _ = rustix::fs::fsync(self.state);
        }
        match (failure, &cause) {
            // Those codes say nothing changed already.
            (None, CommitError::Failed(e))
                if matches!(e.code, ErrorCode::Cancelled | ErrorCode::Timeout) =>
            {
                cause
            }
            (None, _) => with_note(cause, "the patch was rolled back: nothing was changed"),
            (Some(e), _) => self.unfinished(cause, &e),
        }
    }

    /// Puts target `k` back as it was, with what is held open.
    fn undo(&mut self, k: usize) -> io::Result<()> {
        let entry = &self.journal.entries[k];
        let t = &mut self.targets[k];
        let dir = &self.dirs[t.dir].0;
        if t.applied {
            match (t.kind, &entry.backup) {
                (OpKind::Create, _) => {
                    if names_file(dir, &t.leaf, t.staged.as_ref())? {
                        fault::sys(Sys::Unlink)?;
                        dir.remove_file(&t.leaf)?;
                    }
                }
                (_, Some(backup)) => {
                    // The old inode returns under its name.
                    fault::sys(Sys::Rename)?;
                    dir.rename(backup, dir, &t.leaf)?;
                    t.backup_named = false;
                }
                (_, None) => {}
            }
            t.applied = false;
        }
        if let (true, Some(staged)) = (t.staged_named, &entry.staged) {
            remove_name(dir, staged)?;
            t.staged_named = false;
        }
        if let (true, Some(backup)) = (t.backup_named, &entry.backup) {
            remove_name(dir, backup)?;
            t.backup_named = false;
        }
        Ok(())
    }

    /// The error for a rollback that could not finish: what failed, and exactly which files
    /// are changed until the next open finishes it.
    fn unfinished(&self, cause: CommitError, e: &io::Error) -> CommitError {
        let changed: Vec<String> = self
            .targets
            .iter()
            .filter(|t| t.applied)
            .map(|t| {
                let how = match t.kind {
                    OpKind::Replace => "updated",
                    OpKind::Create => "added",
                    OpKind::Remove => "deleted",
                };
                format!("{} ({how})", t.display)
            })
            .collect();
        if changed.is_empty() {
            return with_note(cause, &format!("nothing was changed, but cleaning up after the rolled-back patch failed ({e}): wsfs's hidden temp files, the empty directories it created or its journal stay until the workspace is next opened, which removes them"));
        }
        let what = describe(&cause);
        CommitError::Failed(WsfsError::new(
            ErrorCode::IoError,
            format!("{what}; rolling the patch back failed too ({e}), so until the workspace is next opened (which finishes the rollback) these files are changed: {}; every other file is as it was. Do not retry: tell the user that the file system is failing and that reopening the workspace restores the files", changed.join(", ")),
        ))
    }
}

/// What `cause` says, for a longer message.
fn describe(cause: &CommitError) -> String {
    match cause {
        CommitError::Exists(_) => "a file to create appeared meanwhile".to_string(),
        CommitError::Failed(e) => e.message.clone(),
    }
}

/// `cause` with `note` added to its message (an `Exists` stays as it is: it is reported as a
/// rejection, whose text already says nothing was written).
fn with_note(cause: CommitError, note: &str) -> CommitError {
    match cause {
        CommitError::Failed(mut e) => {
            e.message = format!("{}; {note}", e.message);
            CommitError::Failed(e)
        }
        other => other,
    }
}

/// Whether `leaf` in `dir` (not followed) is the open `file`.
fn names_file(dir: &Dir, leaf: &OsStr, file: Option<&std::fs::File>) -> io::Result<bool> {
    let Some(file) = file else { return Ok(false) };
    fault::sys(Sys::Stat)?;
    let named = match rustix::fs::statat(dir, leaf, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(stat) => stat,
        Err(rustix::io::Errno::NOENT) => return Ok(false),
        Err(e) => return Err(e.into()),
    };
    let open = rustix::fs::fstat(file)?;
    Ok((named.st_dev, named.st_ino) == (open.st_dev, open.st_ino))
}
