//! The Landlock ruleset of one run, built in the parent before fork (the child only hands its
//! descriptor to `landlock_restrict_self`).
//!
//! Landlock rules are on inodes, not on path strings: a rule for the workspace covers what is
//! beneath that directory however a path reaches it, and a symlink in the workspace pointing
//! to `/etc` leads to `/etc`'s rules (read-only), never the workspace's. Rules only grant, so
//! the ruleset is a list of what may be touched and how:
//! - read and execute: `/usr`, `/bin`, `/sbin`, `/lib*`, the entries of `/etc` except the
//!   secrets in [`ETC_SECRETS`], the host's toolchain homes (`exec_read_paths`);
//! - read only: `/proc` and `/sys` (Landlock keeps another process's `/proc` files that need
//!   ptrace access, such as `environ` and `mem`, out of reach by itself);
//! - read, write, truncate: `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/random`,
//!   `/dev/urandom`;
//! - everything but making device nodes: the workspace view, the run's private temp directory
//!   and the tools' home;
//! - no TCP bind or connect at all unless the host allows the network (ABI 4+); no signals to,
//!   and no abstract UNIX sockets of, processes outside the sandbox (ABI 6+).

use landlock::{
    Access, AccessFs, AccessNet, BitFlags, CompatLevel, Compatible, PathBeneath, PathFd, Ruleset,
    RulesetAttr, RulesetCreatedAttr, Scope, ABI,
};
use std::fs;
use std::os::fd::OwnedFd;
use std::path::{Path, PathBuf};

/// The newest ABI this code asks for; the landlock crate gives the kernel what it knows of it.
const WANTED: ABI = ABI::V10;

/// Read and execute.
pub const SYSTEM_DIRS: &[&str] = &[
    "/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32",
];
/// Read only.
const PSEUDO_DIRS: &[&str] = &["/proc", "/sys"];
/// Read and write.
const DEVICES: &[&str] = &[
    "/dev/null",
    "/dev/zero",
    "/dev/full",
    "/dev/random",
    "/dev/urandom",
];

/// Entries of `/etc` a program never needs and must not read: password hashes, host keys,
/// private TLS keys, credentials of package indexes and network links. `a/b` leaves out `b`
/// inside `a` and grants the rest of `a`.
pub const ETC_SECRETS: &[&str] = &[
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "security/opasswd",
    "ssh",
    "ssl/private",
    "credstore",
    "credstore.encrypted",
    "krb5.keytab",
    "pip.conf",
    "npmrc",
    "mysql/debian.cnf",
    "netplan",
    "NetworkManager/system-connections",
    "wireguard",
    "ppp",
    "ipsec.secrets",
    "docker",
    "libvirt",
];

/// The running kernel's Landlock ABI version; 0 when the kernel has no Landlock (or it is off).
pub fn kernel_abi() -> i32 {
    const LANDLOCK_CREATE_RULESET_VERSION: libc::c_uint = 1;
    // SAFETY: with a NULL attribute pointer, size 0 and the VERSION flag, the system call reads
    // and writes no memory; it returns the ABI version or -1.
    #[allow(unsafe_code)]
    let version = unsafe {
        libc::syscall(
            libc::SYS_landlock_create_ruleset,
            std::ptr::null::<libc::c_void>(),
            0usize,
            LANDLOCK_CREATE_RULESET_VERSION,
        )
    };
    version.max(0) as i32
}

/// Where a run may go.
#[derive(Debug, Clone)]
pub struct RulesetPlan<'a> {
    /// Read, write, create, remove: the workspace view, the private temp directory, home.
    pub writable: &'a [PathBuf],
    /// Read and execute, besides the system's: the host's toolchain homes.
    pub readable: &'a [PathBuf],
    pub network: bool,
}

/// The filled ruleset, as the descriptor the child passes to `landlock_restrict_self`.
pub fn build(plan: &RulesetPlan<'_>) -> Result<OwnedFd, String> {
    let read_exec = AccessFs::from_read(WANTED);
    let read = AccessFs::ReadFile | AccessFs::ReadDir;
    let device = AccessFs::ReadFile | AccessFs::WriteFile | AccessFs::Truncate | AccessFs::IoctlDev;
    let write = AccessFs::from_all(WANTED) & !(AccessFs::MakeChar | AccessFs::MakeBlock);

    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(WANTED))
        .map_err(fail)?
        .scope(Scope::from_all(WANTED))
        .map_err(fail)?;
    if !plan.network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(WANTED))
            .map_err(fail)?;
    }
    let mut created = ruleset.create().map_err(fail)?;

    let mut grant = |path: &Path, access: BitFlags<AccessFs>| -> Result<(), String> {
        let fd = PathFd::new(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let access = if path.is_dir() {
            access
        } else {
            access & AccessFs::from_file(WANTED)
        };
        created
            .as_mut()
            .add_rule(PathBeneath::new(fd, access))
            .map_err(fail)?;
        Ok(())
    };
    for dir in SYSTEM_DIRS.iter().map(Path::new).filter(|p| p.exists()) {
        grant(dir, read_exec)?;
    }
    for path in etc_entries(Path::new("/etc"), ETC_SECRETS) {
        grant(&path, read_exec)?;
    }
    for dir in PSEUDO_DIRS.iter().map(Path::new).filter(|p| p.exists()) {
        grant(dir, read)?;
    }
    for dev in DEVICES.iter().map(Path::new).filter(|p| p.exists()) {
        grant(dev, device)?;
    }
    for path in plan.readable.iter().filter(|p| p.exists()) {
        grant(path, read_exec)?;
    }
    for path in plan.writable {
        grant(path, write)?;
    }
    let fd: Option<OwnedFd> = created.into();
    fd.ok_or_else(|| "the kernel has no Landlock".to_string())
}

/// The rights a rule beneath the workspace view gets (`writable`: everything but making device
/// nodes; else read and execute), in the kernel's bits for this kernel's ABI: the child adds
/// the overlay view's rule itself, with a raw `landlock_add_rule`, and the kernel refuses a
/// right the ruleset does not handle.
pub fn view_access(writable: bool) -> u64 {
    let abi = ABI::from(kernel_abi());
    if abi == ABI::Unsupported {
        return 0;
    }
    let access = if writable {
        AccessFs::from_all(abi) & !(AccessFs::MakeChar | AccessFs::MakeBlock)
    } else {
        AccessFs::from_read(abi)
    };
    access.bits()
}

/// The entries of `dir` to grant, leaving out `secrets` (and granting the rest of a directory
/// that only has a secret inside it, entry by entry).
fn etc_entries(dir: &Path, secrets: &[&str]) -> Vec<PathBuf> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(name) = name.to_str() else {
            continue;
        };
        if secrets.contains(&name) {
            continue;
        }
        let inner: Vec<&str> = secrets
            .iter()
            .filter_map(|s| s.strip_prefix(name)?.strip_prefix('/'))
            .collect();
        if inner.is_empty() {
            out.push(entry.path());
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            out.extend(etc_entries(&entry.path(), &inner));
        }
    }
    out
}

fn fail(e: impl std::fmt::Display) -> String {
    format!("the Landlock ruleset could not be built: {e}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn etc_secrets_are_left_out_and_their_neighbours_kept() {
        let dir = tempfile::tempdir().unwrap();
        for d in ["ssl/private", "ssl/certs", "ssh"] {
            fs::create_dir_all(dir.path().join(d)).unwrap();
        }
        for f in ["shadow", "passwd", "ssl/openssl.cnf"] {
            fs::write(dir.path().join(f), "x").unwrap();
        }
        let mut got: Vec<String> = etc_entries(dir.path(), ETC_SECRETS)
            .into_iter()
            .map(|p| p.strip_prefix(dir.path()).unwrap().display().to_string())
            .collect();
        got.sort();
        assert_eq!(got, ["passwd", "ssl/certs", "ssl/openssl.cnf"]);
    }

    #[test]
    fn this_kernel_reports_an_abi() {
        // Informational: the confinement tests skip with a message where this is 0.
        eprintln!("Landlock ABI {}", kernel_abi());
    }
}
