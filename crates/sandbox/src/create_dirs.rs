//! Creating the missing parent directories of a path, and removing them again when the call
//! fails.
//!
//! Each directory created is fsynced into its parent at once, from the handle at hand (before
//! the caller's commit point, so a stopped call still removes it).
//!
//! Each is checked against the policy's `deny_write` by the path it will have just before it is
//! made, and, when the workspace has a state directory, written to the call's record first
//! and made under a temp name that becomes its name once its identity is recorded
//! (`commit::new_dirs`): a call killed part-way leaves nothing the next open does not remove.
//!
//! Both walk by handles, one name at a time, so each step costs a few system calls whatever the
//! depth (2,000 nested directories are 2,000 steps, not 2,000 resolutions of ever longer
//! paths), at most three descriptors are open, and the deadline is checked before every
//! directory is created.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::gate::{Checks, Reached};
use crate::new_dirs::{self, DirRecord, Intent};
use crate::proc::real_path;
use crate::root::{Anchor, DirRef, Root};
use crate::tempfile::temp_name;
use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, MetadataExt};
use rustix::fs::{AtFlags, Mode, OFlags, RenameFlags};
use rustix::io::Errno;
use std::collections::VecDeque;
use std::ffi::{OsStr, OsString};
use std::io;
use std::path::{Component, Path, PathBuf};

/// A directory and file system pair, to recognise a directory again.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct FileId {
    dev: u64,
    ino: u64,
}

fn file_id(dir: &Dir) -> io::Result<FileId> {
    let meta = dir.dir_metadata()?;
    Ok(FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    })
}

/// A directory this call created: where, and which inodes it and its parent were.
#[derive(Debug)]
pub struct CreatedDir {
    /// Anchor-relative path, as it was resolved.
    rel: PathBuf,
    name: OsString,
    id: FileId,
    parent: FileId,
}

impl CreatedDir {
    /// Where the directory was created, relative to the anchor, as it was resolved.
    pub fn rel(&self) -> &Path {
        &self.rel
    }
}

/// The directories a call has made on the way to its paths (outermost first), and the record
/// that lets the next open remove them if the process dies before the call ends
/// (`commit::new_dirs`; removed when this is dropped, after a failed call removed them).
#[derive(Debug, Default)]
pub struct CreatedDirs {
    dirs: Vec<CreatedDir>,
    record: Option<DirRecord>,
    /// A record could not be made: the call goes on without one.
    unrecorded: bool,
}

impl std::ops::Deref for CreatedDirs {
    type Target = [CreatedDir];

    fn deref(&self) -> &[CreatedDir] {
        &self.dirs
    }
}

impl<'a> IntoIterator for &'a CreatedDirs {
    type Item = &'a CreatedDir;
    type IntoIter = std::slice::Iter<'a, CreatedDir>;

    fn into_iter(self) -> Self::IntoIter {
        self.dirs.iter()
    }
}

/// A directory about to be made under a temp name: its place in the record, and the name.
struct Planned {
    /// Which component of the path it is.
    component: usize,
    record_index: u32,
    temp: String,
}

/// What making one directory came to.
enum Made {
    /// Something is there already (made by someone else meanwhile).
    Exists,
    /// Made under its name, not opened yet.
    Named,
    /// Made under a temp name, opened, its identity recorded, then renamed to its name.
    Renamed(Dir, FileId),
}

pub enum CreateError {
    Io(io::Error),
    Refused(WsfsError),
}

impl From<io::Error> for CreateError {
    fn from(e: io::Error) -> Self {
        CreateError::Io(e)
    }
}

impl Root {
    /// Creates the missing directories of `rel` (anchor-relative), recording each in `created`
    /// (outermost first), and returns a handle on `rel`. Existing directories are entered by
    /// name without following symlinks; a symlink or `..` is resolved from the anchor the usual
    /// way (confined, or checked against the denylist in unrestricted mode). `guard` is called
    /// once, before the first directory is created, with the deepest existing directory and
    /// the part of `rel` still to create: the policy refuses a denied target there, before
    /// anything exists that would have to be removed again. Each directory is also checked
    /// against `deny_write` itself, by the path it will have, just before it is made.
    pub fn create_dirs(
        &self,
        anchor: Anchor,
        rel: &Path,
        checks: Checks<'_>,
        created: &mut CreatedDirs,
        guard: &dyn Fn(&DirRef<'_>, &Path) -> Result<()>,
    ) -> Result<DirRef<'_>> {
        let display = checks.display;
        let outcome = self.create_dirs_inner(anchor, rel, checks, created, guard);
        outcome.map_err(|e| match e {
            CreateError::Io(e) => WsfsError::from_io(&e, display),
            CreateError::Refused(e) => e,
        })
    }

    fn create_dirs_inner(
        &self,
        anchor: Anchor,
        rel: &Path,
        checks: Checks<'_>,
        created: &mut CreatedDirs,
        guard: &dyn Fn(&DirRef<'_>, &Path) -> Result<()>,
    ) -> std::result::Result<DirRef<'_>, CreateError> {
        let Checks {
            gate, display, ctl, ..
        } = checks;
        let mut current = self.open_anchored_dir(anchor, Path::new(""))?;
        let mut prefix = PathBuf::new();
        let mut guarded = false;
        // Directories written to the record ahead of being made, for the components that
        // follow while the path goes on by plain names.
        let mut planned: VecDeque<Planned> = VecDeque::new();
        for (index, component) in rel.components().enumerate() {
            ctl.check().map_err(CreateError::Refused)?;
            prefix.push(component);
            let Component::Normal(name) = component else {
                current = self.open_anchored_dir(anchor, &prefix)?;
                planned.clear();
                continue;
            };
            match current.open_dir_nofollow(name) {
                Ok(next) => {
                    current = entered(anchor, &current, next, name);
                    continue;
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                // A symlink (or not a directory): resolve it as any path is resolved.
                Err(_) => {
                    current = self.open_anchored_dir(anchor, &prefix)?;
                    planned.clear();
                    continue;
                }
            }
            if anchor == Anchor::Host {
                let target = real_path(&*current)?.join(name);
                self.check_host_path(&target, display)
                    .map_err(CreateError::Refused)?;
            }
            if !guarded {
                let rest: PathBuf = rel.components().skip(index).collect();
                guard(&current, &rest).map_err(CreateError::Refused)?;
                guarded = true;
            }
            let at = Reached::below(self, &current, Some(Path::new(name)), true, None);
            gate.check_new_dir(&at, display, ctl)
                .map_err(CreateError::Refused)?;
            while planned.front().is_some_and(|p| p.component < index) {
                planned.pop_front(); // entered instead: someone else made it meanwhile
            }
            if planned.is_empty() {
                planned = self.plan(anchor, &current, rel, index, created);
            }
            let plan = planned.pop_front().filter(|p| p.component == index);
            // Before anything is made, so no failure comes between making and recording it.
            let parent = file_id(&current)?;
            let made = match (&plan, created.record.as_mut()) {
                (Some(plan), Some(record)) => make_through_temp(&current, name, plan, record)?,
                _ => make_named(&current, name)?,
            };
            let next = match made {
                Made::Exists => {
                    current = self.open_anchored_dir(anchor, &prefix)?;
                    planned.clear();
                    continue;
                }
                Made::Renamed(next, id) => {
                    created.dirs.push(CreatedDir {
                        rel: prefix.clone(),
                        name: name.to_os_string(),
                        id,
                        parent,
                    });
                    next
                }
                Made::Named => {
                    // Recorded before it is entered, so a failure to open it still removes it.
                    created.dirs.push(CreatedDir {
                        rel: prefix.clone(),
                        name: name.to_os_string(),
                        id: FileId { dev: 0, ino: 0 },
                        parent,
                    });
                    let next = current.open_dir_nofollow(name)?;
                    let meta = next.dir_metadata()?;
                    if let Some(last) = created.dirs.last_mut() {
                        last.id = FileId {
                            dev: meta.dev(),
                            ino: meta.ino(),
                        };
                    }
                    if let (Some(plan), Some(record)) = (&plan, created.record.as_mut()) {
                        let _ = record.made(plan.record_index, &meta);
                    }
                    next
                }
            };
            // Durable in its parent before anything is put in it (undone like the rest).
            crate::fileops::sync_dir(&current)?;
            current = entered(anchor, &current, next, name);
        }
        if !created.dirs.is_empty() && new_dirs::take_abandon(&self.path) {
            created.dirs.clear();
            if let Some(record) = created.record.take() {
                record.abandon();
            }
            let stop = WsfsError::new(
                ErrorCode::IoError,
                "injected crash after making directories",
            );
            return Err(CreateError::Refused(stop));
        }
        Ok(current)
    }

    /// Writes to the call's record (started here, at its first new directory) the directory
    /// about to be made as component `index` of `rel`, inside `current`, and those after it
    /// while `rel` goes on by plain names, in one write and one fdatasync. Empty when the
    /// call has no record, or the path of `current` cannot be known: the directories are
    /// then made without one.
    fn plan(
        &self,
        anchor: Anchor,
        current: &DirRef<'_>,
        rel: &Path,
        index: usize,
        created: &mut CreatedDirs,
    ) -> VecDeque<Planned> {
        if created.unrecorded {
            return VecDeque::new();
        }
        let Some(mut parent) = self.anchored_path(anchor, current) else {
            return VecDeque::new();
        };
        if created.record.is_none() {
            created.record = DirRecord::begin(self);
            created.unrecorded = created.record.is_none();
        }
        let Some(record) = created.record.as_mut() else {
            return VecDeque::new();
        };
        let names: Vec<&OsStr> = rel
            .components()
            .skip(index)
            .map_while(|c| match c {
                Component::Normal(name) => Some(name),
                _ => None,
            })
            .collect();
        let temps: Vec<String> = names.iter().map(|_| temp_name()).collect();
        let mut parents = Vec::with_capacity(names.len());
        for name in &names {
            parents.push(parent.clone());
            parent.push(name);
        }
        let intents: Vec<Intent<'_>> = names
            .iter()
            .zip(&parents)
            .zip(&temps)
            .map(|((name, parent), temp)| Intent { parent, name, temp })
            .collect();
        let first = match record.intend(&intents) {
            Ok(first) => first,
            Err(e) => {
                log::warn!(
                    target: "wsfs",
                    "the directories this call makes are not recorded; a crash could leave them: error={e}"
                );
                created.unrecorded = true;
                return VecDeque::new();
            }
        };
        temps
            .into_iter()
            .enumerate()
            .map(|(k, temp)| Planned {
                component: index + k,
                record_index: first + k as u32,
                temp,
            })
            .collect()
    }

    /// The anchor-relative path of the open directory `dir`, resolved (no symlink, no `..`):
    /// known for one entered by plain names, else the kernel's. `None` if it cannot be told
    /// (or, confined, is not inside the root any more).
    fn anchored_path(&self, anchor: Anchor, dir: &DirRef<'_>) -> Option<PathBuf> {
        match (anchor, dir) {
            (Anchor::Root, DirRef::Root(_)) => Some(PathBuf::new()),
            (Anchor::Root, DirRef::Known(_, rel)) => Some(rel.clone()),
            (Anchor::Root, DirRef::Opened(handle)) => {
                let real = real_path(handle).ok()?;
                real.strip_prefix(&self.kernel_path)
                    .ok()
                    .map(Path::to_path_buf)
            }
            (Anchor::Host, _) => {
                let real = real_path(&**dir).ok()?;
                real.strip_prefix("/").ok().map(Path::to_path_buf)
            }
        }
    }

    /// Best-effort removal of directories a failed call created, innermost first. Each one is
    /// removed from a handle on its parent that is verified to be the directory it was created
    /// in, and only if the name still holds the directory created (and it is empty); the walk
    /// stops at the first that cannot be removed, such as one something else has put a file in.
    pub fn remove_created(&self, anchor: Anchor, created: &[CreatedDir]) {
        // A handle on the directory removed last and its identity, to step up from it.
        let mut current: Option<(Dir, FileId)> = None;
        for dir in created.iter().rev() {
            let stepped_up = match current.take() {
                Some((handle, id)) if id == dir.id => open_parent(&handle)
                    .ok()
                    .filter(|p| file_id(p).ok() == Some(dir.parent)),
                _ => None,
            };
            let parent = match stepped_up {
                Some(parent) => DirRef::Opened(parent),
                None => {
                    let parent_rel = dir.rel.parent().unwrap_or(Path::new(""));
                    match self.open_anchored_dir(anchor, parent_rel) {
                        Ok(parent) if file_id(&parent).ok() == Some(dir.parent) => parent,
                        _ => return,
                    }
                }
            };
            let still_ours = parent
                .symlink_metadata(&dir.name)
                .is_ok_and(|m| m.dev() == dir.id.dev && m.ino() == dir.id.ino);
            if dir.id.ino == 0 {
                // Created but never opened: its identity is unknown, remove it by name.
            } else if !still_ours {
                return;
            }
            if parent.remove_dir(&dir.name).is_err() {
                return;
            }
            current = match parent {
                DirRef::Opened(handle) | DirRef::Known(handle, _) => Some((handle, dir.parent)),
                DirRef::Root(_) => None,
            };
        }
    }
}

/// Makes the directory `name` in `dir` the plain way.
fn make_named(dir: &Dir, name: &OsStr) -> io::Result<Made> {
    match dir.create_dir(name) {
        Ok(()) => Ok(Made::Named),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(Made::Exists),
        Err(e) => Err(e),
    }
}

/// Makes the directory `name` in `dir` under the temp name `plan` recorded, records its
/// identity, then gives it its name without replacing anything: whatever moment the process
/// dies at, the record tells this directory from anybody else's.
fn make_through_temp(
    dir: &Dir,
    name: &OsStr,
    plan: &Planned,
    record: &mut DirRecord,
) -> io::Result<Made> {
    let temp = plan.temp.as_str();
    rustix::fs::mkdirat(dir, temp, Mode::from_raw_mode(0o777))?;
    let discard = || {
        let _ = rustix::fs::unlinkat(dir, temp, AtFlags::REMOVEDIR);
    };
    let opened = dir
        .open_dir_nofollow(temp)
        .and_then(|made| Ok((made.dir_metadata()?, made)));
    let (meta, made) = match opened {
        Ok(opened) => opened,
        Err(e) => {
            discard();
            return Err(e);
        }
    };
    let _ = record.made(plan.record_index, &meta);
    let id = FileId {
        dev: meta.dev(),
        ino: meta.ino(),
    };
    match rustix::fs::renameat_with(dir, temp, dir, name, RenameFlags::NOREPLACE) {
        Ok(()) => Ok(Made::Renamed(made, id)),
        Err(Errno::EXIST) => {
            discard();
            Ok(Made::Exists)
        }
        // No RENAME_NOREPLACE on this file system: made by name instead.
        Err(Errno::INVAL | Errno::NOSYS) => {
            discard();
            make_named(dir, name)
        }
        Err(e) => {
            discard();
            Err(e.into())
        }
    }
}

/// `next`, opened as `name` inside `current` without following a symlink: in a confined
/// workspace its path is known when `current`'s is, which saves the policy asking the kernel.
fn entered<'w>(anchor: Anchor, current: &DirRef<'w>, next: Dir, name: &OsStr) -> DirRef<'w> {
    match (anchor, current) {
        (Anchor::Root, DirRef::Root(_)) => DirRef::Known(next, PathBuf::from(name)),
        (Anchor::Root, DirRef::Known(_, rel)) => DirRef::Known(next, rel.join(name)),
        _ => DirRef::Opened(next),
    }
}

/// The parent of an open directory (`..`), opened as a path handle. The caller checks that it
/// is the directory it expects before using it.
pub fn open_parent(dir: &Dir) -> io::Result<Dir> {
    let fd = rustix::fs::openat(
        dir,
        "..",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(Dir::from_std_file(std::fs::File::from(fd)))
}
