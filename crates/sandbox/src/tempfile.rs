//! wsfs's temporary files: content that gets a name only once it is complete and durable.
//!
//! A file is staged as an unnamed `O_TMPFILE` inode in the target's directory, written, fsynced,
//! and only then linked into place: a new file gets its final name at once (`linkat`), a
//! replaced file is linked under a temp name and renamed over the target (`rename` is the only
//! atomic replace). A crash before the link leaves nothing behind. Where `O_TMPFILE` is not
//! supported (some file systems, no `/proc`), the file is created under its temp name from the
//! start, as before.
//!
//! Temp names are exactly `.wsfs-` + 16 lowercase hex digits + `.tmp` ([`is_temp_name`]), for
//! every temp file wsfs makes: a write's staged file, and a multi-file commit's staged files
//! and backups (see `commit`), whose names its journal records. A writer holds an exclusive
//! `flock` on its temp file for as long as the temp name exists, so [`sweep_leftovers`] (run
//! when a workspace is opened) removes only files no live writer, in any process, still owns.

use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, MetadataExt, OpenOptions, OpenOptionsExt};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::collections::hash_map::RandomState;
use std::collections::{HashSet, VecDeque};
use std::ffi::{OsStr, OsString};
use std::hash::{BuildHasher, Hasher};
use std::io;
use std::os::fd::AsRawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

const TEMP_PREFIX: &[u8] = b".wsfs-";
const TEMP_SUFFIX: &[u8] = b".tmp";
const TEMP_HEX_DIGITS: usize = 16;

/// Mode of staged files; the umask applies, and a replaced file's mode is set afterwards.
const STAGED_MODE: u32 = 0o644;

/// Attempts at a fresh random temp name before giving up (a collision is already unlikely).
const NAME_ATTEMPTS: usize = 64;

/// Whether `name` is one of wsfs's own temp names. Walkers skip these names and tools refuse
/// them, so an agent never sees or touches a half-written file.
pub fn is_temp_name(name: &[u8]) -> bool {
    let Some(middle) = name
        .strip_prefix(TEMP_PREFIX)
        .and_then(|rest| rest.strip_suffix(TEMP_SUFFIX))
    else {
        return false;
    };
    middle.len() == TEMP_HEX_DIGITS
        && middle
            .iter()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(b))
}

/// A fresh random temp name.
pub fn temp_name() -> String {
    format!(".wsfs-{:016x}.tmp", random_u64())
}

/// An unpredictable number: std's per-process random SipHash keys over a counter and the time.
pub fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    let mut hasher = RandomState::new().build_hasher();
    hasher.write_u64(COUNTER.fetch_add(1, Ordering::Relaxed));
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    hasher.write_u128(now);
    hasher.finish()
}

/// A file being staged in `dir`. Dropping it before [`Staged::commit`] removes its temp name
/// (if it has one) while still holding its lock.
pub struct Staged<'a> {
    dir: &'a Dir,
    file: std::fs::File,
    /// The temp name the file has in `dir`; `None` while it is an unnamed `O_TMPFILE`.
    name: Option<String>,
}

impl<'a> Staged<'a> {
    /// An empty, locked file in `dir`: unnamed where the kernel and file system allow it.
    pub fn create(dir: &'a Dir) -> io::Result<Staged<'a>> {
        if proc_fd_available() {
            match create_unnamed(dir) {
                Ok(file) => {
                    // Locked before it ever has a name, so a sweep never takes it. Where the
                    // file system has no flock, no sweep can lock (and remove) it either.
                    let _ = file.try_lock();
                    return Ok(Staged {
                        dir,
                        file,
                        name: None,
                    });
                }
                Err(e) if !tmpfile_unsupported(&e) => return Err(e),
                Err(_) => {}
            }
        }
        let (name, file) = create_named(dir)?;
        Ok(Staged {
            dir,
            file,
            name: Some(name),
        })
    }

    pub fn file(&mut self) -> &mut std::fs::File {
        &mut self.file
    }

    /// Whether the file is staged without a name (for tests and logs).
    #[cfg(test)]
    pub fn is_unnamed(&self) -> bool {
        self.name.is_none()
    }

    /// Gives the complete, fsynced file the name `leaf` in the directory: the commit point.
    /// With `new_file`, an unnamed file is linked straight to `leaf`; if the name appeared
    /// meanwhile (or for a replacement) it is linked under a temp name and renamed over it.
    pub fn commit(mut self, leaf: &OsStr, new_file: bool) -> io::Result<()> {
        if self.name.is_none() {
            if new_file {
                match self.link_as(leaf.as_bytes()) {
                    Ok(()) => return Ok(()),
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {}
                    Err(e) => return Err(e),
                }
            }
            self.link_under_temp_name()?;
        }
        if let Some(name) = &self.name {
            self.dir.rename(name, self.dir, leaf)?;
        }
        self.name = None;
        Ok(())
    }

    /// Gives the complete, fsynced file the name `leaf` only if nothing has that name yet: the
    /// commit point of a create-only write and of a patch's added file. The kernel decides,
    /// atomically: `linkat` never replaces a name, so an existing one (or one that appeared
    /// meanwhile) fails with `AlreadyExists` and nothing is named. A named temp file is
    /// hard-linked to `leaf` (its temp name is then removed); on a file system without hard
    /// links it is renamed with `RENAME_NOREPLACE` instead.
    pub fn commit_new(mut self, leaf: &OsStr) -> io::Result<()> {
        let Some(name) = self.name.clone() else {
            return self.link_as(leaf.as_bytes());
        };
        let linked = rustix::fs::linkat(
            self.dir,
            name.as_str(),
            self.dir,
            leaf.as_bytes(),
            AtFlags::empty(),
        );
        match linked {
            // Dropping `self` removes the temp name; the file keeps `leaf`.
            Ok(()) => Ok(()),
            Err(Errno::PERM | Errno::OPNOTSUPP | Errno::NOSYS) => {
                rustix::fs::renameat_with(
                    self.dir,
                    name.as_str(),
                    self.dir,
                    leaf.as_bytes(),
                    RenameFlags::NOREPLACE,
                )?;
                self.name = None;
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Gives the complete, fsynced file the temp name `name`, chosen beforehand (a commit's
    /// journal records it before the file exists), never replacing an existing name. Returns
    /// the open file: it keeps the file's `flock` (a `dup` shares it) until it is closed, so
    /// no sweep removes the name meanwhile. Whoever recorded the name removes it; dropping
    /// the returned file does not.
    pub fn name_as(self, name: &str) -> io::Result<std::fs::File> {
        debug_assert!(is_temp_name(name.as_bytes()), "{name}");
        self.name_locked(OsStr::new(name))
    }

    /// Gives the complete, fsynced file the name `leaf` only if nothing has that name yet, and
    /// returns the open file, which keeps the staged file's `flock` until it is closed: so a
    /// commit journal appears whole and already locked, and no recovery reads it half-written.
    pub fn name_locked(mut self, leaf: &OsStr) -> io::Result<std::fs::File> {
        let file = self.file.try_clone()?;
        match &self.name {
            None => self.link_as(leaf.as_bytes())?,
            Some(current) => rustix::fs::renameat_with(
                self.dir,
                current.as_str(),
                self.dir,
                leaf,
                RenameFlags::NOREPLACE,
            )?,
        }
        self.name = None;
        Ok(file)
    }

    /// `linkat` of the unnamed file through its `/proc/self/fd` magic link, which (unlike
    /// `AT_EMPTY_PATH`) needs no privilege. `name` is one name inside `dir`; an existing name is
    /// never replaced (`EEXIST`).
    fn link_as(&self, name: &[u8]) -> io::Result<()> {
        let magic = format!("/proc/self/fd/{}", self.file.as_raw_fd());
        rustix::fs::linkat(
            rustix::fs::CWD,
            magic.as_str(),
            self.dir,
            name,
            AtFlags::SYMLINK_FOLLOW,
        )
        .map_err(io::Error::from)
    }

    fn link_under_temp_name(&mut self) -> io::Result<()> {
        for _ in 0..NAME_ATTEMPTS {
            let name = temp_name();
            match self.link_as(name.as_bytes()) {
                Ok(()) => {
                    self.name = Some(name);
                    return Ok(());
                }
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
                Err(e) => return Err(e),
            }
        }
        Err(io::Error::other("no free temporary file name"))
    }
}

impl Drop for Staged<'_> {
    fn drop(&mut self) {
        if let Some(name) = self.name.take() {
            // Still locked here: the file is closed (and unlocked) only after this.
            let _ = self.dir.remove_file(name);
        }
    }
}

fn create_unnamed(dir: &Dir) -> io::Result<std::fs::File> {
    // `.` relative to the handle: cap-std may hold directories as `O_PATH`, which `openat`
    // accepts as the starting directory.
    let fd = rustix::fs::openat(
        dir,
        ".",
        OFlags::TMPFILE | OFlags::WRONLY | OFlags::CLOEXEC,
        Mode::from_raw_mode(STAGED_MODE),
    )?;
    Ok(std::fs::File::from(fd))
}

/// Errors meaning "this kernel or file system has no `O_TMPFILE`": use a named temp file.
fn tmpfile_unsupported(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EOPNOTSUPP | libc::EISDIR | libc::EINVAL)
    )
}

/// Whether `/proc/self/fd` exists, which `linkat` of an unnamed file needs (checked once).
fn proc_fd_available() -> bool {
    static AVAILABLE: OnceLock<bool> = OnceLock::new();
    *AVAILABLE.get_or_init(|| Path::new("/proc/self/fd").is_dir())
}

/// A new temp file under a random name (`O_EXCL`, no follow), locked, and still under that
/// name once locked (a sweep may take an unlocked name between our create and our lock).
fn create_named(dir: &Dir) -> io::Result<(String, std::fs::File)> {
    let mut opts = OpenOptions::new();
    opts.write(true)
        .create_new(true)
        .follow(FollowSymlinks::No)
        .mode(STAGED_MODE)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
    for _ in 0..NAME_ATTEMPTS {
        let name = temp_name();
        let file = match dir.open_with(&name, &opts) {
            Ok(file) => file.into_std(),
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        };
        match file.try_lock() {
            // A sweep holds it and will remove it: take another name.
            Err(std::fs::TryLockError::WouldBlock) => continue,
            // Where the file system has no flock, no sweep can lock (and remove) it either.
            Ok(()) | Err(std::fs::TryLockError::Error(_)) => {}
        }
        if names_file(dir, name.as_ref(), &file) {
            return Ok((name, file));
        }
    }
    Err(io::Error::other("no free temporary file name"))
}

/// Whether `name` in `dir` (not followed) is the same inode as the open `file`.
fn names_file(dir: &Dir, name: &OsStr, file: &std::fs::File) -> bool {
    use std::os::unix::fs::MetadataExt as _;
    match (dir.symlink_metadata(name), file.metadata()) {
        (Ok(named), Ok(open)) => named.dev() == open.dev() && named.ino() == open.ino(),
        _ => false,
    }
}

/// How far the open-time sweep of crash leftovers goes.
#[derive(Debug, Clone, Copy)]
pub struct SweepLimits {
    /// Directory levels below the root that are visited (0: the root directory only).
    pub max_depth: usize,
    /// Directory entries read in all.
    pub max_entries: u64,
    /// Wall-clock time spent.
    pub budget: Duration,
}

/// The sweep of an ordinary workspace root.
pub const SWEEP_LIMITS: SweepLimits = SweepLimits {
    max_depth: 8,
    max_entries: 10_000,
    budget: Duration::from_millis(50),
};

/// What a sweep did.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct SweepReport {
    pub removed: usize,
    /// Whether it stopped at a limit before visiting every directory within `max_depth`.
    pub stopped_early: bool,
}

/// Removes wsfs temp files left by a crash: regular files with an exact temp name that no
/// writer holds locked, except the names in `keep` (those a commit journal that is live or not
/// yet recovered still records). Breadth-first from `root`, each directory opened by name
/// beneath its parent without following symlinks, never into another file system, within
/// `limits`. Best effort: errors skip an entry or a directory, never fail the caller.
pub fn sweep_leftovers(root: &Dir, limits: SweepLimits, keep: &HashSet<OsString>) -> SweepReport {
    let started = Instant::now();
    let mut report = SweepReport::default();
    let Ok(root_dev) = root.dir_metadata().map(|m| m.dev()) else {
        return report;
    };
    let mut entries_left = limits.max_entries;
    let mut queue = VecDeque::from([PathBuf::new()]);
    while let Some(rel) = queue.pop_front() {
        let Some(dir) = open_beneath_nofollow(root, &rel) else {
            continue;
        };
        let dir = dir.as_ref().unwrap_or(root);
        if dir.dir_metadata().map(|m| m.dev()).ok() != Some(root_dev) {
            continue;
        }
        let descend = rel.components().count() < limits.max_depth;
        let Ok(entries) = dir.entries() else {
            continue;
        };
        for entry in entries {
            if entries_left == 0 || started.elapsed() >= limits.budget {
                report.stopped_early = true;
                return report;
            }
            entries_left -= 1;
            let Ok(entry) = entry else { break };
            let name = entry.file_name();
            let Ok(kind) = entry.file_type() else {
                continue;
            };
            if is_temp_name(name.as_bytes()) {
                if kind.is_file() && !keep.contains(&name) && remove_if_unlocked(dir, &name) {
                    report.removed += 1;
                }
            } else if kind.is_dir() && descend {
                queue.push_back(rel.join(&name));
            }
        }
    }
    report
}

/// Opens `rel` beneath `root`, refusing any symlink on the way (the walks' opener,
/// `walk::sys::reopen_beneath`). `Some(None)` is the root itself.
fn open_beneath_nofollow(root: &Dir, rel: &Path) -> Option<Option<Dir>> {
    use std::os::fd::AsFd;
    use std::os::unix::ffi::OsStrExt;
    if rel.as_os_str().is_empty() {
        return Some(None);
    }
    let fd = crate::sys::reopen_beneath(root.as_fd(), rel.as_os_str().as_bytes()).ok()?;
    Some(Some(Dir::from(fd)))
}

/// Removes the temp file `name` if it is a regular file that nobody holds locked, checking
/// under the lock that the name still refers to the file that was locked.
pub fn remove_if_unlocked(dir: &Dir, name: &OsStr) -> bool {
    let Ok(meta) = dir.symlink_metadata(name) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    let open = |read: bool| {
        let mut opts = OpenOptions::new();
        opts.read(read)
            .write(!read)
            .follow(FollowSymlinks::No)
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY);
        dir.open_with(name, &opts)
    };
    // A replaced file's temp copy keeps its mode, which may allow writing but not reading.
    let Ok(file) = open(true).or_else(|_| open(false)) else {
        return false;
    };
    let file = file.into_std();
    if file.try_lock().is_err() || !names_file(dir, name, &file) {
        return false;
    }
    dir.remove_file(name).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use std::io::Write;

    fn open_dir(path: &Path) -> Dir {
        Dir::open_ambient_dir(path, ambient_authority()).unwrap()
    }

    fn names(path: &Path) -> Vec<String> {
        let mut v: Vec<String> = std::fs::read_dir(path)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        v.sort();
        v
    }

    #[test]
    fn the_temp_pattern_is_exact() {
        assert!(is_temp_name(b".wsfs-0123456789abcdef.tmp"));
        assert!(is_temp_name(temp_name().as_bytes()));
        for other in [
            ".wsfs-0123456789ABCDEF.tmp",
            ".wsfs-0123456789abcde.tmp",
            ".wsfs-0123456789abcdef0.tmp",
            ".wsfs-0123456789abcdeg.tmp",
            ".wsfs-notes.tmp",
            "wsfs-0123456789abcdef.tmp",
            ".wsfs-0123456789abcdef.tmp~",
        ] {
            assert!(!is_temp_name(other.as_bytes()), "{other}");
        }
    }

    #[test]
    fn a_new_file_is_never_visible_under_a_temp_name() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let mut staged = Staged::create(&dir).unwrap();
        assert!(staged.is_unnamed(), "O_TMPFILE is expected to work here");
        staged.file().write_all(b"new").unwrap();
        assert!(names(tmp.path()).is_empty(), "{:?}", names(tmp.path()));
        staged.commit(OsStr::new("f"), true).unwrap();
        assert_eq!(names(tmp.path()), ["f"]);
        assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"new");
    }

    #[test]
    fn a_name_that_appeared_meanwhile_is_replaced_atomically() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let mut staged = Staged::create(&dir).unwrap();
        staged.file().write_all(b"mine").unwrap();
        std::fs::write(tmp.path().join("f"), b"theirs").unwrap();
        staged.commit(OsStr::new("f"), true).unwrap();
        assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"mine");
        assert_eq!(names(tmp.path()), ["f"]);
    }

    #[test]
    fn the_named_fallback_is_locked_and_removed_when_dropped() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let (name, file) = create_named(&dir).unwrap();
        assert!(is_temp_name(name.as_bytes()));
        // A sweep (any other open file description) cannot take the lock, so it keeps it.
        let report = sweep_leftovers(&dir, SWEEP_LIMITS, &HashSet::new());
        assert_eq!(report.removed, 0);
        assert_eq!(names(tmp.path()), std::slice::from_ref(&name));
        let staged = Staged {
            dir: &dir,
            file,
            name: Some(name),
        };
        drop(staged);
        assert!(names(tmp.path()).is_empty());
    }

    #[test]
    fn a_new_file_commit_never_replaces_a_name_named_or_unnamed() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        // Unnamed (O_TMPFILE) and named (fallback) staging both refuse a taken name.
        let stage = |named: bool| {
            if named {
                let (name, file) = create_named(&dir).unwrap();
                Staged {
                    dir: &dir,
                    file,
                    name: Some(name),
                }
            } else {
                Staged::create(&dir).unwrap()
            }
        };
        for named in [false, true] {
            std::fs::write(tmp.path().join("taken"), b"theirs").unwrap();
            let mut staged = stage(named);
            staged.file().write_all(b"mine").unwrap();
            let err = staged.commit_new(OsStr::new("taken")).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::AlreadyExists, "named: {named}");
            assert_eq!(std::fs::read(tmp.path().join("taken")).unwrap(), b"theirs");
            assert_eq!(names(tmp.path()), ["taken"], "named: {named}");
            let mut staged = stage(named);
            staged.file().write_all(b"new").unwrap();
            staged.commit_new(OsStr::new("free")).unwrap();
            assert_eq!(std::fs::read(tmp.path().join("free")).unwrap(), b"new");
            assert_eq!(names(tmp.path()), ["free", "taken"], "named: {named}");
            std::fs::remove_file(tmp.path().join("free")).unwrap();
        }
    }

    #[test]
    fn the_named_fallback_commits_by_rename() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        std::fs::write(tmp.path().join("f"), b"old").unwrap();
        let (name, file) = create_named(&dir).unwrap();
        let mut staged = Staged {
            dir: &dir,
            file,
            name: Some(name),
        };
        staged.file().write_all(b"new").unwrap();
        staged.commit(OsStr::new("f"), false).unwrap();
        assert_eq!(names(tmp.path()), ["f"]);
        assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"new");
    }

    #[test]
    fn the_sweep_removes_only_unlocked_regular_temp_files() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let stale = ".wsfs-00000000000000aa.tmp";
        std::fs::create_dir_all(root.join("a/b")).unwrap();
        for dir in ["", "a", "a/b"] {
            std::fs::write(root.join(dir).join(stale), b"partial").unwrap();
        }
        std::fs::write(root.join(".wsfs-notes.tmp"), b"mine").unwrap();
        std::fs::create_dir(root.join(".wsfs-00000000000000bb.tmp")).unwrap();
        std::os::unix::fs::symlink("a", root.join(".wsfs-00000000000000cc.tmp")).unwrap();
        let live = root.join(".wsfs-00000000000000dd.tmp");
        std::fs::write(&live, b"being written").unwrap();
        let holder = std::fs::File::open(&live).unwrap();
        holder.lock().unwrap();
        let report = sweep_leftovers(&open_dir(root), SWEEP_LIMITS, &HashSet::new());
        assert_eq!(report.removed, 3);
        assert!(!report.stopped_early);
        assert_eq!(
            names(root),
            [
                ".wsfs-00000000000000bb.tmp",
                ".wsfs-00000000000000cc.tmp",
                ".wsfs-00000000000000dd.tmp",
                ".wsfs-notes.tmp",
                "a"
            ]
        );
        assert_eq!(names(&root.join("a")), ["b"]);
        drop(holder);
        assert_eq!(
            sweep_leftovers(&open_dir(root), SWEEP_LIMITS, &HashSet::new()).removed,
            1
        );
        assert!(!live.exists());
    }

    #[test]
    fn a_new_file_commit_never_replaces() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        std::fs::write(tmp.path().join("f"), b"theirs").unwrap();
        let mut staged = Staged::create(&dir).unwrap();
        staged.file().write_all(b"mine").unwrap();
        let err = staged.commit_new(OsStr::new("f")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(tmp.path().join("f")).unwrap(), b"theirs");
        assert_eq!(names(tmp.path()), ["f"]);
        // The named fallback refuses the same way and leaves no temp name.
        let (name, file) = create_named(&dir).unwrap();
        let staged = Staged {
            dir: &dir,
            file,
            name: Some(name),
        };
        let err = staged.commit_new(OsStr::new("f")).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(names(tmp.path()), ["f"]);
        let staged = Staged::create(&dir).unwrap();
        staged.commit_new(OsStr::new("g")).unwrap();
        assert_eq!(names(tmp.path()), ["f", "g"]);
    }

    #[test]
    fn a_file_named_in_advance_stays_locked_and_named_until_its_owner_removes_it() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = open_dir(tmp.path());
        let chosen = temp_name();
        let mut staged = Staged::create(&dir).unwrap();
        staged.file().write_all(b"staged").unwrap();
        let held = staged.name_as(&chosen).unwrap();
        assert_eq!(names(tmp.path()), std::slice::from_ref(&chosen));
        // The lock outlives the `Staged`: a sweep leaves the file alone.
        assert_eq!(
            sweep_leftovers(&dir, SWEEP_LIMITS, &HashSet::new()).removed,
            0
        );
        // A name taken already is never replaced.
        let other = Staged::create(&dir).unwrap();
        let err = other.name_as(&chosen).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::AlreadyExists);
        assert_eq!(std::fs::read(tmp.path().join(&chosen)).unwrap(), b"staged");
        // Closing it does not remove the name; once unlocked, only `keep` saves it.
        drop(held);
        assert_eq!(names(tmp.path()), std::slice::from_ref(&chosen));
        let keep = HashSet::from([OsString::from(&chosen)]);
        assert_eq!(sweep_leftovers(&dir, SWEEP_LIMITS, &keep).removed, 0);
        assert_eq!(
            sweep_leftovers(&dir, SWEEP_LIMITS, &HashSet::new()).removed,
            1
        );
        assert!(names(tmp.path()).is_empty());
    }

    #[test]
    fn the_sweep_stays_within_its_limits() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        let deep = root.join("1/2/3");
        std::fs::create_dir_all(&deep).unwrap();
        std::fs::write(deep.join(".wsfs-00000000000000aa.tmp"), b"x").unwrap();
        std::os::unix::fs::symlink(&deep, root.join("link")).unwrap();
        let shallow = SweepLimits {
            max_depth: 2,
            ..SWEEP_LIMITS
        };
        // Depth 3 is out of reach, and the symlink to it is never followed.
        assert_eq!(
            sweep_leftovers(&open_dir(root), shallow, &HashSet::new()).removed,
            0
        );
        let few = SweepLimits {
            max_entries: 2,
            ..SWEEP_LIMITS
        };
        let report = sweep_leftovers(&open_dir(root), few, &HashSet::new());
        assert_eq!(
            report,
            SweepReport {
                removed: 0,
                stopped_early: true
            }
        );
        assert_eq!(
            sweep_leftovers(&open_dir(root), SWEEP_LIMITS, &HashSet::new()).removed,
            1
        );
    }
}
