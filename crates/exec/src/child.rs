//! What the child does between fork and exec.
//!
//! The parent may be a multithreaded program (a Go host through cgo): after `fork` only the
//! forking thread exists, and any lock another thread held (malloc's included) stays held
//! forever. So [`ChildPlan::apply`] makes raw system calls on memory the parent prepared and
//! nothing else: no allocation, no lock, no formatting, no `std` call that might do either.
//! Its errors are `io::Error::from_raw_os_error` values (no allocation), which std's spawn
//! carries back to the parent through its exec-error pipe; the failing step is folded into the
//! number ([`encode`], [`decode`]) so the parent can say which step failed.
//!
//! The steps, in an order where each still has the rights it needs:
//! 0. `PR_SET_PDEATHSIG` = `SIGKILL`: the program dies with the host's forking thread, which
//!    waits for it for the whole call (a killed host leaves no program running unwatched);
//! 1. join the run's pids cgroup (needs write access to cgroup files: before Landlock);
//! 2. lower the rlimits (before dropping `CAP_SYS_RESOURCE`, which could raise them again);
//! 3. mark every descriptor above 2 close-on-exec (`close_range`): a host's stray descriptor
//!    must not carry a file Landlock would refuse into the program;
//! 4. a user and a mount namespace of its own ([`NamespacePlan`], `mounts.rs`), its uid and
//!    gid mapped to themselves, every mount private; in overlay mode ([`OverlayPlan`]) the
//!    session's kernel overlay (base + upper) mounted on the workspace path itself, and the
//!    Landlock rule for the view added on the overlay's root (a rule on the base directory
//!    does not reach files on a mount over it: Landlock skips a covered mount point when it
//!    walks up a path); then every mount read-only but binds of the places the program may
//!    write ([`ReadOnlyRest`]), and the workspace opened again on these mounts;
//! 5. the working directory, opened beneath the view's root with no symlink followed and
//!    entered with `fchdir` ([`CwdPlan`]): std's `chdir` by path came earlier and may have
//!    followed a name swapped for a symlink, or reached the base under the overlay;
//! 6. as root, or after a user namespace: lock the securebits so uid 0 regains no capability
//!    at exec, empty the bounding and ambient sets, then drop every capability (`capset`);
//! 7. `no_new_privs` (setuid binaries gain nothing; seccomp and Landlock require it);
//! 8. the seccomp filter;
//! 9. `landlock_restrict_self` with the ruleset built before fork (and, in overlay mode, the
//!    rule step 4 added). From here on the program cannot mount, unmount or move a mount
//!    (Landlock refuses every topology change to a restricted process), so it cannot uncover
//!    the base beneath the overlay.

// Between fork and exec only raw system calls are safe to make; each block says why it is sound.
#![allow(unsafe_code)]

use super::mounts::{NamespacePlan, ReadOnlyRest};
use super::step::{check, encode, last_errno};
pub use super::step::{decode, Step};
use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// One lowered resource limit.
#[derive(Debug, Clone, Copy)]
pub struct Rlimit {
    pub resource: libc::c_int,
    pub soft: u64,
    pub hard: u64,
}

/// Everything the child does, prepared by the parent.
#[derive(Debug, Default)]
pub struct ChildPlan {
    pub cgroup_procs: Option<CString>,
    pub rlimits: Vec<Rlimit>,
    pub drop_capabilities: bool,
    pub seccomp: Option<seccompiler::BpfProgram>,
    pub landlock_ruleset: Option<RawFd>,
    /// A user and mount namespace of the program's own (`mounts.rs`): overlay mode, and
    /// every run where the system can make one.
    pub namespaces: Option<NamespacePlan>,
    pub overlay: Option<OverlayPlan>,
    /// Every mount but the writable places made read-only (`mounts.rs`).
    pub read_only_rest: Option<ReadOnlyRest>,
    pub cwd: Option<CwdPlan>,
    /// The host's pid: the program gets `SIGKILL` when the host's forking thread ends (a
    /// killed host leaves no program running unwatched, past every limit the host enforces).
    pub die_with_host: Option<libc::pid_t>,
}

/// The overlay view's mount, every string built by the parent (`overlay.rs`); the namespaces
/// it is made in are [`ChildPlan::namespaces`].
#[derive(Debug)]
pub struct OverlayPlan {
    /// The workspace path: the mount point, and the path the program sees the view at.
    pub target: CString,
    /// `lowerdir=…,upperdir=…,workdir=…,userxattr`.
    pub options: CString,
    pub mount_flags: libc::c_ulong,
    /// Landlock rights granted beneath the overlay's root (0: no Landlock on this kernel).
    pub view_access: u64,
}

/// Where the program starts: `rel` beneath the view's root.
#[derive(Debug)]
pub struct CwdPlan {
    /// The root opened by the parent (host mode); `None` in overlay mode, where the root is
    /// the overlay the child just mounted.
    pub root: Option<RawFd>,
    /// Relative, symlink-free (the tools resolved it); `.` for the root itself.
    pub rel: CString,
}

impl ChildPlan {
    /// Runs in the forked child, just before exec. See the module doc for what it may do.
    pub fn apply(&self) -> io::Result<()> {
        if let Some(host) = self.die_with_host {
            // SAFETY: prctl(PR_SET_PDEATHSIG, SIGKILL) and getppid take and return integers.
            let ret = unsafe { libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL, 0, 0, 0) };
            check(Step::DieWithHost, ret.into())?;
            // The host may have died before the prctl: then this process was reparented.
            // SAFETY: getppid takes nothing and cannot fail.
            if unsafe { libc::getppid() } != host {
                return Err(encode(Step::DieWithHost, libc::ESRCH));
            }
        }
        if let Some(procs) = &self.cgroup_procs {
            join_cgroup(procs)?;
        }
        for limit in &self.rlimits {
            let value = libc::rlimit64 {
                rlim_cur: limit.soft,
                rlim_max: limit.hard,
            };
            // SAFETY: prlimit64 on pid 0 (this process) reads `value` and writes nothing (the
            // old-limit pointer is NULL).
            let ret = unsafe {
                libc::syscall(
                    libc::SYS_prlimit64,
                    0,
                    limit.resource,
                    &value as *const libc::rlimit64,
                    std::ptr::null_mut::<libc::rlimit64>(),
                )
            };
            check(Step::Rlimit, ret)?;
        }
        close_on_exec_above_stderr()?;
        if let Some(namespaces) = &self.namespaces {
            namespaces.enter()?;
        }
        // The view's root on this namespace's mounts, once the child has its own: a
        // descriptor the parent opened leads to the host's mounts.
        let mut view_root: Option<RawFd> = None;
        if let Some(overlay) = &self.overlay {
            view_root = Some(mount_overlay(overlay, self.landlock_ruleset)?);
        }
        if let Some(rest) = &self.read_only_rest {
            if let Some(fd) = rest.apply()? {
                view_root = Some(fd);
            }
        }
        if let Some(cwd) = &self.cwd {
            match view_root.or(cwd.root) {
                Some(root) => enter(root, &cwd.rel)?,
                None => return Err(encode(Step::WorkingDirectory, libc::EBADF)),
            }
        }
        if let Some(fd) = view_root {
            // SAFETY: closes the descriptor this child opened, which nothing else holds.
            unsafe { libc::close(fd) };
        }
        if self.drop_capabilities || self.namespaces.is_some() {
            drop_capabilities()?;
        }
        // SAFETY: prctl(PR_SET_NO_NEW_PRIVS, 1) takes integers only.
        let ret = unsafe { libc::prctl(libc::PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) };
        check(Step::NoNewPrivs, ret.into())?;
        if let Some(program) = &self.seccomp {
            // seccompiler's apply_filter is prctl + the seccomp system call on a stack
            // `sock_fprog` pointing into `program`: no allocation.
            if let Err(e) = seccompiler::apply_filter(program) {
                let errno = match e {
                    seccompiler::Error::Seccomp(e) | seccompiler::Error::Prctl(e) => {
                        e.raw_os_error().unwrap_or(libc::EIO)
                    }
                    _ => libc::EINVAL,
                };
                return Err(encode(Step::Seccomp, errno));
            }
        }
        if let Some(fd) = self.landlock_ruleset {
            // SAFETY: landlock_restrict_self takes a descriptor the parent opened (kept open
            // until spawn returns) and flags; it touches no memory.
            let ret = unsafe { libc::syscall(libc::SYS_landlock_restrict_self, fd, 0u32) };
            check(Step::Landlock, ret)?;
        }
        Ok(())
    }
}

/// `overlayfs`'s `f_type` (`OVERLAYFS_SUPER_MAGIC`).
pub const OVERLAYFS_MAGIC: i64 = 0x794c_7630;

/// Step 4: the overlay mount and its Landlock rule, in the namespaces just made. Returns a
/// descriptor (`O_PATH`) of the overlay's root, checked to be an overlay.
fn mount_overlay(plan: &OverlayPlan, ruleset: Option<RawFd>) -> io::Result<RawFd> {
    // SAFETY: every pointer is a NUL-terminated string the parent built before fork.
    let ret = unsafe {
        libc::mount(
            c"overlay".as_ptr(),
            plan.target.as_ptr(),
            c"overlay".as_ptr(),
            plan.mount_flags,
            plan.options.as_ptr().cast(),
        )
    };
    check(Step::OverlayMount, ret.into())?;
    // SAFETY: open of a NUL-terminated path the parent built; O_PATH touches no file data.
    let root = unsafe {
        libc::open(
            plan.target.as_ptr(),
            libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC,
        )
    };
    if root < 0 {
        return Err(encode(Step::OverlayMount, last_errno()));
    }
    // SAFETY: `fs` is a zeroed stack struct the kernel fills.
    let mut fs: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: fstatfs writes into `fs` only.
    let ret = unsafe { libc::fstatfs(root, &mut fs) };
    if ret < 0 || fs.f_type as i64 != OVERLAYFS_MAGIC {
        // The path does not lead to the overlay just mounted: never run on what it leads to.
        return Err(encode(Step::OverlayMount, libc::EXDEV));
    }
    if let (Some(ruleset), true) = (ruleset, plan.view_access != 0) {
        let attr = PathBeneathAttr {
            allowed_access: plan.view_access,
            parent_fd: root,
        };
        // SAFETY: landlock_add_rule reads `attr` (a packed stack struct in the kernel's
        // layout) and uses two descriptors this process holds.
        let ret = unsafe {
            libc::syscall(
                libc::SYS_landlock_add_rule,
                ruleset,
                LANDLOCK_RULE_PATH_BENEATH,
                &attr as *const PathBeneathAttr,
                0u32,
            )
        };
        check(Step::OverlayRule, ret)?;
    }
    Ok(root)
}

const LANDLOCK_RULE_PATH_BENEATH: libc::c_int = 1;

/// `struct landlock_path_beneath_attr`.
#[repr(C, packed)]
struct PathBeneathAttr {
    allowed_access: u64,
    parent_fd: i32,
}

/// `struct open_how` (libc's is non-exhaustive).
#[repr(C)]
struct OpenHow {
    flags: u64,
    mode: u64,
    resolve: u64,
}

/// Step 5: `fchdir` to `rel` opened beneath `root` with no symlink, magic link or `..` out.
fn enter(root: RawFd, rel: &CString) -> io::Result<()> {
    let how = OpenHow {
        flags: (libc::O_PATH | libc::O_DIRECTORY | libc::O_CLOEXEC) as u64,
        mode: 0,
        resolve: libc::RESOLVE_BENEATH | libc::RESOLVE_NO_SYMLINKS | libc::RESOLVE_NO_MAGICLINKS,
    };
    // SAFETY: openat2 reads `rel` (NUL-terminated, built by the parent) and `how` (stack).
    let fd = unsafe {
        libc::syscall(
            libc::SYS_openat2,
            root,
            rel.as_ptr(),
            &how as *const OpenHow,
            std::mem::size_of::<OpenHow>(),
        )
    };
    if fd < 0 {
        return Err(encode(Step::WorkingDirectory, last_errno()));
    }
    let fd = fd as RawFd;
    // SAFETY: fchdir and close on the descriptor just opened.
    let ret = unsafe { libc::fchdir(fd) };
    let errno = last_errno();
    // SAFETY: as above.
    unsafe { libc::close(fd) };
    if ret < 0 {
        return Err(encode(Step::WorkingDirectory, errno));
    }
    Ok(())
}

fn join_cgroup(procs: &CString) -> io::Result<()> {
    // SAFETY: `procs` is a NUL-terminated path the parent built; open reads it.
    let fd = unsafe { libc::open(procs.as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC) };
    if fd < 0 {
        return Err(encode(Step::JoinCgroup, last_errno()));
    }
    // "0" moves the writing process itself.
    // SAFETY: writes one byte from a static buffer to the descriptor just opened.
    let written = unsafe { libc::write(fd, b"0".as_ptr().cast(), 1) };
    let errno = last_errno();
    // SAFETY: closes the descriptor opened above, which nothing else holds.
    unsafe { libc::close(fd) };
    if written != 1 {
        return Err(encode(Step::JoinCgroup, errno));
    }
    Ok(())
}

fn close_on_exec_above_stderr() -> io::Result<()> {
    const CLOSE_RANGE_CLOEXEC: libc::c_uint = 1 << 2;
    // SAFETY: close_range takes integers only; CLOEXEC marks rather than closes, so std's own
    // exec-error pipe and the Landlock descriptor still work until exec.
    let ret = unsafe { libc::syscall(libc::SYS_close_range, 3u32, u32::MAX, CLOSE_RANGE_CLOEXEC) };
    if ret == 0 {
        return Ok(());
    }
    // Before Linux 5.11: mark them one by one, up to the descriptor limit.
    let mut limit = libc::rlimit64 {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: prlimit64 on this process, writing only into `limit`.
    let ret = unsafe {
        libc::syscall(
            libc::SYS_prlimit64,
            0,
            libc::RLIMIT_NOFILE,
            std::ptr::null::<libc::rlimit64>(),
            &mut limit as *mut libc::rlimit64,
        )
    };
    check(Step::CloseDescriptors, ret)?;
    let top = limit.rlim_cur.min(1 << 20) as libc::c_int;
    for fd in 3..top {
        // SAFETY: fcntl on an integer descriptor; EBADF for closed ones is ignored.
        unsafe { libc::fcntl(fd, libc::F_SETFD, libc::FD_CLOEXEC) };
    }
    Ok(())
}

#[repr(C)]
struct CapHeader {
    version: u32,
    pid: libc::c_int,
}

#[repr(C)]
#[derive(Clone, Copy)]
struct CapData {
    effective: u32,
    permitted: u32,
    inheritable: u32,
}

fn drop_capabilities() -> io::Result<()> {
    const LINUX_CAPABILITY_VERSION_3: u32 = 0x2008_0522;
    let bits = libc::SECBIT_NOROOT
        | libc::SECBIT_NOROOT_LOCKED
        | libc::SECBIT_NO_SETUID_FIXUP
        | libc::SECBIT_NO_SETUID_FIXUP_LOCKED
        | libc::SECBIT_KEEP_CAPS_LOCKED
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE
        | libc::SECBIT_NO_CAP_AMBIENT_RAISE_LOCKED;
    // SAFETY: prctl with integer arguments only.
    let ret = unsafe { libc::prctl(libc::PR_SET_SECUREBITS, bits as libc::c_ulong, 0, 0, 0) };
    check(Step::DropCapabilities, ret.into())?;
    // Every capability number the kernel knows: it answers EINVAL past the last one.
    for cap in 0..64 {
        // SAFETY: prctl with integer arguments only.
        let ret = unsafe { libc::prctl(libc::PR_CAPBSET_DROP, cap as libc::c_ulong, 0, 0, 0) };
        if ret < 0 {
            let errno = last_errno();
            if errno == libc::EINVAL {
                break;
            }
            return Err(encode(Step::DropCapabilities, errno));
        }
    }
    // SAFETY: prctl with integer arguments only.
    let ret = unsafe {
        libc::prctl(
            libc::PR_CAP_AMBIENT,
            libc::PR_CAP_AMBIENT_CLEAR_ALL as libc::c_ulong,
            0,
            0,
            0,
        )
    };
    check(Step::DropCapabilities, ret.into())?;
    let header = CapHeader {
        version: LINUX_CAPABILITY_VERSION_3,
        pid: 0,
    };
    let data = [CapData {
        effective: 0,
        permitted: 0,
        inheritable: 0,
    }; 2];
    // SAFETY: capset reads a version-3 header and its two data words from the stack.
    let ret =
        unsafe { libc::syscall(libc::SYS_capset, &header as *const CapHeader, data.as_ptr()) };
    check(Step::DropCapabilities, ret)
}

/// Whether this process holds any effective capability (root does; drop them in the child).
pub fn has_capabilities() -> bool {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("CapEff:"))
                .map(|v| u64::from_str_radix(v.trim(), 16).unwrap_or(1) != 0)
        })
        .unwrap_or(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_survive_the_round_trip_through_an_errno() {
        for step in [Step::JoinCgroup, Step::Seccomp, Step::Landlock] {
            let err = encode(step, libc::EPERM);
            assert_eq!(decode(&err), (Some(step), Some(libc::EPERM)));
        }
        let plain = io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(decode(&plain), (None, Some(libc::ENOENT)));
    }
}
