//! The directory a tool sees as `/workspace`: WASI's directory and file traits
//! (wasi-common's `WasiDir`/`WasiFile`) implemented on [`GuestFs`], a short list of workspace
//! operations, so every file access a tool makes goes through wsfs's resolver and policy and is
//! recorded for the audit log. There is no second path to the disk: no host directory is ever
//! preopened, and nothing here opens a path by itself.
//!
//! - [`GuestFs`] is what the WASI layer needs of a workspace, by workspace-relative path:
//!   stat, open for reading (a file, or a directory to list), open for writing (the content to
//!   start from), commit a written file, list one directory, create a directory, remove a file
//!   or an empty directory, rename, read a link. [`workspace::WorkspaceFs`] implements it on
//!   the `Workspace`, in host and overlay mode alike.
//! - [`dir::GuestDir`] is a directory handle: a workspace-relative path, resolved again by the
//!   kernel beneath the root on every operation (a symlink swapped in later is refused then).
//!   Guest paths are relative to it; an absolute path is refused (`ENOTCAPABLE`), and `..` is
//!   resolved by the kernel, which refuses to leave the workspace.
//! - [`file`]: a file opened for reading holds the descriptor the resolver opened; a file
//!   opened for writing is a buffer (at most `max_write_bytes`) committed atomically, through
//!   the resolver and the policy again, when the tool closes it.
//! - [`run_files::RunFiles`] is one run's shared state: open handles (bounded), whether closing a
//!   file commits it (not after a trap or a stop), the commits that failed, and the last
//!   refusals (shown with a failed tool's error, so the model sees what was refused).

pub mod dir;
pub mod file;
pub mod run_files;
pub mod workspace;

use crate::error::{ErrorCode, Result, WsfsError};
use std::path::{Path, PathBuf};
use std::time::SystemTime;
use wasmi_wasi::wasi_common::file::{FileType, Filestat};
use wasmi_wasi::wasi_common::snapshots::preview_1::types::Errno;
use wasmi_wasi::wasi_common::Error;

/// What a tool's workspace access allows, after the manifest and the host agreed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FsAccess {
    Read,
    Write,
}

/// An entry's metadata, as WASI's `filestat` needs it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GuestStat {
    pub kind: FileType,
    pub size: u64,
    pub device: u64,
    pub inode: u64,
    pub nlink: u64,
    pub accessed: Option<SystemTime>,
    pub modified: Option<SystemTime>,
    pub changed: Option<SystemTime>,
}

impl GuestStat {
    pub fn filestat(&self) -> Filestat {
        Filestat {
            device_id: self.device,
            inode: self.inode,
            filetype: self.kind,
            nlink: self.nlink,
            size: self.size,
            atim: self.accessed,
            mtim: self.modified,
            ctim: self.changed,
        }
    }
}

/// What opening a path for reading found.
pub enum Opened {
    /// A regular file, opened (read-only, no symlink followed at the leaf by the open itself).
    File(std::fs::File, GuestStat),
    /// A directory, by its workspace-relative path after symlinks at the leaf were followed.
    Dir(PathBuf),
}

/// How a tool opens a file for writing (WASI's `oflags`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct WriteIntent {
    pub create: bool,
    pub exclusive: bool,
    pub truncate: bool,
}

/// One directory's entries, as listed (names as wsfs shows them), and whether the listing hit
/// `max_list_entries`.
pub struct Listing {
    pub entries: Vec<(String, FileType)>,
    pub truncated: bool,
}

/// The workspace operations a tool's `/workspace` needs. Paths are workspace-relative (never
/// absolute: the WASI layer refuses those); every implementation resolves them beneath the
/// workspace and checks the policy for what it does.
pub trait GuestFs: Send + Sync {
    fn access(&self) -> FsAccess;
    /// The largest file a tool may write (`max_write_bytes`).
    fn max_file_bytes(&self) -> u64;
    /// Metadata of `path`, following a symlink at the leaf only when `follow`.
    fn stat(&self, path: &Path, follow: bool) -> Result<GuestStat>;
    /// Opens `path` for reading: a regular file, or a directory to list.
    fn open_read(&self, path: &Path) -> Result<Opened>;
    /// Checks that `path` may be written as `intent` says, and returns the content a write
    /// starts from (empty when truncated or new; reading it needs the policy's read access).
    fn open_write(&self, path: &Path, intent: WriteIntent) -> Result<Vec<u8>>;
    /// Replaces (or with `exclusive`, creates) `path` with `content`, atomically.
    fn commit_write(&self, path: &Path, content: &[u8], exclusive: bool) -> Result<()>;
    fn list_entries(&self, path: &Path) -> Result<Listing>;
    fn make_dir(&self, path: &Path) -> Result<()>;
    /// Removes a file or symlink (never a directory).
    fn remove_file(&self, path: &Path) -> Result<()>;
    /// Removes an empty directory.
    fn remove_dir(&self, path: &Path) -> Result<()>;
    /// Renames `from` to `to`, replacing a file (or empty directory) there.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;
    fn read_link(&self, path: &Path) -> Result<PathBuf>;
}

/// The WASI error a tool gets for a refused or failed operation.
pub fn errno_for(code: ErrorCode) -> Errno {
    match code {
        ErrorCode::PathNotFound => Errno::Noent,
        ErrorCode::OutsideWorkspace => Errno::Notcapable,
        ErrorCode::PolicyDenied | ErrorCode::PermissionDenied => Errno::Acces,
        ErrorCode::CapabilityDenied | ErrorCode::WritesDisabled => Errno::Rofs,
        ErrorCode::NotADirectory => Errno::Notdir,
        ErrorCode::NotAFile => Errno::Isdir,
        ErrorCode::TooLarge => Errno::Fbig,
        ErrorCode::NoSpace => Errno::Nospc,
        ErrorCode::FileExists => Errno::Exist,
        ErrorCode::InvalidPath | ErrorCode::InvalidArguments => Errno::Inval,
        _ => Errno::Io,
    }
}

/// `errno` as a wasi-common error.
pub fn errno(errno: Errno) -> Error {
    Error::from(errno)
}

/// The refusal of a write by a tool that may only read.
pub fn read_only(tool: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::CapabilityDenied,
        format!("{tool} may only read the workspace (capabilities.filesystem is \"read\")"),
    )
}
