//! The journal of a multi-file commit, and recovery from it.
//!
//! A journal lists, before anything in the workspace changes, every name the commit will
//! touch: each target (its directory relative to the anchor and its name), the staged file
//! that will replace it, the backup (a hard link of the old file) that lets it be put back,
//! and the directories the commit will create. It is fsynced, and held under an exclusive
//! `flock` while its commit runs, so recovery never touches a live commit. Renaming it from
//! `<id>.journal` to `<id>.committed` (one atomic step, fsynced) says every rename is done.
//! Recovery (the commit's own rollback, its clean-up, and
//! `Workspace::open` after a crash) then rolls back an uncommitted journal, finishes a
//! committed one, and removes the journal; every step checks what is there first, so
//! running it again after a crash part-way through recovery is harmless.

use super::fault::{self, Sys};
use crate::fileops::{open_leaf_read, sync_dir};
use crate::lines::sha256_hex;
use crate::root::{Anchor, Root};
use crate::state_dir::StateDir;
use crate::tempfile::{is_temp_name, remove_if_unlocked, Staged};
use cap_std::ambient_authority;
use cap_std::fs::{Dir, OpenOptions};
use serde::{Deserialize, Serialize};
use std::collections::HashSet;
use std::ffi::{OsStr, OsString};
use std::io::{self, Read, Write};
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Component, Path, PathBuf};

const VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EntryOp {
    /// `staged` is renamed over the existing name; `backup` keeps the old file.
    Replace,
    /// `staged` is renamed to the new name, never over an existing one.
    Create,
    /// The name is removed; `backup` keeps the old file.
    Remove,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    /// The directory, relative to the anchor (bytes: names need not be UTF-8).
    pub dir: Vec<u8>,
    pub leaf: Vec<u8>,
    pub op: EntryOp,
    pub staged: Option<String>,
    pub backup: Option<String>,
    /// The new content's hash: a created file is removed on rollback only if it is ours.
    pub new_sha256: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Journal {
    pub version: u32,
    pub id: String,
    /// The canonical workspace root the entries are relative to (with `anchor` "root").
    pub root: Vec<u8>,
    pub anchor: JournalAnchor,
    /// Directories the commit creates, anchor-relative, outermost first.
    pub created_dirs: Vec<Vec<u8>>,
    pub entries: Vec<Entry>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum JournalAnchor {
    Root,
    Host,
}

impl From<Anchor> for JournalAnchor {
    fn from(a: Anchor) -> Self {
        match a {
            Anchor::Root => JournalAnchor::Root,
            Anchor::Host => JournalAnchor::Host,
        }
    }
}

pub fn journal_name(id: &str) -> String {
    format!("{id}.journal")
}

pub fn committed_name(id: &str) -> String {
    format!("{id}.committed")
}

impl Journal {
    pub fn new(id: String, root: &Path, anchor: Anchor) -> Journal {
        Journal {
            version: VERSION,
            id,
            root: root.as_os_str().as_bytes().to_vec(),
            anchor: anchor.into(),
            created_dirs: Vec::new(),
            entries: Vec::new(),
        }
    }

    /// Writes the journal as a new file in `state` (open readable): staged as a temp file
    /// (see `tempfile_ops`), locked, written, fsynced, and only then given its name, which
    /// never replaces another; then the state directory is fsynced. So a journal is never seen
    /// torn or unlocked, and one that fails leaves nothing. The returned file holds the lock
    /// until it is dropped.
    pub fn write_new(&self, state: &Dir) -> io::Result<std::fs::File> {
        let bytes = serde_json::to_vec(self).map_err(io::Error::other)?;
        fault::sys(Sys::Open)?;
        let mut staged = Staged::create(state)?;
        // Taken by `create` where the file system has locks; without one, a recovery could
        // take a live commit for a crashed one.
        staged
            .file()
            .try_lock()
            .map_err(|e| io::Error::other(format!("cannot lock the journal: {e}")))?;
        staged
            .file()
            .set_permissions(std::fs::Permissions::from_mode(0o600))?;
        fault::sys(Sys::Write)?;
        staged.file().write_all(&bytes)?;
        fault::sys(Sys::Fsync)?;
        staged.file().sync_all()?;
        let name = journal_name(&self.id);
        fault::sys(Sys::Link)?;
        let file = staged.name_locked(OsStr::new(&name))?;
        let synced = fault::sys(Sys::Fsync).and_then(|()| Ok(rustix::fs::fsync(state)?));
        if let Err(e) = synced {
            let _ = remove_if_there(state, Some(&name));
            return Err(e);
        }
        Ok(file)
    }

    /// Every name in it is one wsfs would have written and recovery can replay: single names
    /// as targets, relative directories, created directories that end in a name, the staged
    /// and backup names each operation needs, and those are wsfs temp names (`.wsfs-<16
    /// hex>.tmp`), each used once, so recovery never renames or removes anything else.
    /// Checked before a journal is written, and again before one is recovered.
    pub fn validate(&self) -> io::Result<()> {
        let bad = |what: &str| Err(io::Error::other(format!("invalid journal: {what}")));
        if self.version != VERSION
            || self.id.len() != 16
            || !self.id.bytes().all(|b| b.is_ascii_hexdigit())
        {
            return bad("version or id");
        }
        let relative = |bytes: &[u8]| {
            Path::new(OsStr::from_bytes(bytes))
                .components()
                .all(|c| !matches!(c, Component::RootDir | Component::Prefix(_)))
        };
        for dir in &self.created_dirs {
            let ends_in_name = matches!(
                Path::new(OsStr::from_bytes(dir)).components().next_back(),
                Some(Component::Normal(_))
            );
            if !relative(dir) || !ends_in_name {
                return bad("a created directory is not a relative path ending in a name");
            }
        }
        let mut temp_names = HashSet::new();
        for e in &self.entries {
            let leaf = Path::new(OsStr::from_bytes(&e.leaf));
            if leaf.components().count() != 1
                || !matches!(leaf.components().next(), Some(Component::Normal(_)))
                || e.leaf.contains(&b'/')
            {
                return bad("a name is not a single file name");
            }
            if !relative(&e.dir) {
                return bad("a directory is not a relative path");
            }
            let names_needed = match e.op {
                EntryOp::Replace => e.staged.is_some() && e.backup.is_some(),
                EntryOp::Create => e.staged.is_some() && e.backup.is_none(),
                EntryOp::Remove => e.staged.is_none() && e.backup.is_some(),
            };
            if !names_needed {
                return bad("an operation lacks its staged or backup name");
            }
            for name in e.temp_names() {
                if !is_temp_name(name.as_bytes()) {
                    return bad("a staged or backup name is not a wsfs temp name");
                }
                if !temp_names.insert(name) {
                    return bad("a staged or backup name is used twice");
                }
            }
        }
        Ok(())
    }

    /// Every staged and backup name it records.
    pub fn temp_names(&self) -> impl Iterator<Item = &str> {
        self.entries.iter().flat_map(Entry::temp_names)
    }
}

impl Entry {
    fn temp_names(&self) -> impl Iterator<Item = &str> {
        self.staged.iter().chain(&self.backup).map(String::as_str)
    }
}

/// The commit point: the journal becomes `<id>.committed`, and from now on recovery finishes
/// the commit instead of rolling it back. (The caller fsyncs the state directory after it.)
pub fn mark_committed(state: &Dir, id: &str) -> io::Result<()> {
    state.rename(journal_name(id), state, committed_name(id))
}

/// Rolls back (`committed` false) or finishes a commit after a crash, from what is on disk,
/// then removes its journal. The directories are fsynced before the journal goes, so no
/// backup or staged name can outlive it; a removed journal that reappears after a power loss
/// is recovered again, harmlessly.
pub fn recover(
    root: &Root,
    max_file_bytes: u64,
    state: &Dir,
    journal: &Journal,
    committed: bool,
) -> io::Result<()> {
    journal.validate()?;
    if journal.anchor == JournalAnchor::Root && journal.root != root.path.as_os_str().as_bytes() {
        return Err(io::Error::other("journal of another workspace root"));
    }
    // Each directory once, by device and inode.
    let mut touched: Vec<(Dir, (u64, u64))> = Vec::new();
    for entry in journal.entries.iter().rev() {
        let dir = match open_dir(root, journal.anchor, &entry.dir) {
            Ok(dir) => dir,
            // A directory this commit was to create and never did (or already removed).
            Err(e) if e.kind() == io::ErrorKind::NotFound => continue,
            Err(e) => return Err(e),
        };
        let leaf = OsStr::from_bytes(&entry.leaf);
        if committed {
            remove_if_there(&dir, entry.backup.as_deref())?;
        } else {
            undo(max_file_bytes, &dir, leaf, entry)?;
        }
        remove_if_there(&dir, entry.staged.as_deref())?;
        let stat = rustix::fs::fstat(&dir)?;
        let id = (stat.st_dev, stat.st_ino);
        if !touched.iter().any(|(_, known)| *known == id) {
            touched.push((dir, id));
        }
    }
    for (dir, _) in &touched {
        fault::sys(Sys::Fsync)?;
        sync_dir(dir)?;
    }
    if !committed {
        remove_created_dirs(root, journal)?;
    }
    remove_if_there(state, Some(&journal_name(&journal.id)))?;
    remove_if_there(state, Some(&committed_name(&journal.id)))
}

/// Removes the directories a rolled-back commit created, innermost first, then fsyncs each
/// parent that stays, so none comes back once the journal is gone. A directory already gone
/// is fine, and one that is no longer an empty directory is left: something else put a name
/// in it (or in its place).
pub fn remove_created_dirs(root: &Root, journal: &Journal) -> io::Result<()> {
    let mut parents: Vec<&Path> = Vec::new();
    for created in journal.created_dirs.iter().rev() {
        let rel = Path::new(OsStr::from_bytes(created));
        fault::sys(Sys::Rmdir)?;
        let removed = match journal.anchor {
            JournalAnchor::Root => root.dir.remove_dir(rel),
            JournalAnchor::Host => std::fs::remove_dir(Path::new("/").join(rel)),
        };
        match removed {
            Ok(()) => {
                let parent = rel.parent().unwrap_or(Path::new(""));
                if !parents.contains(&parent) {
                    parents.push(parent);
                }
            }
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            Err(e)
                if matches!(
                    e.raw_os_error(),
                    Some(libc::ENOTEMPTY | libc::EEXIST | libc::ENOTDIR)
                ) => {}
            Err(e) => return Err(e),
        }
    }
    for parent in parents {
        fault::sys(Sys::Fsync)?;
        let synced = match journal.anchor {
            JournalAnchor::Root if parent.as_os_str().is_empty() => sync_dir(&root.dir),
            JournalAnchor::Root => root.dir.open(parent).and_then(|d| d.sync_all()),
            JournalAnchor::Host => {
                std::fs::File::open(Path::new("/").join(parent)).and_then(|d| d.sync_all())
            }
        };
        match synced {
            // A parent that was itself created, and removed above.
            Err(e) if e.kind() == io::ErrorKind::NotFound => {}
            other => other?,
        }
    }
    Ok(())
}

/// Puts one target back as it was before the commit.
fn undo(max_file_bytes: u64, dir: &Dir, leaf: &OsStr, entry: &Entry) -> io::Result<()> {
    match entry.op {
        EntryOp::Replace | EntryOp::Remove => {
            if let Some(backup) = entry.backup.as_deref() {
                if exists(dir, backup)? {
                    // Over our new file, or over the old file itself (a no-op for two names
                    // of one inode; the backup name is removed below).
                    fault::sys(Sys::Rename)?;
                    dir.rename(backup, dir, leaf)?;
                    remove_if_there(dir, Some(backup))?;
                }
            }
        }
        EntryOp::Create => {
            let staged_left = match entry.staged.as_deref() {
                Some(s) => exists(dir, s)?,
                None => false,
            };
            if !staged_left && is_ours(max_file_bytes, dir, leaf, entry.new_sha256.as_deref())? {
                fault::sys(Sys::Unlink)?;
                dir.remove_file(leaf)?;
            }
        }
    }
    Ok(())
}

/// Whether `leaf` is a regular file with exactly the content this commit created.
fn is_ours(max_file_bytes: u64, dir: &Dir, leaf: &OsStr, sha: Option<&str>) -> io::Result<bool> {
    let Some(sha) = sha else { return Ok(false) };
    fault::sys(Sys::Open)?;
    let file = match open_leaf_read(dir, leaf) {
        Ok(f) => f,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(false),
        Err(e) if e.raw_os_error() == Some(libc::ELOOP) => return Ok(false),
        Err(e) => return Err(e),
    };
    if !file.metadata()?.is_file() {
        return Ok(false);
    }
    let mut bytes = Vec::new();
    fault::sys(Sys::Read)?;
    file.take(max_file_bytes + 1).read_to_end(&mut bytes)?;
    Ok(sha256_hex(&bytes) == sha)
}

fn exists(dir: &Dir, name: &str) -> io::Result<bool> {
    fault::sys(Sys::Stat)?;
    match dir.symlink_metadata(name) {
        Ok(_) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(false),
        Err(e) => Err(e),
    }
}

fn remove_if_there(dir: &Dir, name: Option<&str>) -> io::Result<()> {
    if name.is_some() {
        fault::sys(Sys::Unlink)?;
    }
    match name.map(|n| dir.remove_file(n)) {
        None | Some(Ok(())) => Ok(()),
        Some(Err(e)) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Some(Err(e)) => Err(e),
    }
}

/// A journal directory, opened beneath the workspace root (or from `/` for an unrestricted
/// workspace's journal).
fn open_dir(root: &Root, anchor: JournalAnchor, rel: &[u8]) -> io::Result<Dir> {
    fault::sys(Sys::Open)?;
    let rel = Path::new(OsStr::from_bytes(rel));
    match anchor {
        JournalAnchor::Root if rel.as_os_str().is_empty() => root.dir.try_clone(),
        JournalAnchor::Root => root.dir.open_dir(rel),
        JournalAnchor::Host => Dir::open_ambient_dir(Path::new("/").join(rel), ambient_authority()),
    }
}

/// What [`recover_all`] did.
#[derive(Debug, Default)]
pub struct Recovery {
    /// One for each journal that could not be recovered (it is retried next time).
    pub warnings: Vec<String>,
    /// The staged and backup names of the journals still there (held by a live commit, or not
    /// recoverable now): the open-time sweep must leave them, a rollback may need them.
    pub unrecovered: HashSet<OsString>,
    /// A journal may be there whose names are not in `unrecovered` (the state directory or a
    /// journal could not be read): no sweep may run, it could take the backups a rollback
    /// needs.
    pub names_unknown: bool,
}

/// At `Workspace::open`: recovers every journal of this workspace that no live commit holds.
pub fn recover_all(root: &Root, max_file_bytes: u64) -> Recovery {
    let mut recovery = Recovery::default();
    let StateDir::At(path) = &root.state else {
        return recovery;
    };
    let state = match fault::sys(Sys::Open).and_then(|()| match &root.state_pinned {
        Some(pinned) => pinned.open(false),
        None => Dir::open_ambient_dir(path, ambient_authority()),
    }) {
        Ok(dir) => dir,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return recovery,
        Err(e) => {
            recovery.warnings.push(format!(
                "cannot open wsfs's state directory (state_dir) to recover interrupted apply_patch commits: {e}; they are retried when the workspace is next opened"
            ));
            recovery.names_unknown = true;
            return recovery;
        }
    };
    let listed = fault::sys(Sys::Read)
        .and_then(|()| state.entries())
        .and_then(|entries| entries.map(|e| e.map(|e| e.file_name())).collect());
    let names: Vec<OsString> = match listed {
        Ok(names) => names,
        Err(e) => {
            recovery.warnings.push(format!(
                "cannot list wsfs's state directory (state_dir) to recover interrupted apply_patch commits: {e}; they are retried when the workspace is next opened"
            ));
            recovery.names_unknown = true;
            return recovery;
        }
    };
    let mut names: Vec<String> = names
        .into_iter()
        .filter_map(|n| n.into_string().ok())
        .collect();
    names.sort();
    for name in &names {
        if is_temp_name(name.as_bytes()) {
            // A journal staged where the file system has no `O_TMPFILE`, by a commit that
            // died before naming it (a live one holds its lock).
            remove_if_unlocked(&state, OsStr::new(name));
            continue;
        }
        let found = match (
            name.strip_suffix(".journal"),
            name.strip_suffix(".committed"),
        ) {
            (Some(id), _) => Some((id, false)),
            (_, Some(id)) => Some((id, true)),
            _ => None,
        };
        let Some((id, committed)) = found else {
            continue;
        };
        if let Err(e) = recover_one(
            root,
            max_file_bytes,
            &state,
            name,
            id,
            committed,
            &mut recovery,
        ) {
            recovery.warnings.push(format!(
                "an interrupted apply_patch commit (journal {name} in wsfs's state directory) could not be recovered: {e}; it is retried when the workspace is next opened"
            ));
        }
    }
    recovery
}

/// Recovers one journal, unless a live commit holds it. The temp names of a journal left in
/// place (live, or failing) go to `recovery.unrecovered`.
fn recover_one(
    root: &Root,
    max_file_bytes: u64,
    state: &Dir,
    name: &str,
    id: &str,
    committed: bool,
    recovery: &mut Recovery,
) -> io::Result<()> {
    let mut opts = OpenOptions::new();
    opts.read(true).write(true);
    let mut bytes = Vec::new();
    let opened = fault::sys(Sys::Open)
        .and_then(|()| state.open_with(name, &opts))
        .and_then(|file| {
            let file = file.into_std();
            fault::sys(Sys::Read)?;
            (&file).read_to_end(&mut bytes)?;
            Ok(file)
        });
    let file = match opened {
        Ok(file) => file,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()), // finished meanwhile
        Err(e) => {
            recovery.names_unknown = true;
            return Err(e);
        }
    };
    // A live commit, in this process or another (a journal is named only once it is whole
    // and locked); a lock a forking child holds for a moment is waited out.
    let live = !crate::sys::lock_unless_held(&file);
    let unrecovered = &mut recovery.unrecovered;
    let parsed = serde_json::from_slice::<Journal>(&bytes);
    if let Ok(journal) = &parsed {
        unrecovered.extend(journal.temp_names().map(OsString::from));
    }
    if live {
        // Its files are locked by their commit anyway; its names are kept all the same.
        return Ok(());
    }
    let journal: Journal = match parsed {
        Ok(j) => j,
        // Torn while being written: nothing in the workspace had changed yet.
        Err(_) if !committed => {
            state.remove_file(name)?;
            return Ok(());
        }
        Err(e) => return Err(io::Error::other(e)),
    };
    if journal.id != id {
        return Err(io::Error::other("journal id does not match its name"));
    }
    if journal.anchor == JournalAnchor::Root && journal.root != root.path.as_os_str().as_bytes() {
        return Ok(()); // another root whose id collides: not ours to touch
    }
    recover(root, max_file_bytes, state, &journal, committed)?;
    for done in journal.temp_names() {
        unrecovered.remove(OsStr::new(done));
    }
    Ok(())
}

pub fn path_bytes(p: &Path) -> Vec<u8> {
    p.as_os_str().as_bytes().to_vec()
}

pub fn created_list(dirs: &[PathBuf]) -> Vec<Vec<u8>> {
    dirs.iter().map(|d| path_bytes(d)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tempfile::temp_name;

    fn journal() -> Journal {
        let mut j = Journal::new("0123456789abcdef".into(), Path::new("/ws"), Anchor::Root);
        j.entries.push(Entry {
            dir: b"sub".to_vec(),
            leaf: b"a.txt".to_vec(),
            op: EntryOp::Replace,
            staged: Some(temp_name()),
            backup: Some(temp_name()),
            new_sha256: None,
        });
        j
    }

    #[test]
    fn only_names_wsfs_would_write_are_accepted() {
        assert!(journal().validate().is_ok());
        let mut j = journal();
        j.entries[0].leaf = b"../x".to_vec();
        assert!(j.validate().is_err(), "a path as a leaf");
        let mut j = journal();
        j.entries[0].staged = Some(".wsfs-ffffffffffffffff-0.tmp".into());
        assert!(j.validate().is_err(), "not a wsfs temp name");
        let mut j = journal();
        j.entries[0].backup = j.entries[0].staged.clone();
        assert!(j.validate().is_err(), "one temp name for two files");
        let mut j = journal();
        let mut second = j.entries[0].clone();
        second.leaf = b"b.txt".to_vec();
        j.entries.push(second);
        assert!(j.validate().is_err(), "another entry's temp names");
        let mut j = journal();
        j.entries[0].backup = Some("precious.txt".into());
        assert!(j.validate().is_err(), "a user's file as a backup");
        let mut j = journal();
        j.id = "../../etc".into();
        assert!(j.validate().is_err());
        // Issue 16 finding 6: names no recovery could replay are refused before writing.
        for (leaf, dir) in [("", "sub"), ("..", "sub"), ("x/", "sub"), ("a.txt", "/etc")] {
            let mut j = journal();
            j.entries[0].leaf = leaf.as_bytes().to_vec();
            j.entries[0].dir = dir.as_bytes().to_vec();
            assert!(j.validate().is_err(), "{leaf:?} in {dir:?}");
        }
        for created in ["", "nd/x/..", "/tmp/nd", "."] {
            let mut j = journal();
            j.created_dirs.push(created.as_bytes().to_vec());
            assert!(j.validate().is_err(), "created {created:?}");
        }
        let mut j = journal();
        j.created_dirs.push(b"nd/x".to_vec());
        assert!(j.validate().is_ok());
        j.entries[0].backup = None;
        assert!(j.validate().is_err(), "a replacement without a backup");
    }

    #[test]
    fn journals_roundtrip_through_json() {
        let j = journal();
        let bytes = serde_json::to_vec(&j).unwrap();
        assert_eq!(serde_json::from_slice::<Journal>(&bytes).unwrap(), j);
    }
}
