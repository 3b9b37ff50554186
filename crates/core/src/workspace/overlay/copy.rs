//! Moving a directory the base has, which overlayfs refuses to rename (`EXDEV`): the tree is
//! copied under a temp name beside the target (through the view, so into the upper tree),
//! renamed to the target with the caller's flags, and the source removed (the kernel leaves
//! whiteouts for the base's entries). Not atomic as a rename is: a crash part-way leaves the
//! temp copy, which the session's next open sweeps, or both copies, which the diff shows.
//! Files keep their bytes and mode, symlinks their target; a special file stops the move.

use crate::sandbox::tempfile::temp_name;
use cap_fs_ext::{DirExt, OpenOptionsFollowExt};
use cap_std::fs::PermissionsExt as _;
use cap_std::fs::{Dir, DirBuilder, Permissions};
use rustix::fs::RenameFlags;
use rustix::io::Errno;
use std::ffi::OsStr;
use std::io;

/// Deepest tree copied (deeper is refused, as a rename would not be).
const MAX_DEPTH: usize = 256;

pub fn move_dir_by_copy(
    from_dir: &Dir,
    from: &OsStr,
    to_dir: &Dir,
    to: &OsStr,
    flags: RenameFlags,
) -> rustix::io::Result<()> {
    if flags.contains(RenameFlags::EXCHANGE) {
        return Err(Errno::XDEV);
    }
    let source = from_dir.open_dir_nofollow(from).map_err(errno)?;
    let temp = temp_name();
    let copied = copy_dir(&source, to_dir, OsStr::new(&temp), 0);
    let placed = copied.and_then(|()| {
        rustix::fs::renameat_with(to_dir, temp.as_str(), to_dir, to, flags).map_err(io::Error::from)
    });
    if let Err(e) = placed {
        let _ = to_dir.remove_dir_all(&temp);
        return Err(errno(e));
    }
    drop(source);
    from_dir.remove_dir_all(from).map_err(errno)
}

fn errno(e: io::Error) -> Errno {
    Errno::from_io_error(&e).unwrap_or(Errno::IO)
}

/// Copies the directory `source` to `name` in `parent` (made with `source`'s mode).
fn copy_dir(source: &Dir, parent: &Dir, name: &OsStr, depth: usize) -> io::Result<()> {
    if depth > MAX_DEPTH {
        return Err(Errno::LOOP.into());
    }
    let mode = source.dir_metadata()?.permissions().mode();
    let mut builder = DirBuilder::new();
    cap_std::fs::DirBuilderExt::mode(&mut builder, mode & 0o7777);
    parent.create_dir_with(name, &builder)?;
    let target = parent.open_dir_nofollow(name)?;
    for entry in source.entries()? {
        let entry = entry?;
        let child = entry.file_name();
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let sub = source.open_dir_nofollow(&child)?;
            copy_dir(&sub, &target, &child, depth + 1)?;
        } else if kind.is_file() {
            let mut input = source.open_with(
                &child,
                cap_std::fs::OpenOptions::new()
                    .read(true)
                    .follow(cap_fs_ext::FollowSymlinks::No),
            )?;
            let meta = input.metadata()?;
            let mut output = target.create(&child)?;
            io::copy(&mut input, &mut output)?;
            output.set_permissions(Permissions::from_mode(meta.permissions().mode() & 0o7777))?;
            output.sync_all()?;
        } else if kind.is_symlink() {
            let link = source.read_link(&child)?;
            target.symlink(link, &child)?;
        } else {
            return Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "a special file cannot be copied",
            ));
        }
    }
    target.open(".").and_then(|d| d.sync_all()).or(Ok(()))
}
