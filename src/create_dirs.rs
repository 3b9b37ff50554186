//! Creating the missing parent directories of a path, and removing them again when the call
//! fails.
//!
//! Each directory created is fsynced into its parent at once, from the handle at hand (before
//! the caller's commit point, so a stopped call still removes it).
//!
//! Both walk by handles, one name at a time, so each step costs a few system calls whatever the
//! depth (2,000 nested directories are 2,000 steps, not 2,000 resolutions of ever longer
//! paths), at most three descriptors are open, and the deadline is checked before every
//! directory is created.

use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::resolve::{real_path, DirRef};
use crate::workspace::{Anchor, Workspace};
use cap_fs_ext::DirExt;
use cap_std::fs::{Dir, MetadataExt};
use rustix::fs::{Mode, OFlags};
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
pub(crate) struct CreatedDir {
    /// Anchor-relative path, as it was resolved.
    rel: PathBuf,
    name: OsString,
    id: FileId,
    parent: FileId,
}

impl CreatedDir {
    /// Where the directory was created, relative to the anchor, as it was resolved.
    pub(crate) fn rel(&self) -> &Path {
        &self.rel
    }
}

pub(crate) enum CreateError {
    Io(io::Error),
    Refused(WsfsError),
}

impl From<io::Error> for CreateError {
    fn from(e: io::Error) -> Self {
        CreateError::Io(e)
    }
}

impl Workspace {
    /// Creates the missing directories of `rel` (anchor-relative), recording each in `created`
    /// (outermost first), and returns a handle on `rel`. Existing directories are entered by
    /// name without following symlinks; a symlink or `..` is resolved from the anchor the usual
    /// way (confined, or checked against the denylist in unrestricted mode). `guard` is called
    /// once, before the first directory is created, with the deepest existing directory and
    /// the part of `rel` still to create: the policy refuses a denied target there, before
    /// anything exists that would have to be removed again. Each directory is also checked
    /// against `deny_write` itself, by the path it will have, just before it is made.
    pub(crate) fn create_dirs(
        &self,
        anchor: Anchor,
        rel: &Path,
        display: &str,
        ctl: &CallControl,
        created: &mut Vec<CreatedDir>,
        guard: &dyn Fn(&DirRef<'_>, &Path) -> Result<()>,
    ) -> Result<DirRef<'_>> {
        let outcome = self.create_dirs_inner(anchor, rel, display, ctl, created, guard);
        outcome.map_err(|e| match e {
            CreateError::Io(e) => WsfsError::from_io(&e, display),
            CreateError::Refused(e) => e,
        })
    }

    fn create_dirs_inner(
        &self,
        anchor: Anchor,
        rel: &Path,
        display: &str,
        ctl: &CallControl,
        created: &mut Vec<CreatedDir>,
        guard: &dyn Fn(&DirRef<'_>, &Path) -> Result<()>,
    ) -> std::result::Result<DirRef<'_>, CreateError> {
        let mut current = self.open_anchored_dir(anchor, Path::new(""))?;
        let mut prefix = PathBuf::new();
        let mut guarded = false;
        for (index, component) in rel.components().enumerate() {
            ctl.check().map_err(CreateError::Refused)?;
            prefix.push(component);
            let Component::Normal(name) = component else {
                current = self.open_anchored_dir(anchor, &prefix)?;
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
            self.check_new_dir(&current, name, display, ctl)
                .map_err(CreateError::Refused)?;
            match current.create_dir(name) {
                Ok(()) => {}
                Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                    current = self.open_anchored_dir(anchor, &prefix)?;
                    continue;
                }
                Err(e) => return Err(e.into()),
            }
            let parent = file_id(&current)?;
            // Recorded before it is entered, so a failure to open it still removes it.
            created.push(CreatedDir {
                rel: prefix.clone(),
                name: name.to_os_string(),
                id: FileId { dev: 0, ino: 0 },
                parent,
            });
            let next = current.open_dir_nofollow(name)?;
            if let Some(last) = created.last_mut() {
                last.id = file_id(&next)?;
            }
            // Durable in its parent before anything is put in it (undone like the rest).
            crate::fileops::sync_dir(&current)?;
            current = entered(anchor, &current, next, name);
        }
        Ok(current)
    }

    /// Best-effort removal of directories a failed call created, innermost first. Each one is
    /// removed from a handle on its parent that is verified to be the directory it was created
    /// in, and only if the name still holds the directory created (and it is empty); the walk
    /// stops at the first that cannot be removed, such as one something else has put a file in.
    pub(crate) fn remove_created(&self, anchor: Anchor, created: &[CreatedDir]) {
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
pub(crate) fn open_parent(dir: &Dir) -> io::Result<Dir> {
    let fd = rustix::fs::openat(
        dir,
        "..",
        OFlags::PATH | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::empty(),
    )?;
    Ok(Dir::from_std_file(std::fs::File::from(fd)))
}
