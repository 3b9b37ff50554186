//! The kernel's path of an open handle, read from `/proc/self/fd`.

use rustix::fs::{Mode, OFlags};
use std::io;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The path the kernel has for an open handle. Used to refuse protected locations in
/// unrestricted mode and to match the policy's rules, after opening, so there is no window
/// between check and use. It reads the handle's link in `/proc/self/fd` through a handle on
/// that directory kept for the process, which saves the kernel walking `/proc/self/fd` on
/// every call (most of the cost); a forked child, whose handle would name its parent's
/// descriptors, takes the full path instead.
pub fn real_path(handle: &impl AsRawFd) -> io::Result<PathBuf> {
    use std::os::unix::ffi::OsStringExt;
    let fd = handle.as_raw_fd();
    match proc_fd_dir() {
        Some((pid, dir)) if *pid == std::process::id() => {
            let target = rustix::fs::readlinkat(dir, fd.to_string(), Vec::new())?;
            Ok(PathBuf::from(std::ffi::OsString::from_vec(
                target.into_bytes(),
            )))
        }
        _ => std::fs::read_link(format!("/proc/self/fd/{fd}")),
    }
}

/// The process's handle on `/proc/self/fd` and the pid it belongs to (`None` if it could not
/// be opened). Opened by the first workspace open, not in the middle of a call, where it
/// would take a descriptor the call may need (and keep it).
pub fn proc_fd_dir() -> &'static Option<(u32, OwnedFd)> {
    static PROC_FD: OnceLock<Option<(u32, OwnedFd)>> = OnceLock::new();
    PROC_FD.get_or_init(|| {
        let dir = rustix::fs::open(
            "/proc/self/fd",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        );
        dir.ok().map(|dir| (std::process::id(), dir))
    })
}
