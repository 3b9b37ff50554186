//! The seccomp filter: what Landlock cannot say on this kernel, said with system calls.
//!
//! Landlock's network rules (ABI 4) cover TCP bind and connect only; connecting to a socket
//! file by its path (`/run/docker.sock`, the system D-Bus: root on the host) is covered from
//! ABI 9 and UDP from ABI 10. So without network access the filter leaves a program the
//! sockets it needs to talk to its own children (`socketpair`, stream `AF_UNIX` sockets it can
//! bind inside the workspace) and nothing that reaches another process:
//! - `socket()` of any family but `AF_UNIX`, and of `SOCK_DGRAM` (an unconnected datagram
//!   socket sends to any socket path): `EPERM`;
//! - `connect()`: `EPERM`, whatever the family;
//! - io_uring (its operations would bypass this filter): `EPERM`, network or not;
//! - on a kernel whose Landlock has no truncate right (ABI < 3), `truncate(path)`: a file
//!   Landlock lets the program read must not be emptied by name;
//! - where no private mount namespace can be made (`mounts.rs`), every call that changes a
//!   file's metadata, which Landlock does not cover: the chmod, chown, utimes and set/remove
//!   xattr families (ACLs are xattrs) and the `FS_IOC_SETFLAGS` / `FS_IOC_FSSETXATTR` ioctls
//!   (`chattr`). They cannot be told apart by path here, so they are refused inside the
//!   workspace too.
//!
//! Everything else is allowed: this is not a system call allowlist. Other architectures'
//! system calls (32-bit on x86_64) kill the process; x32 numbers get `EPERM`.

use seccompiler::{
    sock_filter, BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition,
    SeccompFilter, SeccompRule, TargetArch,
};
use std::collections::BTreeMap;

/// What the filter denies, decided by the runner.
#[derive(Debug, Clone, Copy)]
pub struct FilterPlan {
    pub network: bool,
    pub deny_truncate: bool,
    /// No read-only mounts protect what lies outside: refuse every metadata change.
    pub deny_metadata: bool,
}

/// The system calls that change a file's metadata (x86_64 / aarch64 numbers through libc;
/// the newest ones by number, which libc may not name yet).
const METADATA_CALLS: &[i64] = &[
    libc::SYS_fchmod,
    libc::SYS_fchmodat,
    FCHMODAT2,
    libc::SYS_fchown,
    libc::SYS_fchownat,
    libc::SYS_utimensat,
    libc::SYS_setxattr,
    libc::SYS_lsetxattr,
    libc::SYS_fsetxattr,
    libc::SYS_removexattr,
    libc::SYS_lremovexattr,
    libc::SYS_fremovexattr,
    SETXATTRAT,
    REMOVEXATTRAT,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chmod,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_chown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_lchown,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utime,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_utimes,
    #[cfg(target_arch = "x86_64")]
    libc::SYS_futimesat,
];
const FCHMODAT2: i64 = 452;
const SETXATTRAT: i64 = 463;
const REMOVEXATTRAT: i64 = 466;
/// `FS_IOC_SETFLAGS` (and its 32-bit twin) and `FS_IOC_FSSETXATTR`: `chattr`.
const METADATA_IOCTLS: &[u64] = &[0x4008_6602, 0x4004_6602, 0x401c_5820];

/// The compiled filter, or `None` on an architecture seccompiler does not know.
pub fn compile(plan: FilterPlan) -> Result<Option<BpfProgram>, String> {
    let Ok(arch) = TargetArch::try_from(std::env::consts::ARCH) else {
        return Ok(None);
    };
    let mut rules: BTreeMap<i64, Vec<SeccompRule>> = BTreeMap::new();
    let always = |rules: &mut BTreeMap<i64, Vec<SeccompRule>>, nr: i64| {
        rules.insert(nr, Vec::new());
    };
    always(&mut rules, libc::SYS_io_uring_setup);
    always(&mut rules, libc::SYS_io_uring_enter);
    always(&mut rules, libc::SYS_io_uring_register);
    if plan.deny_truncate {
        always(&mut rules, libc::SYS_truncate);
    }
    if plan.deny_metadata {
        for &nr in METADATA_CALLS {
            always(&mut rules, nr);
        }
        let ioctls = METADATA_IOCTLS
            .iter()
            .map(|&request| {
                SeccompCondition::new(1, SeccompCmpArgLen::Dword, SeccompCmpOp::Eq, request)
                    .and_then(|c| SeccompRule::new(vec![c]))
                    .map_err(err)
            })
            .collect::<Result<Vec<_>, _>>()?;
        rules.insert(libc::SYS_ioctl, ioctls);
    }
    if !plan.network {
        always(&mut rules, libc::SYS_connect);
        let cond = |arg, op, value| {
            SeccompCondition::new(arg, SeccompCmpArgLen::Dword, op, value).map_err(err)
        };
        let not_unix = SeccompRule::new(vec![cond(0, SeccompCmpOp::Ne, libc::AF_UNIX as u64)?])
            .map_err(err)?;
        let datagram = SeccompRule::new(vec![cond(
            1,
            SeccompCmpOp::MaskedEq(SOCK_TYPE_MASK),
            libc::SOCK_DGRAM as u64,
        )?])
        .map_err(err)?;
        rules.insert(libc::SYS_socket, vec![not_unix, datagram.clone()]);
        rules.insert(libc::SYS_socketpair, vec![datagram]);
    }
    let filter = SeccompFilter::new(
        rules,
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(err)?;
    let mut program: BpfProgram = filter.try_into().map_err(err)?;
    // seccompiler's program starts with its three-instruction architecture check; the x32 guard
    // goes right after it, before the program loads the system call number itself.
    program.splice(ARCH_CHECK_LEN..ARCH_CHECK_LEN, x32_guard());
    Ok(Some(program))
}

/// `type & 0xf` is the socket type without `SOCK_NONBLOCK` / `SOCK_CLOEXEC`.
const SOCK_TYPE_MASK: u64 = 0xf;
const ARCH_CHECK_LEN: usize = 3;
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

fn x32_guard() -> Vec<sock_filter> {
    // BPF_LD | BPF_W | BPF_ABS, BPF_JMP | BPF_JGE | BPF_K, BPF_RET | BPF_K.
    const BPF_LD_W_ABS: u16 = 0x20;
    const BPF_JMP_JGE_K: u16 = 0x35;
    const BPF_RET_K: u16 = 0x06;
    const SECCOMP_DATA_NR_OFFSET: u32 = 0;
    vec![
        sock_filter {
            code: BPF_LD_W_ABS,
            jt: 0,
            jf: 0,
            k: SECCOMP_DATA_NR_OFFSET,
        },
        sock_filter {
            code: BPF_JMP_JGE_K,
            jt: 0,
            jf: 1,
            k: X32_SYSCALL_BIT,
        },
        sock_filter {
            code: BPF_RET_K,
            jt: 0,
            jf: 0,
            k: libc::SECCOMP_RET_ERRNO | libc::EPERM as u32,
        },
    ]
}

fn err(e: impl std::fmt::Display) -> String {
    format!("the seccomp filter could not be built: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_compiles_with_and_without_network() {
        for network in [false, true] {
            let program = compile(FilterPlan {
                network,
                deny_truncate: true,
                deny_metadata: network,
            })
            .unwrap()
            .expect("x86_64 and aarch64 are known");
            // Arch check, then the x32 guard returning EPERM.
            assert_eq!(program[3].k, 0);
            assert_eq!(program[4].k, X32_SYSCALL_BIT);
            assert_eq!(program[5].k, libc::SECCOMP_RET_ERRNO | libc::EPERM as u32);
            assert!(program.len() < 200);
        }
    }
}
