//! The setup steps of a child between fork and exec (`child.rs`, `mounts.rs`), and how a
//! failed step travels back to the parent: folded into the errno std's spawn returns, since
//! the child may not allocate.

use std::io;

/// The step of `ChildPlan::apply` that failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    JoinCgroup = 1,
    Rlimit = 2,
    CloseDescriptors = 3,
    DropCapabilities = 4,
    NoNewPrivs = 5,
    Seccomp = 6,
    Landlock = 7,
    UserNamespace = 8,
    IdMap = 9,
    OverlayMount = 10,
    OverlayRule = 11,
    WorkingDirectory = 12,
    DieWithHost = 13,
    ReadOnlyMounts = 14,
}

impl Step {
    pub fn describe(self) -> &'static str {
        match self {
            Step::JoinCgroup => "joining the run's pids cgroup",
            Step::Rlimit => "setting the resource limits",
            Step::CloseDescriptors => "closing inherited descriptors",
            Step::DropCapabilities => "dropping root's capabilities",
            Step::NoNewPrivs => "setting no_new_privs",
            Step::Seccomp => "installing the seccomp filter",
            Step::Landlock => "applying the Landlock ruleset",
            Step::UserNamespace => "making a user and mount namespace for the program",
            Step::IdMap => "mapping the user and group ids in that namespace",
            Step::OverlayMount => "mounting the session's overlay view on the workspace",
            Step::OverlayRule => "granting the overlay view in the Landlock ruleset",
            Step::WorkingDirectory => "entering the working directory beneath the workspace",
            Step::DieWithHost => "tying the program's life to the host's (PR_SET_PDEATHSIG)",
            Step::ReadOnlyMounts => {
                "making every mount but the workspace, the temp directory and the tools' home \
                 read-only"
            }
        }
    }

    /// Whether the step belongs to the overlay view (refused with `overlay_unavailable`).
    pub fn is_overlay(self) -> bool {
        matches!(self, Step::UserNamespace | Step::IdMap | Step::OverlayMount)
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
            8 => Step::UserNamespace,
            9 => Step::IdMap,
            10 => Step::OverlayMount,
            11 => Step::OverlayRule,
            12 => Step::WorkingDirectory,
            13 => Step::DieWithHost,
            14 => Step::ReadOnlyMounts,
            _ => return None,
        })
    }
}

/// errno values are below 4096; a step's number is carried above them.
const STEP_SHIFT: i32 = 16;

pub fn encode(step: Step, errno: i32) -> io::Error {
    io::Error::from_raw_os_error(((step as i32) << STEP_SHIFT) | (errno & 0xffff))
}

/// Splits an error from `spawn` into the setup step that failed (none: exec itself failed)
/// and the errno.
pub fn decode(err: &io::Error) -> (Option<Step>, Option<i32>) {
    match err.raw_os_error() {
        Some(raw) => match Step::from_number(raw >> STEP_SHIFT) {
            Some(step) => (Some(step), Some(raw & 0xffff)),
            None => (None, Some(raw)),
        },
        None => (None, None),
    }
}

pub fn last_errno() -> i32 {
    io::Error::last_os_error()
        .raw_os_error()
        .unwrap_or(libc::EIO)
}

/// `syscall`'s -1-and-errno convention, as a step's result.
pub fn check(step: Step, ret: libc::c_long) -> io::Result<()> {
    if ret < 0 {
        Err(encode(step, last_errno()))
    } else {
        Ok(())
    }
}
