//! The kernel overlay mount an overlay workspace's tools work on: base (lower, never changed
//! through the mount) + the session's upper tree, made by a short-lived child in a user and
//! mount namespace of its own with the new mount API (`fsopen`, `fsconfig`, `fsmount`), and
//! handed to this process as a descriptor of the mount's root.
//!
//! The mount is detached: it is attached nowhere, no path leads to it, no other process sees
//! it, and it lives as long as a descriptor on it does. Every layer is named to the kernel by
//! a handle this process already holds (`/proc/self/fd/<n>`, resolved in the child, which
//! inherited the handles), never by a path that could be swapped meanwhile.
//!
//! The host may be a multithreaded program (a Go host through cgo): after `fork` only the
//! forking thread exists, so the child makes raw system calls only, on strings and buffers
//! built before the fork, and ends with `_exit`.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, AsRawFd, FromRawFd, OwnedFd, RawFd};

// From <linux/mount.h> (not all libc versions export them).
const FSOPEN_CLOEXEC: libc::c_uint = 1;
const FSCONFIG_SET_FLAG: libc::c_uint = 0;
const FSCONFIG_SET_STRING: libc::c_uint = 1;
const FSCONFIG_CMD_CREATE: libc::c_uint = 6;
const FSMOUNT_CLOEXEC: libc::c_uint = 1;

/// The steps the child reports a failure of (with the errno).
const STEPS: [&str; 6] = [
    "making a user and mount namespace",
    "mapping the user and group ids",
    "opening an overlayfs context",
    "configuring the overlay layers",
    "creating the overlay",
    "mounting the overlay",
];

/// Everything the child needs, built before fork.
struct Plan {
    setgroups: CString,
    uid_map: CString,
    gid_map: CString,
    uid_line: Vec<u8>,
    gid_line: Vec<u8>,
    deny: &'static [u8],
    fstype: CString,
    layers: Vec<Layer>,
    userxattr: CString,
}

/// One layer as the child finds it again in its own mount namespace.
struct Layer {
    /// The option (`lowerdir`, `upperdir`, `workdir`).
    key: CString,
    /// The directory's path, as the kernel names the handle (read before fork).
    path: CString,
    /// The handle's identity: what `path` must still lead to.
    id: (u64, u64),
    /// A descriptor number held for the child to put its own handle at, and its
    /// `/proc/self/fd/<n>` path (the option's value).
    slot: OwnedFd,
    slot_path: CString,
}

/// Mounts `base` + `upper` (with `work`, an empty directory on the upper's file system) as a
/// detached kernel overlay and returns a directory handle on its root. `upper` uses the
/// `userxattr` format (whiteouts are 0/0 character devices, `user.overlay.opaque`).
///
/// Fails (with what failed) where the kernel has no unprivileged user namespaces or
/// overlayfs, or refuses these directories.
pub fn mount_view(base: &impl AsFd, upper: &impl AsFd, work: &impl AsFd) -> io::Result<OwnedFd> {
    let c = |s: &str| CString::new(s).map_err(io::Error::other);
    // SAFETY: getuid and getgid take no arguments and cannot fail.
    let (uid, gid) = unsafe { (libc::getuid(), libc::getgid()) };
    let plan = Plan {
        setgroups: c("/proc/self/setgroups")?,
        uid_map: c("/proc/self/uid_map")?,
        gid_map: c("/proc/self/gid_map")?,
        uid_line: format!("{uid} {uid} 1\n").into_bytes(),
        gid_line: format!("{gid} {gid} 1\n").into_bytes(),
        deny: b"deny",
        fstype: c("overlay")?,
        layers: vec![
            layer("lowerdir", base.as_fd())?,
            layer("upperdir", upper.as_fd())?,
            layer("workdir", work.as_fd())?,
        ],
        userxattr: c("userxattr")?,
    };
    let mut ends = [0 as RawFd; 2];
    // SAFETY: socketpair writes two descriptors into a live two-int array.
    if unsafe {
        libc::socketpair(
            libc::AF_UNIX,
            libc::SOCK_SEQPACKET | libc::SOCK_CLOEXEC,
            0,
            ends.as_mut_ptr(),
        )
    } != 0
    {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: socketpair succeeded: both descriptors are new and ours alone.
    let (parent_end, child_end) =
        unsafe { (OwnedFd::from_raw_fd(ends[0]), OwnedFd::from_raw_fd(ends[1])) };
    // SAFETY: the child runs only `in_child`, which makes raw system calls on data built
    // above and ends with `_exit`; the parent goes on as before.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(io::Error::last_os_error());
    }
    if pid == 0 {
        let code = in_child(&plan, child_end.as_raw_fd());
        // SAFETY: _exit ends the child without running the parent's destructors or atexit.
        unsafe { libc::_exit(code) };
    }
    drop(child_end);
    let received = receive(&parent_end);
    let mut status = 0;
    // SAFETY: waits for the child this call forked; `status` is a valid int.
    unsafe { libc::waitpid(pid, &mut status, 0) };
    let mount = received.map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof => io::Error::other(format!(
            "the overlay helper process ended without an answer (wait status {status})"
        )),
        _ => e,
    })?;
    // A plain directory handle on the mount's root (fsmount's is O_PATH); it keeps the mount.
    let root = rustix::fs::openat(
        &mount,
        ".",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::DIRECTORY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    Ok(root)
}

/// Makes the descriptor `target` (a view's root handle, owned by a live workspace that
/// registered it) refer to the mount `fresh` from now on, in one step: a call that opens
/// beneath it afterwards sees the new mount; handles opened before keep the old one, which
/// lives until the last is closed.
pub fn replace_raw(target: RawFd, fresh: &OwnedFd) -> io::Result<()> {
    // SAFETY: dup3 takes integers only; `target`'s number stays open (now on the new mount)
    // and stays owned by its owner, who unregisters it before closing it.
    let r = unsafe { libc::dup3(fresh.as_raw_fd(), target, libc::O_CLOEXEC) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// A layer's plan: overlayfs takes a layer only from the mount namespace it is made in (it
/// clones the layer's mount), and the child's is a copy of ours, so the child opens the path
/// again there and checks it is still the same directory before naming it to the kernel.
fn layer(key: &str, dir: std::os::fd::BorrowedFd<'_>) -> io::Result<Layer> {
    use std::os::unix::ffi::OsStrExt;
    let path = crate::proc::real_path(&dir.as_raw_fd())?;
    let stat = rustix::fs::fstat(dir)?;
    let slot = rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )?;
    let slot_path = format!("/proc/self/fd/{}", slot.as_raw_fd());
    let c = |b: &[u8]| CString::new(b).map_err(io::Error::other);
    Ok(Layer {
        key: c(key.as_bytes())?,
        path: c(path.as_os_str().as_bytes())?,
        id: (stat.st_dev, stat.st_ino),
        slot,
        slot_path: c(slot_path.as_bytes())?,
    })
}

/// Receives the mount's descriptor, or the step and errno the child failed with.
fn receive(sock: &OwnedFd) -> io::Result<OwnedFd> {
    let mut data = [0u8; 8];
    let mut cmsg = [0u64; 8];
    let mut iov = libc::iovec {
        iov_base: data.as_mut_ptr().cast(),
        iov_len: data.len(),
    };
    // SAFETY: zeroed msghdr is a valid empty header; its pointers are set to live buffers.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = cmsg.as_mut_ptr().cast();
    msg.msg_controllen = std::mem::size_of_val(&cmsg);
    // SAFETY: msg points at buffers that live for the call.
    let n = unsafe { libc::recvmsg(sock.as_raw_fd(), &mut msg, libc::MSG_CMSG_CLOEXEC) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: CMSG_FIRSTHDR reads the header recvmsg filled in.
    let header = unsafe { libc::CMSG_FIRSTHDR(&msg) };
    if !header.is_null() {
        // SAFETY: header is non-null and within `cmsg`, as recvmsg set msg_controllen.
        let h = unsafe { &*header };
        if h.cmsg_level == libc::SOL_SOCKET && h.cmsg_type == libc::SCM_RIGHTS {
            let mut fd: RawFd = -1;
            // SAFETY: an SCM_RIGHTS message carries at least one int; copy it unaligned.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    libc::CMSG_DATA(header),
                    (&mut fd as *mut RawFd).cast(),
                    4,
                )
            };
            if fd >= 0 {
                // SAFETY: the kernel installed `fd` in this process for us; nothing else owns it.
                return Ok(unsafe { OwnedFd::from_raw_fd(fd) });
            }
        }
    }
    if n as usize >= 8 {
        let step = u32::from_ne_bytes([data[0], data[1], data[2], data[3]]) as usize;
        let errno = i32::from_ne_bytes([data[4], data[5], data[6], data[7]]);
        let what = STEPS.get(step).copied().unwrap_or("making the overlay");
        let e = io::Error::from_raw_os_error(errno);
        return Err(io::Error::new(e.kind(), format!("{what} failed: {e}")));
    }
    Err(io::ErrorKind::UnexpectedEof.into())
}

/// The child: namespaces, id maps, the overlay; sends the mount or (step, errno). Raw system
/// calls only (see the module doc).
fn in_child(plan: &Plan, sock: RawFd) -> i32 {
    let fail = |step: u32| -> i32 {
        let errno = io::Error::last_os_error()
            .raw_os_error()
            .unwrap_or(libc::EIO);
        let mut buf = [0u8; 8];
        buf[..4].copy_from_slice(&step.to_ne_bytes());
        buf[4..].copy_from_slice(&errno.to_ne_bytes());
        // SAFETY: sends 8 bytes from a live stack buffer on our socket.
        unsafe { libc::send(sock, buf.as_ptr().cast(), 8, 0) };
        1
    };
    // First let go of every descriptor but the socket and the layers' slots: the child must
    // not keep what the host holds (a session's flock, a pipe's write end) open while it
    // lives. The slots stay taken, so no descriptor the child opens lands on one.
    let mut keep = [sock, -1, -1, -1];
    for (k, layer) in keep[1..].iter_mut().zip(&plan.layers) {
        *k = layer.slot.as_raw_fd();
    }
    keep.sort_unstable();
    let mut from: libc::c_uint = 3;
    for &k in keep.iter().filter(|&&k| k >= 3) {
        let k = k as libc::c_uint;
        if k > from {
            // SAFETY: close_range takes integers only and closes this child's copies.
            unsafe { libc::syscall(libc::SYS_close_range, from, k - 1, 0 as libc::c_uint) };
        }
        from = k + 1;
    }
    // SAFETY: as above.
    unsafe {
        libc::syscall(
            libc::SYS_close_range,
            from,
            libc::c_uint::MAX,
            0 as libc::c_uint,
        )
    };
    // SAFETY: unshare takes integers only; the child is single-threaded after fork.
    if unsafe { libc::unshare(libc::CLONE_NEWUSER | libc::CLONE_NEWNS) } != 0 {
        return fail(0);
    }
    for (path, bytes) in [
        (&plan.setgroups, plan.deny),
        (&plan.uid_map, plan.uid_line.as_slice()),
        (&plan.gid_map, plan.gid_line.as_slice()),
    ] {
        if !write_whole(path, bytes) {
            return fail(1);
        }
    }
    // SAFETY: a NUL-terminated file system type name built before fork.
    let fs = unsafe { libc::syscall(libc::SYS_fsopen, plan.fstype.as_ptr(), FSOPEN_CLOEXEC) };
    if fs < 0 {
        return fail(2);
    }
    for layer in &plan.layers {
        // SAFETY: a NUL-terminated path built before fork.
        let fd = unsafe {
            libc::open(
                layer.path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return fail(3);
        }
        // SAFETY: a zeroed stat is valid; fstat fills it from the descriptor just opened.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: as above.
        if unsafe { libc::fstat(fd, &mut st) } != 0 {
            return fail(3);
        }
        if (st.st_dev, st.st_ino) != layer.id {
            // SAFETY: sets errno, a thread-local int, for the report.
            unsafe { *libc::__errno_location() = libc::ESTALE };
            return fail(3);
        }
        // SAFETY: moves our descriptor onto the slot the parent reserved (closing /dev/null).
        if unsafe { libc::dup3(fd, layer.slot.as_raw_fd(), libc::O_CLOEXEC) } < 0 {
            return fail(3);
        }
        if fsconfig(
            fs,
            FSCONFIG_SET_STRING,
            Some(&layer.key),
            Some(&layer.slot_path),
        ) != 0
        {
            return fail(3);
        }
    }
    if fsconfig(fs, FSCONFIG_SET_FLAG, Some(&plan.userxattr), None) != 0 {
        return fail(3);
    }
    if fsconfig(fs, FSCONFIG_CMD_CREATE, None, None) != 0 {
        return fail(4);
    }
    // SAFETY: integers only.
    let mount = unsafe { libc::syscall(libc::SYS_fsmount, fs, FSMOUNT_CLOEXEC, 0) };
    if mount < 0 {
        return fail(5);
    }
    send_fd(sock, mount as RawFd)
}

/// `fsconfig(fs, cmd, key, value, 0)`: a raw system call on strings built before fork (safe
/// in the child).
fn fsconfig(
    fs: libc::c_long,
    cmd: libc::c_uint,
    key: Option<&CString>,
    value: Option<&CString>,
) -> libc::c_long {
    let ptr = |s: Option<&CString>| s.map_or(std::ptr::null(), |s| s.as_ptr());
    // SAFETY: NUL-terminated strings (or NULL where the command takes none) that outlive the
    // call; `fs` is a descriptor or fails the call with EBADF.
    unsafe { libc::syscall(libc::SYS_fsconfig, fs, cmd, ptr(key), ptr(value), 0) }
}

/// Writes `bytes` to `path` in one `write` (what `/proc/self/uid_map` requires).
fn write_whole(path: &CString, bytes: &[u8]) -> bool {
    // SAFETY: a NUL-terminated path built before fork.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return false;
    }
    // SAFETY: writes from a live buffer to the descriptor just opened, then closes it.
    let n = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    n == bytes.len() as isize
}

/// Sends `fd` over `sock` (SCM_RIGHTS) with a one-byte payload.
fn send_fd(sock: RawFd, fd: RawFd) -> i32 {
    let mut byte = [0u8; 1];
    let mut cmsg = [0u64; 4]; // aligned space for one int's control message
    let mut iov = libc::iovec {
        iov_base: byte.as_mut_ptr().cast(),
        iov_len: 1,
    };
    // SAFETY: zeroed msghdr is a valid empty header; its pointers are set to live buffers
    // and the control message is written within `cmsg` (CMSG_SPACE(4) <= 32 bytes).
    unsafe {
        let mut msg: libc::msghdr = std::mem::zeroed();
        msg.msg_iov = &mut iov;
        msg.msg_iovlen = 1;
        msg.msg_control = cmsg.as_mut_ptr().cast();
        msg.msg_controllen = libc::CMSG_SPACE(4) as usize;
        let h = libc::CMSG_FIRSTHDR(&msg);
        (*h).cmsg_level = libc::SOL_SOCKET;
        (*h).cmsg_type = libc::SCM_RIGHTS;
        (*h).cmsg_len = libc::CMSG_LEN(4) as usize;
        std::ptr::copy_nonoverlapping((&fd as *const RawFd).cast::<u8>(), libc::CMSG_DATA(h), 4);
        if libc::sendmsg(sock, &msg, 0) < 0 {
            return 1;
        }
    }
    0
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    #[test]
    fn the_view_shows_base_and_upper_and_writes_only_to_upper() {
        let tmp = tempfile::tempdir().unwrap();
        let (base, upper, work) = (
            tmp.path().join("b"),
            tmp.path().join("u"),
            tmp.path().join("w"),
        );
        for d in [&base, &upper, &work] {
            fs::create_dir(d).unwrap();
        }
        fs::write(base.join("a.txt"), "base\n").unwrap();
        fs::write(upper.join("new.txt"), "upper\n").unwrap();
        let open = |p: &std::path::Path| fs::File::open(p).unwrap();
        let view = match mount_view(&open(&base), &open(&upper), &open(&work)) {
            Ok(v) => v,
            Err(e) => {
                eprintln!("skipped: this kernel cannot mount the view here: {e}");
                return;
            }
        };
        let dir = cap_std::fs::Dir::from_std_file(fs::File::from(view));
        assert_eq!(dir.read_to_string("a.txt").unwrap(), "base\n");
        assert_eq!(dir.read_to_string("new.txt").unwrap(), "upper\n");
        dir.write("a.txt", "changed\n").unwrap();
        assert_eq!(fs::read_to_string(base.join("a.txt")).unwrap(), "base\n");
        assert_eq!(
            fs::read_to_string(upper.join("a.txt")).unwrap(),
            "changed\n"
        );
        dir.remove_file("new.txt").unwrap();
        assert!(!upper.join("new.txt").exists());
    }
}
