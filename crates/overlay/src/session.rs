//! The session itself: its directories, touch log and the upper-tree operations the view
//! calls before (and when) it changes something. See the module documentation of `overlay`.

use super::store::Fingerprint;
use super::store::{self, fingerprint_at, read_log, Record, Touched};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::names;
use crate::paths::absolute_root;
use crate::sandbox::gate::{Access, Gate, Reached, Skipped, WalkNeeds};
use crate::sandbox::root::Root;
use crate::sandbox::state_dir::{self, StateDir};
use crate::sandbox::tempfile::{is_temp_name, temp_name, Staged};
use cap_std::ambient_authority;
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, FileType, Mode, RenameFlags};
use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::io::{self, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The xattr that makes an upper directory opaque (overlayfs, `userxattr` mounts).
pub const OPAQUE_XATTR: &str = "user.overlay.opaque";

/// Base originals larger than this are not kept (a conflict on them is not mergeable).
const MAX_ORIGINAL_BYTES: usize = 8 << 20;

/// Longest session name.
const MAX_NAME: usize = 64;

/// An open overlay session: see the module documentation.
pub struct Session {
    pub(super) name: String,
    pub(super) base: Root,
    pub(super) sessions: Dir,
    pub(super) upper: Dir,
    pub(super) meta: Dir,
    pub(super) ckpts: Dir,
    pub(super) log: std::fs::File,
    pub(super) touched: Touched,
    /// The newest checkpoint's epoch (`None`: no checkpoint yet).
    pub(super) epoch: Option<store::Epoch>,
    pub(super) _lock: std::fs::File,
}

impl std::fmt::Debug for Session {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Session").field("name", &self.name).finish()
    }
}

/// The gate of the session's own operations on the base: everything (the host asked for
/// them). The view passes the workspace's policy instead.
pub struct Ungated;

impl Gate for Ungated {
    fn wants_path(&self, _access: Access) -> bool {
        false
    }
    fn check(&self, _: &Reached<'_>, _: Access, _: &str, _: &CallControl) -> Result<()> {
        Ok(())
    }
    fn check_new_dir(&self, _: &Reached<'_>, _: &str, _: &CallControl) -> Result<()> {
        Ok(())
    }
    fn walk_needs(&self) -> WalkNeeds {
        WalkNeeds::default()
    }
    fn walk_skip(&self, _: &Path, _: bool, _: Option<(u64, u64)>) -> Option<Skipped> {
        None
    }
}

/// What an upper entry is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UpperKind {
    File,
    Dir { opaque: bool },
    Symlink,
    Whiteout,
    Other,
}

fn invalid(msg: impl Into<String>) -> WsfsError {
    WsfsError::new(ErrorCode::InvalidArguments, msg.into())
}

/// A session operation's failure on its own machinery (`no_space` on a full disk).
pub fn machinery(what: &str, e: &io::Error) -> WsfsError {
    match e.raw_os_error() {
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => WsfsError::new(
            ErrorCode::NoSpace,
            format!(
                "{what}: {e}. {}; the session is as it was before this call",
                crate::error::NO_SPACE_HINT
            ),
        ),
        _ => WsfsError::new(ErrorCode::IoError, format!("{what}: {e}")),
    }
}

/// An error on `path` (session or base).
pub fn on_path(e: &io::Error, path: &str) -> WsfsError {
    match e.raw_os_error() {
        Some(libc::ELOOP) => WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{path}: a name on the way is a symlink (or changed into one); the session names real paths only"),
        ),
        Some(libc::ENOSPC | libc::EDQUOT | libc::EFBIG) => machinery(path, e),
        _ => WsfsError::from_io(e, path),
    }
}

/// Checks a session name: one plain name (letters, digits, `-`, `_`, `.`), not starting with
/// `.`.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME
        && !name.starts_with('.')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if ok {
        Ok(())
    } else {
        Err(invalid(format!(
            "invalid session name {name:?}: use 1-{MAX_NAME} letters, digits, '-', '_' or '.', not starting with '.'"
        )))
    }
}

/// Checks a session path (workspace-relative, each name in the escaped form the tools show:
/// see `crate::names` and the module documentation) and returns its names, still escaped.
/// A name must be in its canonical escaped form (`names::encode` of the bytes it stands for),
/// so that one file has one session path.
pub fn split_rel(rel: &str) -> Result<Vec<&str>> {
    let bad = |why: &str| {
        WsfsError::new(
            ErrorCode::InvalidPath,
            format!("{rel:?} {why}; name a file by its plain workspace-relative path (a/b.txt)"),
        )
    };
    if rel.is_empty() {
        return Err(bad("is empty"));
    }
    if rel.starts_with('/') {
        return Err(bad("is absolute"));
    }
    if rel.len() > crate::sandbox::root::MAX_PATH_BYTES || rel.contains('\0') {
        return Err(bad("is too long or holds a NUL byte"));
    }
    let parts: Vec<&str> = rel.split('/').collect();
    for p in &parts {
        if p.is_empty() || *p == "." || *p == ".." {
            return Err(bad("has an empty, '.' or '..' name"));
        }
        let raw =
            names::decode(p).map_err(|_| bad("has a name whose escapes stand for '/' or NUL"))?;
        if p.contains('\\') && names::encode(&raw) != *p {
            return Err(bad(&format!(
                "has the name {p:?}, which is not written as wsfs shows it ({:?})",
                names::encode(&raw)
            )));
        }
        if is_temp_name(&raw) {
            return Err(bad("names a wsfs temp file"));
        }
    }
    Ok(parts)
}

/// `rel` (a session path, as a host gives it: `\xNN` in either case) in its canonical escaped
/// form, checked (`split_rel`).
pub fn canonical(rel: &str) -> Result<String> {
    if !rel.contains('\\') {
        split_rel(rel)?;
        return Ok(rel.to_string());
    }
    let mut out = String::with_capacity(rel.len());
    for (i, p) in rel.split('/').enumerate() {
        if i > 0 {
            out.push('/');
        }
        match names::decode(p) {
            Ok(raw) => out.push_str(&names::encode(&raw)),
            Err(_) => out.push_str(p), // split_rel says why
        }
    }
    split_rel(&out)?;
    Ok(out)
}

/// The name (bytes) one escaped name of a session path stands for; `InvalidInput` for an
/// escape of `/` or NUL (never in a checked path).
pub fn fs_name(name: &str) -> io::Result<Cow<'_, OsStr>> {
    match names::decode(name) {
        Ok(Cow::Borrowed(b)) => Ok(Cow::Borrowed(OsStr::from_bytes(b))),
        Ok(Cow::Owned(b)) => Ok(Cow::Owned(OsString::from_vec(b))),
        Err(_) => Err(bad_escape(name)),
    }
}

/// The path (bytes, `/`-separated) a session path stands for, each name decoded.
pub fn fs_path(rel: &str) -> io::Result<Cow<'_, [u8]>> {
    if !rel.contains('\\') {
        return Ok(Cow::Borrowed(rel.as_bytes()));
    }
    let mut out = Vec::with_capacity(rel.len());
    for (i, p) in rel.split('/').enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(&names::decode(p).map_err(|_| bad_escape(p))?);
    }
    Ok(Cow::Owned(out))
}

fn bad_escape(name: &str) -> io::Error {
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!("{name:?} is no escaped file name (an escape stands for '/' or NUL)"),
    )
}

/// The session path of the raw workspace-relative path `rel` (each name escaped as the tools
/// show it); empty for the root.
pub fn session_path(rel: &Path) -> String {
    if rel.as_os_str().is_empty() {
        return String::new();
    }
    names::display_path(rel)
}

/// `prefix/name` for the raw directory entry `name` below the session path `prefix`.
pub fn join_raw(prefix: &str, name: &OsStr) -> String {
    let name = names::encode(name.as_bytes());
    if prefix.is_empty() {
        name.into_owned()
    } else {
        format!("{prefix}/{name}")
    }
}

/// `(parent, leaf)` of a checked path.
pub fn parent_leaf(rel: &str) -> (&str, &str) {
    match rel.rsplit_once('/') {
        Some((p, l)) => (p, l),
        None => ("", rel),
    }
}

/// Opens the directory `rel` (a session path) beneath `root` (the root itself for ""),
/// refusing symlinks. `Ok(None)`: it does not exist (or a name on the way is not a directory).
pub fn open_beneath(root: &Dir, rel: &str) -> io::Result<Option<Dir>> {
    match crate::sandbox::sys::reopen_beneath(root.as_fd(), &fs_path(rel)?) {
        Ok(fd) => Ok(Some(Dir::from(fd))),
        Err(e) if matches!(e.raw_os_error(), Some(libc::ENOENT | libc::ENOTDIR)) => Ok(None),
        Err(e) => Err(e),
    }
}

/// The kind of `name` (escaped, as every name here) in `dir`, not followed; `None` if absent.
pub fn upper_kind(dir: &Dir, name: &str) -> io::Result<Option<(UpperKind, rustix::fs::Stat)>> {
    let raw = fs_name(name)?;
    let stat = match rustix::fs::statat(dir, &*raw, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => UpperKind::File,
        FileType::Directory => UpperKind::Dir {
            opaque: is_opaque(dir, &raw)?,
        },
        FileType::Symlink => UpperKind::Symlink,
        FileType::CharacterDevice if stat.st_rdev == 0 => UpperKind::Whiteout,
        _ => UpperKind::Other,
    };
    Ok(Some((kind, stat)))
}

fn is_opaque(dir: &Dir, name: &OsStr) -> io::Result<bool> {
    let fd = crate::sandbox::sys::open_child_dir(dir.as_fd(), name.as_bytes())?;
    let mut buf = [0u8; 8];
    match rustix::fs::fgetxattr(&fd, OPAQUE_XATTR, &mut buf[..]) {
        Ok(n) => Ok(&buf[..n] == b"y"),
        Err(rustix::io::Errno::NODATA) => Ok(false),
        Err(rustix::io::Errno::NOTSUP) => Ok(false),
        Err(e) => Err(e.into()),
    }
}

/// Makes (or replaces) `name` in `dir` as a whiteout: a character device 0/0 made under a temp
/// name and renamed (exchanged, over a directory) into place.
pub(super) fn place_whiteout(dir: &Dir, name: &str) -> io::Result<()> {
    let tmp = temp_name();
    rustix::fs::mknodat(
        dir,
        tmp.as_str(),
        FileType::CharacterDevice,
        Mode::empty(),
        0,
    )?;
    place(dir, &tmp, name)
}

/// Renames the temp entry `tmp` over `name` in `dir`; over a directory (which a rename of a
/// non-directory cannot replace) by an exchange, the old tree then removed.
pub(super) fn place(dir: &Dir, tmp: &str, name: &str) -> io::Result<()> {
    let tmp_is_dir = matches!(upper_kind(dir, tmp)?, Some((UpperKind::Dir { .. }, _)));
    match upper_kind(dir, name)? {
        Some((UpperKind::Dir { .. }, _)) => exchange(dir, tmp, name),
        Some(_) if tmp_is_dir => exchange(dir, tmp, name),
        _ => {
            rustix::fs::renameat(dir, tmp, dir, &*fs_name(name)?)?;
            Ok(())
        }
    }
}

fn exchange(dir: &Dir, tmp: &str, name: &str) -> io::Result<()> {
    let raw = fs_name(name)?;
    match rustix::fs::renameat_with(dir, tmp, dir, &*raw, RenameFlags::EXCHANGE) {
        Ok(()) => {}
        Err(rustix::io::Errno::NOENT) => {
            rustix::fs::renameat(dir, tmp, dir, &*raw)?;
            return Ok(());
        }
        Err(e) => return Err(e.into()),
    }
    remove_entry(dir, tmp)
}

/// Removes `name` in `dir`, a whole tree for a directory (no symlink followed).
pub fn remove_entry(dir: &Dir, name: &str) -> io::Result<()> {
    match upper_kind(dir, name)? {
        None => Ok(()),
        Some((UpperKind::Dir { .. }, _)) => dir.remove_dir_all(&*fs_name(name)?),
        Some(_) => dir.remove_file(&*fs_name(name)?),
    }
}

/// Opens (creating, mode 0700) the directory `name` in `dir`, refusing a symlink.
pub(super) fn open_sub(dir: &Dir, name: &str) -> io::Result<Dir> {
    match rustix::fs::mkdirat(dir, name, Mode::from_raw_mode(0o700)) {
        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
        Err(e) => return Err(e.into()),
    }
    Ok(Dir::from(crate::sandbox::sys::open_child_dir(
        dir.as_fd(),
        name.as_bytes(),
    )?))
}

impl Session {
    /// `Session::open` without the recovery of intents (see `overlay::finish_open`).
    pub(super) fn open_path(
        base_root: &Path,
        state_dir: Option<&str>,
        name: &str,
    ) -> Result<Session> {
        check_name(name)?;
        let shown = base_root.display().to_string();
        let configured = absolute_root(&shown)?;
        let path = configured
            .canonicalize()
            .map_err(|e| WsfsError::from_io(&e, &shown))?;
        let dir = Dir::open_ambient_dir(&path, ambient_authority())
            .map_err(|e| WsfsError::from_io(&e, &shown))?;
        let (state, _warnings) = state_dir::choose(&dir, &path, state_dir)?;
        let StateDir::At(state_path) = state.clone() else {
            return Err(WsfsError::new(
                ErrorCode::InvalidWorkspace,
                "overlay sessions need a state directory outside the workspace; set state_dir to one",
            ));
        };
        // A restricted base still refuses the protected system locations it contains.
        let protects = crate::sandbox::protected::contains_protected(&path);
        let base = Root {
            dir,
            kernel_path: path.clone(),
            path,
            configured,
            restrict: true,
            protects,
            state,
            records_dir: OnceLock::new(),
            state_pinned: None,
        };
        Session::open_raw(base, &state_path, name)
    }

    /// Opens the session `name` over `base`, whose state directory is `state_path`.
    pub(super) fn open_raw(base: Root, state_path: &Path, name: &str) -> Result<Session> {
        check_name(name)?;
        let sessions_path: PathBuf = state_path.join("sessions");
        let sessions = state_dir::open_outside(&base.dir, &sessions_path)
            .map_err(|e| machinery("cannot create or open the sessions' state directory", &e))?;
        // Whatever a discard left half-removed.
        if let Ok(entries) = sessions.entries() {
            for entry in entries.flatten() {
                let n = entry.file_name();
                if n.to_string_lossy().starts_with(".discard-") {
                    let _ = sessions.remove_dir_all(&n);
                }
            }
        }
        let err = |e: io::Error| machinery(&format!("cannot open session {name}"), &e);
        let dir = open_sub(&sessions, name).map_err(err)?;
        let upper = open_sub(&dir, "upper").map_err(err)?;
        open_sub(&dir, "work").map_err(err)?;
        let meta = open_sub(&dir, "meta").map_err(err)?;
        let ckpts = open_sub(&dir, "checkpoints").map_err(err)?;
        open_sub(&meta, "objects").map_err(err)?;
        let lock = meta
            .open_with(
                "lock",
                cap_std::fs::OpenOptions::new().write(true).create(true),
            )
            .map_err(err)?
            .into_std();
        // A child this process forked (a program starting, the view's mount helper) holds a
        // copy of the lock's descriptor until it execs or exits: a moment, so retry briefly
        // before calling the session held.
        let held = (0..40).all(|attempt| {
            if attempt > 0 {
                std::thread::sleep(std::time::Duration::from_millis(5));
            }
            lock.try_lock().is_err()
        });
        if held {
            return Err(invalid(format!(
                "session {name} is open in another process (or another Session); close that one first"
            )));
        }
        // The upper root looks like the base root (the overlay mount shows its attributes).
        if let Ok(stat) = rustix::fs::fstat(&base.dir) {
            let _ = rustix::fs::fchmod(&upper, Mode::from_raw_mode(stat.st_mode & 0o7777));
        }
        let touched = read_log(&meta).map_err(err)?;
        store::cut_torn_tail(&meta).map_err(err)?;
        let log = meta
            .open_with(
                store::LOG_NAME,
                cap_std::fs::OpenOptions::new().append(true).create(true),
            )
            .map_err(err)?
            .into_std();
        let mut session = Session {
            name: name.to_string(),
            base,
            sessions,
            upper,
            meta,
            ckpts,
            log,
            touched,
            epoch: None,
            _lock: lock,
        };
        // A log written before session paths were escaped (or a new one): rewritten, with
        // escaped paths, before anything reads or appends to it.
        if !session.touched.escaped {
            session.touched = std::mem::take(&mut session.touched).upgraded();
            session.rewrite_log()?;
        }
        session.recover()?;
        session.load_epoch()?;
        Ok(session)
    }

    /// Compacts the touch log when it holds many superseded records.
    pub(super) fn compact_if_needed(&mut self) -> Result<()> {
        let session = self;
        if session.touched.records
            > 4 * (session.touched.fps.len()
                + session.touched.dirty.len()
                + session.touched.committed.len()
                + session
                    .touched
                    .absent
                    .values()
                    .map(|a| a.len())
                    .sum::<usize>())
                + 64
        {
            session.rewrite_log()?;
        }
        Ok(())
    }

    /// Finishes what a crash interrupted: the base's own journals, then a commit's or a
    /// rewind's intent.
    fn recover(&mut self) -> Result<()> {
        let recovery = crate::sandbox::commit::journal::recover_all(&self.base, u64::MAX);
        if let Some(w) = recovery.warnings.first() {
            return Err(WsfsError::new(ErrorCode::IoError, w.clone()));
        }
        sweep_upper(&self.upper)
            .map_err(|e| machinery("cannot clean the session's upper tree", &e))?;
        // A checkpoint being written when the process died.
        if let Ok(entries) = self.ckpts.entries() {
            for entry in entries.flatten() {
                if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                    let _ = self.ckpts.remove_dir_all(entry.file_name());
                }
            }
        }
        Ok(())
    }

    pub fn name(&self) -> &str {
        &self.name
    }

    /// The base root (canonical).
    pub fn base_path(&self) -> &Path {
        &self.base.path
    }

    /// The upper tree's handle (the view reads through it).
    pub fn upper(&self) -> &Dir {
        &self.upper
    }

    /// The paths the session holds a base fingerprint for, and each one.
    pub fn fingerprints(&self) -> &std::collections::BTreeMap<String, Fingerprint> {
        &self.touched.fps
    }

    /// Appends `records` to the touch log in one write, durably (with the before-images
    /// `capture_unsynced` wrote: both are durable when it returns, or neither is counted).
    pub(super) fn append(&mut self, records: &[Record]) -> Result<()> {
        if records.is_empty() {
            return self.sync_images();
        }
        let mut buf = Vec::new();
        for r in records {
            buf.extend(r.line());
        }
        if let Err(e) = self.log.write_all(&buf) {
            self.abort_images();
            // A partial line is dropped at the next read; end it so later lines parse.
            let _ = self.log.write_all(b"\n");
            return Err(machinery(
                "cannot record the change in the session's log",
                &e,
            ));
        }
        // (A failure from here leaves whole lines that may be durable: harmless, the
        // change they announce is not made.)
        self.sync_images()?;
        rustix::fs::fdatasync(&self.log)
            .map_err(|e| machinery("cannot record the change in the session's log", &e.into()))?;
        for r in records {
            self.touched.apply(r);
        }
        Ok(())
    }

    /// Rewrites the touch log compacted (atomically).
    fn rewrite_log(&mut self) -> Result<()> {
        let bytes = self.touched.compacted();
        store::write_atomic(&self.meta, store::LOG_NAME, &bytes)
            .map_err(|e| machinery("cannot rewrite the session's log", &e))?;
        self.log = self
            .meta
            .open_with(
                store::LOG_NAME,
                cap_std::fs::OpenOptions::new().append(true),
            )
            .map_err(|e| machinery("cannot reopen the session's log", &e))?
            .into_std();
        let lines = bytes.iter().filter(|&&b| b == b'\n').count();
        self.touched.records = lines;
        Ok(())
    }

    /// The base directory `rel` (the root for ""), never through a symlink. `None`: the base
    /// has no directory there: a name on the way is missing, not a directory, or a symlink.
    /// As overlayfs's own lookup in a lower layer, which never follows a symlink on the way,
    /// a path below a base symlink is absent from the base, whatever the symlink leads to (a
    /// base directory swapped for a symlink is a base that changed, never a way out).
    pub fn base_dir(&self, rel: &str) -> Result<Option<Dir>> {
        match open_beneath(&self.base.dir, rel) {
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => Ok(None),
            other => other.map_err(|e| on_path(&e, rel)),
        }
    }

    /// The base fingerprint of `rel` now (hashing its content).
    pub fn base_fingerprint(&self, rel: &str, keep: Option<&mut Vec<u8>>) -> Result<Fingerprint> {
        let (parent, leaf) = parent_leaf(rel);
        let dir = self.base_dir(parent)?;
        let raw = fs_name(leaf).map_err(|e| on_path(&e, rel))?;
        fingerprint_at(dir.as_ref(), &raw, keep).map_err(|e| on_path(&e, rel))
    }

    /// Records `rel`'s base fingerprint at its first touch, and after a checkpoint its
    /// before-image at its first touch since the newest checkpoint (`checkpoint.rs`), both
    /// durably, before the caller changes anything. Every change of a session path must be
    /// preceded by its touch (a directory replaced or removed: every entry below it too, as
    /// `whiteout` and `make_opaque` do). Cheap when the path is already known and changed
    /// since the newest checkpoint: no system call.
    pub fn touch(&mut self, rel: &str) -> Result<()> {
        self.touch_all(&[rel])
    }

    /// [`touch`](Self::touch) for many paths at once: one append to the log and one
    /// `fdatasync` (and one of the images) for all of them, as a program's changes need.
    pub fn touch_all(&mut self, rels: &[&str]) -> Result<()> {
        let mut records = Vec::new();
        let mut images = Vec::new();
        let mut absent = Vec::new();
        for &rel in rels {
            split_rel(rel)?;
            let known = self.touched.fps.contains_key(rel);
            if known && self.changed_since_checkpoint().contains(rel) {
                continue;
            }
            if known {
                if self.has_checkpoint() {
                    images.push(rel);
                } else {
                    records.push(Record {
                        op: 'd',
                        path: Some(rel.to_string()),
                        fp: None,
                        i: None,
                    });
                }
                continue;
            }
            let mut original = Vec::new();
            let fp = self.base_fingerprint(rel, Some(&mut original))?;
            if fp.kind == "file" && original.len() <= MAX_ORIGINAL_BYTES {
                if let Some(sha) = &fp.sha256 {
                    self.keep_original(sha, &original);
                }
            }
            // A path not in the session has no upper entry, as a rule: its before-image is
            // "absent", which the record itself says (`i`): no image is written. Otherwise
            // the image and the record are written, then both made durable.
            let epoch = self
                .epoch_id()
                .filter(|_| !self.changed_since_checkpoint().contains(rel));
            let implicit = match epoch {
                Some(_) => !self.upper_has(rel).map_err(|e| on_path(&e, rel))?,
                None => false,
            };
            if implicit {
                absent.push(rel);
            } else {
                images.push(rel);
            }
            records.push(Record {
                op: 't',
                path: Some(rel.to_string()),
                fp: Some(fp),
                i: epoch.filter(|_| implicit),
            });
        }
        if images.is_empty() && records.is_empty() {
            return Ok(());
        }
        // Images of known paths exist only once there is a checkpoint (`capture_unsynced`
        // writes none before the first).
        self.capture_unsynced(&images)?;
        self.append(&records)?;
        for rel in absent {
            self.captured_absent(rel);
        }
        Ok(())
    }

    /// Whether the upper tree has an entry at `rel`.
    fn upper_has(&self, rel: &str) -> io::Result<bool> {
        let (parent, leaf) = parent_leaf(rel);
        match open_beneath(&self.upper, parent)? {
            Some(dir) => Ok(upper_kind(&dir, leaf)?.is_some()),
            None => Ok(false),
        }
    }

    /// Keeps a base original by its hash (best effort: a lost one only makes a conflict
    /// unmergeable; it is checked against its hash when read).
    pub(super) fn keep_original_bounded(&self, sha: &str, bytes: &[u8]) {
        if bytes.len() <= MAX_ORIGINAL_BYTES {
            self.keep_original(sha, bytes);
        }
    }

    fn keep_original(&self, sha: &str, bytes: &[u8]) {
        let Ok(objects) = open_sub(&self.meta, "objects") else {
            return;
        };
        if objects.symlink_metadata(sha).is_ok() {
            return;
        }
        if let Ok(mut staged) = Staged::create(&objects) {
            if staged.file().write_all(bytes).is_ok() {
                let _ = staged.commit_new(OsStr::new(sha));
            }
        };
    }

    /// The base original with hash `sha`, if kept and intact.
    pub fn original(&self, sha: &str) -> Option<Vec<u8>> {
        let objects = open_sub(&self.meta, "objects").ok()?;
        let bytes = objects.read(sha).ok()?;
        (crate::lines::sha256_hex(&bytes) == sha).then_some(bytes)
    }

    /// The upper directory holding `rel`'s parent, created (copied up from the base's
    /// directories, with their modes, each touched first) when `create`.
    pub(super) fn upper_parent(&mut self, rel: &str, create: bool) -> Result<Option<Dir>> {
        let (parent, _) = parent_leaf(rel);
        if parent.is_empty() {
            return Ok(Some(
                self.upper.try_clone().map_err(|e| machinery("dup", &e))?,
            ));
        }
        let mut here = self.upper.try_clone().map_err(|e| machinery("dup", &e))?;
        let mut prefix = String::new();
        for name in parent.split('/') {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(name);
            match upper_kind(&here, name).map_err(|e| on_path(&e, &prefix))? {
                Some((UpperKind::Dir { .. }, _)) => {}
                Some((UpperKind::Whiteout, _)) => {
                    return Err(WsfsError::new(
                        ErrorCode::PathNotFound,
                        format!("{prefix} is deleted in this session: make the directory again (create_dir) before writing below it"),
                    ))
                }
                Some(_) => {
                    return Err(WsfsError::new(
                        ErrorCode::NotADirectory,
                        format!("{prefix} is not a directory in this session"),
                    ))
                }
                None if !create => return Ok(None),
                None => {
                    let fp = self.base_fingerprint(&prefix, None)?;
                    let mode = match fp.kind.as_str() {
                        "dir" => fp.mode,
                        "absent" => 0o755,
                        _ => {
                            return Err(WsfsError::new(
                                ErrorCode::NotADirectory,
                                format!("{prefix} is not a directory in the base"),
                            ))
                        }
                    };
                    self.touch(&prefix)?;
                    let raw = fs_name(name).map_err(|e| on_path(&e, &prefix))?;
                    match rustix::fs::mkdirat(&here, &*raw, Mode::from_raw_mode(mode)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(on_path(&e.into(), &prefix)),
                    }
                    // mkdir's mode is masked by the umask: set it exactly.
                    let fd = crate::sandbox::sys::open_child_dir(here.as_fd(), raw.as_bytes())
                        .map_err(|e| on_path(&e, &prefix))?;
                    let _ = rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode));
                    store::fsync_dir(&here).map_err(|e| on_path(&e, &prefix))?;
                }
            }
            let raw = fs_name(name).map_err(|e| on_path(&e, &prefix))?;
            here = Dir::from(
                crate::sandbox::sys::open_child_dir(here.as_fd(), raw.as_bytes())
                    .map_err(|e| on_path(&e, &prefix))?,
            );
        }
        Ok(Some(here))
    }

    /// Writes `bytes` as the session's `rel` (mode `mode`), atomically (staged, fsynced,
    /// renamed): the first touch is recorded first, parents are copied up.
    pub fn write_file(&mut self, rel: &str, bytes: &[u8], mode: u32) -> Result<()> {
        self.touch(rel)?;
        let (_, leaf) = parent_leaf(rel);
        let dir = self.upper_parent(rel, true)?.expect("created");
        if let Some((UpperKind::Dir { .. }, _)) =
            upper_kind(&dir, leaf).map_err(|e| on_path(&e, rel))?
        {
            return Err(WsfsError::new(
                ErrorCode::NotAFile,
                format!("{rel} is a directory in this session"),
            ));
        }
        let io = |e: io::Error| on_path(&e, rel);
        let mut staged = Staged::create(&dir).map_err(io)?;
        staged.file().write_all(bytes).map_err(io)?;
        rustix::fs::fchmod(&*staged.file(), Mode::from_raw_mode(mode & 0o7777))
            .map_err(|e| io(e.into()))?;
        staged.file().sync_all().map_err(io)?;
        staged
            .commit(&fs_name(leaf).map_err(io)?, false)
            .map_err(io)?;
        store::fsync_dir(&dir).map_err(io)
    }

    /// Deletes `rel` in the session: a whiteout where the base has an entry, else the upper
    /// entry is just removed. A directory's upper subtree goes with it.
    pub fn whiteout(&mut self, rel: &str) -> Result<()> {
        self.touch(rel)?;
        let (_, leaf) = parent_leaf(rel);
        let dir = self.upper_parent(rel, true)?.expect("created");
        self.mark_subtree(&dir, rel, leaf)?;
        let in_base = !self.base_fingerprint_kind(rel)?.is_absent();
        let io = |e: io::Error| on_path(&e, rel);
        if in_base {
            place_whiteout(&dir, leaf).map_err(io)?;
        } else {
            remove_entry(&dir, leaf).map_err(io)?;
        }
        store::fsync_dir(&dir).map_err(io)
    }

    /// The base's entry kind at `rel` (no hashing).
    pub(super) fn base_fingerprint_kind(&self, rel: &str) -> Result<Fingerprint> {
        let (parent, leaf) = parent_leaf(rel);
        let Some(dir) = self.base_dir(parent)? else {
            return Ok(Fingerprint::absent());
        };
        let raw = fs_name(leaf).map_err(|e| on_path(&e, rel))?;
        match rustix::fs::statat(&dir, &*raw, AtFlags::SYMLINK_NOFOLLOW) {
            Ok(s) => Ok(store::stat_fingerprint(&s)),
            Err(rustix::io::Errno::NOENT) => Ok(Fingerprint::absent()),
            Err(e) => Err(on_path(&e.into(), rel)),
        }
    }

    /// Marks every upper entry below the directory `leaf` (in `dir`, the session's `rel`) as
    /// changed, before the subtree is replaced.
    pub(super) fn mark_subtree(&mut self, dir: &Dir, rel: &str, leaf: &str) -> Result<()> {
        let Some((UpperKind::Dir { .. }, _)) =
            upper_kind(dir, leaf).map_err(|e| on_path(&e, rel))?
        else {
            return Ok(());
        };
        let mut found = Vec::new();
        let sub = Dir::from(
            crate::sandbox::sys::open_child_dir(
                dir.as_fd(),
                fs_name(leaf).map_err(|e| on_path(&e, rel))?.as_bytes(),
            )
            .map_err(|e| on_path(&e, rel))?,
        );
        list_upper(&sub, rel, &mut found).map_err(|e| on_path(&e, rel))?;
        let found: Vec<String> = found
            .into_iter()
            .filter(|p| !self.changed_since_checkpoint().contains(p))
            .collect();
        if self.has_checkpoint() {
            let paths: Vec<&str> = found.iter().map(String::as_str).collect();
            return self.capture(&paths);
        }
        let records: Vec<Record> = found
            .into_iter()
            .map(|p| Record {
                op: 'd',
                path: Some(p),
                fp: None,
                i: None,
            })
            .collect();
        self.append(&records)
    }

    /// Makes `rel` an empty opaque directory (mode `mode`): a directory that hides the base's
    /// entries below it (a deleted base directory made again). Whatever the session had there
    /// is replaced in one rename.
    pub fn make_opaque(&mut self, rel: &str, mode: u32) -> Result<()> {
        self.touch(rel)?;
        let (_, leaf) = parent_leaf(rel);
        let dir = self.upper_parent(rel, true)?.expect("created");
        self.mark_subtree(&dir, rel, leaf)?;
        let io = |e: io::Error| on_path(&e, rel);
        let tmp = temp_name();
        rustix::fs::mkdirat(&dir, tmp.as_str(), Mode::from_raw_mode(0o700))
            .map_err(|e| io(e.into()))?;
        let made = (|| -> io::Result<()> {
            let fd = crate::sandbox::sys::open_child_dir(dir.as_fd(), tmp.as_bytes())?;
            rustix::fs::fsetxattr(&fd, OPAQUE_XATTR, b"y", rustix::fs::XattrFlags::empty())?;
            rustix::fs::fchmod(&fd, Mode::from_raw_mode(mode & 0o7777))?;
            place(&dir, &tmp, leaf)
        })();
        if let Err(e) = made {
            let _ = remove_entry(&dir, &tmp);
            return Err(io(e));
        }
        store::fsync_dir(&dir).map_err(io)
    }

    /// Makes the directory `rel` in the session: opaque over a deletion of the base's, plain
    /// where neither has an entry.
    pub fn create_dir(&mut self, rel: &str, mode: u32) -> Result<()> {
        let (_, leaf) = parent_leaf(rel);
        self.touch(rel)?;
        let dir = self.upper_parent(rel, true)?.expect("created");
        match upper_kind(&dir, leaf).map_err(|e| on_path(&e, rel))? {
            Some((UpperKind::Whiteout, _)) => self.make_opaque(rel, mode),
            Some(_) => Err(WsfsError::new(
                ErrorCode::FileExists,
                format!("{rel} already exists"),
            )),
            None if !self.base_fingerprint_kind(rel)?.is_absent() => Err(WsfsError::new(
                ErrorCode::FileExists,
                format!("{rel} already exists"),
            )),
            None => {
                let io = |e: io::Error| on_path(&e, rel);
                let raw = fs_name(leaf).map_err(io)?;
                rustix::fs::mkdirat(&dir, &*raw, Mode::from_raw_mode(mode & 0o7777))
                    .map_err(|e| io(e.into()))?;
                store::fsync_dir(&dir).map_err(io)
            }
        }
    }

    /// Copies the base's `rel` up into the session unchanged (a file's content and mode, a
    /// directory, a symlink), so that it can be changed in place; nothing if the session has
    /// it already.
    pub fn copy_up(&mut self, rel: &str) -> Result<()> {
        self.touch(rel)?;
        let (parent, leaf) = parent_leaf(rel);
        let dir = self.upper_parent(rel, true)?.expect("created");
        let io = |e: io::Error| on_path(&e, rel);
        if upper_kind(&dir, leaf).map_err(io)?.is_some() {
            return Ok(());
        }
        let base = open_beneath(&self.base.dir, parent)
            .map_err(io)?
            .ok_or_else(|| {
                WsfsError::new(
                    ErrorCode::PathNotFound,
                    format!("{rel} does not exist in the base"),
                )
            })?;
        let leaf = fs_name(leaf).map_err(io)?;
        let leaf = &*leaf;
        let stat =
            rustix::fs::statat(&base, leaf, AtFlags::SYMLINK_NOFOLLOW).map_err(|e| io(e.into()))?;
        let mode = Mode::from_raw_mode(stat.st_mode & 0o7777);
        match FileType::from_raw_mode(stat.st_mode) {
            FileType::RegularFile => {
                let mut src =
                    crate::sandbox::sys::open_file(base.as_fd(), leaf.as_bytes()).map_err(io)?;
                let mut staged = Staged::create(&dir).map_err(io)?;
                std::io::copy(&mut src, staged.file()).map_err(io)?;
                rustix::fs::fchmod(&*staged.file(), mode).map_err(|e| io(e.into()))?;
                staged.file().sync_all().map_err(io)?;
                staged.commit(leaf, true).map_err(io)?;
            }
            FileType::Directory => {
                rustix::fs::mkdirat(&dir, leaf, mode).map_err(|e| io(e.into()))?;
                let fd = crate::sandbox::sys::open_child_dir(dir.as_fd(), leaf.as_bytes())
                    .map_err(io)?;
                rustix::fs::fchmod(&fd, mode).map_err(|e| io(e.into()))?;
            }
            FileType::Symlink => {
                let target =
                    rustix::fs::readlinkat(&base, leaf, Vec::new()).map_err(|e| io(e.into()))?;
                let tmp = temp_name();
                rustix::fs::symlinkat(target.as_c_str(), &dir, tmp.as_str())
                    .map_err(|e| io(e.into()))?;
                rustix::fs::renameat(&dir, tmp.as_str(), &dir, leaf).map_err(|e| io(e.into()))?;
            }
            _ => {
                return Err(WsfsError::new(
                    ErrorCode::NotAFile,
                    format!(
                    "{rel} is a special file; only files, directories and symlinks are copied up"
                ),
                ))
            }
        }
        store::fsync_dir(&dir).map_err(io)
    }

    /// Removes the session's state (its upper tree, log and checkpoints): first renamed
    /// aside in one step, so a crash leaves either the session or nothing the next open
    /// does not remove.
    pub fn discard(self) -> Result<()> {
        let Session {
            name,
            sessions,
            _lock,
            ..
        } = self;
        let aside = format!(".discard-{}", &temp_name()[6..22]);
        sessions
            .rename(&name, &sessions, &aside)
            .map_err(|e| machinery(&format!("cannot discard session {name}"), &e))?;
        let _ = store::fsync_dir(&sessions);
        drop(_lock);
        sessions
            .remove_dir_all(&aside)
            .map_err(|e| machinery(&format!("session {name} is discarded, but removing its files failed (the next open removes them)"), &e))
    }

    /// The kernel overlay's work directory of this session, opened beneath the sessions'
    /// directory, never through a symlink.
    pub fn work_dir(&self) -> Result<Dir> {
        let err = |e: io::Error| machinery(&format!("cannot open session {}", self.name), &e);
        let dir = open_sub(&self.sessions, &self.name).map_err(err)?;
        open_sub(&dir, "work").map_err(err)
    }

    /// Where an overlay view of this session keeps its own journals and records of new
    /// directories: `view-state` in the session's directory, found beneath the sessions'
    /// directory at every use (a discard makes the session's directory anew).
    pub fn view_state(&self) -> Result<state_dir::PinnedState> {
        let under = self
            .sessions
            .try_clone()
            .map_err(|e| machinery("dup", &e))?;
        Ok(state_dir::PinnedState {
            under: std::sync::Arc::new(under),
            rel: PathBuf::from(&self.name).join("view-state"),
        })
    }

    /// The flags a kernel overlay mount of this session needs (`lowerdir`, `upperdir`,
    /// `workdir`), for the developer tools' runner.
    pub fn mount_dirs(&self) -> Result<(PathBuf, PathBuf, PathBuf)> {
        let StateDir::At(state) = &self.base.state else {
            return Err(invalid("no state directory"));
        };
        let dir = state.join("sessions").join(&self.name);
        Ok((self.base.path.clone(), dir.join("upper"), dir.join("work")))
    }
}

/// Removes every wsfs temp name left in the upper tree by a process that died mid-write (the
/// session's lock says no other writer is alive).
fn sweep_upper(dir: &Dir) -> io::Result<()> {
    let mut found = Vec::new();
    for entry in dir.entries()? {
        let entry = entry?;
        found.push((entry.file_name(), entry.file_type()?.is_dir()));
    }
    for (name, is_dir) in found {
        if is_temp_name(name.as_bytes()) {
            remove_entry(dir, &names::encode(name.as_bytes()))?;
        } else if is_dir {
            let sub = Dir::from(crate::sandbox::sys::open_child_dir(
                dir.as_fd(),
                name.as_bytes(),
            )?);
            sweep_upper(&sub)?;
        }
    }
    Ok(())
}

/// Appends the session path of every entry below `dir` (which is the session path `rel`) to
/// `out`, deepest first.
pub fn list_upper(dir: &Dir, rel: &str, out: &mut Vec<String>) -> io::Result<()> {
    for entry in dir.entries()? {
        let entry = entry?;
        let name = entry.file_name();
        if is_temp_name(name.as_bytes()) {
            continue;
        }
        let path = join_raw(rel, &name);
        if entry.file_type()?.is_dir() {
            let sub = Dir::from(crate::sandbox::sys::open_child_dir(
                dir.as_fd(),
                name.as_bytes(),
            )?);
            list_upper(&sub, &path, out)?;
        }
        out.push(path);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn session_paths_are_escaped_names_that_read_back_to_the_raw_path() {
        let raw = OsStr::from_bytes(b"d\xff/caf\\xe9/caf\xe9.txt");
        let rel = session_path(Path::new(raw));
        assert_eq!(rel, r"d\xff/caf\\xe9/caf\xe9.txt");
        assert_eq!(split_rel(&rel).unwrap().len(), 3);
        assert_eq!(fs_path(&rel).unwrap().as_ref(), raw.as_bytes());
        assert_eq!(fs_name(r"caf\\xe9").unwrap().as_bytes(), b"caf\\xe9");
        assert_eq!(session_path(Path::new("")), "");
        // A plain path is itself, borrowed.
        assert!(matches!(
            fs_path("a/b.txt").unwrap(),
            Cow::Borrowed(b"a/b.txt")
        ));
        // One file, one session path: another spelling is refused, and made canonical for a
        // host's selection.
        assert!(split_rel(r"d\xFF/x").is_err());
        assert_eq!(canonical(r"d\xFF/x").unwrap(), r"d\xff/x");
        assert_eq!(canonical("C:\\temp").unwrap(), "C:\\temp");
        for bad in [
            r"a\xff\x2fb",
            r"a\xff\x00",
            r".wsfs-0123456789abcdef.tmp",
            "a//b",
            "",
        ] {
            assert!(split_rel(bad).is_err(), "{bad}");
            assert!(canonical(bad).is_err(), "{bad}");
        }
        assert_eq!(
            join_raw(r"d\xff", OsStr::from_bytes(b"\xfe")),
            r"d\xff/\xfe"
        );
        assert_eq!(store::upgrade_path(r"a/lit\xe9/b"), r"a/lit\\xe9/b");
        assert_eq!(store::upgrade_path(r"C:\temp/x"), r"C:\temp/x");
    }
}
