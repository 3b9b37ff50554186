//! [`GuestFs`] on today's `Workspace`: each operation is the resolver (`Workspace::resolve`,
//! `resolve_no_follow`) with the policy's `Access`, or the built-in tool that does the same
//! change (`create_directory`, `delete_file`, `move_file`), so a tool gets exactly the
//! confinement, policy, locking, atomicity and audit records the built-in tools get.
//!
//! Paths are always resolved beneath the workspace root's handle (`Anchor::Root`), and a tool
//! gets the workspace only when the workspace is confined (`restrict_to_workspace`): a tool is
//! code nobody reviewed, so it never gets the host-path mode.

use super::{FsAccess, GuestFs, GuestStat, Listing, Opened, WriteIntent};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::{Change, Notes};
use crate::names::{self, display_path};
use crate::sandbox::fileops::{
    file_exists, open_error, open_leaf_read, regular_file_size, sync_dir,
};
use crate::sandbox::gate::Access;
use crate::sandbox::root::{Anchor, ToolPath, MAX_PATH_BYTES};
use crate::tools;
use crate::tools::contract::{Call, Frame, Tool};
use crate::tools::kind::FileKind;
use crate::workspace::Workspace;
use cap_std::fs::FileTypeExt;
use cap_std::fs::{Metadata, MetadataExt};
use std::ffi::OsStr;
use std::io::Read;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex};
use wasmi_wasi::wasi_common::file::FileType;

/// Paths and changes kept for the audit log of one tool call; past these, they are counted.
const MAX_NOTED_PATHS: usize = 256;
const MAX_NOTED_CHANGES: usize = 1000;

/// What a tool's workspace operations leave for the call's audit line.
#[derive(Debug, Default)]
pub struct FsNotes {
    pub notes: Notes,
    pub paths_omitted: usize,
    pub changes_omitted: usize,
}

pub struct WorkspaceFs {
    ws: Arc<Workspace>,
    ctl: CallControl,
    access: FsAccess,
    tool: String,
    notes: Mutex<FsNotes>,
}

impl WorkspaceFs {
    /// The workspace as `tool` may use it; `capability_denied` for a workspace that is not
    /// confined to its root.
    pub fn new(
        ws: Arc<Workspace>,
        ctl: &CallControl,
        access: FsAccess,
        tool: &str,
    ) -> Result<WorkspaceFs> {
        if !ws.restricts_to_workspace() {
            return Err(WsfsError::new(
                ErrorCode::CapabilityDenied,
                format!(
                    "{tool} needs the workspace, which Wasm tools get only when it is confined \
                     (restrict_to_workspace: true); this one is not"
                ),
            ));
        }
        Ok(WorkspaceFs {
            ws,
            ctl: ctl.clone(),
            access,
            tool: tool.to_string(),
            notes: Mutex::default(),
        })
    }

    /// The paths and changes recorded so far.
    pub fn take_notes(&self) -> FsNotes {
        std::mem::take(&mut *self.notes.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn note(&self, path: Option<&str>, changes: Vec<Change>) {
        let mut noted = self.notes.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(path) = path {
            match noted.notes.paths.len() < MAX_NOTED_PATHS {
                true => noted.notes.paths.push(path.to_string()),
                false => noted.paths_omitted += 1,
            }
        }
        for change in changes {
            match noted.notes.changes.len() < MAX_NOTED_CHANGES {
                true => noted.notes.changes.push(change),
                false => noted.changes_omitted += 1,
            }
        }
    }

    fn audits(&self) -> bool {
        self.ws.policy.audit.is_some()
    }

    /// The tool path for a workspace-relative guest path: names read back as wsfs shows them
    /// (`names::decode`, so a listed name opens its file), always beneath the root.
    fn tool_path(&self, path: &Path) -> Result<ToolPath> {
        let bytes = path.as_os_str().as_bytes();
        let invalid = |why: &str| {
            WsfsError::new(ErrorCode::InvalidPath, format!("{}: {why}", path.display()))
        };
        if bytes.len() > MAX_PATH_BYTES {
            return Err(invalid("the path is too long"));
        }
        if bytes.contains(&0) {
            return Err(invalid("the path contains a NUL byte"));
        }
        if path.is_absolute() {
            return Err(WsfsError::new(
                ErrorCode::OutsideWorkspace,
                format!(
                    "{} is an absolute path; tools name workspace paths relative to /workspace",
                    path.display()
                ),
            ));
        }
        let mut rel = PathBuf::new();
        for component in path.components() {
            match component {
                Component::Normal(name) => {
                    let text = name
                        .to_str()
                        .ok_or_else(|| invalid("a name is not UTF-8"))?;
                    let decoded = names::decode(text)
                        .map_err(|_| invalid("a \\xNN escape names / or NUL"))?;
                    rel.push(OsStr::from_bytes(&decoded));
                }
                Component::ParentDir => rel.push(".."),
                _ => {}
            }
        }
        let display = display_path(&rel);
        self.note(Some(&display), Vec::new());
        Ok(ToolPath {
            anchor: Anchor::Root,
            trailing_slash: bytes.len() > 1 && bytes.ends_with(b"/"),
            rel,
            display,
        })
    }

    fn require_write(&self) -> Result<()> {
        if self.access != FsAccess::Write {
            return Err(super::read_only(&self.tool));
        }
        if !self.ws.policy.writes_enabled {
            return Err(WsfsError::new(
                ErrorCode::WritesDisabled,
                "the host opened this workspace read-only (policy.writes_enabled is false)",
            ));
        }
        Ok(())
    }

    /// Runs a built-in tool for the guest, keeping what it recorded for the audit log.
    fn run_tool<T: Tool>(&self, args: T::Args) -> Result<()> {
        let mut call = Call::new(&self.ws, &self.ctl, None, &NoRawPart);
        let result = T::run(&mut call, args);
        if let Some(notes) = call.audit.take() {
            self.note(None, notes.changes);
        }
        result.map(|_| ())
    }
}

/// The frame of a built-in tool run for a guest: its result is never framed, so no raw part.
struct NoRawPart;

impl Frame for NoRawPart {
    fn raw_head_len(&self, _meta: &dyn erased_serde::Serialize) -> usize {
        0
    }
}

fn file_type(meta: &Metadata) -> FileType {
    let ft = meta.file_type();
    if ft.is_dir() {
        FileType::Directory
    } else if ft.is_file() {
        FileType::RegularFile
    } else if ft.is_symlink() {
        FileType::SymbolicLink
    } else if ft.is_block_device() {
        FileType::BlockDevice
    } else if ft.is_char_device() {
        FileType::CharacterDevice
    } else if ft.is_fifo() {
        FileType::Pipe
    } else {
        FileType::Unknown
    }
}

fn guest_stat(meta: &Metadata) -> GuestStat {
    GuestStat {
        kind: file_type(meta),
        size: meta.len(),
        device: meta.dev(),
        inode: meta.ino(),
        nlink: meta.nlink(),
        accessed: meta.accessed().ok().map(|t| t.into_std()),
        modified: meta.modified().ok().map(|t| t.into_std()),
        changed: meta.created().ok().map(|t| t.into_std()),
    }
}

fn missing(display: &str) -> WsfsError {
    WsfsError::new(ErrorCode::PathNotFound, format!("{display} does not exist"))
}

impl GuestFs for WorkspaceFs {
    fn access(&self) -> FsAccess {
        self.access
    }

    fn max_file_bytes(&self) -> u64 {
        self.ws.limits.max_write_bytes
    }

    fn stat(&self, path: &Path, follow: bool) -> Result<GuestStat> {
        let tp = self.tool_path(path)?;
        let located = match follow {
            true => self.ws.resolve(&tp, Access::READ, false, &self.ctl)?,
            false => self.ws.resolve_no_follow(&tp, &self.ctl)?,
        };
        match (&located.leaf, &located.leaf_meta) {
            (None, _) => {
                let meta = located
                    .dir
                    .dir_metadata()
                    .map_err(|e| WsfsError::from_io(&e, &tp.display))?;
                Ok(guest_stat(&meta))
            }
            (Some(_), Some(meta)) => Ok(guest_stat(meta)),
            (Some(_), None) => Err(missing(&tp.display)),
        }
    }

    fn open_read(&self, path: &Path) -> Result<Opened> {
        let tp = self.tool_path(path)?;
        let display = &tp.display;
        let located = self.ws.resolve(&tp, Access::READ, false, &self.ctl)?;
        let leaf = match (&located.leaf, &located.leaf_meta) {
            (None, _) => return Ok(Opened::Dir(located.dir_rel().to_path_buf())),
            (Some(leaf), Some(meta)) if meta.is_dir() => {
                return Ok(Opened::Dir(located.dir_rel().join(leaf)))
            }
            _ => located.file_leaf(display, false)?,
        };
        let file = open_leaf_read(&located.dir, leaf)
            .map_err(|e| open_error(e, display))?
            .into_std();
        regular_file_size(&file, display)?;
        let meta = Metadata::from_just_metadata(
            file.metadata()
                .map_err(|e| WsfsError::from_io(&e, display))?,
        );
        Ok(Opened::File(file, guest_stat(&meta)))
    }

    fn open_write(&self, path: &Path, intent: WriteIntent) -> Result<Vec<u8>> {
        self.require_write()?;
        let tp = self.tool_path(path)?;
        tp.refuse_trailing_slash()?;
        let display = &tp.display;
        // Content the write starts from is read, so the policy must allow reading it too.
        let access = match intent.truncate {
            true => Access::WRITE,
            false => Access::READ_WRITE,
        };
        let located = self.ws.resolve(&tp, access, false, &self.ctl)?;
        let leaf = located.file_leaf(display, true)?;
        let Some(meta) = &located.leaf_meta else {
            return match intent.create {
                true => Ok(Vec::new()),
                false => Err(missing(display)),
            };
        };
        if intent.exclusive {
            return Err(file_exists(display));
        }
        if intent.truncate {
            return Ok(Vec::new());
        }
        let max = self.max_file_bytes();
        let too_large = || {
            WsfsError::new(
                ErrorCode::TooLarge,
                format!(
                    "{display} is over max_write_bytes ({max} bytes), so a tool cannot change it"
                ),
            )
        };
        if meta.len() > max {
            return Err(too_large());
        }
        let file = open_leaf_read(&located.dir, leaf).map_err(|e| open_error(e, display))?;
        let mut content = Vec::with_capacity(meta.len() as usize);
        file.into_std()
            .take(max + 1)
            .read_to_end(&mut content)
            .map_err(|e| WsfsError::from_io(&e, display))?;
        if content.len() as u64 > max {
            return Err(too_large());
        }
        Ok(content)
    }

    /// A written file closed: committed by `write_file`'s own steps (locked, atomic, fsynced,
    /// audited), never creating directories on the way (WASI's `open` does not).
    fn commit_write(&self, path: &Path, content: &[u8], exclusive: bool) -> Result<()> {
        self.require_write()?;
        let tp = self.tool_path(path)?;
        let display = &tp.display;
        self.ws
            .limits
            .check_write(content.len() as u64, display, "Write less")?;
        let located = self.ws.resolve(&tp, Access::WRITE, false, &self.ctl)?;
        let mut call = Call::new(&self.ws, &self.ctl, None, &NoRawPart);
        let written = match exclusive {
            true => tools::write::create_leaf(&mut call, &located, content, display),
            false => tools::write::replace_leaf(&mut call, &located, content, display),
        };
        if let Some(notes) = call.audit.take() {
            self.note(None, notes.changes);
        }
        written.map(|_| ())
    }

    fn list_entries(&self, path: &Path) -> Result<Listing> {
        let tp = self.tool_path(path)?;
        let listed = tools::list_dir::list_dir(&self.ws, &tp, &self.ctl)?;
        let entries = listed
            .entries
            .into_iter()
            .map(|entry| {
                let kind = match entry.kind {
                    FileKind::Dir => FileType::Directory,
                    FileKind::File => FileType::RegularFile,
                    FileKind::Symlink => FileType::SymbolicLink,
                    FileKind::Other => FileType::Unknown,
                };
                (entry.name, kind)
            })
            .collect();
        Ok(Listing {
            entries,
            truncated: listed.truncated,
        })
    }

    fn make_dir(&self, path: &Path) -> Result<()> {
        self.require_write()?;
        let tp = self.tool_path(path)?;
        // mkdir refuses an existing name; create_directory would accept an existing directory.
        if self.stat(path, false).is_ok() {
            return Err(WsfsError::new(
                ErrorCode::FileExists,
                format!("{} already exists", tp.display),
            ));
        }
        self.run_tool::<tools::create_directory::CreateDirectory>(
            tools::create_directory::CreateDirectoryArgs {
                path: tp.display,
                parents: false,
            },
        )
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        self.require_write()?;
        let tp = self.tool_path(path)?;
        if self.stat(path, false)?.kind == FileType::Directory {
            return Err(WsfsError::new(
                ErrorCode::NotAFile,
                format!("{} is a directory", tp.display),
            ));
        }
        self.run_tool::<tools::delete_file::DeleteFile>(tools::delete_file::DeleteFileArgs {
            path: tp.display,
            recursive: false,
        })
    }

    fn remove_dir(&self, path: &Path) -> Result<()> {
        use rustix::io::Errno;
        self.require_write()?;
        let tp = self.tool_path(path)?;
        let display = &tp.display;
        // The entry itself, never followed (a symlink at the leaf is not a directory).
        let located = self
            .ws
            .resolve_entry(&tp, Access::WRITE, false, &self.ctl)?;
        let (Some(leaf), Some(meta)) = (&located.leaf, &located.leaf_meta) else {
            return Err(match &located.leaf {
                // `.`, `a/..`: a directory named without a last name, the root among them.
                None => WsfsError::new(
                    ErrorCode::InvalidPath,
                    format!("{display} names a directory by '.' or '..'; name it by its own name"),
                ),
                Some(_) => missing(display),
            });
        };
        if !meta.is_dir() {
            return Err(WsfsError::new(
                ErrorCode::NotADirectory,
                format!("{display} is not a directory"),
            ));
        }
        self.ctl.check()?;
        // The kernel decides emptiness at the removal itself: nothing inside is ever removed.
        match self.ws.remove_empty_dir(&located.dir, leaf.as_os_str()) {
            Ok(()) => {}
            Err(Errno::NOTEMPTY | Errno::EXIST) => {
                return Err(WsfsError::new(
                    ErrorCode::FileExists,
                    format!("{display} is not empty"),
                ))
            }
            Err(e) => return Err(WsfsError::from_io(&e.into(), display)),
        }
        let _ = sync_dir(&located.dir);
        if self.audits() {
            let shown = self
                .ws
                .shown_resolved(&located.dir, Some(leaf.as_os_str()), display);
            let mut change = Change::dir(shown);
            change.existed_before = true;
            self.note(None, vec![change]);
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        self.require_write()?;
        let src = self.tool_path(from)?;
        let dst = self.tool_path(to)?;
        // rename(2) does not make the destination's directory; move_file would.
        let parent = to.parent().unwrap_or(Path::new(""));
        if self.stat(parent, true)?.kind != FileType::Directory {
            return Err(WsfsError::new(
                ErrorCode::NotADirectory,
                format!("the directory of {} is not a directory", dst.display),
            ));
        }
        self.run_tool::<tools::move_file::MoveFile>(tools::move_file::MoveFileArgs {
            src: src.display,
            dst: dst.display,
            overwrite: true,
        })
    }

    fn read_link(&self, path: &Path) -> Result<PathBuf> {
        let tp = self.tool_path(path)?;
        let located = self.ws.resolve_no_follow(&tp, &self.ctl)?;
        match (&located.leaf, &located.leaf_meta) {
            (Some(leaf), Some(meta)) if meta.file_type().is_symlink() => located
                .dir
                .read_link_contents(leaf)
                .map_err(|e| WsfsError::from_io(&e, &tp.display)),
            (_, None) if located.leaf.is_some() => Err(missing(&tp.display)),
            _ => Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("{} is not a symlink", tp.display),
            )),
        }
    }
}
