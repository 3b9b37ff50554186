//! Programs on a session (issue 21 in overlay mode): each run writes an upper tree of its own
//! (`runs/<id>/upper`, with its `work` beside it) over the session's upper tree and the base,
//! and what it changed is adopted into the session when it ends. The session's upper tree is
//! never written by a kernel mount other than the view's, and every adopted path is touched
//! first, like a tool's change, so fingerprints and checkpoint images cover programs too.
//!
//! The run's upper tree is in the kernel's format: a whiteout (0/0 character device) is a
//! deletion, an opaque directory one deleted and made again, a plain directory holds changed
//! or new entries (made by the program, or copied up for a change below it). Files and
//! symlinks move into the session by `rename` (no copy; the run's directory is on the session's
//! file system), after one `syncfs` made their data durable; a second `syncfs` makes the
//! renames durable before the call returns.
//!
//! A crash while a program runs, or while its changes are adopted, leaves `runs/<id>`: the
//! next open removes it. Paths adopted by then stay (each whole, touched first); the rest of
//! that run's changes are lost, as a program's unsaved work is when it is killed.

use super::session::{fs_name, machinery, on_path, upper_kind, Session, UpperKind, OPAQUE_XATTR};
use crate::error::Result;
use crate::sandbox::state_dir::StateDir;
use crate::sandbox::tempfile::is_temp_name;
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, FileType, Mode};
use std::ffi::OsStr;
use std::io;
use std::os::fd::AsFd;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};

const RUNS: &str = "runs";

/// One program run's directories (paths, for the mount's options).
#[derive(Debug)]
pub struct RunDirs {
    id: String,
    /// The session's upper tree: the run's read-only layer above the base.
    pub lower: PathBuf,
    /// The run's own upper tree and overlayfs work directory (empty at the start).
    pub upper: PathBuf,
    pub work: PathBuf,
}

/// What a run's adoption did.
#[derive(Debug, Default)]
pub struct Adopted {
    /// Paths adopted into the session (changed, made or deleted by the program).
    pub paths: usize,
    /// Entries left out, with why: special files (a FIFO, a socket, a device) and wsfs temp
    /// names.
    pub skipped: Vec<String>,
}

impl Session {
    fn session_dir(&self) -> io::Result<Dir> {
        super::session::open_sub(&self.sessions, &self.name)
    }

    /// Makes a run's directories: `runs/<id>/upper` and `runs/<id>/work`, both empty.
    pub fn start_run(&self) -> Result<RunDirs> {
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let StateDir::At(state) = &self.base.state else {
            return Err(machinery(
                "the session has no state directory",
                &io::Error::from(io::ErrorKind::NotFound),
            ));
        };
        let id = format!(
            "{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        );
        let made = (|| -> io::Result<()> {
            let runs = super::session::open_sub(&self.session_dir()?, RUNS)?;
            let run = super::session::open_sub(&runs, &id)?;
            super::session::open_sub(&run, "upper")?;
            super::session::open_sub(&run, "work")?;
            Ok(())
        })();
        made.map_err(|e| machinery("cannot make a program run's directories", &e))?;
        // Canonical, so the runner can tell a layer path that now leads elsewhere (a name in
        // the state directory swapped for a symlink) from the directory made here.
        let state = state
            .canonicalize()
            .map_err(|e| machinery("cannot find the state directory", &e))?;
        let session = state.join("sessions").join(&self.name);
        let run = session.join(RUNS).join(&id);
        Ok(RunDirs {
            id,
            lower: session.join("upper"),
            upper: run.join("upper"),
            work: run.join("work"),
        })
    }

    /// Adopts what the run changed into the session (see the module documentation).
    pub fn adopt_run(&mut self, run: &RunDirs) -> Result<Adopted> {
        let err = |e: io::Error| machinery("cannot read what the program changed", &e);
        let runs =
            super::session::open_sub(&self.session_dir().map_err(err)?, RUNS).map_err(err)?;
        let dir = Dir::from(
            crate::sandbox::sys::open_child_dir(runs.as_fd(), run.id.as_bytes()).map_err(err)?,
        );
        let upper =
            Dir::from(crate::sandbox::sys::open_child_dir(dir.as_fd(), b"upper").map_err(err)?);
        let mut adopted = Adopted::default();
        if upper.entries().map_err(err)?.next().is_none() {
            return Ok(adopted); // the program changed nothing
        }
        // The data the program wrote, durable before any of it is renamed into the session.
        rustix::fs::syncfs(&upper).map_err(|e| err(e.into()))?;
        // Every file, symlink and deletion touched at once (one durable append to the log),
        // before any of them changes; a directory is touched by its own change, if any.
        let mut leaves = Vec::new();
        leaf_paths(&upper, "", &mut leaves).map_err(err)?;
        let leaves: Vec<&str> = leaves.iter().map(String::as_str).collect();
        self.touch_all(&leaves)?;
        self.adopt_dir(&upper, "", &mut adopted)?;
        rustix::fs::syncfs(&self.upper)
            .map_err(|e| machinery("cannot make the session's changes durable", &e.into()))?;
        Ok(adopted)
    }

    /// Removes a run's directories (after its adoption, or when it never ran).
    pub fn end_run(&self, run: &RunDirs) {
        if let Ok(runs) = self
            .session_dir()
            .and_then(|d| super::session::open_sub(&d, RUNS))
        {
            remove_run_dir(&runs, &run.id);
        }
    }

    fn adopt_dir(&mut self, run: &Dir, prefix: &str, adopted: &mut Adopted) -> Result<()> {
        let mut names = Vec::new();
        let listing = (|| -> io::Result<()> {
            for entry in run.entries()? {
                names.push(entry?.file_name());
            }
            Ok(())
        })();
        listing.map_err(|e| on_path(&e, if prefix.is_empty() { "." } else { prefix }))?;
        names.sort();
        for raw in names {
            let rel = session_path(prefix, &raw);
            let name = raw.as_os_str();
            if is_temp_name(name.as_encoded_bytes()) {
                adopted.skipped.push(format!(
                    "{rel}: a wsfs temp name, which a session does not hold"
                ));
                continue;
            }
            let stat = rustix::fs::statat(run, name, AtFlags::SYMLINK_NOFOLLOW)
                .map_err(|e| on_path(&e.into(), &rel))?;
            match FileType::from_raw_mode(stat.st_mode) {
                FileType::CharacterDevice if stat.st_rdev == 0 => {
                    self.whiteout(&rel)?;
                    adopted.paths += 1;
                }
                FileType::Directory => {
                    let sub = Dir::from(
                        crate::sandbox::sys::open_child_dir(run.as_fd(), name.as_encoded_bytes())
                            .map_err(|e| on_path(&e, &rel))?,
                    );
                    let mode = stat.st_mode & 0o7777;
                    if opaque(&sub).map_err(|e| on_path(&e, &rel))? {
                        self.make_opaque(&rel, mode)?;
                        adopted.paths += 1;
                    } else if self.adopt_plain_dir(&rel, mode)? {
                        adopted.paths += 1;
                    }
                    self.adopt_dir(&sub, &rel, adopted)?;
                }
                FileType::RegularFile | FileType::Symlink => {
                    self.adopt_entry(run, name, &rel)?;
                    adopted.paths += 1;
                }
                _ => adopted.skipped.push(format!(
                    "{rel}: a special file (FIFO, socket or device), which a session does not hold"
                )),
            }
        }
        Ok(())
    }

    /// A plain (not opaque) directory of the run: its entries are new or changed, the
    /// directory itself is new, copied up, or has a new mode. Returns whether the directory
    /// itself changed.
    fn adopt_plain_dir(&mut self, rel: &str, mode: u32) -> Result<bool> {
        let (_, leaf) = super::session::parent_leaf(rel);
        let in_upper = match self.upper_parent(rel, false)? {
            Some(parent) => upper_kind(&parent, leaf).map_err(|e| on_path(&e, rel))?,
            None => None,
        };
        match in_upper {
            Some((UpperKind::Dir { .. }, stat)) => {
                if stat.st_mode & 0o7777 == mode {
                    return Ok(false);
                }
                self.set_dir_mode(rel, mode)?;
                Ok(true)
            }
            // The run made a directory where the session deleted the path (or has a file):
            // in the run's view the base's entries were hidden, so they stay hidden.
            Some(_) => {
                self.make_opaque(rel, mode)?;
                Ok(true)
            }
            None => {
                let base = self.base_fingerprint_kind(rel)?;
                match base.kind.as_str() {
                    "absent" => {
                        self.create_dir(rel, mode)?;
                        Ok(true)
                    }
                    "dir" if base.mode & 0o7777 == mode => Ok(false),
                    "dir" => {
                        self.copy_up(rel)?;
                        self.set_dir_mode(rel, mode)?;
                        Ok(true)
                    }
                    _ => {
                        self.make_opaque(rel, mode)?;
                        Ok(true)
                    }
                }
            }
        }
    }

    fn set_dir_mode(&mut self, rel: &str, mode: u32) -> Result<()> {
        self.touch(rel)?;
        let parent = self.upper_parent(rel, true)?.expect("created");
        let (_, leaf) = super::session::parent_leaf(rel);
        let leaf = fs_name(leaf).map_err(|e| on_path(&e, rel))?;
        let fd = crate::sandbox::sys::open_child_dir(parent.as_fd(), leaf.as_encoded_bytes())
            .map_err(|e| on_path(&e, rel))?;
        rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode)).map_err(|e| on_path(&e.into(), rel))
    }

    /// Moves the run's file or symlink `name` (in `run`) into the session as `rel`.
    fn adopt_entry(&mut self, run: &Dir, name: &OsStr, rel: &str) -> Result<()> {
        self.touch(rel)?;
        let parent = self.upper_parent(rel, true)?.expect("created");
        let (_, leaf) = super::session::parent_leaf(rel);
        let io = |e: io::Error| on_path(&e, rel);
        if let Some((UpperKind::Dir { .. }, _)) = upper_kind(&parent, leaf).map_err(io)? {
            // The program replaced a directory by a file: what the session had below goes.
            self.mark_subtree(&parent, rel, leaf)?;
            parent
                .remove_dir_all(fs_name(leaf).map_err(io)?)
                .map_err(io)?;
        }
        let leaf = fs_name(leaf).map_err(io)?;
        // Copy-up bookkeeping of the run's mount (an origin, an impure mark) means nothing in
        // the session's tree, whose lower layer is the base alone.
        strip_overlay_xattrs(run, name);
        rustix::fs::renameat(run, name, &parent, &*leaf).map_err(|e| io(e.into()))?;
        Ok(())
    }
}

/// The session path of every file, symlink and whiteout below the run's `dir` (which is
/// `prefix`) whose names a session can hold.
fn leaf_paths(dir: &Dir, prefix: &str, out: &mut Vec<String>) -> io::Result<()> {
    for entry in dir.entries()? {
        let entry = entry?;
        let raw = entry.file_name();
        let name = raw.as_os_str();
        if is_temp_name(name.as_encoded_bytes()) {
            continue;
        }
        let rel = session_path(prefix, name);
        let kind = entry.file_type()?;
        if kind.is_dir() {
            let sub = Dir::from(crate::sandbox::sys::open_child_dir(
                dir.as_fd(),
                name.as_encoded_bytes(),
            )?);
            leaf_paths(&sub, &rel, out)?;
        } else if kind.is_file() || kind.is_symlink() || is_whiteout(dir, name)? {
            out.push(rel);
        }
    }
    Ok(())
}

fn is_whiteout(dir: &Dir, name: &OsStr) -> io::Result<bool> {
    let stat = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
    Ok(FileType::from_raw_mode(stat.st_mode) == FileType::CharacterDevice && stat.st_rdev == 0)
}

/// The session path of `name` in the run's directory `prefix`: each name in wsfs's escaped
/// form (`names::encode`), as every session path is.
fn session_path(prefix: &str, name: &OsStr) -> String {
    let name = crate::names::encode(name.as_encoded_bytes());
    if prefix.is_empty() {
        name.into_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

fn opaque(dir: &Dir) -> io::Result<bool> {
    let mut buf = [0u8; 8];
    match rustix::fs::fgetxattr(dir, OPAQUE_XATTR, &mut buf[..]) {
        Ok(n) => Ok(&buf[..n] == b"y"),
        Err(rustix::io::Errno::NODATA | rustix::io::Errno::NOTSUP) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Removes the `user.overlay.*` xattrs of a regular file (best effort: a symlink carries no
/// user xattrs).
fn strip_overlay_xattrs(dir: &Dir, name: &OsStr) {
    let Ok(fd) = crate::sandbox::sys::open_file(dir.as_fd(), name.as_encoded_bytes()) else {
        return;
    };
    let mut buf = vec![0u8; 4096];
    let Ok(n) = rustix::fs::flistxattr(&fd, &mut buf[..]) else {
        return;
    };
    for attr in buf[..n].split(|&b| b == 0).filter(|a| !a.is_empty()) {
        if attr.starts_with(b"user.overlay.") {
            if let Ok(attr) = std::ffi::CString::new(attr) {
                let _ = rustix::fs::fremovexattr(&fd, attr.as_c_str());
            }
        }
    }
}

/// Removes `runs/<id>`; overlayfs leaves `work/work` with mode 0, so every directory is made
/// searchable and writable first.
fn remove_run_dir(runs: &Dir, id: &str) {
    fn open_up(dir: &Dir) {
        let Ok(entries) = dir.entries() else { return };
        for entry in entries.flatten() {
            if entry.file_type().is_ok_and(|t| t.is_dir()) {
                let name = entry.file_name();
                let _ = rustix::fs::chmodat(
                    dir,
                    name.as_os_str(),
                    Mode::from_raw_mode(0o700),
                    AtFlags::empty(),
                );
                if let Ok(fd) =
                    crate::sandbox::sys::open_child_dir(dir.as_fd(), name.as_encoded_bytes())
                {
                    open_up(&Dir::from(fd));
                }
            }
        }
    }
    if let Ok(fd) = crate::sandbox::sys::open_child_dir(runs.as_fd(), id.as_bytes()) {
        open_up(&Dir::from(fd));
    }
    let _ = runs.remove_dir_all(id);
}

impl Session {
    /// Removes every run directory a crash left (their changes were never adopted whole; see
    /// the module documentation). Called at open, with the session's lock held.
    pub fn sweep_runs(&self) {
        let Ok(session_dir) = self.session_dir() else {
            return;
        };
        let Ok(fd) = crate::sandbox::sys::open_child_dir(session_dir.as_fd(), RUNS.as_bytes())
        else {
            return;
        };
        let runs = Dir::from(fd);
        let Ok(entries) = runs.entries() else { return };
        let ids: Vec<String> = entries
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        for id in ids {
            remove_run_dir(&runs, &id);
        }
    }
}
