//! What confines a run, prepared in the parent before fork, and what it does and does not stop.
//!
//! **Stops** (each a kernel mechanism, none a list of command names):
//! - Writing, creating, renaming or removing anything outside the workspace view, the run's
//!   private temp directory and the tools' home (Landlock; symlinks and `..` included, since
//!   Landlock rules are on inodes). `truncate(2)` by name too (Landlock ABI 3+, or seccomp).
//! - Changing the metadata of anything outside those places: mode, owner, timestamps, xattrs
//!   and ACLs, `chattr` flags (a mount namespace of the program's own where every other mount
//!   is read-only: `mounts.rs`; where none can be made, seccomp refuses those system calls
//!   everywhere, the workspace included). The result's `outside` says which.
//! - Reading anything but the system (`/usr`, `/bin`, `/lib*`, most of `/etc`: see
//!   `landlock_rules::ETC_SECRETS`), `/proc` and `/sys` (read only), the host's
//!   `exec_read_paths`, and the writable places: `~/.ssh`, other projects, `/tmp`, `/root`.
//!   Executing anything outside the same places.
//! - Without `exec_network`: every TCP bind and connect (Landlock ABI 4+), and every socket
//!   but stream `AF_UNIX` ones, every `connect()` (so no socket file such as
//!   `/run/docker.sock` either) and io_uring (seccomp).
//! - Signals to, ptrace of, and abstract UNIX sockets of processes outside the run (Landlock
//!   ABI 6+ scopes; ptrace always).
//! - Root's powers: as root the program keeps uid 0 but no capability (bounding, ambient,
//!   effective, permitted sets emptied; securebits locked so exec gives none back), so it
//!   cannot raise its rlimits, kill other users' processes, load modules, or read past file
//!   modes; `no_new_privs` makes setuid binaries run without privilege.
//! - Unbounded resources: a pids cgroup caps processes (`RLIMIT_NPROC` where no cgroup can be
//!   made, which binds only non-root users); rlimits cap address space, file size, CPU time and
//!   core dumps; a wall clock kills the whole cgroup and process group; output is capped.
//! - Leftovers: every process still in the cgroup is killed when the program ends; the temp
//!   directory is removed.
//! - A working directory swapped for a symlink after the tool resolved it: the child enters it
//!   with `openat2(root, rel, RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` and `fchdir`, so the
//!   program never starts outside (the run is refused instead).
//! - The host's environment and descriptors: the environment is rebuilt from an allowlist,
//!   stdin is `/dev/null`, every descriptor above 2 is closed at exec.
//!
//! **Does not stop**:
//! - Anything inside the workspace: a program run there may read, change or delete any of it,
//!   `.git` included, whatever the file tools' `deny_read` / `deny_write` rules say (Landlock
//!   can only grant). Hosts that keep secrets in the workspace should not enable exec.
//! - Reading the system's world-readable files, `/proc` (other processes' command lines) and
//!   `/sys`. Burning the CPU, memory up to the address-space cap and disk up to the file-size
//!   cap and the disk's free space within the wall clock.
//! - With `exec_network: true`, anything the network reaches, socket files included.
//! - On a kernel without Landlock (and `exec_require_sandbox: false`), anything the host user
//!   can do to the file system's contents; the result then says `"sandbox": "none"`.
//! - Mounts beneath a writable place (a file system mounted inside the workspace) stay
//!   read-only: only the place's own mount is made writable again.
//! - Without a pids cgroup, as root: a process that leaves its process group (`setsid`)
//!   survives the call (still confined), and forks are bounded only by the wall clock.
//! - A host killed mid-call: the program itself dies with it (`PR_SET_PDEATHSIG`), the
//!   processes it started do not (still confined; the wall clock and the cgroup's kill were
//!   the host's).

use super::cgroup::{self, PidsCgroups, ProcessCage};
use super::child::{ChildPlan, Rlimit};
use super::landlock_rules::{self, RulesetPlan};
use super::mounts::{self, NamespacePlan, Outside};
use super::seccomp::{self, FilterPlan};
use serde::Serialize;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::OnceLock;
use std::time::Duration;

/// What the kernel offers, probed once per process.
#[derive(Debug, Clone)]
pub struct Support {
    pub landlock_abi: i32,
    pub seccomp: bool,
    pub root_capabilities: bool,
    /// How programs are kept from changing metadata outside (probed with a forked child).
    pub outside: Outside,
}

pub fn support() -> &'static Support {
    static SUPPORT: OnceLock<Support> = OnceLock::new();
    SUPPORT.get_or_init(|| {
        let root_capabilities = super::child::has_capabilities();
        Support {
            landlock_abi: landlock_rules::kernel_abi(),
            seccomp: seccompiler::TargetArch::try_from(std::env::consts::ARCH).is_ok(),
            root_capabilities,
            outside: mounts::probe(root_capabilities),
        }
    })
}

/// The confinement a result reports.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct SandboxReport {
    /// `landlock-v<N>`, or `none` where the host allowed running without it.
    pub sandbox: String,
    /// `denied`, `tcp-denied` (Landlock without seccomp), `allowed`, or `unrestricted`.
    pub network: &'static str,
    /// `cgroup` (pids.max and a kill of every member), `rlimit`, or `unbounded`.
    pub processes: &'static str,
    /// What keeps the program from changing the metadata (mode, owner, times, xattrs) of
    /// anything outside the places it may write: `read-only-mounts` (every other mount is
    /// read-only in its own mount namespace), or `metadata-calls-denied` (no namespace could
    /// be made: seccomp refuses those calls everywhere).
    pub outside: &'static str,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// The limits a run is held to.
#[derive(Debug, Clone, Copy)]
pub struct Bounds {
    pub wall_clock: Duration,
    pub processes: u64,
    pub address_space_bytes: u64,
    pub file_size_bytes: u64,
}

/// What to prepare.
pub struct Request<'a> {
    pub writable: &'a [PathBuf],
    pub readable: &'a [PathBuf],
    pub network: bool,
    pub require_landlock: bool,
    pub bounds: Bounds,
    /// The namespaces the run needs whatever this system offers (overlay mode's); `None`:
    /// those the probe found, or none.
    pub namespaces: Option<NamespacePlan>,
    /// Tests only: behave as a system where no namespace can be made.
    pub simulate_no_namespaces: bool,
}

/// Everything made before fork. The ruleset descriptor and the cgroup live here until the run
/// ends; `plan` is moved into the child's `pre_exec`.
pub struct Prepared {
    pub plan: ChildPlan,
    pub ruleset: Option<OwnedFd>,
    pub cage: Option<ProcessCage>,
    pub report: SandboxReport,
    /// The child has namespaces of its own: the runner adds the read-only mounts' plan.
    pub read_only_mounts: bool,
}

/// Why no run can happen: Landlock is required and missing.
#[derive(Debug)]
pub struct Unavailable(pub String);

pub fn prepare(req: &Request<'_>) -> Result<Prepared, Unavailable> {
    let kernel = support();
    let mut notes = Vec::new();

    let ruleset = if kernel.landlock_abi >= 1 {
        Some(
            landlock_rules::build(&RulesetPlan {
                writable: req.writable,
                readable: req.readable,
                network: req.network,
            })
            .map_err(Unavailable)?,
        )
    } else if req.require_landlock {
        return Err(Unavailable(
            "this kernel has no Landlock (Linux 5.13+ with landlock in the lsm= list), so no \
             program can be confined; the host can set exec_require_sandbox: false to run \
             programs unconfined"
                .into(),
        ));
    } else {
        notes.push("no Landlock on this kernel: the file system is not confined".into());
        None
    };

    let namespaces = match (&req.namespaces, &kernel.outside) {
        (Some(required), _) => Some(required.clone()),
        (None, _) if req.simulate_no_namespaces => None,
        (None, Outside::ReadOnlyMounts(found)) => Some(found.clone()),
        (None, Outside::MetadataDenied(_)) => None,
    };
    if namespaces.is_none() {
        let why = match &kernel.outside {
            Outside::MetadataDenied(why) => why.as_str(),
            Outside::ReadOnlyMounts(_) => "namespaces are switched off for this run",
        };
        notes.push(format!(
            "{why}: changing a file's mode, owner, times or xattrs is refused everywhere, the \
             workspace included"
        ));
    }
    let deny_truncate = ruleset.is_some() && kernel.landlock_abi < 3;
    let filter = if kernel.seccomp {
        seccomp::compile(FilterPlan {
            network: req.network,
            deny_truncate,
            deny_metadata: namespaces.is_none(),
        })
        .map_err(Unavailable)?
    } else {
        None
    };

    let network = match (req.network, filter.is_some(), kernel.landlock_abi >= 4) {
        (true, _, _) => "allowed",
        (false, true, _) => "denied",
        (false, false, true) => "tcp-denied",
        (false, false, false) => "unrestricted",
    };

    let cage = match ProcessCage::create(req.bounds.processes) {
        Ok(cage) => cage,
        Err(e) => {
            notes.push(format!("no pids cgroup for this run ({e})"));
            None
        }
    };
    let processes = if cage.is_some() {
        "cgroup"
    } else if !kernel.root_capabilities && !rustix::process::geteuid().is_root() {
        "rlimit"
    } else {
        if let PidsCgroups::Unavailable(why) = cgroup::support() {
            notes.push(format!(
                "running as root without a pids cgroup ({why}): processes are bounded only by \
                 the wall clock"
            ));
        }
        "unbounded"
    };

    let plan = ChildPlan {
        cgroup_procs: cage.as_ref().map(|c| c.procs_path().to_owned()),
        rlimits: rlimits(&req.bounds, cage.is_none()),
        drop_capabilities: kernel.root_capabilities,
        seccomp: filter,
        landlock_ruleset: ruleset.as_ref().map(|fd| fd.as_raw_fd()),
        namespaces: namespaces.clone(),
        overlay: None,
        read_only_rest: None,
        cwd: None,
        die_with_host: Some(std::process::id() as libc::pid_t),
    };
    let report = SandboxReport {
        sandbox: if ruleset.is_some() {
            format!("landlock-v{}", kernel.landlock_abi)
        } else {
            "none".into()
        },
        network,
        processes,
        outside: match (&namespaces, kernel.seccomp) {
            (Some(_), _) => "read-only-mounts",
            (None, true) => "metadata-calls-denied",
            (None, false) => "unprotected",
        },
        notes,
    };
    Ok(Prepared {
        plan,
        ruleset,
        cage,
        report,
        read_only_mounts: namespaces.is_some(),
    })
}

fn rlimits(bounds: &Bounds, nproc: bool) -> Vec<Rlimit> {
    let cpu = bounds.wall_clock.as_secs() + 1;
    let mut out = vec![
        Rlimit {
            resource: libc::RLIMIT_CPU as libc::c_int,
            soft: cpu,
            hard: cpu + 1,
        },
        Rlimit {
            resource: libc::RLIMIT_CORE as libc::c_int,
            soft: 0,
            hard: 0,
        },
        Rlimit {
            resource: libc::RLIMIT_FSIZE as libc::c_int,
            soft: bounds.file_size_bytes,
            hard: bounds.file_size_bytes,
        },
    ];
    if bounds.address_space_bytes > 0 {
        out.push(Rlimit {
            resource: libc::RLIMIT_AS as libc::c_int,
            soft: bounds.address_space_bytes,
            hard: bounds.address_space_bytes,
        });
    }
    if nproc {
        out.push(Rlimit {
            resource: libc::RLIMIT_NPROC as libc::c_int,
            soft: bounds.processes,
            hard: bounds.processes,
        });
    }
    out
}
