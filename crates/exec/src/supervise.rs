//! Watching a running program from the parent: its two output pipes, its exit (a pidfd), the
//! deadline and the cancel flag, all in one `poll` loop on the calling thread.
//!
//! When the program exits, times out or is cancelled, everything it started is killed: the
//! process group (while the leader is still an unreaped zombie, so its id cannot have been
//! reused) and the cgroup (which also holds what left the group). Then the pipes are drained
//! until every writer is gone, or for a short grace period where something outside the
//! cgroup still holds them.

use super::capture::{Captured, HeadTail};
use super::cgroup::ProcessCage;
use rustix::event::{PollFd, PollFlags, Timespec};
use rustix::process::{Pid, PidfdFlags, Signal};
use std::io::{self, Read};
use std::os::fd::{AsFd, OwnedFd};
use std::process::{Child, ExitStatus};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// How often a cancel flag is looked at while nothing else happens.
const CANCEL_TICK: Duration = Duration::from_millis(20);
/// How long output is still read once the program is gone, for writers outside the cgroup.
const DRAIN_GRACE: Duration = Duration::from_millis(500);
const CHUNK: usize = 64 * 1024;

/// Why the runner stopped a program before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stopped {
    Timeout,
    Cancelled,
}

pub struct Watch<'a> {
    pub child: Child,
    pub cage: Option<&'a ProcessCage>,
    pub deadline: Instant,
    pub cancel: Option<&'a AtomicBool>,
    pub stdout_cap: usize,
    pub stderr_cap: usize,
}

pub struct Watched {
    pub status: ExitStatus,
    pub stdout: Captured,
    pub stderr: Captured,
    pub stopped: Option<Stopped>,
}

struct Stream<R> {
    pipe: Option<R>,
    buf: HeadTail,
}

impl<R: Read + AsFd> Stream<R> {
    fn read_some(&mut self, chunk: &mut [u8]) {
        let Some(pipe) = self.pipe.as_mut() else {
            return;
        };
        match pipe.read(chunk) {
            Ok(0) => self.pipe = None,
            Ok(n) => self.buf.push(&chunk[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => self.pipe = None,
        }
    }
}

pub fn watch(mut w: Watch<'_>) -> io::Result<Watched> {
    let pid = Pid::from_child(&w.child);
    let pidfd: Option<OwnedFd> = rustix::process::pidfd_open(pid, PidfdFlags::empty()).ok();
    let mut out = Stream {
        pipe: w.child.stdout.take(),
        buf: HeadTail::new(w.stdout_cap),
    };
    let mut err = Stream {
        pipe: w.child.stderr.take(),
        buf: HeadTail::new(w.stderr_cap),
    };
    let mut chunk = vec![0u8; CHUNK];
    let mut status: Option<ExitStatus> = None;
    let mut stopped = None;
    let mut drain_until: Option<Instant> = None;

    loop {
        let now = Instant::now();
        if status.is_none() && stopped.is_none() {
            if w.cancel.is_some_and(|c| c.load(Ordering::Acquire)) {
                stopped = Some(Stopped::Cancelled);
            } else if now >= w.deadline {
                stopped = Some(Stopped::Timeout);
            }
            if stopped.is_some() {
                kill_everything(pid, w.cage);
            }
        }
        if status.is_some() || stopped.is_some() {
            let until = *drain_until.get_or_insert(now + DRAIN_GRACE);
            if (out.pipe.is_none() && err.pipe.is_none() && status.is_some()) || now >= until {
                break;
            }
        }

        let mut wait = w.deadline.saturating_duration_since(now);
        if w.cancel.is_some() {
            wait = wait.min(CANCEL_TICK);
        }
        if let Some(until) = drain_until {
            wait = wait.min(until.saturating_duration_since(now));
        }
        if pidfd.is_none() && status.is_none() {
            wait = wait.min(CANCEL_TICK);
        }

        let (out_ready, err_ready, exited) = {
            let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(3);
            let mut slots = [None; 3];
            if let Some(p) = &out.pipe {
                slots[0] = Some(fds.len());
                fds.push(PollFd::new(p, PollFlags::IN));
            }
            if let Some(p) = &err.pipe {
                slots[1] = Some(fds.len());
                fds.push(PollFd::new(p, PollFlags::IN));
            }
            if let (Some(fd), None) = (&pidfd, status) {
                slots[2] = Some(fds.len());
                fds.push(PollFd::new(fd, PollFlags::IN));
            }
            let timeout = Timespec::try_from(wait).unwrap_or(Timespec {
                tv_sec: 1,
                tv_nsec: 0,
            });
            match rustix::event::poll(&mut fds, Some(&timeout)) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let ready = |slot: Option<usize>| slot.is_some_and(|i| !fds[i].revents().is_empty());
            (ready(slots[0]), ready(slots[1]), ready(slots[2]))
        };
        if out_ready {
            out.read_some(&mut chunk);
        }
        if err_ready {
            err.read_some(&mut chunk);
        }
        if status.is_none() && (exited || (pidfd.is_none() && exited_unreaped(pid))) {
            // The leader is a zombie: kill the rest before reaping it, while its process group
            // id cannot have been reused.
            kill_everything(pid, w.cage);
            status = Some(w.child.wait()?);
        }
    }

    if status.is_none() {
        kill_everything(pid, w.cage);
        status = Some(w.child.wait()?);
    }
    let status = status.ok_or_else(|| io::Error::other("no exit status"))?;
    Ok(Watched {
        status,
        stdout: out.buf.finish(),
        stderr: err.buf.finish(),
        stopped,
    })
}

/// Whether the leader has exited, without reaping it (kernels without pidfds, before 5.3).
fn exited_unreaped(pid: Pid) -> bool {
    use rustix::process::{waitid, WaitId, WaitIdOptions};
    let options = WaitIdOptions::EXITED | WaitIdOptions::NOHANG | WaitIdOptions::NOWAIT;
    matches!(waitid(WaitId::Pid(pid), options), Ok(Some(_)))
}

/// SIGKILLs the program's process group and every process in its cgroup.
fn kill_everything(leader: Pid, cage: Option<&ProcessCage>) {
    // The group id is the leader's pid (`process_group(0)`); ESRCH means it is already empty.
    let _ = rustix::process::kill_process_group(leader, Signal::KILL);
    if let Some(cage) = cage {
        cage.kill_all();
    }
}
