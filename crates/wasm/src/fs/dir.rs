//! A directory handle of a tool: `/workspace` itself, or a directory the tool opened in it.
//!
//! A handle is a workspace-relative path, not a descriptor: every operation resolves it again,
//! with the guest's path appended, beneath the workspace root, so a directory swapped for a
//! symlink after it was opened is refused like any escape. The guest's `..` is the kernel's to
//! resolve (it refuses to go above the root); an absolute path is refused here.

use super::file::{BufferedFile, ReadHandle};
use super::run_files::{HandleSlot, RunFiles};
use super::{errno, FsAccess, Opened, WriteIntent};
use std::any::Any;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use wasmi_wasi::wasi_common::dir::{OpenResult, ReaddirCursor, ReaddirEntity, WasiDir};
use wasmi_wasi::wasi_common::file::{FdFlags, FileType, Filestat, OFlags};
use wasmi_wasi::wasi_common::snapshots::preview_1::types::Errno;
use wasmi_wasi::wasi_common::{Error, SystemTimeSpec};

type Entries = Vec<(String, FileType)>;

pub struct GuestDir {
    slot: HandleSlot,
    /// Workspace-relative; empty for `/workspace` itself.
    rel: PathBuf,
    /// The last listing, kept while the tool reads it in pieces (`fd_readdir` with a cookie).
    listing: Mutex<Option<(Entries, bool)>>,
}

impl GuestDir {
    /// `/workspace` for a run.
    pub fn root(session: &Arc<RunFiles>) -> Result<GuestDir, Error> {
        Ok(GuestDir::new(session.claim_handle()?, PathBuf::new()))
    }

    fn new(slot: HandleSlot, rel: PathBuf) -> GuestDir {
        GuestDir {
            slot,
            rel,
            listing: Mutex::new(None),
        }
    }

    fn session(&self) -> &Arc<RunFiles> {
        self.slot.session()
    }

    /// The workspace-relative path of the guest's `path` here.
    fn child(&self, path: &str) -> Result<PathBuf, Error> {
        if path.starts_with('/') {
            let refusal = crate::error::WsfsError::new(
                crate::error::ErrorCode::OutsideWorkspace,
                format!("{path} is absolute; paths are relative to their directory"),
            );
            return Err(self.session().refused("open", refusal));
        }
        if path.is_empty() {
            return Err(errno(Errno::Noent));
        }
        Ok(self.rel.join(path))
    }

    fn writable(&self) -> Result<(), Error> {
        match self.session().fs.access() {
            FsAccess::Write => Ok(()),
            FsAccess::Read => {
                let tool = self.session().watch.tool().to_string();
                Err(self.session().refused("write", super::read_only(&tool)))
            }
        }
    }

    fn open_for_writing(
        &self,
        path: PathBuf,
        oflags: OFlags,
        fdflags: FdFlags,
    ) -> Result<OpenResult, Error> {
        self.writable()?;
        let session = self.session();
        let intent = WriteIntent {
            create: oflags.contains(OFlags::CREATE),
            exclusive: oflags.contains(OFlags::CREATE | OFlags::EXCLUSIVE),
            truncate: oflags.contains(OFlags::TRUNCATE),
        };
        let slot = session.claim_handle()?;
        let content = session.op("open", |fs| fs.open_write(&path, intent))?;
        // A new or truncated file is committed even if nothing is written to it.
        let changed = intent.truncate || (intent.create && content.is_empty());
        let file = BufferedFile::new(
            slot,
            path,
            content,
            changed,
            fdflags.contains(FdFlags::APPEND),
            intent.exclusive,
        )?;
        Ok(OpenResult::File(Box::new(file)))
    }
}

#[wiggle::async_trait]
impl WasiDir for GuestDir {
    fn as_any(&self) -> &dyn Any {
        self
    }

    async fn open_file(
        &self,
        symlink_follow: bool,
        path: &str,
        oflags: OFlags,
        _read: bool,
        write: bool,
        fdflags: FdFlags,
    ) -> Result<OpenResult, Error> {
        let path = self.child(path)?;
        let session = self.session();
        if oflags.contains(OFlags::DIRECTORY)
            && oflags.intersects(OFlags::CREATE | OFlags::EXCLUSIVE | OFlags::TRUNCATE)
        {
            return Err(errno(Errno::Inval));
        }
        if !symlink_follow {
            // O_NOFOLLOW: a symlink at the leaf is an error, whatever it points to.
            let lstat = session.op("open", |fs| fs.stat(&path, false));
            if lstat.is_ok_and(|s| s.kind == FileType::SymbolicLink) {
                return Err(errno(Errno::Loop));
            }
        }
        if write || oflags.intersects(OFlags::CREATE | OFlags::TRUNCATE) {
            return self.open_for_writing(path, oflags, fdflags);
        }
        let slot = session.claim_handle()?;
        match session.op("open", |fs| fs.open_read(&path))? {
            Opened::Dir(rel) => Ok(OpenResult::Dir(Box::new(GuestDir::new(slot, rel)))),
            Opened::File(..) if oflags.contains(OFlags::DIRECTORY) => Err(errno(Errno::Notdir)),
            Opened::File(file, stat) => Ok(OpenResult::File(Box::new(ReadHandle::new(
                slot, file, stat,
            )))),
        }
    }

    async fn create_dir(&self, path: &str) -> Result<(), Error> {
        let path = self.child(path)?;
        self.writable()?;
        self.session().op("mkdir", |fs| fs.make_dir(&path))
    }

    async fn readdir(
        &self,
        cursor: ReaddirCursor,
    ) -> Result<Box<dyn Iterator<Item = Result<ReaddirEntity, Error>> + Send>, Error> {
        let start = u64::from(cursor);
        let mut cached = self.listing.lock().unwrap_or_else(|p| p.into_inner());
        if start == 0 || cached.is_none() {
            let listing = self
                .session()
                .op("readdir", |fs| fs.list_entries(&self.rel))?;
            *cached = Some((listing.entries, listing.truncated));
        }
        let Some((entries, truncated)) = cached.as_ref() else {
            return Err(errno(Errno::Io));
        };
        let skip = usize::try_from(start).unwrap_or(usize::MAX);
        let mut out: Vec<Result<ReaddirEntity, Error>> = entries
            .iter()
            .enumerate()
            .skip(skip)
            .map(|(i, (name, kind))| {
                Ok(ReaddirEntity {
                    next: ReaddirCursor::from(i as u64 + 1),
                    // 0: wasi-libc asks for the inode with a stat when it needs one.
                    inode: 0,
                    name: name.clone(),
                    filetype: *kind,
                })
            })
            .collect();
        if *truncated {
            // Past max_list_entries: an error, never a listing that silently ends early.
            out.push(Err(errno(Errno::Overflow)));
        }
        Ok(Box::new(out.into_iter()))
    }

    async fn symlink(&self, _old_path: &str, _new_path: &str) -> Result<(), Error> {
        Err(errno(Errno::Perm))
    }

    async fn remove_dir(&self, path: &str) -> Result<(), Error> {
        let path = self.child(path)?;
        self.writable()?;
        self.session().op("rmdir", |fs| fs.remove_dir(&path))
    }

    async fn unlink_file(&self, path: &str) -> Result<(), Error> {
        let path = self.child(path)?;
        self.writable()?;
        self.session().op("unlink", |fs| fs.remove_file(&path))
    }

    async fn read_link(&self, path: &str) -> Result<PathBuf, Error> {
        let path = self.child(path)?;
        self.session().op("readlink", |fs| fs.read_link(&path))
    }

    async fn get_filestat(&self) -> Result<Filestat, Error> {
        let stat = self.session().op("stat", |fs| fs.stat(&self.rel, true))?;
        Ok(stat.filestat())
    }

    async fn get_path_filestat(&self, path: &str, follow: bool) -> Result<Filestat, Error> {
        let path = self.child(path)?;
        let stat = self.session().op("stat", |fs| fs.stat(&path, follow))?;
        Ok(stat.filestat())
    }

    async fn rename(
        &self,
        path: &str,
        dest_dir: &dyn WasiDir,
        dest_path: &str,
    ) -> Result<(), Error> {
        let from = self.child(path)?;
        let Some(dest) = dest_dir.as_any().downcast_ref::<GuestDir>() else {
            return Err(errno(Errno::Xdev));
        };
        let to = dest.child(dest_path)?;
        self.writable()?;
        self.session().op("rename", |fs| fs.rename(&from, &to))
    }

    async fn hard_link(
        &self,
        _path: &str,
        _target_dir: &dyn WasiDir,
        _target_path: &str,
    ) -> Result<(), Error> {
        Err(errno(Errno::Perm))
    }

    async fn set_times(
        &self,
        _path: &str,
        _atime: Option<SystemTimeSpec>,
        _mtime: Option<SystemTimeSpec>,
        _follow_symlinks: bool,
    ) -> Result<(), Error> {
        Err(errno(Errno::Notsup))
    }
}
