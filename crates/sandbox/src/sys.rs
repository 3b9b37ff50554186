//! The system calls of a walk. Every directory and file is opened either as one name inside a
//! directory handle we hold (`O_NOFOLLOW`), or again by its walk-relative path beneath the
//! walk's root handle with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS |
//! RESOLVE_NO_MAGICLINKS)` (one name at a time with `O_NOFOLLOW` where `openat2` is missing).
//! A symlink met anywhere on the way is refused, never followed.

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;
use std::io::{self, Read};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// What a directory entry is, from `getdents` or `lstat`, never from following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    /// FIFOs, sockets and devices: reported, never opened.
    Other,
    /// The filesystem did not say (`DT_UNKNOWN`); resolved with `lstat` when it matters.
    Unknown,
}

impl Kind {
    pub fn from_file_type(ft: FileType) -> Kind {
        match ft {
            FileType::RegularFile => Kind::File,
            FileType::Directory => Kind::Dir,
            FileType::Symlink => Kind::Symlink,
            FileType::Unknown => Kind::Unknown,
            _ => Kind::Other,
        }
    }

    /// The wire name list_dir uses.
    pub fn wire(self) -> &'static str {
        match self {
            Kind::File => "file",
            Kind::Dir => "dir",
            Kind::Symlink => "symlink",
            Kind::Other | Kind::Unknown => "other",
        }
    }
}

const DIR_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::DIRECTORY)
    .union(OFlags::NOFOLLOW)
    .union(OFlags::CLOEXEC);

/// Never block on a FIFO or device, never acquire a controlling terminal.
const FILE_FLAGS: OFlags = OFlags::RDONLY
    .union(OFlags::NOFOLLOW)
    .union(OFlags::NONBLOCK)
    .union(OFlags::NOCTTY)
    .union(OFlags::CLOEXEC);

/// Opens the directory `name` inside `parent` for reading; a symlink is refused.
pub fn open_child_dir(parent: BorrowedFd<'_>, name: &[u8]) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(parent, name, DIR_FLAGS, Mode::empty())?)
}

/// A readable handle on the directory `dir` itself (which may be an `O_PATH` handle).
pub fn open_readable(dir: BorrowedFd<'_>) -> io::Result<OwnedFd> {
    Ok(rustix::fs::openat(dir, ".", DIR_FLAGS, Mode::empty())?)
}

/// Opens the regular file `name` inside `dir` for reading: no symlink, no blocking, and
/// anything but a regular file (checked on the open file) is refused with `EINVAL`.
pub fn open_file(dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<std::fs::File> {
    let fd = rustix::fs::openat(dir, name, FILE_FLAGS, Mode::empty())?;
    let stat = rustix::fs::fstat(&fd)?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(io::Error::from_raw_os_error(libc::EINVAL));
    }
    Ok(std::fs::File::from(fd))
}

/// An entry's own type, size and identity (`lstat`), never following a link.
#[derive(Debug, Clone, Copy)]
pub struct Lstat {
    pub kind: Kind,
    pub size: u64,
    pub id: (u64, u64),
}

/// The entry's own metadata (`lstat`), never following a link.
pub fn lstat(dir: BorrowedFd<'_>, name: &[u8]) -> io::Result<Lstat> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(Lstat {
        kind: Kind::from_file_type(FileType::from_raw_mode(stat.st_mode)),
        size: u64::try_from(stat.st_size).unwrap_or(0),
        id: (stat.st_dev, stat.st_ino),
    })
}

/// Device and inode of an open handle, to tell a reopened directory from a replacement.
pub fn identity(fd: BorrowedFd<'_>) -> io::Result<(u64, u64)> {
    let stat = rustix::fs::fstat(fd)?;
    Ok((stat.st_dev, stat.st_ino))
}

/// Whether the open directory `fd` is the root of a mount (`STATX_ATTR_MOUNT_ROOT`): a mount
/// point, or a bind mount of any directory, even from the same file system. `None` where the
/// kernel cannot tell (before 5.8); compare devices then.
pub fn is_mount_root(fd: BorrowedFd<'_>) -> Option<bool> {
    use rustix::fs::{StatxAttributes, StatxFlags};
    let st = rustix::fs::statx(fd, "", AtFlags::EMPTY_PATH, StatxFlags::empty()).ok()?;
    st.stx_attributes_mask
        .contains(StatxAttributes::MOUNT_ROOT)
        .then(|| st.stx_attributes.contains(StatxAttributes::MOUNT_ROOT))
}

/// Set once `openat2` is known to be missing (older kernels, some sandboxes).
static NO_OPENAT2: AtomicBool = AtomicBool::new(false);

/// Longest path handed to one `openat2`; longer paths are opened in pieces.
const MAX_RESOLVE_BYTES: usize = 4000;

/// Opens the directory at `rel` (walk-relative, `/`-separated, no `.` or `..`) beneath
/// `root` again. Any symlink on the way, including a directory swapped for one since it was
/// listed, is refused (`ELOOP`/`ENOTDIR`). At most two descriptors are open at a time.
pub fn reopen_beneath(root: BorrowedFd<'_>, rel: &[u8]) -> io::Result<OwnedFd> {
    if rel.is_empty() {
        return open_readable(root);
    }
    let mut held: Option<OwnedFd> = None;
    let mut rest = rel;
    while !rest.is_empty() {
        let (piece, after) = split_piece(rest);
        let base = held.as_ref().map_or(root, |fd| fd.as_fd());
        let next = open_beneath(base, piece)?;
        held = Some(next);
        rest = after;
    }
    held.ok_or_else(|| io::Error::from_raw_os_error(libc::ENOENT))
}

/// The longest prefix of `rel` that ends at a component boundary and fits one resolution.
fn split_piece(rel: &[u8]) -> (&[u8], &[u8]) {
    if rel.len() <= MAX_RESOLVE_BYTES {
        return (rel, &[]);
    }
    let cut = rel[..MAX_RESOLVE_BYTES]
        .iter()
        .rposition(|&b| b == b'/')
        .filter(|&i| i > 0)
        .unwrap_or_else(|| rel.iter().position(|&b| b == b'/').unwrap_or(rel.len()));
    let rest = rel.get(cut + 1..).unwrap_or(&[]);
    (&rel[..cut], rest)
}

/// How every `openat2` here resolves: never above the base, no symlink, no magic link.
const NO_SYMLINK_BENEATH: ResolveFlags = ResolveFlags::BENEATH
    .union(ResolveFlags::NO_SYMLINKS)
    .union(ResolveFlags::NO_MAGICLINKS);

/// An `O_PATH` handle on the directory `rel` beneath `root` with no symlink on the way, in
/// one `openat2`: for looking names up in it (the resolver), where a readable handle's open
/// work is wasted. Errors where `openat2` is missing or the path is long: no fallback, the
/// caller has its own.
pub fn open_dir_path_beneath(root: BorrowedFd<'_>, rel: &[u8]) -> io::Result<OwnedFd> {
    if NO_OPENAT2.load(Ordering::Relaxed) || rel.len() > MAX_RESOLVE_BYTES {
        return Err(io::Error::from_raw_os_error(libc::ENOSYS));
    }
    let flags = OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC;
    Ok(rustix::fs::openat2(
        root,
        rel,
        flags,
        Mode::empty(),
        NO_SYMLINK_BENEATH,
    )?)
}

fn open_beneath(base: BorrowedFd<'_>, rel: &[u8]) -> io::Result<OwnedFd> {
    if !NO_OPENAT2.load(Ordering::Relaxed) {
        match rustix::fs::openat2(base, rel, DIR_FLAGS, Mode::empty(), NO_SYMLINK_BENEATH) {
            // No openat2 here (an older kernel, or a sandbox filtering it): the
            // component-by-component path below gives the same guarantees.
            Err(Errno::NOSYS) => NO_OPENAT2.store(true, Ordering::Relaxed),
            other => return Ok(other?),
        }
    }
    let mut held: Option<OwnedFd> = None;
    for name in rel.split(|&b| b == b'/').filter(|c| !c.is_empty()) {
        if name == b"." || name == b".." {
            return Err(io::Error::from_raw_os_error(libc::EXDEV));
        }
        let dir = held.as_ref().map_or(base, |fd| fd.as_fd());
        held = Some(open_child_dir(dir, name)?);
    }
    match held {
        Some(fd) => Ok(fd),
        None => open_readable(base),
    }
}

/// Reads at most `limit` bytes of the regular file `name` in `dir` (a `.gitignore`).
/// Returns the bytes and whether the file was longer. A missing file is `Ok(None)`.
pub fn read_small_file(
    dir: BorrowedFd<'_>,
    name: &[u8],
    limit: usize,
) -> io::Result<Option<(Vec<u8>, bool)>> {
    let file = match open_file(dir, name) {
        Ok(f) => f,
        Err(e) if e.raw_os_error() == Some(libc::ENOENT) => return Ok(None),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes)?;
    let longer = bytes.len() > limit;
    bytes.truncate(limit);
    Ok(Some((bytes, longer)))
}

/// Starts writing `file`'s dirty pages to the disk without waiting (`sync_file_range` with
/// `SYNC_FILE_RANGE_WRITE`), so that a later `fsync` of many files finds their writes under
/// way instead of starting and waiting for each in turn. It makes nothing durable by itself
/// (no metadata, no disk cache flush): the caller still fsyncs. Errors are ignored: the
/// `fsync` that follows reports them.
#[allow(unsafe_code)]
pub fn start_writeback(file: BorrowedFd<'_>) {
    use std::os::fd::AsRawFd;
    // SAFETY: `file` is a live descriptor for the whole call; the call reads no memory of ours.
    let _ = unsafe { libc::sync_file_range(file.as_raw_fd(), 0, 0, libc::SYNC_FILE_RANGE_WRITE) };
}

/// Takes `file`'s `flock` unless another holder keeps it for more than a moment (200 ms).
/// For deciding that a record's or a journal's writer is dead: a child another thread of
/// this process is forking (a program starting, the overlay view's mount helper) holds a copy
/// of every descriptor, a dead writer's lock included, until it execs or closes them.
pub fn lock_unless_held(file: &std::fs::File) -> bool {
    (0..40).any(|attempt| {
        if attempt > 0 {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        file.try_lock().is_ok()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_paths_split_at_component_boundaries() {
        let rel = "abc/".repeat(1500);
        let rel = rel.trim_end_matches('/').as_bytes();
        let (piece, rest) = split_piece(rel);
        assert!(piece.len() <= MAX_RESOLVE_BYTES);
        assert!(piece.ends_with(b"abc"));
        assert_eq!(piece.len() + 1 + rest.len(), rel.len());
        assert_eq!(split_piece(b"a/b"), (&b"a/b"[..], &b""[..]));
    }

    #[test]
    fn reopen_refuses_symlinks_on_the_way() {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(tmp.path().join("a/b")).unwrap();
        std::os::unix::fs::symlink("a", tmp.path().join("l")).unwrap();
        let root = std::fs::File::open(tmp.path()).unwrap();
        assert!(reopen_beneath(root.as_fd(), b"a/b").is_ok());
        assert!(reopen_beneath(root.as_fd(), b"l/b").is_err());
        assert!(reopen_beneath(root.as_fd(), b"a/../..").is_err());
    }
}
