//! Building blocks shared by the tools: opening a leaf without following links, per-file
//! locking, the atomic replace and text decoding.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::tempfile::Staged;
use cap_fs_ext::{FollowSymlinks, OpenOptionsFollowExt};
use cap_std::fs::{Dir, File, Metadata, MetadataExt, OpenOptions, OpenOptionsExt};
use std::ffi::OsStr;
use std::io::{self, Write};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

/// Mode for files wsfs creates; the process umask still applies.
pub const NEW_FILE_MODE: u32 = 0o644;

/// Flags for every open of a leaf: never block on a FIFO or device, never acquire a
/// controlling terminal.
const LEAF_FLAGS: i32 = libc::O_NONBLOCK | libc::O_NOCTTY;

/// Opens an existing leaf for reading without following a symlink (the resolver already did).
/// A leaf is one name inside `dir` (never `.`, `..` or holding a `/`), so `openat` with
/// `O_NOFOLLOW` beneath the directory handle is as confined as `openat2(RESOLVE_BENEATH)`, with
/// less work for cap-std and the kernel; anything else takes cap-std's way.
pub fn open_leaf_read(dir: &Dir, leaf: &OsStr) -> io::Result<File> {
    use rustix::fs::{Mode, OFlags};
    if is_one_name(leaf) {
        let flags =
            OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::NOCTTY | OFlags::CLOEXEC;
        let fd = rustix::fs::openat(dir, leaf, flags, Mode::empty())?;
        return Ok(File::from_std(std::fs::File::from(fd)));
    }
    let mut opts = OpenOptions::new();
    opts.read(true)
        .follow(FollowSymlinks::No)
        .custom_flags(LEAF_FLAGS);
    dir.open_with(leaf, &opts)
}

/// Whether `name` is one name: not empty, `.` or `..`, and without `/`.
fn is_one_name(name: &OsStr) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let bytes = name.as_bytes();
    !matches!(bytes, b"" | b"." | b"..") && memchr::memchr(b'/', bytes).is_none()
}

/// The size of an open file that must be a regular file (`fstat`: one system call, with less
/// work than `statx` on an empty path, which `File::metadata` makes).
pub fn regular_file_size(file: &impl std::os::fd::AsFd, display: &str) -> Result<u64> {
    use rustix::fs::FileType;
    let st = rustix::fs::fstat(file).map_err(|e| WsfsError::from_io(&e.into(), display))?;
    match FileType::from_raw_mode(st.st_mode) {
        FileType::RegularFile => Ok(u64::try_from(st.st_size).unwrap_or(0)),
        FileType::Directory => Err(not_regular(true, display)),
        _ => Err(not_regular(false, display)),
    }
}

/// Opens (creating if missing) a leaf for appending.
pub fn open_leaf_append(dir: &Dir, leaf: &OsStr) -> io::Result<File> {
    dir.open_with(leaf, append_options().create(true))
}

/// Opens an existing leaf for appending.
pub fn open_leaf_append_existing(dir: &Dir, leaf: &OsStr) -> io::Result<File> {
    dir.open_with(leaf, &append_options())
}

/// Creates a leaf that must not exist yet, for appending.
pub fn open_leaf_append_new(dir: &Dir, leaf: &OsStr) -> io::Result<File> {
    dir.open_with(leaf, append_options().create_new(true))
}

fn append_options() -> OpenOptions {
    let mut opts = OpenOptions::new();
    opts.append(true)
        .follow(FollowSymlinks::No)
        .mode(NEW_FILE_MODE)
        .custom_flags(LEAF_FLAGS);
    opts
}

/// Maps an error from opening a leaf. Opening a socket, or a FIFO without a reader for writing,
/// fails with ENXIO: that is "not a file".
pub fn open_error(e: io::Error, display: &str) -> WsfsError {
    if e.raw_os_error() == Some(libc::ENXIO) {
        return WsfsError::new(
            ErrorCode::NotAFile,
            format!("{display} is not a regular file (a FIFO, socket or device)"),
        );
    }
    WsfsError::from_io(&e, display)
}

/// Refuses anything but a regular file, naming what it is.
pub fn require_regular(meta: &Metadata, display: &str) -> Result<()> {
    let ft = meta.file_type();
    if ft.is_file() {
        return Ok(());
    }
    Err(not_regular(ft.is_dir(), display))
}

fn not_regular(dir: bool, display: &str) -> WsfsError {
    let what = if dir {
        "a directory; use list_dir"
    } else {
        "not a regular file (a FIFO, socket or device)"
    };
    WsfsError::new(ErrorCode::NotAFile, format!("{display} is {what}"))
}

/// An exclusive `flock` on the file a name currently refers to. Writers, appenders and editors
/// (in this process or another using wsfs) take it, so a read-modify-write never loses an
/// update. Dropping the file releases it.
pub struct LockedFile {
    pub file: std::fs::File,
    pub meta: Metadata,
}

/// Locks the file `leaf` names, retrying when the name was replaced while we waited (a writer
/// renames a new inode over it), until the lock is held on the file the name still refers to.
/// Anything but a regular file is refused (`not_a_file`), so `opened` need not be checked
/// first.
/// `reopen` opens the name again the same way `opened` was opened.
pub fn lock_current(
    dir: &Dir,
    leaf: &OsStr,
    opened: File,
    reopen: impl Fn() -> io::Result<File>,
    display: &str,
    ctl: &CallControl,
) -> Result<LockedFile> {
    let io_err = |e: io::Error| WsfsError::from_io(&e, display);
    let mut file = opened.into_std();
    loop {
        wait_for_lock(&file, display, ctl)?;
        // One fstat, after the lock: the size is the size under the lock, and a file swapped
        // for a special file since the resolver looked at the name is refused here (callers
        // need not fstat before locking; the open was non-blocking).
        let meta = Metadata::from_just_metadata(file.metadata().map_err(io_err)?);
        require_regular(&meta, display)?;
        match dir.symlink_metadata(leaf) {
            Ok(now) if now.dev() == meta.dev() && now.ino() == meta.ino() => {
                return Ok(LockedFile { file, meta })
            }
            Ok(_) | Err(_) => {
                // Replaced or removed while we waited: lock whatever the name holds now.
                ctl.check()?;
                file = reopen().map_err(io_err)?.into_std();
            }
        }
    }
}

fn wait_for_lock(file: &std::fs::File, display: &str, ctl: &CallControl) -> Result<()> {
    let mut pause = Duration::from_micros(50);
    loop {
        match file.try_lock() {
            Ok(()) => return Ok(()),
            Err(std::fs::TryLockError::WouldBlock) => {
                ctl.check()?;
                std::thread::sleep(pause);
                pause = (pause * 2).min(Duration::from_millis(5));
            }
            Err(std::fs::TryLockError::Error(e)) => {
                // Not every special file can be locked: say what it is rather than the errno.
                if let Ok(meta) = file.metadata() {
                    require_regular(&Metadata::from_just_metadata(meta), display)?;
                }
                return Err(WsfsError::from_io(&e, display));
            }
        }
    }
}

/// Replaces `leaf` in `dir` with `content` atomically and durably: the content is staged in
/// a temp file (see `tempfile_ops`), given the replaced file's owner (best effort) and mode on
/// the open file, fsynced, linked or renamed into place (the commit point), then the directory
/// is fsynced. `keep` is the replaced file; `None` means the name is new. Before the commit
/// nothing is visible, and the staged file is removed on every error path.
/// Returns warnings (an fsync of the directory failing after the commit is only a warning).
pub fn atomic_replace(
    dir: &Dir,
    leaf: &OsStr,
    content: &[u8],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<Vec<String>> {
    atomic_replace_pieces(dir, leaf, &[content], keep, display, ctl)
}

/// `atomic_replace` of the content that is `pieces` one after another, written as they are:
/// an edit writes the parts of the file it keeps and its new text without building the new
/// file in memory.
pub fn atomic_replace_pieces(
    dir: &Dir,
    leaf: &OsStr,
    pieces: &[&[u8]],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<Vec<String>> {
    let staged = stage(dir, pieces, keep, display, ctl)?;
    staged
        .commit(leaf, keep.is_none())
        .map_err(|e| WsfsError::from_io(&e, display))?;
    Ok(committed(dir))
}

/// Like `atomic_replace` for a name that must not exist: the content appears under `leaf`
/// only if nothing has that name at the commit point, decided by the kernel (an exclusive
/// `linkat`), never by an earlier check. A taken name is `file_exists` and changes nothing.
pub fn atomic_create(
    dir: &Dir,
    leaf: &OsStr,
    content: &[u8],
    display: &str,
    ctl: &CallControl,
) -> Result<Vec<String>> {
    let staged = stage(dir, &[content], None, display, ctl)?;
    staged.commit_new(leaf).map_err(|e| {
        if e.kind() == io::ErrorKind::AlreadyExists {
            file_exists(display)
        } else {
            WsfsError::from_io(&e, display)
        }
    })?;
    Ok(committed(dir))
}

/// The refusal of a create-only write whose name is taken.
pub fn file_exists(display: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::FileExists,
        format!(
            "{display} already exists, and mode \"create\" never replaces anything; nothing was \
             written. Read it first, then use mode \"overwrite\" to replace it, or choose \
             another name"
        ),
    )
}

/// The staged, complete and fsynced content, ready to be committed (the deadline is checked
/// once more last). Dropping it removes it.
fn stage<'d>(
    dir: &'d Dir,
    pieces: &[&[u8]],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<Staged<'d>> {
    let io_err = |e: io::Error| WsfsError::from_io(&e, display);
    let len: usize = pieces.iter().map(|p| p.len()).sum();
    check_file_size_limit(len as u64, display)?;
    ctl.check()?;
    let mut staged = Staged::create(dir).map_err(io_err)?;
    fill_staged(&mut staged, pieces, keep, display, ctl)?;
    ctl.check()?;
    Ok(staged)
}

/// After the commit point the call reports success whatever happens: a failed fsync of the
/// directory is only a warning.
fn committed(dir: &Dir) -> Vec<String> {
    sync_dir(dir)
        .err()
        .map(|e| format!("written, but syncing the directory failed: {e}"))
        .into_iter()
        .collect()
}

/// Refuses a write that would make a file larger than the process's soft `RLIMIT_FSIZE`. The
/// kernel would answer that write with SIGXFSZ, which kills a host that neither handles nor
/// ignores it. (A file grown meanwhile by a program that does not use wsfs can still pass.)
pub fn check_file_size_limit(final_size: u64, display: &str) -> Result<()> {
    use rustix::process::{getrlimit, Resource};
    match getrlimit(Resource::Fsize).current {
        Some(limit) if final_size > limit => Err(WsfsError::new(
            ErrorCode::NoSpace,
            format!(
                "{display} would be {final_size} bytes, over this process's file size limit \
                 (RLIMIT_FSIZE = {limit} bytes). Retrying will not help: write a smaller file, \
                 or raise the limit"
            ),
        )),
        _ => Ok(()),
    }
}

/// Writes the content that is `pieces` one after another to a staged file, gives it `keep`'s
/// owner (best effort) and mode, and fsyncs it; the deadline is checked between chunks.
pub fn fill_staged(
    staged: &mut Staged<'_>,
    pieces: &[&[u8]],
    keep: Option<&Metadata>,
    display: &str,
    ctl: &CallControl,
) -> Result<()> {
    write_staged(staged.file(), pieces, keep, ctl).map_err(|e| match e {
        TempError::Io(e) => WsfsError::from_io(&e, display),
        TempError::Stopped(e) => e,
    })
}

enum TempError {
    Io(io::Error),
    Stopped(WsfsError),
}

fn write_staged(
    file: &mut std::fs::File,
    pieces: &[&[u8]],
    keep: Option<&Metadata>,
    ctl: &CallControl,
) -> std::result::Result<(), TempError> {
    const CHUNK: usize = 1 << 20;
    for chunk in pieces.iter().flat_map(|p| p.chunks(CHUNK)) {
        ctl.check().map_err(TempError::Stopped)?;
        file.write_all(chunk).map_err(TempError::Io)?;
    }
    if let Some(old) = keep {
        // Owner first (only root may change it; others keep their own), then the mode,
        // because chown clears set-id bits.
        let _ = std::os::unix::fs::fchown(&*file, Some(old.uid()), Some(old.gid()));
        file.set_permissions(std::fs::Permissions::from_mode(old.mode() & 0o7777))
            .map_err(TempError::Io)?;
    }
    file.sync_all().map_err(TempError::Io)
}

/// fsync of a directory, so a rename or a new name in it survives a crash.
/// cap-std may hold directories as `O_PATH` handles, which cannot be fsynced, so this opens
/// `.` for reading first.
pub fn sync_dir(dir: &Dir) -> io::Result<()> {
    dir.open(".")?.sync_all()
}

/// Checks that bytes are text a model can read: UTF-8 without NUL bytes.
pub fn decode_text(bytes: Vec<u8>, display: &str) -> Result<String> {
    if memchr::memchr(0, &bytes).is_some() {
        return Err(crate::text::not_text(display));
    }
    String::from_utf8(bytes).map_err(|_| crate::text::not_text(display))
}

#[cfg(test)]
mod tests {
    use super::*;
    use cap_std::ambient_authority;
    use cap_std::fs::{Permissions, PermissionsExt as _};

    #[test]
    fn decode_text_refuses_binary() {
        assert_eq!(decode_text(b"hi\n".to_vec(), "a").unwrap(), "hi\n");
        assert_eq!(
            decode_text(vec![b'a', 0], "a").unwrap_err().code,
            ErrorCode::IoError
        );
        assert_eq!(
            decode_text(vec![0xff, 0xfe], "a").unwrap_err().code,
            ErrorCode::IoError
        );
    }

    #[test]
    fn atomic_replace_keeps_mode_and_leaves_no_temp() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        dir.write("f", b"old").unwrap();
        let ctl = CallControl::new(Duration::from_secs(10), None);
        dir.set_permissions("f", Permissions::from_mode(0o600))
            .unwrap();
        let old = dir.metadata("f").unwrap();
        atomic_replace(&dir, OsStr::new("f"), b"new", Some(&old), "f", &ctl).unwrap();
        assert_eq!(dir.read("f").unwrap(), b"new");
        assert_eq!(dir.metadata("f").unwrap().mode() & 0o7777, 0o600);
        let names: Vec<_> = dir
            .entries()
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, vec![std::ffi::OsString::from("f")]);
    }

    #[test]
    fn stopped_replace_changes_nothing() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = Dir::open_ambient_dir(tmp.path(), ambient_authority()).unwrap();
        dir.write("f", b"old").unwrap();
        let ctl = CallControl::new(Duration::ZERO, None);
        let err = atomic_replace(&dir, OsStr::new("f"), b"new", None, "f", &ctl).unwrap_err();
        assert_eq!(err.code, ErrorCode::Timeout);
        assert_eq!(dir.read("f").unwrap(), b"old");
        assert_eq!(dir.entries().unwrap().count(), 1);
    }
}
