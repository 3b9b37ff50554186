//! The session's durable bookkeeping: the touch log (base fingerprints and what changed since
//! the last checkpoint), the content store of base originals (for three-way merges) and the
//! small atomic files (intents, checkpoint metadata).
//!
//! **The touch log** (`meta/touched.log`) is append-only: one JSON line per record, written
//! with one `write` on an `O_APPEND` descriptor and made durable with `fdatasync` before the
//! change it announces is made. Records: `t` (first touch: the base fingerprint, kept only if
//! the path has none yet), `s` (set the fingerprint: after a commit or a rewind), `f` (forget
//! the path: it left the session), `d` (changed again), `c` (a checkpoint was taken, written
//! by older versions and by compaction), `a` (compaction's copy of a `t`'s `i`: the path was
//! not in the session at checkpoint `i`), `r` (a rewind to checkpoint `i` consumed the images
//! of it and of the later ones), `k` (a commit of this session left the base of the path with
//! this fingerprint: kept across rewinds, which bring back older fingerprints, so that the
//! session's own commit is not taken for another writer's change; `Touched::committed`).
//! Every record but `c`, `a`, `r` and `k` marks its path as changed.
//! `v` (the first line, `i` = 2): the paths are session paths, each name in the escaped form
//! the tools show (`overlay` module documentation); a log without it was written before, with
//! plain UTF-8 paths, and is rewritten with escaped paths at open (`Touched::upgraded`).
//! Folding the log at open gives the fingerprints and, while the session has no checkpoint,
//! the paths changed (once there is one, the newest checkpoint's image log says which paths
//! changed since: `checkpoint.rs`; no `d` or `c` record is written then). A torn last line (a
//! crash during the append, before the change was made) is dropped.
//! Why a log and not a file per path: a first touch costs one small append and one
//! `fdatasync` of one file, instead of a create, a write, an fsync of the file and one of its
//! directory; the log is rewritten (compacted, atomically) when it holds four times more
//! records than live paths.

use crate::lines::sha256_hex;
use crate::sandbox::tempfile::Staged;
use cap_std::fs::Dir;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::io::{self, Read, Write};
use std::os::fd::AsFd;

pub const LOG_NAME: &str = "touched.log";

/// Largest base file whose content a fingerprint hashes; a larger one is fingerprinted by its
/// stat fields alone (device, inode, size, mtime, ctime, mode), which any change moves.
pub const MAX_HASHED_BYTES: u64 = 64 << 20;

/// The state of a base path when the session first touched it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// `absent`, `file`, `dir`, `symlink` or `other`.
    pub kind: String,
    #[serde(default)]
    pub dev: u64,
    #[serde(default)]
    pub ino: u64,
    #[serde(default)]
    pub size: u64,
    #[serde(default)]
    pub mtime_ns: i128,
    #[serde(default)]
    pub ctime_ns: i128,
    #[serde(default)]
    pub mode: u32,
    /// SHA-256 of a file's content (of a symlink's target); `None` for the rest.
    #[serde(default)]
    pub sha256: Option<String>,
}

impl Fingerprint {
    pub fn absent() -> Fingerprint {
        Fingerprint {
            kind: "absent".into(),
            dev: 0,
            ino: 0,
            size: 0,
            mtime_ns: 0,
            ctime_ns: 0,
            mode: 0,
            sha256: None,
        }
    }

    pub fn is_absent(&self) -> bool {
        self.kind == "absent"
    }

    /// Whether `self` and `other` describe the same base entry: every stat field and the
    /// content hash.
    pub fn same(&self, other: &Fingerprint) -> bool {
        self == other
    }

    /// Whether the stat fields agree (then the content is taken to be the same: the ctime
    /// cannot be set back by a user).
    pub fn same_stat(&self, other: &Fingerprint) -> bool {
        self.kind == other.kind
            && self.dev == other.dev
            && self.ino == other.ino
            && self.size == other.size
            && self.mtime_ns == other.mtime_ns
            && self.ctime_ns == other.ctime_ns
            && self.mode == other.mode
    }
}

/// The fingerprint of `name` in the base directory `dir` (`None` dir: its parent is missing,
/// so it is absent), never following a symlink. `keep` receives a regular file's content
/// while it is hashed (the originals store), when given.
pub fn fingerprint_at(
    dir: Option<&Dir>,
    name: &OsStr,
    mut keep: Option<&mut Vec<u8>>,
) -> io::Result<Fingerprint> {
    let Some(dir) = dir else {
        return Ok(Fingerprint::absent());
    };
    // An entry replaced between its `lstat` and the read of its content (a file swapped for
    // a symlink, a symlink for a directory) is fingerprinted again, as it is now.
    let mut tries = 0;
    loop {
        if let Some(k) = keep.as_deref_mut() {
            k.clear();
        }
        match fingerprint_once(dir, name, keep.as_deref_mut()) {
            Err(e) if replaced(&e) && tries < MAX_REREADS => tries += 1,
            other => return other,
        }
    }
}

/// How many times `fingerprint_at` reads an entry that keeps being replaced.
const MAX_REREADS: u32 = 8;

/// Whether reading an entry's content failed because it is no longer what its `lstat` saw:
/// `EINVAL` (a symlink's target read from something else, or `open_file` finding no regular
/// file), `ELOOP` (a file that became a symlink), `ENOENT` (gone), or another inode.
fn replaced(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EINVAL | libc::ELOOP | libc::ENOENT | libc::ENXIO)
    ) || e.to_string() == REPLACED
}

const REPLACED: &str = "the base file was replaced while it was read";

fn fingerprint_once(
    dir: &Dir,
    name: &OsStr,
    mut keep: Option<&mut Vec<u8>>,
) -> io::Result<Fingerprint> {
    use rustix::fs::{AtFlags, FileType};
    let stat = match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(s) => s,
        Err(rustix::io::Errno::NOENT) => return Ok(Fingerprint::absent()),
        Err(e) => return Err(e.into()),
    };
    let kind = FileType::from_raw_mode(stat.st_mode);
    let mut fp = stat_fingerprint(&stat);
    match kind {
        // Too large to hash at a touch (a sparse 10 GiB file): its stat fields decide.
        FileType::RegularFile if stat.st_size as u64 > MAX_HASHED_BYTES => {}
        FileType::RegularFile => {
            let file = crate::sandbox::sys::open_file(dir.as_fd(), name.as_encoded_bytes())?;
            let after = rustix::fs::fstat(&file)?;
            if (after.st_dev, after.st_ino) != (stat.st_dev, stat.st_ino) {
                return Err(io::Error::other(REPLACED));
            }
            fp = stat_fingerprint(&after);
            let mut hasher = Sha256Stream::default();
            let mut buf = vec![0u8; 1 << 16];
            let mut file = file;
            loop {
                let n = file.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                hasher.update(&buf[..n]);
                if let Some(k) = keep.as_deref_mut() {
                    k.extend_from_slice(&buf[..n]);
                }
            }
            fp.sha256 = Some(hasher.finish());
        }
        FileType::Symlink => {
            let target = rustix::fs::readlinkat(dir, name, Vec::new())?;
            let after = rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW)?;
            if (after.st_dev, after.st_ino) != (stat.st_dev, stat.st_ino) {
                return Err(io::Error::other(REPLACED));
            }
            fp.sha256 = Some(sha256_hex(target.as_bytes()));
        }
        _ => {}
    }
    Ok(fp)
}

pub fn stat_fingerprint(stat: &rustix::fs::Stat) -> Fingerprint {
    use rustix::fs::FileType;
    let kind = match FileType::from_raw_mode(stat.st_mode) {
        FileType::RegularFile => "file",
        FileType::Directory => "dir",
        FileType::Symlink => "symlink",
        _ => "other",
    };
    Fingerprint {
        kind: kind.into(),
        dev: stat.st_dev,
        ino: stat.st_ino,
        size: u64::try_from(stat.st_size).unwrap_or(0),
        mtime_ns: i128::from(stat.st_mtime) * 1_000_000_000 + i128::from(stat.st_mtime_nsec),
        ctime_ns: i128::from(stat.st_ctime) * 1_000_000_000 + i128::from(stat.st_ctime_nsec),
        mode: stat.st_mode & 0o7777,
        sha256: None,
    }
}

/// SHA-256 over pieces (sha2, as `lines::sha256_hex`).
#[derive(Default)]
pub struct Sha256Stream(sha2::Sha256);

impl Sha256Stream {
    pub fn update(&mut self, bytes: &[u8]) {
        use sha2::Digest;
        self.0.update(bytes);
    }

    pub fn finish(self) -> String {
        use sha2::Digest;
        let digest = self.0.finalize();
        let mut out = String::with_capacity(64);
        for b in digest.iter() {
            out.push_str(&format!("{b:02x}"));
        }
        out
    }
}

/// One line of the touch log.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Record {
    pub op: char,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fp: Option<Fingerprint>,
    /// `t` and `a`: the checkpoint whose epoch the first touch was in (the path was not in
    /// the session at that checkpoint: its before-image there is "absent"); `r`: a rewind
    /// to this checkpoint consumed the images of it and of the later ones.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub i: Option<u64>,
}

impl Record {
    pub fn line(&self) -> Vec<u8> {
        let mut line = serde_json::to_vec(self).expect("a record serializes");
        line.push(b'\n');
        line
    }
}

/// The folded touch log.
#[derive(Debug, Default)]
pub struct Touched {
    /// Every path the session holds a base fingerprint for.
    pub fps: BTreeMap<String, Fingerprint>,
    /// Paths changed (since the last `c`): what changed before the first checkpoint.
    pub dirty: BTreeSet<String>,
    /// Records in the log (for compaction).
    pub records: usize,
    /// Per checkpoint, the paths first touched in its epoch while not in the session (their
    /// before-image at that checkpoint is "absent", kept here rather than in its image log).
    pub absent: BTreeMap<u64, BTreeSet<String>>,
    /// Per path this session committed, the base fingerprint its last commit of the path
    /// left (`k` records). A rewind restores `fps` as they were at a checkpoint, but the base
    /// does not go back: a base that is still as the session's own commit left it is no
    /// conflict (`commit.rs`).
    pub committed: BTreeMap<String, Fingerprint>,
    /// The log says its paths are escaped (its `v` record).
    pub escaped: bool,
}

/// The `i` of the `v` record: paths escaped as the tools show names.
pub const ESCAPED_PATHS: u64 = 2;

/// The `v` record that starts every log written since paths are escaped.
pub fn version_record() -> Record {
    Record {
        op: 'v',
        path: None,
        fp: None,
        i: Some(ESCAPED_PATHS),
    }
}

/// A path recorded before paths were escaped (plain UTF-8, each name as it is) as a session
/// path: each name escaped as the tools show it. Only a name that looks escaped itself (a
/// literal `\xNN` sequence standing for bytes that are not UTF-8) changes.
pub fn upgrade_path(old: &str) -> String {
    if !old.contains('\\') {
        return old.to_string();
    }
    old.split('/')
        .map(|name| crate::names::encode(name.as_bytes()))
        .collect::<Vec<_>>()
        .join("/")
}

impl Touched {
    pub fn apply(&mut self, r: &Record) {
        self.records += 1;
        match (r.op, &r.path) {
            ('v', _) => self.escaped = r.i == Some(ESCAPED_PATHS),
            ('c', _) => self.dirty.clear(),
            ('t', Some(p)) => {
                if let Some(fp) = &r.fp {
                    self.fps.entry(p.clone()).or_insert_with(|| fp.clone());
                }
                if let Some(i) = r.i {
                    self.absent.entry(i).or_default().insert(p.clone());
                }
                self.dirty.insert(p.clone());
            }
            ('a', Some(p)) => {
                if let Some(i) = r.i {
                    self.absent.entry(i).or_default().insert(p.clone());
                }
            }
            ('r', _) => {
                if let Some(i) = r.i {
                    self.absent.retain(|&e, _| e < i);
                }
            }
            ('s', Some(p)) => {
                if let Some(fp) = &r.fp {
                    self.fps.insert(p.clone(), fp.clone());
                }
                self.dirty.insert(p.clone());
            }
            ('f', Some(p)) => {
                self.fps.remove(p);
                self.dirty.insert(p.clone());
            }
            ('d', Some(p)) => {
                self.dirty.insert(p.clone());
            }
            ('k', Some(p)) => {
                if let Some(fp) = &r.fp {
                    self.committed.insert(p.clone(), fp.clone());
                }
            }
            _ => {}
        }
    }

    /// This state of a log written before paths were escaped, its paths escaped.
    pub fn upgraded(self) -> Touched {
        let set = |s: BTreeSet<String>| s.iter().map(|p| upgrade_path(p)).collect();
        Touched {
            fps: self
                .fps
                .into_iter()
                .map(|(p, fp)| (upgrade_path(&p), fp))
                .collect(),
            dirty: set(self.dirty),
            records: self.records,
            absent: self.absent.into_iter().map(|(i, s)| (i, set(s))).collect(),
            committed: self
                .committed
                .into_iter()
                .map(|(p, fp)| (upgrade_path(&p), fp))
                .collect(),
            escaped: true,
        }
    }

    /// The log's content for this state, compacted.
    pub fn compacted(&self) -> Vec<u8> {
        let mut out = version_record().line();
        for (p, fp) in &self.fps {
            out.extend(
                Record {
                    op: 's',
                    path: Some(p.clone()),
                    fp: Some(fp.clone()),
                    i: None,
                }
                .line(),
            );
        }
        for (p, fp) in &self.committed {
            out.extend(
                Record {
                    op: 'k',
                    path: Some(p.clone()),
                    fp: Some(fp.clone()),
                    i: None,
                }
                .line(),
            );
        }
        for (i, paths) in &self.absent {
            for p in paths {
                out.extend(
                    Record {
                        op: 'a',
                        path: Some(p.clone()),
                        fp: None,
                        i: Some(*i),
                    }
                    .line(),
                );
            }
        }
        out.extend(
            Record {
                op: 'c',
                path: None,
                fp: None,
                i: None,
            }
            .line(),
        );
        for p in &self.dirty {
            out.extend(
                Record {
                    op: 'd',
                    path: Some(p.clone()),
                    fp: None,
                    i: None,
                }
                .line(),
            );
        }
        out
    }
}

/// The newest checkpoint's epoch (`checkpoint.rs`): the paths whose before-image it holds,
/// and its image log.
#[derive(Debug)]
pub struct Epoch {
    pub id: u64,
    pub captured: BTreeSet<String>,
    pub file: std::fs::File,
    /// Bytes written; `synced` of them durable, the rest by the paths in `pending`.
    pub len: u64,
    pub synced: u64,
    pub pending: Vec<String>,
}

impl Epoch {
    pub fn new(id: u64, file: std::fs::File, captured: BTreeSet<String>, len: u64) -> Epoch {
        Epoch {
            id,
            captured,
            file,
            len,
            synced: len,
            pending: Vec::new(),
        }
    }
}

/// Reads and folds the log; a torn or unparsable last line is dropped (its change was never
/// made), an unparsable line before it is an error.
pub fn read_log(meta: &Dir) -> io::Result<Touched> {
    let bytes = match meta.read(LOG_NAME) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(e),
    };
    let mut touched = Touched::default();
    let lines: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        if line.is_empty() {
            continue;
        }
        match serde_json::from_slice::<Record>(line) {
            Ok(r) if i < last => touched.apply(&r),
            // No newline after it: torn.
            Ok(_) => {}
            Err(_) if i >= last => {}
            Err(e) => {
                return Err(io::Error::other(format!(
                    "the session's touch log is damaged at line {}: {e}",
                    i + 1
                )))
            }
        }
    }
    Ok(touched)
}

/// Cuts a torn last line (a crash during an append: its change was never made) off the
/// touch log, so that the next append does not continue it into a damaged line.
pub fn cut_torn_tail(meta: &Dir) -> io::Result<()> {
    let mut file = match meta.open_with(
        LOG_NAME,
        cap_std::fs::OpenOptions::new().read(true).write(true),
    ) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    let good = memchr::memrchr(b'\n', &bytes).map_or(0, |i| i + 1);
    if good < bytes.len() {
        file.set_len(good as u64)?;
        file.sync_all()?;
    }
    Ok(())
}

/// Writes `bytes` as `name` in `dir` atomically and durably: staged (unnamed, fsynced),
/// renamed over the name, the directory fsynced.
pub fn write_atomic(dir: &Dir, name: &str, bytes: &[u8]) -> io::Result<()> {
    let mut staged = Staged::create(dir)?;
    staged.file().write_all(bytes)?;
    staged.file().sync_all()?;
    staged.commit(OsStr::new(name), false)?;
    fsync_dir(dir)
}

/// fsync of a directory handle (which may be `O_PATH`).
pub fn fsync_dir(dir: &Dir) -> io::Result<()> {
    let fd = crate::sandbox::sys::open_readable(dir.as_fd())?;
    rustix::fs::fsync(&fd)?;
    Ok(())
}
