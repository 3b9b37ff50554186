//! The record of the directories a call is making, so that a call killed part-way leaves none
//! of them behind: the next open of the workspace removes those still empty.
//!
//! - A call about to make directories (the missing parents of `write_file`, `append_file`,
//!   `create_directory`, `move_file`'s `dst`, `apply_patch`'s added files) first writes them
//!   to a record in the state directory, `<state_dir>/<workspace id>.<16 hex>.dirs`, and
//!   fdatasyncs it. The record is held under an exclusive `flock` for the whole call, and
//!   removed when the call ends, whether it succeeded or failed (a failed call has removed
//!   its directories itself). Calls that make no directory never touch it.
//! - Each directory is made under a wsfs temp name, its identity (device, inode and, where the
//!   file system keeps it, birth time: a freed inode number is given to the next directory
//!   made) is appended to the record, and only then is it renamed to its name
//!   (`RENAME_NOREPLACE`). So at every
//!   moment the call's own directories can be told from anybody else's: a temp name in the
//!   record is the call's, and a named directory is the call's only if the name holds the
//!   identity recorded for it.
//! - At open, every record of this workspace that no live call holds (in this process or
//!   another) is replayed innermost first: each of its directories is removed if it is the
//!   call's and empty (`rmdir` itself refuses a directory that is not), then the record goes.
//!   A call killed after its commit point left its directories holding what it committed, so
//!   they stay.
//!
//! The record lives beside the workspaces' state directories rather than in this one's, so a
//! workspace that never needs a journal leaves nothing in the state directory.

use super::state_dir as state;
use crate::root::{Anchor, Root};
use crate::tempfile::{is_temp_name, random_u64};
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, Mode, OFlags};
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Path, PathBuf};
use std::sync::LazyLock;
use std::sync::{Arc, Mutex};

const HEADER: &str = "wsfs-new-dirs 1";

/// A record's name: `<id>.<16 hex>.dirs`.
fn record_name(id: &OsStr) -> OsString {
    let mut name = id.to_os_string();
    name.push(format!(".{:016x}.dirs", random_u64()));
    name
}

/// Whether `name` is a record of the workspace `id`.
fn is_record_of(name: &[u8], id: &[u8]) -> bool {
    let Some(rest) = name.strip_prefix(id).and_then(|r| r.strip_prefix(b".")) else {
        return false;
    };
    let Some(hex) = rest.strip_suffix(b".dirs") else {
        return false;
    };
    hex.len() == 16 && hex.iter().all(|b| b.is_ascii_hexdigit())
}

/// One directory a call intends to make: `name` inside `parent` (anchor-relative, resolved:
/// no symlink, no `..`), made first as `temp`.
pub struct Intent<'a> {
    pub parent: &'a Path,
    pub name: &'a OsStr,
    pub temp: &'a str,
}

/// A call's record (see the module documentation). Dropping it removes it.
pub struct DirRecord {
    file: File,
    base: Arc<Dir>,
    name: OsString,
    /// The first line, until it is written with the first intents (one write for both).
    header: Option<String>,
    /// Intents written so far (the next one's index).
    intents: u32,
    /// The parent of the last intent written and its name: the next intent inside that
    /// directory is written without repeating the path.
    last: Option<PathBuf>,
    /// Left in place when dropped (`abandon`).
    keep: bool,
}

impl std::fmt::Debug for DirRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DirRecord")
            .field("name", &self.name)
            .finish()
    }
}

impl DirRecord {
    /// Starts a record for a call beneath `root` that is about to make directories: `None` when the
    /// workspace has no state directory, or it cannot be used (the call then goes on without
    /// one, as before records existed).
    pub fn begin(root: &Root) -> Option<DirRecord> {
        let (base_path, id) = state::base_and_id(&root.state)?;
        let started = base(root, base_path).and_then(|base| create(root, base, id));
        match started {
            Ok(record) => Some(record),
            Err(e) => {
                log::warn!(
                    target: "wsfs",
                    "the directories this call makes are not recorded; a crash could leave them: error={e}"
                );
                None
            }
        }
    }

    /// Writes `intents`, in the order they will be made, and makes them durable.
    pub fn intend(&mut self, intents: &[Intent<'_>]) -> io::Result<u32> {
        let first = self.intents;
        let mut text = self
            .header
            .take()
            .map(String::into_bytes)
            .unwrap_or_default();
        for intent in intents {
            let parent = match &self.last {
                Some(last) if last.as_path() == intent.parent => "-".to_string(),
                _ => hex(intent.parent.as_os_str().as_bytes()),
            };
            let name = hex(intent.name.as_bytes());
            text.extend_from_slice(format!("dir {parent} {name} {}\n", intent.temp).as_bytes());
            self.last = Some(intent.parent.join(intent.name));
        }
        (&self.file).write_all(&text)?;
        self.file.sync_data()?;
        self.intents += intents.len() as u32;
        Ok(first)
    }

    /// Records the identity of the directory made for intent `index`, whose metadata is
    /// `meta` (before it gets its name). Not synced: the record guards against
    /// the process being killed, and a power failure in that moment leaves the directory as
    /// it would have been left without a record.
    pub fn made(&mut self, index: u32, meta: &cap_std::fs::Metadata) -> io::Result<()> {
        use cap_std::fs::MetadataExt;
        let born = match born(meta) {
            Some((sec, nsec)) => format!("{sec}.{nsec}"),
            None => "-".to_string(),
        };
        let line = format!("made {index} {} {} {born}\n", meta.dev(), meta.ino());
        (&self.file).write_all(line.as_bytes())
    }

    /// For tests: ends the record as a killed process would, leaving it (unlocked) for the
    /// next open.
    pub fn abandon(mut self) {
        self.keep = true;
    }
}

impl Drop for DirRecord {
    fn drop(&mut self) {
        if self.keep {
            return;
        }
        // Removed while still locked, so no recovery can take it for a dead call's.
        if let Err(e) = rustix::fs::unlinkat(&*self.base, &self.name, AtFlags::empty()) {
            log::warn!(target: "wsfs", "removing a record of new directories failed: error={e}");
        }
    }
}

/// The state directories' base, opened (and created) outside the workspace once per
/// workspace, then kept: a directory checked to be outside stays outside.
fn base(root: &Root, path: &Path) -> io::Result<Arc<Dir>> {
    if let Some(pinned) = &root.state_pinned {
        return Ok(Arc::new(pinned.open(true)?));
    }
    if let Some(dir) = root.records_dir.get() {
        return Ok(dir.clone());
    }
    let dir = Arc::new(state::open_outside(&root.dir, path)?);
    Ok(root.records_dir.get_or_init(|| dir).clone())
}

/// A new record, locked, and checked under the lock to be the file its name holds (an open
/// in another process could otherwise recover it between the create and the lock).
fn create(root: &Root, base: Arc<Dir>, id: &OsStr) -> io::Result<DirRecord> {
    let mut last_error = io::Error::other("no attempt");
    for _ in 0..4 {
        let name = record_name(id);
        let flags = OFlags::RDWR | OFlags::CREATE | OFlags::EXCL | OFlags::CLOEXEC;
        let fd = match rustix::fs::openat(&*base, &name, flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => fd,
            Err(e) => {
                last_error = e.into();
                continue;
            }
        };
        let file = File::from(fd);
        if file.try_lock().is_err() || !names_file(&base, &name, &file) {
            last_error = io::Error::other("a record was taken by another open");
            continue;
        }
        let anchor = match root.restrict {
            true => "root",
            false => "host",
        };
        let root = hex(root.path.as_os_str().as_bytes());
        return Ok(DirRecord {
            file,
            base,
            name,
            header: Some(format!("{HEADER} {anchor} {root}\n")),
            intents: 0,
            last: None,
            keep: false,
        });
    }
    Err(last_error)
}

/// When a directory was made, from its metadata, where the file system keeps it.
fn born(meta: &cap_std::fs::Metadata) -> Option<(i64, u32)> {
    let since = meta
        .created()
        .ok()?
        .into_std()
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?;
    Some((i64::try_from(since.as_secs()).ok()?, since.subsec_nanos()))
}

/// When `name` in `dir` was made, where the file system keeps it (`statx`, as `born`).
fn birth_time(dir: impl AsFd, name: &OsStr) -> Option<(i64, u32)> {
    use rustix::fs::StatxFlags;
    let flags = AtFlags::SYMLINK_NOFOLLOW;
    let st = rustix::fs::statx(dir, name, flags, StatxFlags::BTIME).ok()?;
    let born = st.stx_mask & StatxFlags::BTIME.bits() != 0;
    born.then_some((st.stx_btime.tv_sec, st.stx_btime.tv_nsec))
}

/// Whether `name` in `dir` is still the file `file` is open on.
fn names_file(dir: &Dir, name: &OsStr, file: &File) -> bool {
    let named = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW);
    let open = rustix::fs::fstat(file);
    matches!((named, open), (Ok(a), Ok(b)) if (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino))
}

fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        let _ = write!(out, "{b:02x}");
    }
    out
}

fn unhex(text: &str) -> Option<Vec<u8>> {
    if !text.len().is_multiple_of(2) {
        return None;
    }
    (0..text.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(text.get(i..i + 2)?, 16).ok())
        .collect()
}

/// One directory of a record, as read back.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Recorded {
    parent: PathBuf,
    name: OsString,
    temp: String,
    made: Option<Made>,
}

/// The identity recorded for a directory a call made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Made {
    dev: u64,
    ino: u64,
    born: Option<(i64, u32)>,
}

/// A record read back: its anchor, root and directories, in the order they were made.
#[derive(Debug, PartialEq, Eq)]
struct Parsed {
    anchor: Anchor,
    root: PathBuf,
    dirs: Vec<Recorded>,
}

/// Reads a record. Lines after a malformed one are ignored (a record is appended to with
/// whole-line writes, so only its end can be missing).
fn parse(text: &str) -> Option<Parsed> {
    let mut lines = text.split_terminator('\n');
    let mut header = lines.next()?.rsplitn(3, ' ');
    let root = PathBuf::from(OsString::from_vec(unhex(header.next()?)?));
    let anchor = match header.next()? {
        "root" => Anchor::Root,
        "host" => Anchor::Host,
        _ => return None,
    };
    if header.next()? != HEADER {
        return None;
    }
    let mut dirs: Vec<Recorded> = Vec::new();
    for line in lines {
        let fields: Vec<&str> = line.split(' ').collect();
        match fields.as_slice() {
            ["dir", parent, name, temp] => {
                let parent = match *parent {
                    "-" => {
                        let last = dirs.last()?;
                        last.parent.join(&last.name)
                    }
                    hexed => PathBuf::from(OsString::from_vec(unhex(hexed)?)),
                };
                let name = OsString::from_vec(unhex(name)?);
                if !is_single_name(&name) || !is_temp_name(temp.as_bytes()) {
                    return Some(Parsed { anchor, root, dirs });
                }
                dirs.push(Recorded {
                    parent,
                    name,
                    temp: temp.to_string(),
                    made: None,
                });
            }
            ["made", index, dev, ino, born] => {
                let (Ok(index), Ok(dev), Ok(ino)) =
                    (index.parse::<usize>(), dev.parse(), ino.parse())
                else {
                    break;
                };
                let born = match born.split_once('.') {
                    Some((sec, nsec)) => match (sec.parse(), nsec.parse()) {
                        (Ok(sec), Ok(nsec)) => Some((sec, nsec)),
                        _ => break,
                    },
                    None if *born == "-" => None,
                    None => break,
                };
                match dirs.get_mut(index) {
                    Some(dir) => dir.made = Some(Made { dev, ino, born }),
                    None => break,
                }
            }
            _ => break,
        }
    }
    Some(Parsed { anchor, root, dirs })
}

/// A name a directory can have: not empty, no `/`, not `.` or `..`.
fn is_single_name(name: &OsStr) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty() && !bytes.contains(&b'/') && bytes != b"." && bytes != b".."
}

/// Records longer than this are not read (a call's paths are bounded; this is far above).
const MAX_RECORD_BYTES: u64 = 64 << 20;

/// At the workspace's open: removes the directories that calls killed part-way left, from the
/// records no live call holds. Returns warnings for records that could not be replayed (they
/// are retried at the next open).
pub fn recover_all(root: &Root) -> Vec<String> {
    let mut warnings = Vec::new();
    let Some((base_path, id)) = state::base_and_id(&root.state) else {
        return warnings;
    };
    let found = match &root.state_pinned {
        Some(pinned) => pinned.open(true).map(Some),
        None => state::open_existing_outside(&root.dir, base_path),
    };
    let base = match found {
        Ok(Some(dir)) => Arc::new(dir),
        Ok(None) => return warnings,
        Err(e) => {
            warnings.push(format!(
                "cannot check the state directory for directories left by an interrupted call: {e}"
            ));
            return warnings;
        }
    };
    let _ = root.records_dir.set(base.clone());
    let Ok(entries) = base.entries() else {
        return warnings;
    };
    let mut names: Vec<OsString> = entries
        .filter_map(|e| Some(e.ok()?.file_name()))
        .filter(|name| is_record_of(name.as_bytes(), id.as_bytes()))
        .collect();
    names.sort();
    for name in names {
        if let Err(e) = recover_one(root, &base, &name) {
            warnings.push(format!(
                "the directories an interrupted call made could not all be checked ({e}); \
                 this is retried when the workspace is next opened"
            ));
        }
    }
    warnings
}

fn recover_one(root: &Root, base: &Dir, name: &OsStr) -> io::Result<()> {
    let flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    let file = match rustix::fs::openat(base, name, flags, Mode::empty()) {
        Ok(fd) => File::from(fd),
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    // A live call's (in this process or another), or taken meanwhile: not ours to replay.
    if !crate::sys::lock_unless_held(&file) || !names_file(base, name, &file) {
        return Ok(());
    }
    let mut text = String::new();
    (&file).take(MAX_RECORD_BYTES).read_to_string(&mut text)?;
    let parsed = match parse(&text) {
        Some(parsed) => parsed,
        // Killed before its header was written: it made nothing yet.
        None if text.is_empty() => return remove_record(base, name),
        None => return Err(io::Error::other("the record is not readable")),
    };
    if parsed.root != root.path {
        return Ok(()); // another root whose id collides: not ours to touch
    }
    let anchor_dir = match parsed.anchor {
        Anchor::Root => root.dir.as_fd().try_clone_to_owned()?,
        Anchor::Host => rustix::fs::open(
            "/",
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )?,
    };
    for dir in parsed.dirs.iter().rev() {
        remove_if_ours(&anchor_dir, dir, root.is_view());
    }
    remove_record(base, name)
}

fn remove_record(base: &Dir, name: &OsStr) -> io::Result<()> {
    match rustix::fs::unlinkat(base, name, AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

/// Removes `dir`'s temp name and its name, each if it is the call's and empty. The parent is
/// opened beneath the anchor with no symlink on the way; anything unexpected leaves it be.
fn remove_if_ours(anchor_dir: &OwnedFd, dir: &Recorded, new_device: bool) {
    let rel = dir.parent.as_os_str().as_bytes();
    let Ok(parent) = crate::sys::reopen_beneath(anchor_dir.as_fd(), rel) else {
        return;
    };
    let is_dir = |name: &OsStr| {
        rustix::fs::statat(&parent, name, AtFlags::SYMLINK_NOFOLLOW)
            .ok()
            .filter(|st| rustix::fs::FileType::from_raw_mode(st.st_mode).is_dir())
            .map(|st| (st.st_dev, st.st_ino))
    };
    let mut removed = false;
    if is_dir(OsStr::new(&dir.temp)).is_some() {
        removed |= rustix::fs::unlinkat(&parent, dir.temp.as_str(), AtFlags::REMOVEDIR).is_ok();
    }
    if let Some(made) = dir.made {
        let same_inode = is_dir(&dir.name)
            .is_some_and(|(dev, ino)| ino == made.ino && (new_device || dev == made.dev));
        let same_birth = || made.born.is_none() || birth_time(&parent, &dir.name) == made.born;
        if same_inode && same_birth() {
            removed |= rustix::fs::unlinkat(&parent, &dir.name, AtFlags::REMOVEDIR).is_ok();
        }
    }
    if removed {
        let _ = rustix::fs::fsync(&parent);
    }
}

/// Roots whose next directory-making call stops, for tests, as if the process were killed
/// once its directories are made: they and its record stay for the next open.
static ABANDON: LazyLock<Mutex<HashSet<PathBuf>>> = LazyLock::new(Default::default);

/// Arms (or, with `false`, disarms) that stop for the workspace whose canonical root is
/// `root`. It fires once.
pub fn abandon_next_new_dirs(root: &Path, armed: bool) {
    let mut roots = ABANDON.lock().unwrap_or_else(|p| p.into_inner());
    match armed {
        true => roots.insert(root.to_path_buf()),
        false => roots.remove(root),
    };
}

/// Whether the stop is armed for `root` (and disarms it).
pub fn take_abandon(root: &Path) -> bool {
    let mut roots = ABANDON.lock().unwrap_or_else(|p| p.into_inner());
    !roots.is_empty() && roots.remove(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_read_back_and_stop_at_a_torn_line() {
        let root = hex(b"/ws");
        let text = format!(
            "{HEADER} root {root}\n\
             dir {} {} .wsfs-0123456789abcdef.tmp\n\
             made 0 1 2 -\n\
             dir - {} .wsfs-0123456789abcde0.tmp\n\
             made 1 1 3 1700000000.5\n\
             dir {} {} .wsfs-0123456789abcde1.tmp\n\
             made 2 1 4",
            hex(b""),
            hex(b"a"),
            hex(b"b\nc"),
            hex(b"x/y"),
            hex(b"z"),
        );
        let parsed = parse(&text).unwrap();
        assert_eq!(parsed.anchor, Anchor::Root);
        assert_eq!(parsed.root, PathBuf::from("/ws"));
        let got: Vec<_> = parsed
            .dirs
            .iter()
            .map(|d| (d.parent.clone(), d.name.clone(), d.made))
            .collect();
        let made = |ino, born| Some(Made { dev: 1, ino, born });
        assert_eq!(
            got,
            [
                (PathBuf::new(), OsString::from("a"), made(2, None)),
                (
                    PathBuf::from("a"),
                    OsString::from("b\nc"),
                    made(3, Some((1_700_000_000, 5)))
                ),
                (PathBuf::from("x/y"), OsString::from("z"), None),
            ]
        );
        // Names that are not one directory's, and temp names that are not wsfs's, end it.
        for bad in [hex(b".."), hex(b"a/b"), String::new()] {
            let text = format!(
                "{HEADER} root {root}\ndir {} {bad} .wsfs-0123456789abcdef.tmp\n",
                hex(b"")
            );
            assert!(parse(&text).unwrap().dirs.is_empty(), "{bad}");
        }
        let text = format!(
            "{HEADER} root {root}\ndir {} {} x.tmp\n",
            hex(b""),
            hex(b"a")
        );
        assert!(parse(&text).unwrap().dirs.is_empty());
        assert!(parse("something else\n").is_none());
    }

    #[test]
    fn record_names_belong_to_one_workspace() {
        let id = OsStr::new("ws-0123456789abcdef");
        let name = record_name(id);
        assert!(is_record_of(name.as_bytes(), id.as_bytes()));
        assert!(!is_record_of(name.as_bytes(), b"ws-0123456789abcdee"));
        assert!(!is_record_of(b"ws-0123456789abcdef.journal", id.as_bytes()));
        assert!(!is_record_of(
            b"ws-0123456789abcdef.0123.dirs",
            id.as_bytes()
        ));
    }
}
