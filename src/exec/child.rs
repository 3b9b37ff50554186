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
//! 1. join the run's pids cgroup (needs write access to cgroup files: before Landlock);
//! 2. lower the rlimits (before dropping `CAP_SYS_RESOURCE`, which could raise them again);
//! 3. mark every descriptor above 2 close-on-exec (`close_range`): a host's stray descriptor
//!    must not carry a file Landlock would refuse into the program;
//! 4. as root: lock the securebits so uid 0 regains no capability at exec, empty the bounding
//!    and ambient sets, then drop every capability (`capset`);
//! 5. `no_new_privs` (setuid binaries gain nothing; seccomp and Landlock require it);
//! 6. the seccomp filter;
//! 7. `landlock_restrict_self` with the ruleset built before fork.

// Between fork and exec only raw system calls are safe to make; each block says why it is sound.
#![allow(unsafe_code)]

use std::ffi::CString;
use std::io;
use std::os::fd::RawFd;

/// One lowered resource limit.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Rlimit {
    pub(crate) resource: libc::c_int,
    pub(crate) soft: u64,
    pub(crate) hard: u64,
}

/// Everything the child does, prepared by the parent.
#[derive(Debug, Default)]
pub(crate) struct ChildPlan {
    pub(crate) cgroup_procs: Option<CString>,
    pub(crate) rlimits: Vec<Rlimit>,
    pub(crate) drop_capabilities: bool,
    pub(crate) seccomp: Option<seccompiler::BpfProgram>,
    pub(crate) landlock_ruleset: Option<RawFd>,
}

/// The step of [`ChildPlan::apply`] that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    JoinCgroup = 1,
    Rlimit = 2,
    CloseDescriptors = 3,
    DropCapabilities = 4,
    NoNewPrivs = 5,
    Seccomp = 6,
    Landlock = 7,
}

impl Step {
    pub(crate) fn describe(self) -> &'static str {
        match self {
            Step::JoinCgroup => "joining the run's pids cgroup",
            Step::Rlimit => "setting the resource limits",
            Step::CloseDescriptors => "closing inherited descriptors",
            Step::DropCapabilities => "dropping root's capabilities",
            Step::NoNewPrivs => "setting no_new_privs",
            Step::Seccomp => "installing the seccomp filter",
            Step::Landlock => "applying the Landlock ruleset",
        }
    }

    fn from_number(n: i32) -> Option<Step> {
        Some(match n {
            1 => Step::JoinCgroup,
            2 => Step::Rlimit,
            3 => Step::CloseDescriptors,
            4 => Step::DropCapabilities,
            5 => Step::NoNewPrivs,
            6 => Step::Seccomp,
            7 => Step::Landlock,
            _ => return None,
        })
    }
}

/// errno values are below 4096; a step's number is carried above them.
const STEP_SHIFT: i32 = 16;

fn encode(step: Step, errno: i32) -> io::Error {
    io::Error::from_raw_os_error(((step as i32) << STEP_SHIFT) | (errno & 0xffff))
}

/// Splits an error from `spawn` into the setup step that failed (none: exec itself failed)
/// and the errno.
pub(crate) fn decode(err: &io::Error) -> (Option<Step>, Option<i32>) {
    match err.raw_os_error() {
        Some(raw) => match Step::from_number(raw >> STEP_SHIFT) {
            Some(step) => (Some(step), Some(raw & 0xffff)),
            None => (None, Some(raw)),
        },
        None => (None, None),
    }
}

fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `syscall`'s -1-and-errno convention, as a step's result.
fn check(step: Step, ret: libc::c_long) -> io::Result<()> {
    if ret < 0 {
        Err(encode(step, last_errno()))
    } else {
        Ok(())
    }
}

impl ChildPlan {
    /// Runs in the forked child, just before exec. See the module doc for what it may do.
    pub(crate) fn apply(&self) -> io::Result<()> {
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
        if self.drop_capabilities {
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
pub(crate) fn has_capabilities() -> bool {
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
