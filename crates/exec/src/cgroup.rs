//! One pids cgroup per run: the kernel's bound on how many processes a run may have at once
//! (`pids.max`), and the one way to find and kill every one of them, however they were started
//! (`setsid`, double forks and daemons leave the process group, never the cgroup).
//!
//! Why a cgroup and not `RLIMIT_NPROC`: the kernel never applies that limit to uid 0 (root's
//! user is exempt in `copy_process`, capabilities or not, user namespace or not), and wsfs
//! hosts and CI run as root. Where no pids cgroup can be made (no writable cgroup file system,
//! a v2 hierarchy without the pids controller delegated), the runner falls back to
//! `RLIMIT_NPROC` (real for other users) and says so in the result (`processes`).
//!
//! The child joins its cgroup itself, before it execs, by writing "0" (itself) to the
//! cgroup's `cgroup.procs`: nothing the program runs can be outside it.

use std::ffi::CString;
use std::fs;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Which cgroup file system the pids controller is on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CgroupVersion {
    V1,
    V2,
}

/// Where this process can make a pids cgroup for a run, found once per process.
#[derive(Debug, Clone)]
pub enum PidsCgroups {
    Available {
        parent: PathBuf,
        version: CgroupVersion,
    },
    Unavailable(String),
}

static SUPPORT: OnceLock<PidsCgroups> = OnceLock::new();
static NEXT_CAGE: AtomicU64 = AtomicU64::new(1);

/// Prefix of every cgroup a run makes: `wsfs-<host pid>-<n>`.
const CAGE_PREFIX: &str = "wsfs-";

/// How long the teardown waits for a cgroup's processes to be gone before giving up on it
/// (a later run's sweep removes it).
const TEARDOWN_LIMIT: Duration = Duration::from_secs(3);

pub fn support() -> &'static PidsCgroups {
    SUPPORT.get_or_init(|| {
        let found = discover();
        if let PidsCgroups::Available { parent, version } = &found {
            sweep_stale(parent, *version);
        }
        found
    })
}

fn discover() -> PidsCgroups {
    let (Ok(own), Ok(mounts)) = (
        fs::read_to_string("/proc/self/cgroup"),
        fs::read_to_string("/proc/self/mountinfo"),
    ) else {
        return PidsCgroups::Unavailable("/proc/self/cgroup is not readable".into());
    };
    let mounts = parse_mountinfo(&mounts);
    let mut reasons = Vec::new();
    for candidate in candidates(&own, &mounts) {
        match usable(&candidate) {
            Ok(()) => return candidate.into_available(),
            Err(why) => reasons.push(format!("{}: {why}", candidate.dir.display())),
        }
    }
    if reasons.is_empty() {
        reasons.push("no cgroup file system with the pids controller is mounted".into());
    }
    PidsCgroups::Unavailable(reasons.join("; "))
}

struct Candidate {
    dir: PathBuf,
    version: CgroupVersion,
}

impl Candidate {
    fn into_available(self) -> PidsCgroups {
        PidsCgroups::Available {
            parent: self.dir,
            version: self.version,
        }
    }
}

struct Mount {
    root: String,
    point: PathBuf,
    fstype: String,
    super_options: String,
}

fn parse_mountinfo(text: &str) -> Vec<Mount> {
    text.lines()
        .filter_map(|line| {
            let (left, right) = line.split_once(" - ")?;
            let fields: Vec<&str> = left.split(' ').collect();
            let mut rest = right.split(' ');
            Some(Mount {
                root: unescape(fields.get(3)?),
                point: PathBuf::from(unescape(fields.get(4)?)),
                fstype: rest.next()?.to_string(),
                super_options: rest.nth(1).unwrap_or_default().to_string(),
            })
        })
        .collect()
}

/// mountinfo writes space, tab, newline and backslash as `\ooo`.
fn unescape(field: &str) -> String {
    let bytes = field.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'\\'
            && i + 3 < bytes.len()
            && bytes[i + 1..=i + 3].iter().all(u8::is_ascii_digit)
        {
            let code = bytes[i + 1..=i + 3]
                .iter()
                .fold(0u32, |n, d| n * 8 + u32::from(d - b'0'));
            out.push(code as u8);
            i += 4;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// The cgroups to try, best first: the process's own (v2, then v1), then the hierarchy's
/// root (as root, a v2 host in a populated service cgroup can still make one there).
fn candidates(own: &str, mounts: &[Mount]) -> Vec<Candidate> {
    let mut out = Vec::new();
    for line in own.lines() {
        let mut parts = line.splitn(3, ':');
        let (Some(id), Some(controllers), Some(path)) = (parts.next(), parts.next(), parts.next())
        else {
            continue;
        };
        let (version, mount) = if id == "0" && controllers.is_empty() {
            (
                CgroupVersion::V2,
                mounts.iter().find(|m| m.fstype == "cgroup2"),
            )
        } else if controllers.split(',').any(|c| c == "pids") {
            (
                CgroupVersion::V1,
                mounts.iter().find(|m| {
                    m.fstype == "cgroup" && m.super_options.split(',').any(|o| o == "pids")
                }),
            )
        } else {
            continue;
        };
        let Some(mount) = mount else { continue };
        let relative = path
            .strip_prefix(mount.root.as_str())
            .unwrap_or(path)
            .trim_start_matches('/');
        let own_dir = mount.point.join(relative);
        if own_dir != mount.point {
            out.push(Candidate {
                dir: own_dir,
                version,
            });
        }
        out.push(Candidate {
            dir: mount.point.clone(),
            version,
        });
    }
    // v2 first: it has cgroup.kill.
    out.sort_by_key(|c| c.version == CgroupVersion::V1);
    out
}

fn usable(candidate: &Candidate) -> Result<(), String> {
    if candidate.version == CgroupVersion::V2 {
        let enabled = |file: &str| {
            fs::read_to_string(candidate.dir.join(file))
                .map(|s| s.split_whitespace().any(|c| c == "pids"))
                .unwrap_or(false)
        };
        if !enabled("cgroup.subtree_control") {
            if !enabled("cgroup.controllers") {
                return Err("the pids controller is not available here".into());
            }
            fs::write(candidate.dir.join("cgroup.subtree_control"), "+pids")
                .map_err(|e| format!("cannot enable the pids controller ({e})"))?;
        }
    }
    let probe = candidate
        .dir
        .join(format!("{CAGE_PREFIX}probe-{}", std::process::id()));
    fs::create_dir(&probe).map_err(|e| format!("cannot make a cgroup ({e})"))?;
    let has_limit = probe.join("pids.max").exists();
    let _ = fs::remove_dir(&probe);
    if has_limit {
        Ok(())
    } else {
        Err("a new cgroup has no pids.max".into())
    }
}

/// Removes the cgroups of hosts that died mid-run, killing what is left in them.
fn sweep_stale(parent: &Path, version: CgroupVersion) {
    let Ok(entries) = fs::read_dir(parent) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        let Some(host) = name
            .to_str()
            .and_then(|n| n.strip_prefix(CAGE_PREFIX))
            .and_then(|n| n.split('-').next())
            .and_then(|pid| pid.parse::<i32>().ok())
        else {
            continue;
        };
        if host == std::process::id() as i32 || process_exists(host) {
            continue;
        }
        // Dropping it kills what is left and removes it.
        drop(ProcessCage {
            dir: entry.path(),
            version,
            procs: CString::default(),
        });
    }
}

fn process_exists(pid: i32) -> bool {
    rustix::process::Pid::from_raw(pid)
        .map(|p| rustix::process::test_kill_process(p).is_ok())
        .unwrap_or(false)
}

/// The cgroup of one run. Dropping it kills whatever is still in it and removes it.
#[derive(Debug)]
pub struct ProcessCage {
    dir: PathBuf,
    version: CgroupVersion,
    procs: CString,
}

impl ProcessCage {
    /// Makes a cgroup allowing at most `max_processes` at once; `None` where the system has no
    /// usable pids cgroup (see [`support`]).
    pub fn create(max_processes: u64) -> io::Result<Option<ProcessCage>> {
        let PidsCgroups::Available { parent, version } = support() else {
            return Ok(None);
        };
        let name = format!(
            "{CAGE_PREFIX}{}-{}",
            std::process::id(),
            NEXT_CAGE.fetch_add(1, Ordering::Relaxed)
        );
        let dir = parent.join(name);
        fs::create_dir(&dir)?;
        let procs = CString::new(dir.join("cgroup.procs").as_os_str().as_bytes())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
        let cage = ProcessCage {
            dir,
            version: *version,
            procs,
        };
        fs::write(cage.dir.join("pids.max"), max_processes.to_string())?;
        Ok(Some(cage))
    }

    /// The file the child writes "0" to, to join.
    pub fn procs_path(&self) -> &std::ffi::CStr {
        &self.procs
    }

    /// How many forks the limit refused during the run (`pids.events`).
    pub fn refused_forks(&self) -> u64 {
        fs::read_to_string(self.dir.join("pids.events"))
            .ok()
            .and_then(|s| {
                s.lines()
                    .find_map(|l| l.strip_prefix("max "))
                    .and_then(|n| n.trim().parse().ok())
            })
            .unwrap_or(0)
    }

    fn members(&self) -> Vec<i32> {
        fs::read_to_string(self.dir.join("cgroup.procs"))
            .map(|s| s.lines().filter_map(|l| l.trim().parse().ok()).collect())
            .unwrap_or_default()
    }

    /// SIGKILLs every process in the cgroup until none is left (or the teardown limit passes).
    /// A member forking while this runs is bounded by `pids.max`, so the loop converges.
    pub fn kill_all(&self) {
        if self.version == CgroupVersion::V2 && fs::write(self.dir.join("cgroup.kill"), "1").is_ok()
        {
            return;
        }
        let started = Instant::now();
        loop {
            let members = self.members();
            if members.is_empty() || started.elapsed() > TEARDOWN_LIMIT {
                return;
            }
            for pid in members {
                if let Some(pid) = rustix::process::Pid::from_raw(pid) {
                    let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
                }
            }
            std::thread::sleep(Duration::from_micros(200));
        }
    }
}

impl Drop for ProcessCage {
    fn drop(&mut self) {
        self.kill_all();
        // Killed processes stay members until their parent (init, for orphans) reaps them.
        let started = Instant::now();
        while let Err(e) = fs::remove_dir(&self.dir) {
            if e.raw_os_error() != Some(libc::EBUSY) || started.elapsed() > TEARDOWN_LIMIT {
                log::warn!(target: "wsfs", "cgroup left behind: cgroup={} error={e}", self.dir.display());
                return;
            }
            std::thread::sleep(Duration::from_millis(1));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MOUNTINFO: &str = "\
24 30 0:22 / /sys rw,nosuid shared:7 - sysfs sysfs rw
33 24 0:28 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw
40 24 0:35 / /sys/fs/cgroup/pids rw,relatime - cgroup cgroup rw,pids
41 24 0:36 /docker/abc /sys/fs/cgroup/my\\040pids rw - cgroup cgroup rw,pids";

    #[test]
    fn mountinfo_fields_and_escapes() {
        let mounts = parse_mountinfo(MOUNTINFO);
        assert_eq!(mounts.len(), 4);
        assert_eq!(mounts[1].fstype, "cgroup2");
        assert_eq!(mounts[2].super_options, "rw,pids");
        assert_eq!(mounts[3].point, PathBuf::from("/sys/fs/cgroup/my pids"));
        assert_eq!(mounts[3].root, "/docker/abc");
    }

    #[test]
    fn candidates_prefer_v2_then_own_then_root() {
        let mounts = parse_mountinfo(MOUNTINFO);
        let own = "8:pids:/user.slice\n0::/system.slice/x.service\n4:memory:/m";
        let dirs: Vec<_> = candidates(own, &mounts)
            .into_iter()
            .map(|c| (c.dir, c.version))
            .collect();
        assert_eq!(
            dirs,
            vec![
                (
                    PathBuf::from("/sys/fs/cgroup/unified/system.slice/x.service"),
                    CgroupVersion::V2
                ),
                (PathBuf::from("/sys/fs/cgroup/unified"), CgroupVersion::V2),
                (
                    PathBuf::from("/sys/fs/cgroup/pids/user.slice"),
                    CgroupVersion::V1
                ),
                (PathBuf::from("/sys/fs/cgroup/pids"), CgroupVersion::V1),
            ]
        );
    }

    #[test]
    fn a_cage_limits_and_empties() {
        let Some(cage) = ProcessCage::create(5).unwrap() else {
            eprintln!("SKIPPED: no pids cgroup here: {:?}", support());
            return;
        };
        assert!(cage.procs_path().to_bytes().ends_with(b"cgroup.procs"));
        let max = fs::read_to_string(cage.dir.join("pids.max")).unwrap();
        assert_eq!(max.trim(), "5");
        let dir = cage.dir.clone();
        drop(cage);
        assert!(!dir.exists());
    }
}
