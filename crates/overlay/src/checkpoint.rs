//! Checkpoints and rewind, with before-images taken lazily.
//!
//! A checkpoint only records that a new **epoch** starts: `checkpoints/<n>/meta.json` (its
//! id, label, time and the paths changed since the previous checkpoint) and an empty image
//! log `checkpoints/<n>/images`, written in `.tmp-<n>`, fsynced, and renamed to `<n>` (the
//! commit point; the parent directory fsynced). Its cost does not depend on what changed.
//!
//! The before-image of a path is taken the first time the path is touched after the newest
//! checkpoint, inside `Session::touch` (every writer calls it before it changes the path; a
//! directory's replacement touches every entry below it first; a commit takes the images of
//! the paths whose session state it changes): what the upper tree held at the checkpoint
//! (nothing, a file's bytes and mode, a whiteout, a directory and whether it is opaque, a
//! symlink's target) and the path's base fingerprint record. It is appended to the newest
//! checkpoint's image log and made durable (`fdatasync`) before `touch` returns, so before
//! the change. One image is not in the image log: a path's first touch while it is not in
//! the session (no fingerprint, no upper entry) is "absent" at the checkpoint, which the
//! touch log's `t` record says itself (its `i`: the checkpoint), one append and one
//! `fdatasync` as without a checkpoint; a rewind's `r` record consumes these. A record is a JSON header line (the image; `len`, the bytes of a file's
//! content that follow), the content, and the SHA-256 (hex) of header and content on a line
//! of its own. Only the last record can be torn (each is durable before the next is
//! written): at open a torn or damaged tail is cut off (its change was never made).
//!
//! Rewinding to checkpoint k restores every path changed after k (those with an image in a
//! checkpoint at or after k) to its state at k: the image in the **oldest** checkpoint at or
//! after k that has one (a path untouched between k and that image's capture had the same
//! state then). A path with no image in any checkpoint at or after k did not change after k
//! and is left alone. Then the newer checkpoints are removed and k's image log emptied (the
//! paths are as they were at k: nothing changed since). It runs under an intent
//! (`meta/rewind.json`) and every step is idempotent, so a crash part-way is finished at the
//! next open. So a restored file may be named before it is durable: each one's writes are
//! started as it is restored, and all of them are fsynced at the end (opened again by name,
//! one at a time: no descriptor is held per file), then their directories, and only then are
//! the records written and the intent removed.
//!
//! `checkpoints` lists, for each checkpoint, the paths changed since the previous checkpoint
//! up to it (the step it closed): the rewind to the checkpoint before it undoes those paths
//! (and those of every later checkpoint and of the current epoch).

use super::session::{
    fs_name, machinery, on_path, open_beneath, open_sub, parent_leaf, Session, UpperKind,
};
use super::store::{self, Epoch, Fingerprint, Record, Sha256Stream};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::sandbox::tempfile::{temp_name, Staged};
use cap_std::fs::Dir;
use rustix::fs::Mode;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::{self, Read, Write};
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::FileExt;

const INTENT: &str = "rewind.json";
/// A checkpoint's image log.
const IMAGES: &str = "images";
/// `meta.json`'s format: 2 = lazy before-images in `images` (1, no field: before-images
/// copied at checkpoint time, which this version does not rewind to).
const FORMAT: u32 = 2;
/// Longest image header line read back.
const MAX_HEADER: u64 = 1 << 20;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckpointOptions {
    #[serde(default)]
    pub label: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckpointResult {
    pub id: String,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RewindOptions {
    pub id: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckpointInfo {
    pub id: String,
    pub label: Option<String>,
    /// RFC 3339, UTC.
    pub time: String,
    /// The paths changed since the previous checkpoint up to this one (the step it closed).
    pub paths: Vec<String>,
}

/// One path's before-image (the header of its record in an image log).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Image {
    path: String,
    /// `absent`, `file`, `whiteout`, `dir`, `symlink`.
    state: String,
    #[serde(default)]
    opaque: bool,
    #[serde(default)]
    mode: u32,
    #[serde(default)]
    target: Option<String>,
    fp: Option<Fingerprint>,
    /// A file's bytes, which follow the header line.
    #[serde(default)]
    len: u64,
    /// `path` is a session path (escaped names) and `target` escaped the same way; an image
    /// written before (plain UTF-8 path, target as UTF-8) has no field.
    #[serde(default)]
    escaped: bool,
}

/// An image read back from a log: its header and where its record starts.
#[derive(Debug, Clone)]
struct Stored {
    image: Image,
    at: u64,
    header_len: u64,
}

impl Stored {
    fn end(&self) -> u64 {
        self.at + self.header_len + self.image.len + 65
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
struct Meta {
    #[serde(default)]
    format: u32,
    id: u64,
    label: Option<String>,
    time: String,
    #[serde(default)]
    paths: Vec<String>,
    /// `paths` are session paths (escaped names); a checkpoint taken before has no field.
    #[serde(default)]
    escaped: bool,
    /// Format 1: the before-images themselves (only their paths are read).
    #[serde(default, skip_serializing)]
    entries: Vec<serde_json::Value>,
}

fn now_rfc3339() -> String {
    jiff::Timestamp::now().to_string()
}

fn damaged(what: &str) -> io::Error {
    io::Error::other(format!("a before-image of the session is damaged ({what})"))
}

/// Up to `n` bytes of `file` at `off` (fewer at its end).
fn read_at_most(file: &std::fs::File, off: u64, n: u64) -> io::Result<Vec<u8>> {
    let mut buf = vec![0u8; usize::try_from(n).unwrap_or(usize::MAX)];
    let mut got = 0;
    while got < buf.len() {
        match file.read_at(&mut buf[got..], off + got as u64) {
            Ok(0) => break,
            Ok(k) => got += k,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    buf.truncate(got);
    Ok(buf)
}

/// The record at `off` of an image log `size` bytes long; `None`: torn (or damaged) from
/// there on. The checksum is checked when `verify`.
fn parse_at(file: &std::fs::File, off: u64, size: u64, verify: bool) -> io::Result<Option<Stored>> {
    let mut want = 4096u64;
    let line = loop {
        let buf = read_at_most(file, off, want.min(size - off))?;
        if let Some(i) = memchr::memchr(b'\n', &buf) {
            break buf[..=i].to_vec();
        }
        if off + buf.len() as u64 >= size || want >= MAX_HEADER {
            return Ok(None);
        }
        want *= 4;
    };
    let Ok(mut image) = serde_json::from_slice::<Image>(&line) else {
        return Ok(None);
    };
    if !image.escaped {
        image.path = store::upgrade_path(&image.path);
    }
    let stored = Stored {
        image,
        at: off,
        header_len: line.len() as u64,
    };
    if stored.end() > size {
        return Ok(None);
    }
    if verify && !check(file, &stored, &mut io::sink())? {
        return Ok(None);
    }
    Ok(Some(stored))
}

/// Streams `stored`'s content to `out` and checks the record's checksum.
fn check(file: &std::fs::File, stored: &Stored, out: &mut dyn Write) -> io::Result<bool> {
    let mut hasher = Sha256Stream::default();
    hasher.update(&read_at_most(file, stored.at, stored.header_len)?);
    let mut off = stored.at + stored.header_len;
    let end = off + stored.image.len;
    while off < end {
        let chunk = read_at_most(file, off, (end - off).min(1 << 16))?;
        if chunk.is_empty() {
            return Ok(false);
        }
        hasher.update(&chunk);
        out.write_all(&chunk)?;
        off += chunk.len() as u64;
    }
    let trailer = read_at_most(file, end, 65)?;
    let mut want = hasher.finish().into_bytes();
    want.push(b'\n');
    Ok(trailer == want)
}

/// Every record of an image log, and the length of its intact part (a torn last record is
/// not in it; only the last record's checksum is checked here, the others' when read).
fn scan(file: &std::fs::File) -> io::Result<(Vec<Stored>, u64)> {
    let size = file.metadata()?.len();
    let mut out = Vec::new();
    let mut off = 0;
    while off < size {
        let Some(first) = parse_at(file, off, size, false)? else {
            break;
        };
        // The last record: checked whole (a crash may have left it partly written).
        if first.end() == size && !check(file, &first, &mut io::sink())? {
            break;
        }
        off = first.end();
        out.push(first);
    }
    Ok((out, off))
}

/// Appends the record of `image` (and the bytes of `src`, `image.len` of them) at `off`;
/// returns where it ends.
fn write_record(
    file: &std::fs::File,
    off: u64,
    image: &Image,
    src: Option<&mut std::fs::File>,
) -> io::Result<u64> {
    let mut header = serde_json::to_vec(image).expect("an image serializes");
    header.push(b'\n');
    let mut hasher = Sha256Stream::default();
    hasher.update(&header);
    file.write_all_at(&header, off)?;
    let mut at = off + header.len() as u64;
    if let Some(src) = src {
        let mut left = image.len;
        let mut buf = vec![0u8; 1 << 16];
        while left > 0 {
            let n = src.read(&mut buf[..usize::try_from(left.min(1 << 16)).unwrap_or(1 << 16)])?;
            if n == 0 {
                return Err(io::Error::other(
                    "the file shrank while its before-image was taken",
                ));
            }
            hasher.update(&buf[..n]);
            file.write_all_at(&buf[..n], at)?;
            at += n as u64;
            left -= n as u64;
        }
    }
    let mut trailer = hasher.finish().into_bytes();
    trailer.push(b'\n');
    file.write_all_at(&trailer, at)?;
    Ok(at + trailer.len() as u64)
}

fn open_images(dir: &Dir, create: bool) -> io::Result<std::fs::File> {
    Ok(dir
        .open_with(
            IMAGES,
            cap_std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(create),
        )?
        .into_std())
}

impl Session {
    /// The ids of the checkpoints, oldest first.
    fn checkpoint_ids(&self) -> Result<Vec<u64>> {
        let entries = self
            .ckpts
            .entries()
            .map_err(|e| machinery("cannot list the session's checkpoints", &e))?;
        let mut ids = Vec::new();
        for entry in entries {
            let entry =
                entry.map_err(|e| machinery("cannot list the session's checkpoints", &e))?;
            if let Some(id) = entry
                .file_name()
                .to_str()
                .and_then(|n| n.parse::<u64>().ok())
                .filter(|id| id.to_string() == entry.file_name().to_string_lossy())
            {
                ids.push(id);
            }
        }
        ids.sort_unstable();
        Ok(ids)
    }

    fn checkpoint_meta(&self, id: u64) -> Result<(Meta, Dir)> {
        let name = id.to_string();
        let dir =
            open_sub(&self.ckpts, &name).map_err(|e| machinery("cannot open a checkpoint", &e))?;
        let bytes = dir
            .read("meta.json")
            .map_err(|e| machinery("cannot read a checkpoint", &e))?;
        let meta: Meta = serde_json::from_slice(&bytes).map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("checkpoint {name} is damaged: {e}"),
            )
        })?;
        Ok((meta, dir))
    }

    /// At open: the newest checkpoint's epoch (its image log's torn tail cut off).
    pub(super) fn load_epoch(&mut self) -> Result<()> {
        let Some(&id) = self.checkpoint_ids()?.last() else {
            self.epoch = None;
            return Ok(());
        };
        let err = |e: io::Error| machinery("cannot read the newest checkpoint's images", &e);
        let dir = open_sub(&self.ckpts, &id.to_string()).map_err(err)?;
        let existed = dir.symlink_metadata(IMAGES).is_ok();
        let file = open_images(&dir, true).map_err(err)?;
        if !existed {
            store::fsync_dir(&dir).map_err(err)?;
        }
        let (stored, good) = scan(&file).map_err(err)?;
        if good < file.metadata().map_err(err)?.len() {
            file.set_len(good).map_err(err)?;
            file.sync_all().map_err(err)?;
        }
        let mut captured: BTreeSet<String> = stored.into_iter().map(|s| s.image.path).collect();
        if let Some(absent) = self.touched.absent.get(&id) {
            captured.extend(absent.iter().cloned());
        }
        self.epoch = Some(Epoch::new(id, file, captured, good));
        Ok(())
    }

    /// The paths changed since the newest checkpoint (since the session began, before the
    /// first one).
    pub(super) fn changed_since_checkpoint(&self) -> &BTreeSet<String> {
        match &self.epoch {
            Some(e) => &e.captured,
            None => &self.touched.dirty,
        }
    }

    /// The newest checkpoint's id.
    pub(super) fn epoch_id(&self) -> Option<u64> {
        self.epoch.as_ref().map(|e| e.id)
    }

    /// Notes that `rel`'s before-image in this epoch ("absent") is in the touch log.
    pub(super) fn captured_absent(&mut self, rel: &str) {
        if let Some(e) = self.epoch.as_mut() {
            e.captured.insert(rel.to_string());
        }
    }

    /// Whether a checkpoint exists (then `touch` takes before-images).
    pub(super) fn has_checkpoint(&self) -> bool {
        self.epoch.is_some()
    }

    /// The before-image of `path` now: its upper entry (and a file's open content).
    fn image_of(&self, path: &str) -> io::Result<(Image, Option<std::fs::File>)> {
        let (parent, leaf) = parent_leaf(path);
        let mut image = Image {
            path: path.to_string(),
            state: "absent".into(),
            opaque: false,
            mode: 0,
            target: None,
            fp: self.touched.fps.get(path).cloned(),
            len: 0,
            escaped: true,
        };
        let mut content = None;
        if let Some(udir) = open_beneath(self.upper(), parent)? {
            if let Some((kind, stat)) = super::session::upper_kind(&udir, leaf)? {
                image.mode = stat.st_mode & 0o7777;
                match kind {
                    UpperKind::File => {
                        let src = crate::sandbox::sys::open_file(
                            udir.as_fd(),
                            fs_name(leaf)?.as_bytes(),
                        )?;
                        image.len = src.metadata()?.len();
                        image.state = "file".into();
                        content = Some(src);
                    }
                    UpperKind::Whiteout => image.state = "whiteout".into(),
                    UpperKind::Dir { opaque } => {
                        image.state = "dir".into();
                        image.opaque = opaque;
                    }
                    UpperKind::Symlink => {
                        let t = rustix::fs::readlinkat(&udir, &*fs_name(leaf)?, Vec::new())?;
                        image.state = "symlink".into();
                        image.target = Some(escape_target(t.as_bytes()));
                    }
                    UpperKind::Other => {}
                }
            }
        }
        Ok((image, content))
    }

    /// Writes the before-images of those of `paths` not yet taken in this epoch (none
    /// without a checkpoint), not yet durable: `sync_images` (or `append`) makes them so,
    /// `abort_images` takes them back.
    pub(super) fn capture_unsynced(&mut self, paths: &[&str]) -> Result<()> {
        let Some(epoch) = &self.epoch else {
            return Ok(());
        };
        let mut todo: Vec<&str> = paths
            .iter()
            .copied()
            .filter(|p| !epoch.captured.contains(*p))
            .collect();
        todo.sort_unstable();
        todo.dedup();
        for path in todo {
            let (image, mut content) = self.image_of(path).map_err(|e| on_path(&e, path))?;
            let epoch = self.epoch.as_mut().expect("checked");
            match write_record(&epoch.file, epoch.len, &image, content.as_mut()) {
                Ok(end) => {
                    epoch.len = end;
                    epoch.captured.insert(path.to_string());
                    epoch.pending.push(path.to_string());
                }
                Err(e) => {
                    self.abort_images();
                    return Err(machinery(
                        &format!("cannot keep the before-image of {path}; nothing was changed"),
                        &e,
                    ));
                }
            }
        }
        Ok(())
    }

    /// Makes the images `capture_unsynced` wrote durable.
    pub(super) fn sync_images(&mut self) -> Result<()> {
        let Some(epoch) = self.epoch.as_mut() else {
            return Ok(());
        };
        if epoch.pending.is_empty() {
            return Ok(());
        }
        if let Err(e) = rustix::fs::fdatasync(&epoch.file) {
            self.abort_images();
            return Err(machinery(
                "cannot keep the before-images; nothing was changed",
                &e.into(),
            ));
        }
        epoch.synced = epoch.len;
        epoch.pending.clear();
        Ok(())
    }

    /// Takes back the images written and not made durable.
    pub(super) fn abort_images(&mut self) {
        let Some(epoch) = self.epoch.as_mut() else {
            return;
        };
        let _ = epoch.file.set_len(epoch.synced);
        for p in epoch.pending.drain(..) {
            epoch.captured.remove(&p);
        }
        epoch.len = epoch.synced;
    }

    /// Takes the before-images of `paths` (those not taken in this epoch), durably.
    pub fn capture(&mut self, paths: &[&str]) -> Result<()> {
        self.capture_unsynced(paths)?;
        self.sync_images()
    }

    /// `checkpoints`: every checkpoint, oldest first.
    pub fn checkpoints(&self) -> Result<Vec<CheckpointInfo>> {
        let mut out = Vec::new();
        for id in self.checkpoint_ids()? {
            let (m, _) = self.checkpoint_meta(id)?;
            let paths = if m.format >= FORMAT {
                m.paths
            } else {
                m.entries
                    .iter()
                    .filter_map(|e| e.get("path").and_then(|p| p.as_str()).map(String::from))
                    .collect()
            };
            let paths = match m.escaped {
                true => paths,
                false => paths.iter().map(|p| store::upgrade_path(p)).collect(),
            };
            out.push(CheckpointInfo {
                id: m.id.to_string(),
                label: m.label,
                time: m.time,
                paths,
            });
        }
        Ok(out)
    }

    /// `checkpoint {label?}`: see the module documentation.
    pub fn checkpoint(&mut self, opts: &CheckpointOptions) -> Result<CheckpointResult> {
        let id = match &self.epoch {
            Some(e) => e.id + 1,
            None => self.checkpoint_ids()?.last().map_or(1, |l| l + 1),
        };
        let tmp_name = format!(".tmp-{id}");
        let err =
            |e: io::Error| machinery("cannot write the checkpoint; the session is unchanged", &e);
        let _ = self.ckpts.remove_dir_all(&tmp_name);
        let dir = open_sub(&self.ckpts, &tmp_name).map_err(err)?;
        let meta = Meta {
            format: FORMAT,
            id,
            label: opts.label.clone(),
            time: now_rfc3339(),
            paths: self.changed_since_checkpoint().iter().cloned().collect(),
            escaped: true,
            entries: Vec::new(),
        };
        let made = (|| -> io::Result<std::fs::File> {
            let mut file = dir
                .open_with(
                    "meta.json",
                    cap_std::fs::OpenOptions::new().write(true).create_new(true),
                )?
                .into_std();
            file.write_all(&serde_json::to_vec(&meta).expect("serializes"))?;
            file.sync_all()?;
            let images = open_images(&dir, true)?;
            store::fsync_dir(&dir)?;
            Ok(images)
        })();
        let images = match made {
            Ok(f) => f,
            Err(e) => {
                let _ = self.ckpts.remove_dir_all(&tmp_name);
                return Err(err(e));
            }
        };
        if let Err(e) = self.ckpts.rename(&tmp_name, &self.ckpts, id.to_string()) {
            let _ = self.ckpts.remove_dir_all(&tmp_name);
            return Err(err(e));
        }
        if let Err(e) = store::fsync_dir(&self.ckpts) {
            // Not durable: taken back (a new epoch must not start on a checkpoint a crash
            // could lose with the images taken in it).
            let aside = format!(".tmp-gone-{id}");
            if self
                .ckpts
                .rename(id.to_string(), &self.ckpts, &aside)
                .is_ok()
            {
                let _ = self.ckpts.remove_dir_all(&aside);
                return Err(err(e));
            }
        }
        self.epoch = Some(Epoch::new(id, images, BTreeSet::new(), 0));
        self.touched.dirty.clear();
        Ok(CheckpointResult { id: id.to_string() })
    }

    /// `rewind {id}`: see the module documentation.
    pub fn rewind(&mut self, opts: &RewindOptions) -> Result<()> {
        let target: u64 = opts.id.parse().map_err(|_| no_such(&opts.id))?;
        let ids = self.checkpoint_ids()?;
        if !ids.contains(&target) {
            return Err(no_such(&opts.id));
        }
        for &id in ids.iter().filter(|&&id| id >= target) {
            if self.checkpoint_meta(id)?.0.format < FORMAT {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("checkpoint {id} was written by an older wsfs (before-images copied at checkpoint time), which this version cannot rewind across; the session is unchanged. Take a new checkpoint, or discard the session"),
                ));
            }
        }
        store::write_atomic(&self.meta, INTENT, target.to_string().as_bytes()).map_err(|e| {
            machinery(
                "cannot record the rewind's intent; the session is unchanged",
                &e,
            )
        })?;
        self.do_rewind(target)?;
        let _ = self.meta.remove_file(INTENT);
        let _ = store::fsync_dir(&self.meta);
        Ok(())
    }

    fn do_rewind(&mut self, target: u64) -> Result<()> {
        let rerr = |e: io::Error| machinery("cannot read the checkpoints' before-images", &e);
        // Each path changed after the target: its image in the oldest checkpoint at or after
        // the target that has one.
        // The checkpoints whose image logs the plan reads (a plan entry holds an index here);
        // the logs are opened again when restoring, a few at a time: a rewind across
        // hundreds of checkpoints must not hold a descriptor for each.
        let mut logs: Vec<u64> = Vec::new();
        let mut plan: BTreeMap<String, (Stored, usize)> = BTreeMap::new();
        for id in self
            .checkpoint_ids()?
            .into_iter()
            .filter(|&id| id >= target)
        {
            let dir = open_sub(&self.ckpts, &id.to_string()).map_err(rerr)?;
            match open_images(&dir, false) {
                Ok(file) => {
                    let (stored, _) = scan(&file).map_err(rerr)?;
                    for s in stored {
                        plan.entry(s.image.path.clone()).or_insert((s, logs.len()));
                    }
                    logs.push(id);
                }
                Err(e) if e.kind() == io::ErrorKind::NotFound => {}
                Err(e) => return Err(rerr(e)),
            }
            // The paths first touched in this epoch while not in the session (in the touch
            // log): "absent" at this checkpoint.
            for p in self.touched.absent.get(&id).into_iter().flatten() {
                let image = Image {
                    path: p.clone(),
                    state: "absent".into(),
                    opaque: false,
                    mode: 0,
                    target: None,
                    fp: None,
                    len: 0,
                    escaped: true,
                };
                let s = Stored {
                    image,
                    at: 0,
                    header_len: 0,
                };
                plan.entry(p.clone()).or_insert((s, usize::MAX));
            }
        }
        let mut plan: Vec<(String, (Stored, usize))> = plan.into_iter().collect();
        // Removals deepest first, then creations shallowest first; each directory changed is
        // fsynced once, before the records say the rewind is done. Kept as paths, not
        // handles: a rewind may span more directories than the process has descriptors.
        let mut changed_dirs: BTreeSet<String> = BTreeSet::new();
        plan.sort_by_key(|(p, _)| std::cmp::Reverse(p.matches('/').count()));
        for (p, (s, _)) in &plan {
            let (parent, leaf) = parent_leaf(p);
            let io = |e: io::Error| on_path(&e, p);
            let Some(udir) = open_beneath(self.upper(), parent).map_err(io)? else {
                continue;
            };
            let current = super::session::upper_kind(&udir, leaf).map_err(io)?;
            // What the restore replaces in place is kept: a directory by a directory, a
            // non-directory by a file, whiteout or symlink (renamed over it).
            let current_dir = matches!(current, Some((UpperKind::Dir { .. }, _)));
            let keep = match s.image.state.as_str() {
                "absent" => false,
                "dir" => current_dir,
                _ => !current_dir,
            };
            if current.is_some() && !keep {
                super::session::remove_entry(&udir, leaf).map_err(io)?;
                changed_dirs.insert(parent.to_string());
            }
        }
        plan.reverse();
        let mut records = Vec::new();
        // Restored files whose writes are under way, by directory, fsynced at the end: their
        // writes overlap instead of each waiting for its own (git's `fsyncMethod=batch` idea).
        let mut unsynced: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        let mut open_logs: BTreeMap<u64, std::fs::File> = BTreeMap::new();
        for (p, (s, log)) in &plan {
            let io = |e: io::Error| on_path(&e, p);
            let (parent, leaf) = parent_leaf(p);
            if s.image.state != "absent" {
                let udir = self.upper_dir_all(parent).map_err(io)?;
                let id = logs.get(*log).ok_or_else(|| io(damaged(p)))?;
                let log = self.image_log(&mut open_logs, *id).map_err(io)?;
                self.restore(&udir, leaf, s, log).map_err(io)?;
                if s.image.state == "file" {
                    unsynced.entry(parent).or_default().push(leaf);
                }
                // Its directory, and each above it (upper_dir_all may have made some).
                let mut above = parent;
                changed_dirs.insert(parent.to_string());
                while !above.is_empty() {
                    above = parent_leaf(above).0;
                    changed_dirs.insert(above.to_string());
                }
            }
            records.push(match &s.image.fp {
                Some(fp) => Record {
                    op: 's',
                    path: Some(p.clone()),
                    fp: Some(fp.clone()),
                    i: None,
                },
                None => Record {
                    op: 'f',
                    path: Some(p.clone()),
                    fp: None,
                    i: None,
                },
            });
        }
        // Each directory opened once: its restored files fsynced, then itself. (Every
        // restored file's directory is in `changed_dirs`.)
        let fail = |e: io::Error| machinery("cannot make a rewound file durable", &e);
        for p in &changed_dirs {
            let files = unsynced.get(p.as_str());
            let Some(d) = open_beneath(self.upper(), p).map_err(|e| on_path(&e, p))? else {
                // A directory gone since (removed whole) is fsynced through its parent; one
                // that holds restored files cannot be.
                match files {
                    Some(_) => return Err(fail(damaged(p))),
                    None => continue,
                }
            };
            for leaf in files.into_iter().flatten() {
                fs_name(leaf)
                    .and_then(|raw| crate::sandbox::sys::open_file(d.as_fd(), raw.as_bytes()))
                    .and_then(|file| file.sync_all())
                    .map_err(fail)?;
            }
            store::fsync_dir(&d).map_err(|e| on_path(&e, p))?;
        }
        // The "absent" images of the target's epoch and of the later ones are consumed.
        records.push(Record {
            op: 'r',
            path: None,
            fp: None,
            i: Some(target),
        });
        self.append(&records)?;
        // Newest first: a crash part-way leaves the checkpoints from the target to some
        // newer one, whose images (the oldest at or after the target first) still give the
        // same plan for every path not restored yet.
        for id in self
            .checkpoint_ids()?
            .into_iter()
            .rev()
            .filter(|&id| id > target)
        {
            let name = id.to_string();
            let aside = format!(".tmp-gone-{name}");
            self.ckpts
                .rename(&name, &self.ckpts, &aside)
                .map_err(|e| machinery("cannot remove a newer checkpoint", &e))?;
            let _ = self.ckpts.remove_dir_all(&aside);
        }
        let _ = store::fsync_dir(&self.ckpts);
        // Nothing is changed since the target now: its images go.
        let werr = |e: io::Error| machinery("cannot reset the checkpoint's before-images", &e);
        let dir = open_sub(&self.ckpts, &target.to_string()).map_err(werr)?;
        let file = open_images(&dir, true).map_err(werr)?;
        file.set_len(0).map_err(werr)?;
        file.sync_all().map_err(werr)?;
        store::fsync_dir(&dir).map_err(werr)?;
        self.epoch = Some(Epoch::new(target, file, BTreeSet::new(), 0));
        self.touched.dirty.clear();
        Ok(())
    }

    /// Checkpoint `id`'s image log, from `open` or opened into it (which keeps at most
    /// `OPEN_LOGS`: past that the others are closed first).
    fn image_log<'a>(
        &self,
        open: &'a mut BTreeMap<u64, std::fs::File>,
        id: u64,
    ) -> io::Result<&'a std::fs::File> {
        if !open.contains_key(&id) && open.len() >= OPEN_LOGS {
            open.clear();
        }
        match open.entry(id) {
            std::collections::btree_map::Entry::Occupied(log) => Ok(log.into_mut()),
            std::collections::btree_map::Entry::Vacant(slot) => {
                let dir = open_sub(&self.ckpts, &id.to_string())?;
                Ok(slot.insert(open_images(&dir, false)?))
            }
        }
    }

    /// The upper directory `rel`, made (plain, 0755) where missing.
    fn upper_dir_all(&self, rel: &str) -> io::Result<Dir> {
        let mut here = self.upper().try_clone()?;
        for name in rel.split('/').filter(|n| !n.is_empty()) {
            let name = fs_name(name)?;
            match rustix::fs::mkdirat(&here, &*name, Mode::from_raw_mode(0o755)) {
                Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                Err(e) => return Err(e.into()),
            }
            here = Dir::from(crate::sandbox::sys::open_child_dir(
                here.as_fd(),
                name.as_bytes(),
            )?);
        }
        Ok(here)
    }

    /// Puts the image `s` (of the log `log`) at `leaf` in `udir` (whatever is there is
    /// replaced; a directory kept). A restored file's writes are started, not waited for: the
    /// caller fsyncs it.
    fn restore(&self, udir: &Dir, leaf: &str, s: &Stored, log: &std::fs::File) -> io::Result<()> {
        let image = &s.image;
        let raw = fs_name(leaf)?;
        match image.state.as_str() {
            "file" => {
                let mut staged = Staged::create(udir)?;
                if !check(log, s, staged.file())? {
                    return Err(damaged(&image.path));
                }
                rustix::fs::fchmod(&*staged.file(), Mode::from_raw_mode(image.mode))?;
                // Named before it is durable: the rewind's intent stays until `do_rewind` has
                // fsynced it (a crash before that restores the file again from its image).
                crate::sandbox::sys::start_writeback(staged.file().as_fd());
                staged.commit(&raw, false)
            }
            "whiteout" => super::session::place_whiteout(udir, leaf),
            "dir" => {
                match rustix::fs::mkdirat(udir, &*raw, Mode::from_raw_mode(0o700)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
                let fd = crate::sandbox::sys::open_child_dir(udir.as_fd(), raw.as_bytes())?;
                rustix::fs::fchmod(&fd, Mode::from_raw_mode(image.mode))?;
                if image.opaque {
                    rustix::fs::fsetxattr(
                        &fd,
                        super::session::OPAQUE_XATTR,
                        b"y",
                        rustix::fs::XattrFlags::empty(),
                    )?;
                } else {
                    match rustix::fs::fremovexattr(&fd, super::session::OPAQUE_XATTR) {
                        Ok(()) | Err(rustix::io::Errno::NODATA) => {}
                        Err(e) => return Err(e.into()),
                    }
                }
                Ok(())
            }
            "symlink" => {
                let tmp = temp_name();
                let target = image.target.as_deref().unwrap_or_default();
                let target = match image.escaped {
                    true => unescape_target(target).ok_or_else(|| damaged(&image.path))?,
                    false => target.as_bytes().to_vec(),
                };
                rustix::fs::symlinkat(target.as_slice(), udir, tmp.as_str())?;
                rustix::fs::renameat(udir, tmp.as_str(), udir, &*raw)?;
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// A symlink's target (any bytes but NUL) as a string: each `/`-separated piece escaped as
/// the tools show names.
fn escape_target(target: &[u8]) -> String {
    target
        .split(|&b| b == b'/')
        .map(crate::names::encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The bytes `escape_target` escaped; `None` if a piece does not read back.
fn unescape_target(text: &str) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    for (i, piece) in text.split('/').enumerate() {
        if i > 0 {
            out.push(b'/');
        }
        out.extend_from_slice(&crate::names::decode(piece).ok()?);
    }
    Some(out)
}

/// Image logs a rewind keeps open at once.
const OPEN_LOGS: usize = 8;

fn no_such(id: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("there is no checkpoint {id:?} in this session; call checkpoints for the ids"),
    )
}

/// At open: finishes a rewind a crash interrupted.
pub fn recover(session: &mut Session) -> Result<()> {
    let bytes = match session.meta.read(INTENT) {
        Ok(b) => b,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(machinery("cannot read the session's rewind intent", &e)),
    };
    if let Some(id) = std::str::from_utf8(&bytes)
        .ok()
        .and_then(|s| s.trim().parse::<u64>().ok())
    {
        session.do_rewind(id)?;
    }
    let _ = session.meta.remove_file(INTENT);
    let _ = store::fsync_dir(&session.meta);
    // Newer checkpoints set aside and not yet removed.
    if let Ok(entries) = session.ckpts.entries() {
        for entry in entries.flatten() {
            if entry
                .file_name()
                .to_string_lossy()
                .starts_with(".tmp-gone-")
            {
                let _ = session.ckpts.remove_dir_all(entry.file_name());
            }
        }
    }
    Ok(())
}
