//! Recursive deletion beneath directory handles, for `delete_file {recursive: true}`.
//!
//! - Post-order: a directory is removed (`unlinkat(AT_REMOVEDIR)` on its parent's handle)
//!   after its contents; files, symlinks and special files with `unlinkat` on the handle of
//!   the directory they were listed in. Nothing is ever opened but directories, and a symlink
//!   is removed, never followed.
//! - Every directory is opened as one name inside its parent's handle (`O_NOFOLLOW |
//!   O_DIRECTORY`, [`sys::open_child_dir`]) and must be the entry listed (its inode, on the
//!   parent's file system: a mount point or bind mount is never entered), or is reopened beneath the top
//!   directory with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` ([`sys::reopen_beneath`])
//!   and checked to be the same directory. A directory swapped for a symlink mid-walk is
//!   therefore either the directory we hold (still inside) or refused: the deletion never
//!   leaves the tree it started in. A directory is removed only if its name still holds the
//!   directory that was emptied.
//! - At most `MAX_OPEN_DIRS` + 2 directory handles are open, however deep the tree.
//! - Memory is bounded by a name budget: names are read in batches from each directory's
//!   read position (`getdents64` continues where it stopped, so a batch never re-reads what an
//!   earlier one removed); unlike the sorted walk in [`super::dfs`], deletion needs no order.
//! - Bounded by the call's deadline (checked at every entry) and by `max_entries` removals.
//!   A stop part-way is reported, not hidden: see [`Removal`].
//! - An entry that cannot be removed (permission, a mount point, a live wsfs write's temp
//!   file, the host's deny hook) is left with everything above it, and reported; the rest of
//!   the tree is still removed.

use super::names::shown;
use crate::control::CallControl;
use crate::error::{ErrorCode, WsfsError};
use crate::sys::{self, Kind};
use crate::tempfile::{is_temp_name, remove_if_unlocked};
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, RawDir, SeekFrom};
use rustix::io::Errno;
use std::collections::HashSet;
use std::ffi::OsStr;
use std::io;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::rc::Rc;

/// Directory handles kept open below the top; deeper ancestors are closed and reopened.
const MAX_OPEN_DIRS: usize = 8;

/// Names held in memory by all levels together, and the smallest batch a level gets.
const NAME_BUDGET: usize = 16 * 1024;
const MIN_BATCH: usize = 64;

/// Reads of one directory when it is still not empty after its entries were removed
/// (entries added meanwhile, or missed by a file system's `getdents` while removing).
const MAX_PASSES: u8 = 3;

/// Entries of one directory left in place before the rest of it is given up on.
const MAX_KEPT_PER_DIR: usize = 1024;

/// Entries that could not be removed, reported by path (the rest are counted).
pub const MAX_REPORTED: usize = 10;

/// Directory entries read between deadline checks.
const CHECK_EVERY: u64 = 128;

/// Device and inode.
type FileId = (u64, u64);

/// What a recursive deletion does besides removing.
/// Whether the entry at a path relative to the deleted directory must stay.
pub type RemoveDenyHook<'a> = &'a dyn Fn(&[u8], Kind) -> bool;

pub struct RemoveOptions<'a> {
    /// Removals at most; the deletion stops (reported) when the next would pass it.
    pub max_entries: u64,
    /// Never removed, never entered (the workspace root, in unrestricted mode).
    pub protect: Option<FileId>,
    /// The workspace policy (deny_write, the audit log): an entry (path relative to the
    /// deleted directory) for which this returns true is left in place with everything above
    /// it, and reported.
    pub deny: Option<RemoveDenyHook<'a>>,
}

/// Why a deletion stopped before removing everything.
#[derive(Debug)]
pub enum Halt {
    /// The deadline passed or the call was cancelled (the `timeout`/`cancelled` error).
    Call(WsfsError),
    /// `max_entries` removals were made.
    EntryLimit,
    /// Some entries could not be removed (see `not_removed`).
    NotRemoved,
}

/// An entry left in place, and why.
#[derive(Debug)]
pub struct NotRemoved {
    /// Relative to the deleted directory, `/`-separated, shown as the tools accept it; empty
    /// for the directory itself.
    pub rel: String,
    pub reason: String,
    /// The error code a failed call would have had.
    pub code: ErrorCode,
}

/// What a recursive deletion did.
#[derive(Debug)]
pub struct Removal {
    /// Entries removed, the directory itself included.
    pub removed: u64,
    /// `None`: the directory and everything in it are gone.
    pub halt: Option<Halt>,
    /// The first entries that could not be removed (at most `MAX_REPORTED`).
    pub not_removed: Vec<NotRemoved>,
    pub not_removed_count: u64,
}

/// Names read from a directory and not handled yet.
#[derive(Default)]
struct Pending {
    arena: Vec<u8>,
    items: Vec<(u32, u32, Kind, u64)>,
    next: usize,
}

impl Pending {
    fn len(&self) -> usize {
        self.items.len()
    }

    fn clear(&mut self) {
        self.arena.clear();
        self.items.clear();
        self.next = 0;
    }

    fn push(&mut self, name: &[u8], kind: Kind, ino: u64) {
        let start = self.arena.len() as u32;
        self.arena.extend_from_slice(name);
        self.items.push((start, name.len() as u32, kind, ino));
    }

    /// The next name (copied out, so the frame can change while it is handled).
    fn take(&mut self, into: &mut Vec<u8>) -> Option<(Kind, u64)> {
        let &(start, len, kind, ino) = self.items.get(self.next)?;
        self.next += 1;
        into.clear();
        into.extend_from_slice(&self.arena[start as usize..(start + len) as usize]);
        Some((kind, ino))
    }
}

struct Frame {
    /// `None` while closed to bound descriptors (never for the top).
    dir: Option<Rc<Dir>>,
    id: FileId,
    /// Length of this directory's path (relative to the top) in `Remover::path`, and where
    /// its own name starts there.
    path_len: usize,
    name_start: usize,
    pending: Pending,
    /// `getdents` reached the end since the directory was last rewound.
    at_end: bool,
    /// Reads of the directory from its start so far.
    passes: u8,
    /// Names left in place here, skipped when the directory is read again.
    kept: HashSet<Box<[u8]>>,
    /// Something in this directory stays, so it cannot be removed.
    blocked: bool,
}

impl Frame {
    fn new(dir: Dir, id: FileId, path_len: usize, name_start: usize) -> Frame {
        Frame {
            dir: Some(Rc::new(dir)),
            id,
            path_len,
            name_start,
            pending: Pending::default(),
            at_end: false,
            passes: 1,
            kept: HashSet::new(),
            blocked: false,
        }
    }

    /// Starts reading the directory again from its first entry.
    fn rewind(&mut self) {
        self.passes += 1;
        self.at_end = false;
        self.pending.clear();
        if let Some(dir) = &self.dir {
            let _ = rustix::fs::seek(&**dir, SeekFrom::Start(0));
        }
    }
}

struct Remover<'a> {
    /// The directory holding the top directory, and the top's name in it.
    parent: &'a Dir,
    top_name: &'a OsStr,
    opts: &'a RemoveOptions<'a>,
    ctl: &'a CallControl,
    budget: usize,
    /// The top directory first, then the directories being emptied below it.
    frames: Vec<Frame>,
    /// The path of the entry being handled, relative to the top directory.
    path: Vec<u8>,
    /// The name of the entry being handled.
    name: Vec<u8>,
    buf: Vec<u8>,
    held_names: usize,
    out: Removal,
}

/// Removes the directory `name` in `parent`, which must be the directory `id`, and
/// everything in it. Errors only when the directory cannot be opened as that directory
/// (`ESTALE`: replaced since) or is a mount point (`EXDEV`): nothing was removed then; every
/// other outcome, a stop part-way included, is a [`Removal`].
pub fn remove_tree(
    parent: &Dir,
    name: &OsStr,
    id: FileId,
    opts: &RemoveOptions<'_>,
    ctl: &CallControl,
) -> io::Result<Removal> {
    remove_tree_with_budget(parent, name, id, opts, ctl, NAME_BUDGET)
}

fn remove_tree_with_budget(
    parent: &Dir,
    name: &OsStr,
    id: FileId,
    opts: &RemoveOptions<'_>,
    ctl: &CallControl,
    budget: usize,
) -> io::Result<Removal> {
    let fd = sys::open_child_dir(parent.as_fd(), name.as_bytes())?;
    if sys::identity(fd.as_fd())? != id {
        // Replaced since it was resolved: nothing is removed.
        return Err(io::Error::from_raw_os_error(libc::ESTALE));
    }
    if id.0 != sys::identity(parent.as_fd())?.0 || sys::is_mount_root(fd.as_fd()) == Some(true) {
        // A mount point: its contents belong to another file system (or, for a bind mount,
        // to a directory that may lie anywhere).
        return Err(io::Error::from_raw_os_error(libc::EXDEV));
    }
    let mut r = Remover {
        parent,
        top_name: name,
        opts,
        ctl,
        budget,
        frames: vec![Frame::new(into_dir(fd), id, 0, 0)],
        path: Vec::new(),
        name: Vec::new(),
        buf: Vec::with_capacity(super::names::DIRENT_BUFFER),
        held_names: 0,
        out: Removal {
            removed: 0,
            halt: None,
            not_removed: Vec::new(),
            not_removed_count: 0,
        },
    };
    match r.run() {
        Err(halt) => r.out.halt = Some(halt),
        Ok(()) if r.out.not_removed_count > 0 => r.out.halt = Some(Halt::NotRemoved),
        Ok(()) => {}
    }
    Ok(r.out)
}

fn into_dir(fd: OwnedFd) -> Dir {
    Dir::from_std_file(std::fs::File::from(fd))
}

/// An OS error as a reason, without the error number's decoration.
fn describe(e: &io::Error) -> String {
    match e.raw_os_error() {
        Some(libc::EACCES | libc::EPERM) => "permission denied".into(),
        Some(libc::EBUSY) => "in use (a mount point?)".into(),
        Some(libc::EROFS) => "on a read-only file system".into(),
        _ => e.to_string(),
    }
}

impl<'a> Remover<'a> {
    fn run(&mut self) -> Result<(), Halt> {
        while let Some(top) = self.frames.len().checked_sub(1) {
            self.ctl.check().map_err(Halt::Call)?;
            let Some(dir) = self.open_dir(top) else {
                self.abandon(top);
                continue;
            };
            let frame = &mut self.frames[top];
            if let Some((kind, ino)) = frame.pending.take(&mut self.name) {
                self.path.truncate(frame.path_len);
                if !self.path.is_empty() {
                    self.path.push(b'/');
                }
                self.path.extend_from_slice(&self.name);
                self.handle(top, &dir, kind, ino)?;
            } else if !frame.at_end {
                self.read_more(top, &dir)?;
            } else {
                self.finish(top)?;
            }
        }
        Ok(())
    }

    /// Handles the entry `self.name` (path `self.path`) of frame `i`, whose handle is `dir`.
    fn handle(&mut self, i: usize, dir: &Dir, kind: Kind, ino: u64) -> Result<(), Halt> {
        let kind = match kind {
            Kind::Unknown => match sys::lstat(dir.as_fd(), &self.name) {
                Ok(st) => st.kind,
                Err(_) => return Ok(()), // gone since it was listed
            },
            kind => kind,
        };
        if self.opts.deny.is_some_and(|deny| deny(&self.path, kind)) {
            let reason = "the workspace policy does not allow deleting it";
            self.keep(i, reason.into(), ErrorCode::PermissionDenied);
            return Ok(());
        }
        if kind == Kind::Dir {
            self.descend(i, dir, ino);
            return Ok(());
        }
        self.charge()?;
        if kind == Kind::File && is_temp_name(&self.name) {
            // wsfs's own temp file: a crash leftover is removed, a live writer's is kept.
            if remove_if_unlocked(dir, OsStr::from_bytes(&self.name)) {
                self.removed(self.path.len());
            } else if sys::lstat(dir.as_fd(), &self.name).is_ok() {
                let reason = "a wsfs write in progress holds this temporary file; try again \
                              when it has finished";
                self.keep(i, reason.into(), ErrorCode::IoError);
            }
            return Ok(());
        }
        // Files, symlinks, FIFOs, sockets, devices: removed by name, never opened.
        match rustix::fs::unlinkat(dir, self.name.as_slice(), AtFlags::empty()) {
            Ok(()) => self.removed(self.path.len()),
            Err(Errno::NOENT) => {}
            // Swapped for a directory since it was listed: a later pass sees what it is now.
            Err(Errno::ISDIR) => self.replaced(i),
            Err(e) => self.keep_io(i, e.into()),
        }
        Ok(())
    }

    /// Enters the directory `self.name` of frame `i`, listed with inode `ino`.
    fn descend(&mut self, i: usize, dir: &Dir, ino: u64) {
        let child = match sys::open_child_dir(dir.as_fd(), &self.name) {
            Ok(fd) => fd,
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return,
            // Swapped for a symlink or a file since it was listed: never followed; a later
            // pass lists it as what it is now.
            Err(e) if matches!(e.raw_os_error(), Some(libc::ELOOP | libc::ENOTDIR)) => {
                self.replaced(i);
                return;
            }
            Err(e) => return self.keep_io(i, e),
        };
        let Ok(id) = sys::identity(child.as_fd()) else {
            return self.replaced(i);
        };
        if id.0 != self.frames[i].id.0 || sys::is_mount_root(child.as_fd()) == Some(true) {
            let reason = "a mount point (another file system), which delete_file does not \
                          cross into";
            return self.keep(i, reason.into(), ErrorCode::PermissionDenied);
        }
        if Some(id) == self.opts.protect {
            return self.keep(i, "the workspace root".into(), ErrorCode::InvalidPath);
        }
        // The entry listed? (Some file systems' getdents inodes differ from stat's: then the
        // name must hold what we opened.)
        let listed = ino == 0
            || id.1 == ino
            || sys::lstat(dir.as_fd(), &self.name).is_ok_and(|st| st.id == id);
        if !listed {
            return self.replaced(i);
        }
        let name_start = self.path.len() - self.name.len();
        let frame = Frame::new(into_dir(child), id, self.path.len(), name_start);
        self.frames.push(frame);
        // Keep descriptors bounded: close the handle of the ancestor MAX_OPEN_DIRS up.
        if let Some(far) = self.frames.len().checked_sub(MAX_OPEN_DIRS + 1) {
            if far > 0 {
                self.frames[far].dir = None;
            }
        }
    }

    /// An entry of frame `i` changed kind while being removed: read the directory again
    /// (a bounded number of times) rather than guess what the name holds now.
    fn replaced(&mut self, i: usize) {
        if self.frames[i].passes < MAX_PASSES {
            self.held_names -= self.frames[i].pending.len();
            self.frames[i].rewind();
        } else {
            let reason = "replaced again and again during the deletion";
            self.keep(i, reason.into(), ErrorCode::IoError);
        }
    }

    /// Reads the next batch of frame `i`'s names from where the last read stopped.
    fn read_more(&mut self, i: usize, dir: &Dir) -> Result<(), Halt> {
        self.held_names -= self.frames[i].pending.len();
        let cap = self
            .budget
            .saturating_sub(self.held_names)
            .max(MIN_BATCH.min(self.budget));
        let frame = &mut self.frames[i];
        frame.pending.clear();
        let mut raw = RawDir::new(dir, self.buf.spare_capacity_mut());
        let mut seen = 0u64;
        let mut resume = None;
        let mut failed = None;
        loop {
            let entry = match raw.next() {
                None => {
                    frame.at_end = true;
                    break;
                }
                Some(Err(e)) => {
                    failed = Some(io::Error::from(e));
                    break;
                }
                Some(Ok(entry)) => entry,
            };
            let name = entry.file_name().to_bytes();
            if name == b"." || name == b".." {
                continue;
            }
            if seen.is_multiple_of(CHECK_EVERY) {
                self.ctl.check().map_err(Halt::Call)?;
            }
            seen += 1;
            if frame.kept.contains(name) {
                continue;
            }
            let kind = Kind::from_file_type(entry.file_type());
            frame.pending.push(name, kind, entry.ino());
            let cookie = entry.next_entry_cookie();
            if frame.pending.len() >= cap {
                if !raw.is_buffer_empty() {
                    resume = Some(cookie);
                }
                break;
            }
        }
        if let Some(cookie) = resume {
            // Continue after the last name taken. Should a file system refuse the cookie,
            // the next read starts over, which only re-reads what is still there.
            if rustix::fs::seek(dir, SeekFrom::Start(cookie)).is_err() {
                let _ = rustix::fs::seek(dir, SeekFrom::Start(0));
            }
        }
        self.held_names += frame.pending.len();
        if frame.kept.len() > MAX_KEPT_PER_DIR {
            // Too much of it stays: give up on the rest of this directory.
            frame.pending.clear();
            frame.at_end = true;
        }
        if let Some(e) = failed {
            let code = WsfsError::from_io(&e, "").code;
            self.keep_frame(i, format!("could not be read ({})", describe(&e)), code);
        }
        Ok(())
    }

    /// Frame `i`'s contents are handled: remove the directory itself (or read it again if
    /// something appeared in it), and leave it.
    fn finish(&mut self, i: usize) -> Result<(), Halt> {
        if self.frames[i].blocked {
            self.pop_kept(i);
            return Ok(());
        }
        let held;
        let parent: &Dir = match i.checked_sub(1) {
            None => self.parent,
            Some(p) => match self.open_dir(p) {
                Some(dir) => {
                    held = dir;
                    &held
                }
                None => {
                    self.pop_kept(i);
                    return Ok(());
                }
            },
        };
        let name: Vec<u8> = self.frame_name(i).to_vec();
        // Only the directory we emptied is removed, never one swapped in under its name.
        match sys::lstat(parent.as_fd(), &name) {
            Ok(st) if st.id == self.frames[i].id => {}
            Err(e) if e.raw_os_error() == Some(libc::ENOENT) => {
                self.pop(); // removed by someone else
                return Ok(());
            }
            _ => {
                let reason = "replaced during the deletion";
                self.keep_frame(i, reason.into(), ErrorCode::IoError);
                return Ok(());
            }
        }
        self.charge()?;
        match rustix::fs::unlinkat(parent, name.as_slice(), AtFlags::REMOVEDIR) {
            Ok(()) => {
                self.removed(self.frames[i].path_len);
                self.pop();
            }
            Err(Errno::NOENT) => self.pop(),
            // Entries appeared, or a file system's getdents skipped some while we removed:
            // read it again from the start.
            Err(Errno::NOTEMPTY | Errno::EXIST) if self.frames[i].passes < MAX_PASSES => {
                self.held_names -= self.frames[i].pending.len();
                self.frames[i].rewind();
            }
            Err(Errno::NOTEMPTY | Errno::EXIST) => {
                let reason = "not empty: entries were added to it during the deletion";
                self.keep_frame(i, reason.into(), ErrorCode::IoError);
            }
            Err(e) => {
                let e = io::Error::from(e);
                let code = WsfsError::from_io(&e, "").code;
                self.keep_frame(i, describe(&e), code);
            }
        }
        Ok(())
    }

    /// Frame `i`'s name in its parent.
    fn frame_name(&self, i: usize) -> &[u8] {
        if i == 0 {
            return self.top_name.as_bytes();
        }
        let f = &self.frames[i];
        &self.path[f.name_start..f.path_len]
    }

    /// Frame `i`'s handle, reopened beneath the top if it was closed; `None` if it is gone
    /// or no longer the same directory.
    fn open_dir(&mut self, i: usize) -> Option<Rc<Dir>> {
        if let Some(dir) = &self.frames[i].dir {
            return Some(dir.clone());
        }
        let top = self.frames[0].dir.clone()?;
        let rel = &self.path[..self.frames[i].path_len];
        let fd = sys::reopen_beneath(top.as_fd(), rel).ok()?;
        if sys::identity(fd.as_fd()).ok()? != self.frames[i].id {
            return None;
        }
        let dir = Rc::new(into_dir(fd));
        self.frames[i].dir = Some(dir.clone());
        Some(dir)
    }

    /// Frame `i` (the innermost) can no longer be reached as the directory it was.
    fn abandon(&mut self, i: usize) {
        let reason = "moved or replaced during the deletion; what it still holds was left";
        self.keep_frame(i, reason.into(), ErrorCode::IoError);
    }

    /// The entry being handled in frame `i` stays where it is.
    fn keep(&mut self, i: usize, reason: String, code: ErrorCode) {
        let frame = &mut self.frames[i];
        frame.kept.insert(self.name.as_slice().into());
        frame.blocked = true;
        let rel = shown(&self.path).into_owned();
        self.record(rel, reason, code);
    }

    fn keep_io(&mut self, i: usize, e: io::Error) {
        let code = WsfsError::from_io(&e, "").code;
        self.keep(i, describe(&e), code);
    }

    /// Frame `i` (the innermost) stays, and so does everything above it.
    fn keep_frame(&mut self, i: usize, reason: String, code: ErrorCode) {
        let rel = shown(&self.path[..self.frames[i].path_len]).into_owned();
        self.record(rel, reason, code);
        self.pop_kept(i);
    }

    /// Leaves frame `i` (the innermost), whose directory stays: its parent stays too.
    fn pop_kept(&mut self, i: usize) {
        let name: Box<[u8]> = self.frame_name(i).into();
        self.pop();
        if let Some(parent) = i.checked_sub(1) {
            self.frames[parent].kept.insert(name);
            self.frames[parent].blocked = true;
        }
    }

    fn pop(&mut self) {
        if let Some(f) = self.frames.pop() {
            self.held_names -= f.pending.len();
        }
    }

    fn record(&mut self, rel: String, reason: String, code: ErrorCode) {
        self.out.not_removed_count += 1;
        if self.out.not_removed.len() < MAX_REPORTED {
            self.out.not_removed.push(NotRemoved { rel, reason, code });
        }
    }

    /// Refuses the next removal when it would pass `max_entries`.
    fn charge(&self) -> Result<(), Halt> {
        if self.out.removed >= self.opts.max_entries {
            return Err(Halt::EntryLimit);
        }
        Ok(())
    }

    /// Counts one removal: the entry at `self.path[..rel_len]` (relative to the top
    /// directory; empty for the top itself). Audit seam: every path a recursive deletion
    /// removes passes here, once, right after its removal.
    fn removed(&mut self, rel_len: usize) {
        let _removed_rel = &self.path[..rel_len];
        self.out.removed += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::path::Path;
    use std::time::Duration;

    fn tree(top: &Path, dirs: usize, files: usize) -> u64 {
        for d in 0..dirs {
            let dir = top.join(format!("d{d}")).join("sub");
            std::fs::create_dir_all(&dir).unwrap();
            for f in 0..files {
                std::fs::write(dir.join(format!("f{f:03}")), b"x").unwrap();
                std::fs::write(top.join(format!("d{d}/g{f:03}")), b"y").unwrap();
            }
        }
        // Every file twice, two directories per `dirs`, and the top.
        (dirs * (2 * files + 2) + 1) as u64
    }

    fn run(top: &Path, opts: &RemoveOptions<'_>, budget: usize) -> io::Result<Removal> {
        let parent = Dir::open_ambient_dir(top.parent().unwrap(), ambient_authority()).unwrap();
        let meta = std::fs::symlink_metadata(top).unwrap();
        use std::os::unix::fs::MetadataExt;
        let ctl = CallControl::new(Duration::from_secs(30), None);
        let name = top.file_name().unwrap();
        remove_tree_with_budget(&parent, name, (meta.dev(), meta.ino()), opts, &ctl, budget)
    }

    fn opts(max_entries: u64) -> RemoveOptions<'static> {
        RemoveOptions {
            max_entries,
            protect: None,
            deny: None,
        }
    }

    #[test]
    fn small_batches_continue_where_they_stopped() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        let total = tree(&top, 3, 50);
        let out = run(&top, &opts(u64::MAX), 4).unwrap();
        assert!(out.halt.is_none(), "{:?}", out.halt);
        assert_eq!(out.removed, total);
        assert!(!top.exists());
    }

    #[test]
    fn the_entry_limit_stops_and_says_so() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        let total = tree(&top, 2, 20);
        let out = run(&top, &opts(10), NAME_BUDGET).unwrap();
        assert!(matches!(out.halt, Some(Halt::EntryLimit)), "{:?}", out.halt);
        assert_eq!(out.removed, 10);
        let out = run(&top, &opts(u64::MAX), NAME_BUDGET).unwrap();
        assert!(out.halt.is_none());
        assert_eq!(out.removed, total - 10);
    }

    #[test]
    fn denied_entries_stay_with_the_directories_holding_them() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        let total = tree(&top, 2, 3);
        let deny = |rel: &[u8], _: Kind| rel == b"d1/sub/f001";
        let opts = RemoveOptions {
            max_entries: u64::MAX,
            protect: None,
            deny: Some(&deny),
        };
        let out = run(&top, &opts, NAME_BUDGET).unwrap();
        assert!(matches!(out.halt, Some(Halt::NotRemoved)), "{:?}", out.halt);
        assert_eq!(out.not_removed_count, 1);
        assert_eq!(out.not_removed[0].rel, "d1/sub/f001");
        assert_eq!(out.not_removed[0].code, ErrorCode::PermissionDenied);
        // Everything but the file, the two directories above it and the top.
        assert_eq!(out.removed, total - 4);
        assert!(top.join("d1/sub/f001").exists());
        assert!(!top.join("d0").exists() && !top.join("d1/g000").exists());
    }

    #[test]
    fn a_replaced_top_directory_is_left_alone() {
        let tmp = tempfile::tempdir().unwrap();
        let top = tmp.path().join("t");
        tree(&top, 1, 1);
        let parent = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        let ctl = CallControl::new(Duration::from_secs(30), None);
        let err = remove_tree(&parent, OsStr::new("t"), (0, 0), &opts(u64::MAX), &ctl)
            .err()
            .unwrap();
        assert_eq!(err.raw_os_error(), Some(libc::ESTALE));
        assert!(top.join("d0/sub/f000").exists());
    }
}
