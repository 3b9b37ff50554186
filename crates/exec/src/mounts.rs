//! The program's own mount namespace, in which every mount but the places it may write is
//! read-only (as bubblewrap's read-only binds do).
//!
//! Landlock covers a file's content and names (write, truncate, create, rename, remove, link)
//! but not its metadata: `chmod`, `utimensat`, the `setxattr` family (ACLs are xattrs) and
//! `FS_IOC_SETFLAGS` (`chattr`) on a file the user owns outside the workspace would succeed.
//! A read-only mount refuses every one of them (`EROFS`), for every path a program can name,
//! `..`, symlinks and `/proc/self/cwd` included, since its whole view of the file system is
//! this namespace's mounts. So before exec the child:
//! 1. enters a user and a mount namespace of its own (its uid and gid mapped to themselves;
//!    a root host without user namespaces: a mount namespace alone) and makes every mount
//!    private, so nothing it does reaches the host's mounts;
//! 2. (overlay mode) mounts the session's view on the workspace path (`overlay.rs`);
//! 3. binds each writable place onto itself (the workspace when writes are on, the run's temp
//!    directory, the tools' home);
//! 4. makes every mount read-only, recursively from `/` (`mount_setattr`);
//! 5. makes the binds of step 3 (and a writable overlay view) writable again: only those
//!    mounts, not mounts beneath them;
//! 6. opens the workspace again by its path, so the working directory is entered on this
//!    namespace's mounts (a descriptor opened before step 1 still leads to the host's, where
//!    `..` climbs writable mounts), and checks it is the directory the parent opened.
//!
//! A program cannot undo it: it holds no capability (dropped before exec), Landlock refuses
//! every mount-topology change to a restricted process, and a user namespace it makes itself
//! gets these mounts locked read-only. Devices stay usable (`/dev/null` is written through a
//! read-only mount). Where no namespace can be made the seccomp filter denies the metadata
//! system calls instead, inside the workspace too (`seccomp.rs`); the result says which.

// Between fork and exec only raw system calls are safe to make; each block says why it is sound.
#![allow(unsafe_code)]

use super::step::{encode, last_errno, Step};
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// A file the child writes whole (`/proc/self/uid_map` and its kin).
#[derive(Debug, Clone)]
pub struct ProcWrite {
    pub path: CString,
    pub bytes: Vec<u8>,
}

/// The namespaces of step 1, built by the parent.
#[derive(Debug, Clone)]
pub struct NamespacePlan {
    /// `CLONE_NEWUSER | CLONE_NEWNS`, or `CLONE_NEWNS` alone for a root host without user
    /// namespaces (a test may add a bit the kernel refuses).
    pub unshare_flags: libc::c_int,
    /// `setgroups` = `deny`, then `uid_map` and `gid_map`; empty without a user namespace.
    pub id_maps: Vec<ProcWrite>,
}

impl NamespacePlan {
    /// A user and a mount namespace, this process's uid and gid mapped to themselves.
    pub fn with_user_namespace() -> NamespacePlan {
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        NamespacePlan {
            unshare_flags: libc::CLONE_NEWUSER | libc::CLONE_NEWNS,
            id_maps: vec![
                ProcWrite {
                    path: c"/proc/self/setgroups".to_owned(),
                    bytes: b"deny".to_vec(),
                },
                ProcWrite {
                    path: c"/proc/self/uid_map".to_owned(),
                    bytes: format!("{uid} {uid} 1\n").into_bytes(),
                },
                ProcWrite {
                    path: c"/proc/self/gid_map".to_owned(),
                    bytes: format!("{gid} {gid} 1\n").into_bytes(),
                },
            ],
        }
    }

    /// A mount namespace alone (root, whose `CAP_SYS_ADMIN` makes one without a user
    /// namespace).
    pub fn mount_only() -> NamespacePlan {
        NamespacePlan {
            unshare_flags: libc::CLONE_NEWNS,
            id_maps: Vec::new(),
        }
    }

    /// Step 1, in the child.
    pub fn enter(&self) -> io::Result<()> {
        // SAFETY: unshare takes integers only; the child is single-threaded (fork), as
        // CLONE_NEWUSER requires.
        let ret = unsafe { libc::unshare(self.unshare_flags) };
        if ret < 0 {
            return Err(encode(Step::UserNamespace, last_errno()));
        }
        for write in &self.id_maps {
            write_whole(&write.path, &write.bytes)?;
        }
        // SAFETY: mount with a static NUL-terminated path and NULL source, type and data: only
        // changes the propagation of this (new) namespace's mounts, so nothing reaches the
        // host's.
        let ret = unsafe {
            libc::mount(
                std::ptr::null(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            )
        };
        if ret < 0 {
            return Err(encode(Step::UserNamespace, last_errno()));
        }
        Ok(())
    }
}

/// Steps 3 to 6, built by the parent.
#[derive(Debug, Clone, Default)]
pub struct ReadOnlyRest {
    /// Bound onto themselves before the rest turns read-only, then made writable again.
    pub binds: Vec<CString>,
    /// Mounts made writable again that are not binds (a writable overlay view).
    pub also_writable: Vec<CString>,
    /// Host mode: the workspace path, opened again on this namespace's mounts for the working
    /// directory, with the device and inode the parent saw there.
    pub view: Option<(CString, u64, u64)>,
}

/// `struct mount_attr` (libc has none).
#[repr(C)]
struct MountAttr {
    attr_set: u64,
    attr_clr: u64,
    propagation: u64,
    userns_fd: u64,
}

const MOUNT_ATTR_RDONLY: u64 = 0x1;

fn set_read_only(path: &CString, read_only: bool, recursive: bool) -> io::Result<()> {
    let attr = MountAttr {
        attr_set: if read_only { MOUNT_ATTR_RDONLY } else { 0 },
        attr_clr: if read_only { 0 } else { MOUNT_ATTR_RDONLY },
        propagation: 0,
        userns_fd: 0,
    };
    let flags = if recursive { libc::AT_RECURSIVE } else { 0 } as libc::c_uint;
    // SAFETY: mount_setattr reads a NUL-terminated path the parent built and `attr`, a stack
    // struct in the kernel's layout whose size it is given.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_mount_setattr,
            libc::AT_FDCWD,
            path.as_ptr(),
            flags,
            &attr as *const MountAttr,
            std::mem::size_of::<MountAttr>(),
        )
    };
    if ret < 0 {
        return Err(encode(Step::ReadOnlyMounts, last_errno()));
    }
    Ok(())
}

impl ReadOnlyRest {
    /// Steps 3 to 6, in the child, after [`NamespacePlan::enter`] (and the overlay mount).
    /// Returns a descriptor (`O_PATH`) of the workspace on this namespace's mounts, in host
    /// mode.
    pub fn apply(&self) -> io::Result<Option<RawFd>> {
        for path in &self.binds {
            // SAFETY: mount with NUL-terminated paths the parent built and no data.
            let ret = unsafe {
                libc::mount(
                    path.as_ptr(),
                    path.as_ptr(),
                    std::ptr::null(),
                    libc::MS_BIND | libc::MS_REC,
                    std::ptr::null(),
                )
            };
            if ret < 0 {
                return Err(encode(Step::ReadOnlyMounts, last_errno()));
            }
        }
        set_read_only(&c"/".to_owned(), true, true)?;
        for path in self.binds.iter().chain(&self.also_writable) {
            set_read_only(path, false, false)?;
        }
        let Some((path, dev, ino)) = &self.view else {
            return Ok(None);
        };
        // SAFETY: open of a NUL-terminated path the parent built; O_PATH touches no data.
        let fd = unsafe {
            libc::open(
                path.as_ptr(),
                libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(encode(Step::WorkingDirectory, last_errno()));
        }
        // SAFETY: `st` is a zeroed stack struct fstat fills.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        // SAFETY: fstat writes into `st` only.
        let ret = unsafe { libc::fstat(fd, &mut st) };
        if ret < 0 || st.st_dev != *dev || st.st_ino != *ino {
            // SAFETY: closes the descriptor just opened.
            unsafe { libc::close(fd) };
            // The path leads elsewhere than the parent's workspace: never start there.
            return Err(encode(Step::WorkingDirectory, libc::EXDEV));
        }
        Ok(Some(fd))
    }
}

/// Writes `bytes` to `path` in one `write` (what `/proc/self/uid_map` requires).
fn write_whole(path: &CString, bytes: &[u8]) -> io::Result<()> {
    // SAFETY: open of a NUL-terminated path the parent built.
    let fd = unsafe { libc::open(path.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(encode(Step::IdMap, last_errno()));
    }
    // SAFETY: writes from a buffer the parent built to the descriptor just opened.
    let written = unsafe { libc::write(fd, bytes.as_ptr().cast(), bytes.len()) };
    let errno = last_errno();
    // SAFETY: closes the descriptor opened above.
    unsafe { libc::close(fd) };
    if written != bytes.len() as isize {
        return Err(encode(Step::IdMap, errno));
    }
    Ok(())
}

/// A path as the child's C string (`None`: it holds a NUL byte, which no path does).
pub fn c_path(path: &Path) -> Option<CString> {
    CString::new(path.as_os_str().as_bytes()).ok()
}

/// How programs are kept from changing anything outside, on this system.
#[derive(Debug, Clone)]
pub enum Outside {
    /// Steps 1-6 with this namespace plan.
    ReadOnlyMounts(NamespacePlan),
    /// No namespace can be made: seccomp denies the metadata system calls everywhere.
    MetadataDenied(String),
}

/// Probes once (a forked child tries steps 1 and 4, then exits): a user and mount namespace,
/// else (root) a mount namespace alone, else the seccomp fallback with the reason.
pub fn probe(root_capabilities: bool) -> Outside {
    let with_user = NamespacePlan::with_user_namespace();
    let first = match try_in_child(&with_user) {
        Ok(()) => return Outside::ReadOnlyMounts(with_user),
        Err(why) => why,
    };
    if root_capabilities {
        let mount_only = NamespacePlan::mount_only();
        if try_in_child(&mount_only).is_ok() {
            return Outside::ReadOnlyMounts(mount_only);
        }
    }
    Outside::MetadataDenied(first)
}

fn try_in_child(plan: &NamespacePlan) -> Result<(), String> {
    let root = c"/".to_owned();
    // SAFETY: the child makes raw system calls only (unshare, open, write, mount,
    // mount_setattr on memory built before the fork) and leaves with _exit, as is sound after
    // fork in a multithreaded process.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        return Err(format!("fork failed: {}", io::Error::last_os_error()));
    }
    if pid == 0 {
        // The fork holds a copy of every descriptor the host has open, locks included (a
        // session's, a journal's): let them go at once, and die with the host, so a host
        // killed now does not leave its locks held by this child for a moment.
        // SAFETY: close_range and prctl take integers only.
        unsafe {
            libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, 0u32);
            libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0);
        }
        let result = plan.enter().and_then(|()| set_read_only(&root, true, true));
        // The exit status keeps 8 bits: the errno alone.
        let code = match result {
            Ok(()) => 0,
            Err(e) => super::step::decode(&e).1.unwrap_or(libc::EIO).clamp(1, 255),
        };
        // SAFETY: ends the forked child without running the parent's destructors.
        unsafe { libc::_exit(code) };
    }
    let mut status = 0;
    // SAFETY: waits for the child forked above, writing its status into `status`.
    let ret = unsafe { libc::waitpid(pid, &mut status, 0) };
    if ret < 0 {
        return Err(format!("waitpid failed: {}", io::Error::last_os_error()));
    }
    if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
        return Ok(());
    }
    Err(describe_probe_failure(status))
}

fn describe_probe_failure(status: libc::c_int) -> String {
    if !libc::WIFEXITED(status) {
        return "the probe child died".into();
    }
    let errno = libc::WEXITSTATUS(status);
    format!(
        "no private mount namespace could be made ({})",
        io::Error::from_raw_os_error(errno)
    )
}
