//! `get_path_info`: what a path names (its own `lstat`; a symlink is described, not followed),
//! whether it exists, and for regular files their line count and SHA-256.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::{FileHash, LineCounter};
use crate::render;
use crate::sandbox::fileops::open_leaf_read;
use crate::sandbox::resolve::Located;
use crate::sandbox::root::ToolPath;
use crate::tools::contract::{Annotations, Call, Tool, ToolOutput, Warning};
use crate::tools::hints;
use crate::tools::kind::FileKind;
use crate::workspace::Workspace;
use cap_std::fs::{Dir, Metadata, MetadataExt};
use rustix::fs::{Access, AtFlags};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::ffi::OsStr;
use std::fmt::Write;
use std::io::Read;

pub struct GetPathInfo;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GetPathInfoArgs {
    /// File, directory or symlink to describe, e.g. 'src/main.go'.
    pub path: String,
}

impl Tool for GetPathInfo {
    const NAME: &'static str = "get_path_info";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = GetPathInfoArgs;
    type Output = PathInfo;

    fn description() -> String {
        format!("Describe one path without reading it out: whether it exists (a missing path is not an error), its type (file, dir, symlink or other), size, modification time, mode, whether it is readable and writable, and for text files their line count and SHA-256. Symlinks are described, not followed; their target is given when it is inside the workspace. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: GetPathInfoArgs) -> Result<(PathInfo, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        Ok((get_path_info(call.ws, &path, call.ctl)?, Vec::new()))
    }
}

/// `data` of `get_path_info`: `{path, exists}`, and when it exists everything else that
/// applies.
#[derive(Debug, Serialize)]
pub struct PathInfo {
    pub path: String,
    pub exists: bool,
    #[serde(flatten)]
    pub entry: Option<EntryInfo>,
    /// Not part of `data`: similar existing paths, for a missing one's text.
    #[serde(skip)]
    pub suggestions: Vec<String>,
}

#[derive(Debug, Serialize)]
pub struct EntryInfo {
    /// `file`, `dir`, `symlink` or `other`, from the name's own `lstat`.
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
    /// RFC 3339, UTC, whole seconds; absent if the time cannot be written so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub modified: Option<String>,
    /// Permission bits in octal, e.g. `0644`.
    pub mode: String,
    pub readable: bool,
    pub writable: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub symlink_target: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Not part of `data`: a regular file that is not UTF-8 text.
    #[serde(skip)]
    pub binary: bool,
}

impl ToolOutput for PathInfo {
    fn text(&self) -> Cow<'_, str> {
        let Some(e) = &self.entry else {
            return Cow::Owned(format!(
                "{} does not exist{}",
                self.path,
                hints::did_you_mean(&self.suggestions)
            ));
        };
        let mut text = format!("{}: ", self.path);
        let _ = match e.kind {
            FileKind::File => write!(text, "file, {}", render::bytes(e.size)),
            FileKind::Dir => write!(text, "directory"),
            FileKind::Symlink => match &e.symlink_target {
                Some(target) => write!(text, "symlink to {target}"),
                None => write!(
                    text,
                    "symlink whose target is outside the workspace, absolute, or closed by the \
                     workspace policy (not followed)"
                ),
            },
            FileKind::Other => write!(
                text,
                "special file (FIFO, socket or device; not readable as text)"
            ),
        };
        if let Some(lines) = e.line_count {
            let _ = write!(text, ", {}", render::count(lines, "line", "lines"));
        } else if e.binary {
            text.push_str(", binary or not UTF-8");
        }
        text.push('\n');
        if let Some(modified) = &e.modified {
            let _ = write!(text, "modified {modified}, ");
        }
        let access = match (e.readable, e.writable) {
            (true, true) => "readable and writable",
            (true, false) => "readable, not writable",
            (false, true) => "writable, not readable",
            (false, false) => "neither readable nor writable",
        };
        let _ = write!(text, "mode {}, {access}", e.mode);
        if let Some(sha) = &e.sha256 {
            let _ = write!(text, "\nsha256 {sha}");
        }
        Cow::Owned(text)
    }
}

pub fn get_path_info(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<PathInfo> {
    let display = &path.display;
    let missing = || PathInfo {
        path: display.clone(),
        exists: false,
        entry: None,
        suggestions: hints::similar_paths(ws, path.anchor, &path.rel, ctl),
    };
    // The policy is checked there, on the entry itself, whether it exists or not.
    let located = match ws.resolve_no_follow(path, ctl) {
        Ok(located) => located,
        // A missing parent, or a file where a directory would be: the path does not exist.
        Err(e) if matches!(e.code, ErrorCode::PathNotFound | ErrorCode::NotADirectory) => {
            return Ok(missing())
        }
        Err(e) => return Err(e),
    };
    let (meta, name) = match (&located.leaf, &located.leaf_meta) {
        (Some(leaf), Some(meta)) => (meta.clone(), leaf.as_os_str()),
        (Some(_), None) => return Ok(missing()),
        (None, _) => (
            located
                .dir
                .dir_metadata()
                .map_err(|e| WsfsError::from_io(&e, display))?,
            OsStr::new("."),
        ),
    };
    let mut entry = describe(&located.dir, name, &meta);
    if entry.kind == FileKind::Symlink {
        // Resolved (and checked by the policy) as every tool resolves it: a target the
        // policy refuses is not named.
        entry.symlink_target = ws.link_target(&located, ctl);
    }
    if entry.kind == FileKind::File {
        examine_file(ws, &located, &meta, &mut entry, ctl)?;
    }
    Ok(PathInfo {
        path: display.clone(),
        exists: true,
        entry: Some(entry),
        suggestions: Vec::new(),
    })
}

/// What the name's own metadata says, and what access checks on it say.
fn describe(dir: &Dir, name: &OsStr, meta: &Metadata) -> EntryInfo {
    let kind = FileKind::of(meta);
    EntryInfo {
        kind,
        size: meta.len(),
        modified: rfc3339(meta.mtime()),
        mode: format!("{:04o}", meta.mode() & 0o7777),
        readable: may_access(dir, name, meta, Access::READ_OK),
        writable: may_access(dir, name, meta, Access::WRITE_OK),
        symlink_target: None,
        line_count: None,
        sha256: None,
        binary: false,
    }
}

/// Whole seconds since the epoch as RFC 3339 in UTC, e.g. `2024-05-01T12:34:56Z`.
fn rfc3339(seconds: i64) -> Option<String> {
    jiff::Timestamp::from_second(seconds)
        .ok()
        .map(|t| t.to_string())
}

/// Whether this process may access the name (not what it leads to) for `access`: the kernel's
/// answer with the effective IDs (`faccessat2` with `AT_EACCESS | AT_SYMLINK_NOFOLLOW`), so
/// permissions, ACLs, read-only mounts and root's rights all count. Kernels without
/// `faccessat2` (before Linux 5.8) get the answer from the mode bits instead; nothing is ever
/// followed or opened to find out.
fn may_access(dir: &Dir, name: &OsStr, meta: &Metadata, access: Access) -> bool {
    let flags = AtFlags::EACCESS | AtFlags::SYMLINK_NOFOLLOW;
    match rustix::fs::accessat(dir, name, access, flags) {
        Ok(()) => true,
        Err(rustix::io::Errno::NOSYS) => mode_allows(meta, access),
        Err(_) => false,
    }
}

/// The mode bits' answer for the effective user and groups (root may read and write all).
fn mode_allows(meta: &Metadata, access: Access) -> bool {
    let want = if access.contains(Access::WRITE_OK) {
        0o2
    } else {
        0o4
    };
    let euid = rustix::process::geteuid();
    if euid.is_root() {
        return true;
    }
    let mode = meta.mode();
    let in_group = || {
        rustix::process::getegid().as_raw() == meta.gid()
            || rustix::process::getgroups()
                .is_ok_and(|groups| groups.iter().any(|g| g.as_raw() == meta.gid()))
    };
    let shift = if euid.as_raw() == meta.uid() {
        6
    } else if in_group() {
        3
    } else {
        0
    };
    mode & (want << shift) != 0
}

/// Bytes read per step (between deadline checks).
const CHUNK: usize = 64 * 1024;

/// For a regular file: its SHA-256 when it fits `max_write_bytes`, and its line count when it
/// is UTF-8 text within `max_read_bytes`. The file is opened without following a link and
/// must still be the one described (same device and inode); if the name was swapped
/// meanwhile, both are left out rather than describing something else.
fn examine_file(
    ws: &Workspace,
    located: &Located<'_>,
    meta: &Metadata,
    entry: &mut EntryInfo,
    ctl: &CallControl,
) -> Result<()> {
    let limits = &ws.limits;
    let mut hashing = meta.len() <= limits.max_write_bytes;
    let mut keep_text = meta.len() <= limits.max_read_bytes;
    if !hashing && !keep_text {
        return Ok(());
    }
    let Some(leaf) = &located.leaf else {
        return Ok(());
    };
    let Ok(mut file) = open_leaf_read(&located.dir, leaf) else {
        return Ok(());
    };
    match file.metadata() {
        Ok(now) if now.is_file() && now.dev() == meta.dev() && now.ino() == meta.ino() => {}
        _ => return Ok(()),
    }
    let mut kept = Vec::new();
    let mut hash = FileHash::default();
    let mut buf = vec![0u8; CHUNK];
    let mut read = 0u64;
    loop {
        ctl.check()?;
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return Ok(()),
        };
        read += n as u64;
        // The file may grow while it is read: past a limit, that result is dropped.
        hashing &= read <= limits.max_write_bytes;
        keep_text &= read <= limits.max_read_bytes;
        if !hashing && !keep_text {
            return Ok(());
        }
        if hashing {
            hash.feed(&buf[..n]);
        }
        if keep_text {
            kept.extend_from_slice(&buf[..n]);
        }
    }
    if hashing {
        entry.sha256 = Some(hash.hex());
    }
    if keep_text {
        if memchr::memchr(0, &kept).is_none() && std::str::from_utf8(&kept).is_ok() {
            let mut lines = LineCounter::default();
            lines.feed(&kept);
            entry.line_count = Some(lines.lines());
        } else {
            entry.binary = true;
        }
    }
    Ok(())
}
