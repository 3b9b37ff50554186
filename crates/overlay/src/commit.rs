//! `commit`: the session's changes (all, some files, some hunks) applied to the base under
//! the journaled multi-file commit (`crate::sandbox::commit`), after every affected path's base
//! fingerprint was checked against the one recorded at its first touch.
//!
//! Crash safety on the session's side: before the base changes, `meta/commit.json` (the
//! intent) records each path and the content hash the base will have. After the base commit
//! (or at the next open, after the base's journal is recovered: rolled back or forward), the
//! same idempotent step finishes it: a path whose base now has the intended content takes
//! the new base fingerprint, and its upper entry leaves the session when it equals the base.
//! A path whose base does not have it (the commit was rolled back) is left as it was. The
//! upper directories that entries left are fsynced once each (not once per entry), before
//! the log's records forget those entries and before the intent is removed.

use super::diff::{apply_hunks, canonical_paths, is_text, selected, Found};
use super::review;
use super::session::{
    fs_name, fs_path, machinery, on_path, open_beneath, parent_leaf, Session, Ungated, UpperKind,
};
use super::store::{self, Record};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::sha256_hex;
use crate::sandbox::commit::{self as journaled, CommitError, Op, OpKind, Place, Scope};
use crate::sandbox::gate::{Access, Gate};
use crate::sandbox::root::Anchor;
use rustix::fs::{AtFlags, FileType};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

const INTENT: &str = "commit.json";

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CommitOptions {
    /// Only these paths (a directory: everything below it).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// Only these hunks of these files (ids from `diff`); the rest of each file stays in
    /// the session.
    #[serde(default)]
    pub hunks: Option<BTreeMap<String, Vec<String>>>,
    /// Commit even where the base changed since the session first touched the path.
    #[serde(default)]
    pub force: bool,
    /// Where the base changed, commit a three-way merge of non-overlapping changes.
    #[serde(default)]
    pub merge: bool,
    /// Commit the changes `.gitignore` files and the built-in cache list ignore too
    /// (`review`); without it they stay in the session.
    #[serde(default)]
    pub include_ignored: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Conflict {
    pub path: String,
    /// The base is not what it was at the session's first touch.
    pub base_changed: bool,
    /// The session changed it too.
    pub session_changed: bool,
    /// A three-way merge of the two changes succeeds (`merge: true` commits it).
    pub mergeable: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct CommitResult {
    pub committed: bool,
    /// The base paths changed.
    pub files: Vec<String>,
    /// Why nothing was committed (empty when `committed`).
    pub conflicts: Vec<Conflict>,
    /// Paths committed as a three-way merge.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub merged: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
    /// Changes at the paths given that were left in the session because they are ignored
    /// (`include_ignored` commits them).
    pub ignored: usize,
}

/// One path of an intent.
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Intended {
    path: String,
    /// The session path whose touch record covers it.
    owner: String,
    /// `file` (content `after`: its hash; `None`: removed), `gone` (a directory removed),
    /// `added` (a directory made).
    what: String,
    after: Option<String>,
    /// `path` and `owner` are session paths (escaped names); an intent written before has no
    /// field.
    #[serde(default)]
    escaped: bool,
}

/// Whether the base's `now` is what the session recorded.
fn unchanged(recorded: &store::Fingerprint, now: &store::Fingerprint) -> bool {
    // A file too large to hash: only its stat fields can say.
    if recorded.kind == "file" && recorded.sha256.is_none() {
        return recorded.same_stat(now);
    }
    if recorded.same_stat(now) && (recorded.kind != "file" || recorded.sha256.is_some()) {
        return true;
    }
    recorded.kind == now.kind
        && recorded.mode == now.mode
        && recorded.sha256 == now.sha256
        && (recorded.kind != "dir" || recorded.mtime_ns == now.mtime_ns)
}

impl Session {
    /// The base fingerprint of `rel` now, hashing only when the stat fields differ from
    /// `recorded`'s.
    fn fingerprint_now(
        &self,
        rel: &str,
        recorded: Option<&store::Fingerprint>,
    ) -> Result<store::Fingerprint> {
        let quick = self.base_fingerprint_kind(rel)?;
        if let Some(r) = recorded {
            if r.same_stat(&quick) {
                let mut q = quick;
                q.sha256 = r.sha256.clone();
                return Ok(q);
            }
        }
        self.base_fingerprint(rel, None)
    }

    /// `commit {paths?, hunks?, force, merge}`: see the module documentation.
    pub fn commit(&mut self, opts: &CommitOptions, ctl: &CallControl) -> Result<CommitResult> {
        self.commit_gated(opts, &Ungated, ctl)
    }

    pub fn commit_gated(
        &mut self,
        opts: &CommitOptions,
        gate: &dyn Gate,
        ctl: &CallControl,
    ) -> Result<CommitResult> {
        // Paths as the session holds them (a host may write `\xNN` in either case).
        let paths = canonical_paths(opts.paths.as_deref())?;
        let mut hunks = BTreeMap::new();
        for (path, ids) in opts.hunks.iter().flatten() {
            let path = super::session::canonical(path)?;
            hunks
                .entry(path)
                .or_insert_with(Vec::new)
                .extend(ids.iter().cloned());
        }
        let selection: Option<Vec<String>> = match (&paths, &opts.hunks) {
            (None, None) => None,
            (p, _) => Some(
                p.iter()
                    .flatten()
                    .cloned()
                    .chain(hunks.keys().cloned())
                    .collect(),
            ),
        };
        review::check_selection(paths.iter().flatten().chain(hunks.keys()))?;
        let review = self.reviewed_changes(&selection, opts.include_ignored)?;
        let (mut found, ignored) = (review.found, review.ignored);
        if found.is_empty() && ignored > 0 {
            return Err(WsfsError::new(
                ErrorCode::NothingToCommit,
                format!("the only changes at the paths given ({ignored}) are ignored by .gitignore or the built-in cache list; commit with include_ignored: true to commit them"),
            ));
        }
        if found.is_empty() {
            return Err(WsfsError::new(
                ErrorCode::NothingToCommit,
                "the session has no changes at the paths given; call diff to see what changed",
            ));
        }
        // Hunk selections name files of the diff and hunks of their current diff.
        for (path, ids) in &hunks {
            let Some(f) = found
                .iter()
                .find(|f| &f.change.path == path && f.change.kind == "file")
            else {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("{path} has no text changes in this session; call diff for the paths and hunk ids"),
                ));
            };
            for id in ids {
                if !f.change.hunks.iter().any(|h| &h.id == id) {
                    return Err(WsfsError::new(
                        ErrorCode::InvalidArguments,
                        format!("hunk {id} is not in the current diff of {path} (the file changed since); call diff again for its hunk ids"),
                    ));
                }
            }
        }
        // A path listed in `paths` commits whole even if it has a hunk selection too.
        let whole = |p: &str| paths.as_ref().is_some_and(|_| selected(&paths, p));
        let mut seen = BTreeSet::new();
        let mut unsupported = Vec::new();
        for f in &found {
            if !seen.insert(f.change.path.clone()) {
                unsupported.push(format!("{} (its type changed)", f.change.path));
            } else if f.change.kind != "file" && f.change.kind != "dir" && f.change.status != "D" {
                unsupported.push(format!("{} (a {})", f.change.path, f.change.kind));
            }
        }
        if !unsupported.is_empty() {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("committing these is not supported yet: {}; nothing was changed. Commit the other paths (paths: [...]), or discard these", unsupported.join(", ")),
            ));
        }
        // Conflicts: every affected path's base against its record.
        let owners: BTreeSet<String> = found.iter().map(|f| f.owner.clone()).collect();
        let mut conflicts = Vec::new();
        let mut now_fps = BTreeMap::new();
        for owner in &owners {
            ctl.check()?;
            let recorded = self.touched.fps.get(owner).cloned();
            let now = self.fingerprint_now(owner, recorded.as_ref())?;
            // A base still as this session's own last commit of the path left it is no
            // conflict either: after a rewind past that commit, `recorded` is the base from
            // before it, but nobody else changed the base since.
            let ok = recorded.as_ref().is_some_and(|r| unchanged(r, &now))
                || self
                    .touched
                    .committed
                    .get(owner)
                    .is_some_and(|c| unchanged(c, &now));
            if !ok {
                let mergeable = !hunks.contains_key(owner)
                    && self.mergeable(owner, recorded.as_ref(), &found).is_some();
                conflicts.push(Conflict {
                    path: owner.clone(),
                    base_changed: true,
                    session_changed: true,
                    mergeable,
                });
            }
            now_fps.insert(owner.clone(), now);
        }
        let mut merged = Vec::new();
        if !conflicts.is_empty() && !opts.force {
            if !(opts.merge && conflicts.iter().all(|c| c.mergeable)) {
                return Ok(CommitResult {
                    committed: false,
                    files: Vec::new(),
                    conflicts,
                    merged,
                    warnings: Vec::new(),
                    ignored,
                });
            }
            for c in &conflicts {
                let recorded = self.touched.fps.get(&c.path).cloned();
                let text = self
                    .mergeable(&c.path, recorded.as_ref(), &found)
                    .expect("checked mergeable");
                if let Some(f) = found.iter_mut().find(|f| f.change.path == c.path) {
                    f.new = Some(text.into_bytes());
                }
                merged.push(c.path.clone());
            }
        }
        let mut result = self.apply(found, &hunks, &whole, gate, ctl, merged)?;
        result.ignored = ignored;
        Ok(result)
    }

    /// The three-way merge of `path` (whole-file text change) when it succeeds.
    fn mergeable(
        &self,
        path: &str,
        recorded: Option<&store::Fingerprint>,
        found: &[Found],
    ) -> Option<String> {
        let f = found
            .iter()
            .find(|f| f.change.path == path && f.change.kind == "file")?;
        let session = f.new.as_deref()?;
        let ancestor = match recorded {
            Some(r) if r.is_absent() => Vec::new(),
            Some(r) => self.original(r.sha256.as_deref()?)?,
            None => return None,
        };
        let (parent, leaf) = parent_leaf(path);
        let base_dir = open_beneath(&self.base.dir, parent).ok()??;
        let base_now = super::diff::read_file(&base_dir, leaf).ok()?;
        if !(is_text(&ancestor) && is_text(&base_now) && is_text(session)) {
            return None;
        }
        diffy::merge(
            std::str::from_utf8(&ancestor).ok()?,
            std::str::from_utf8(&base_now).ok()?,
            std::str::from_utf8(session).ok()?,
        )
        .ok()
    }

    fn apply(
        &mut self,
        found: Vec<Found>,
        hunks: &BTreeMap<String, Vec<String>>,
        whole: &dyn Fn(&str) -> bool,
        gate: &dyn Gate,
        ctl: &CallControl,
        merged: Vec<String>,
    ) -> Result<CommitResult> {
        let mut ops: Vec<Op<'_>> = Vec::new();
        let mut intent: Vec<Intended> = Vec::new();
        let mut locks = Vec::new();
        let mut dirs_gone = Vec::new();
        let mut dirs_added = Vec::new();
        let mut files = Vec::new();
        for f in &found {
            let path = &f.change.path;
            if f.dir_gone {
                dirs_gone.push(path.clone());
                intent.push(Intended {
                    path: path.clone(),
                    owner: f.owner.clone(),
                    what: "gone".into(),
                    after: None,
                    escaped: true,
                });
                continue;
            }
            if f.dir_added {
                dirs_added.push((path.clone(), f.new_mode));
                intent.push(Intended {
                    path: path.clone(),
                    owner: f.owner.clone(),
                    what: "added".into(),
                    after: None,
                    escaped: true,
                });
                continue;
            }
            let partial = hunks.get(path).filter(|_| !whole(path));
            let content: Option<Vec<u8>> = match (partial, f.change.status) {
                (Some(ids), _) => Some(
                    apply_hunks(
                        std::str::from_utf8(f.old.as_deref().unwrap_or_default())
                            .unwrap_or_default(),
                        std::str::from_utf8(f.new.as_deref().unwrap_or_default())
                            .unwrap_or_default(),
                        ids,
                    )
                    .into_bytes(),
                ),
                (None, "D") => None,
                (None, _) => f.new.clone(),
            };
            let tool_path = self.base.parse_path(path)?;
            let (parent, leaf) = parent_leaf(path);
            let base_dir = open_beneath(&self.base.dir, parent).map_err(|e| on_path(&e, path))?;
            let base_kind = match &base_dir {
                Some(d) => match rustix::fs::statat(
                    d,
                    &*fs_name(leaf).map_err(|e| on_path(&e, path))?,
                    AtFlags::SYMLINK_NOFOLLOW,
                ) {
                    Ok(s) => Some(FileType::from_raw_mode(s.st_mode)),
                    Err(rustix::io::Errno::NOENT) => None,
                    Err(e) => return Err(on_path(&e.into(), path)),
                },
                None => None,
            };
            let sha_before = f.old.as_deref().map(sha256_hex);
            let sha_after = content.as_deref().map(sha256_hex);
            let kind = match (&content, base_kind) {
                (None, None) => continue, // already gone
                (None, Some(_)) => OpKind::Remove,
                (Some(_), Some(FileType::RegularFile)) => OpKind::Replace,
                (Some(_), None) => OpKind::Create,
                (Some(_), Some(_)) => {
                    return Err(WsfsError::new(
                        ErrorCode::InvalidArguments,
                        format!(
                        "{path} is not a regular file in the base any more; nothing was changed"
                    ),
                    ))
                }
            };
            let place = match self
                .base
                .resolve_entry(&tool_path, Access::WRITE, false, gate, ctl)
            {
                Ok(located) => {
                    if kind != OpKind::Create {
                        if let Some(l) = &located.leaf {
                            let file = crate::sandbox::fileops::open_leaf_read(&located.dir, l)
                                .map_err(|e| on_path(&e, path))?
                                .into_std();
                            let _ = file.lock();
                            locks.push(file);
                        }
                    }
                    Place::Resolved(Box::new(located))
                }
                Err(e) if e.code == ErrorCode::PathNotFound && kind == OpKind::Create => {
                    Place::Pending {
                        path: tool_path.clone(),
                        missing: self.missing_base_dirs(path),
                    }
                }
                Err(e) => return Err(e),
            };
            // The new file's mode: the session's for a whole file, the base's for a part.
            let keep = match (partial, kind) {
                (_, OpKind::Remove) => None,
                (Some(_), OpKind::Replace) => base_dir
                    .as_ref()
                    .and_then(|d| d.symlink_metadata(&*fs_name(leaf).ok()?).ok()),
                _ => self.upper_meta(path),
            };
            intent.push(Intended {
                path: path.clone(),
                owner: f.owner.clone(),
                what: "file".into(),
                after: sha_after.clone(),
                escaped: true,
            });
            files.push(path.clone());
            ops.push(Op {
                kind,
                place,
                content: content.unwrap_or_default(),
                keep,
                display: path.clone(),
                sha256_before: sha_before,
                sha256_after: sha_after,
            });
        }
        files.extend(dirs_gone.iter().cloned());
        files.extend(dirs_added.iter().map(|(p, _)| p.clone()));
        let intent_bytes = serde_json::to_vec(&intent).expect("an intent serializes");
        store::write_atomic(&self.meta, INTENT, &intent_bytes)
            .map_err(|e| machinery("cannot record the commit's intent; nothing was changed", &e))?;
        let scope = Scope {
            root: &self.base,
            gate,
        };
        let mut warnings = Vec::new();
        if !ops.is_empty() {
            match journaled::commit(&scope, Anchor::Root, ops, ctl) {
                Ok(done) => warnings.extend(done.warnings),
                Err(e) => {
                    drop(locks);
                    let _ = self.meta.remove_file(INTENT);
                    return Err(match e {
                        CommitError::Exists(k) => WsfsError::new(
                            ErrorCode::FileExists,
                            format!("{} appeared in the base meanwhile; nothing was committed: call commit again to see the conflict", files.get(k).cloned().unwrap_or_default()),
                        ),
                        CommitError::Failed(e) => e,
                    });
                }
            }
        }
        drop(locks);
        // After the commit point: directories, then the session's side.
        dirs_gone.sort_by_key(|p| std::cmp::Reverse(p.matches('/').count()));
        for d in &dirs_gone {
            if let Err(e) =
                fs_path(d).and_then(|raw| self.base.dir.remove_dir(OsStr::from_bytes(&raw)))
            {
                warnings.push(format!(
                    "{d}: the files below it were removed, but not the directory itself ({e})"
                ));
            }
        }
        dirs_added.sort_by_key(|(p, _)| p.matches('/').count());
        for (d, mode) in &dirs_added {
            use std::os::unix::fs::PermissionsExt;
            let raw = match fs_path(d) {
                Ok(raw) => raw,
                Err(e) => {
                    warnings.push(format!("{d}: the directory could not be made ({e})"));
                    continue;
                }
            };
            let raw = OsStr::from_bytes(&raw);
            // An added directory selected without its new parent (`paths: ["new/e1"]`) needs
            // the parent made too, as a committed file's missing parents are.
            if let Some(parent) = std::path::Path::new(raw).parent() {
                if !parent.as_os_str().is_empty() {
                    let _ = self.base.dir.create_dir_all(parent);
                }
            }
            match self.base.dir.create_dir(raw) {
                Ok(()) => {
                    let _ = self.base.dir.set_permissions(
                        raw,
                        cap_std::fs::Permissions::from_std(std::fs::Permissions::from_mode(*mode)),
                    );
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => warnings.push(format!("{d}: the directory could not be made ({e})")),
            }
        }
        if let Err(e) = self.finish(&intent) {
            warnings.push(format!("the base is committed, but updating the session failed ({}); the next open finishes it", e.message));
            return Ok(CommitResult {
                committed: true,
                files,
                conflicts: Vec::new(),
                merged,
                warnings,
                ignored: 0,
            });
        }
        let _ = self.meta.remove_file(INTENT);
        let _ = store::fsync_dir(&self.meta);
        Ok(CommitResult {
            committed: true,
            files,
            conflicts: Vec::new(),
            merged,
            warnings,
            ignored: 0,
        })
    }

    fn upper_meta(&self, rel: &str) -> Option<cap_std::fs::Metadata> {
        let (parent, leaf) = parent_leaf(rel);
        let dir = open_beneath(self.upper(), parent).ok()??;
        dir.symlink_metadata(&*fs_name(leaf).ok()?).ok()
    }

    /// The parent directories of `rel` missing in the base, outermost first.
    fn missing_base_dirs(&self, rel: &str) -> Vec<PathBuf> {
        let (parent, _) = parent_leaf(rel);
        let mut out = Vec::new();
        let mut prefix = String::new();
        for name in parent.split('/').filter(|n| !n.is_empty()) {
            if !prefix.is_empty() {
                prefix.push('/');
            }
            prefix.push_str(name);
            if !matches!(open_beneath(&self.base.dir, &prefix), Ok(Some(_))) {
                if let Ok(raw) = fs_path(&prefix) {
                    out.push(PathBuf::from(OsStr::from_bytes(&raw)));
                }
            }
        }
        out
    }

    /// The session's side of a commit (or of its recovery): idempotent, see the module doc.
    fn finish(&mut self, intent: &[Intended]) -> Result<()> {
        let mut records = Vec::new();
        let mut done_owners = BTreeSet::new();
        let mut landed_paths: BTreeSet<String> = BTreeSet::new();
        let mut touched_dirs: BTreeSet<String> = BTreeSet::new();
        for it in intent {
            let now = self.base_fingerprint(&it.path, None)?;
            let landed = match it.what.as_str() {
                "file" => match &it.after {
                    Some(sha) => now.kind == "file" && now.sha256.as_deref() == Some(sha.as_str()),
                    None => now.is_absent(),
                },
                "gone" => now.is_absent(),
                _ => now.kind == "dir",
            };
            if !landed {
                continue;
            }
            touched_dirs.insert(parent_leaf(&it.path).0.to_string());
            landed_paths.insert(it.path.clone());
            done_owners.insert(it.owner.clone());
        }
        // The session's state of these paths changes below: their before-images first.
        let owners: Vec<&str> = done_owners.iter().map(String::as_str).collect();
        self.capture(&owners)?;
        // An opaque directory above a committed path (the kernel marks every directory it
        // makes in a merged one; a deleted base directory made again is one) now hides what
        // the commit put in the base. Where the session covers the base's whole subtree it
        // hides nothing the session does not show, so it becomes plain, outermost first, before
        // any committed entry leaves the upper tree; elsewhere it stays, and so do the
        // entries below it (see `below_opaque`).
        let mut dirs_above: BTreeSet<String> = BTreeSet::new();
        for path in &landed_paths {
            let mut end = 0;
            for name in path.split('/') {
                end += name.len();
                dirs_above.insert(path[..end].to_string());
                end += 1;
            }
        }
        let mut by_depth: Vec<String> = dirs_above.into_iter().collect();
        by_depth.sort_by_key(|p| p.matches('/').count());
        for dir in &by_depth {
            self.make_plain_if_covered(dir)?;
        }
        // The commit changed the directories above (and at) what it committed too (their
        // entries, their mtime): the base as it left them, for the owners' sake after a
        // rewind (see `Touched::committed`). A directory's fingerprint is its stat fields.
        for dir in by_depth.iter().filter(|d| !done_owners.contains(*d)) {
            let now = self.base_fingerprint_kind(dir)?;
            if now.kind == "dir" {
                records.push(Record {
                    op: 'k',
                    path: Some(dir.clone()),
                    fp: Some(now),
                    i: None,
                });
            }
        }
        // Upper directories an entry left, each fsynced once before the log forgets the
        // entries (a thousand files in one directory are one fsync, not a thousand). Kept
        // as paths, not handles: a commit may span more directories than descriptors.
        let mut emptied: BTreeSet<String> = BTreeSet::new();
        for owner in done_owners {
            let mut original = Vec::new();
            let now = self.base_fingerprint(&owner, Some(&mut original))?;
            // The base as this commit left it, kept across rewinds (see `Touched::committed`).
            records.push(Record {
                op: 'k',
                path: Some(owner.clone()),
                fp: Some(now.clone()),
                i: None,
            });
            let (parent, leaf) = parent_leaf(&owner);
            let Some(udir) = open_beneath(self.upper(), parent).map_err(|e| on_path(&e, &owner))?
            else {
                records.push(Record {
                    op: 'f',
                    path: Some(owner.clone()),
                    fp: None,
                    i: None,
                });
                continue;
            };
            let ukind = super::session::upper_kind(&udir, leaf).map_err(|e| on_path(&e, &owner))?;
            // Below an opaque directory, an upper entry is all the view has of its path.
            let kept_by_opaque = self.below_opaque(&owner)?;
            let equal = !kept_by_opaque
                && match ukind {
                    None => true,
                    Some((UpperKind::Whiteout, _)) => now.is_absent(),
                    Some((UpperKind::File, s)) => {
                        now.kind == "file"
                            && now.mode == s.st_mode & 0o7777
                            && super::diff::read_file(&udir, leaf)
                                .ok()
                                .map(|b| sha256_hex(&b))
                                == now.sha256
                    }
                    // An opaque one was made plain above if the base holds only what it shows.
                    Some((UpperKind::Dir { .. }, _)) => false,
                    Some(_) => false,
                };
            if equal {
                if ukind.is_some() {
                    super::session::remove_entry(&udir, leaf).map_err(|e| on_path(&e, &owner))?;
                    emptied.insert(parent.to_string());
                }
                records.push(Record {
                    op: 'f',
                    path: Some(owner.clone()),
                    fp: None,
                    i: None,
                });
            } else {
                // The new base is the ancestor of a later three-way merge of this path.
                if let Some(sha) = now.sha256.as_deref().filter(|_| now.kind == "file") {
                    self.keep_original_bounded(sha, &original);
                }
                records.push(Record {
                    op: 's',
                    path: Some(owner.clone()),
                    fp: Some(now),
                    i: None,
                });
            }
        }
        for parent in &emptied {
            if let Ok(Some(udir)) = open_beneath(self.upper(), parent) {
                let _ = store::fsync_dir(&udir);
            }
        }
        // Copied-up directories left empty, plain and still in the base leave the session.
        for d in touched_dirs.into_iter().rev() {
            let mut dir = d;
            while !dir.is_empty() {
                if !self.prune_dir(&dir) {
                    break;
                }
                records.push(Record {
                    op: 'f',
                    path: Some(dir.clone()),
                    fp: None,
                    i: None,
                });
                dir = parent_leaf(&dir).0.to_string();
            }
        }
        self.append(&records)
    }

    /// Makes the upper directory `rel` plain if it is opaque, the base has a directory
    /// there, and the session covers every entry of the base's subtree (`covers`), so that
    /// the mark hides nothing the view shows. Its before-image is taken first; idempotent.
    fn make_plain_if_covered(&mut self, rel: &str) -> Result<()> {
        let (parent, leaf) = parent_leaf(rel);
        let Some(udir) = open_beneath(self.upper(), parent).map_err(|e| on_path(&e, rel))? else {
            return Ok(());
        };
        let Some((UpperKind::Dir { opaque: true }, _)) =
            super::session::upper_kind(&udir, leaf).map_err(|e| on_path(&e, rel))?
        else {
            return Ok(());
        };
        let Some(base) = self.base_dir(rel)? else {
            return Ok(());
        };
        let Some(upper) = open_beneath(&udir, leaf).map_err(|e| on_path(&e, rel))? else {
            return Ok(());
        };
        if !covers(&upper, &base).map_err(|e| on_path(&e, rel))? {
            return Ok(());
        }
        self.capture(&[rel])?;
        match rustix::fs::fremovexattr(&upper, super::session::OPAQUE_XATTR) {
            Ok(()) | Err(rustix::io::Errno::NODATA) => {}
            Err(e) => return Err(on_path(&e.into(), rel)),
        }
        store::fsync_dir(&upper).map_err(|e| on_path(&e, rel))
    }

    /// Whether a directory above `rel` in the upper tree is opaque.
    fn below_opaque(&self, rel: &str) -> Result<bool> {
        let (parent, _) = parent_leaf(rel);
        let mut dir = match self.upper().try_clone() {
            Ok(d) => d,
            Err(e) => return Err(machinery("dup", &e)),
        };
        for name in parent.split('/').filter(|n| !n.is_empty()) {
            match super::session::upper_kind(&dir, name).map_err(|e| on_path(&e, rel))? {
                Some((UpperKind::Dir { opaque: true }, _)) => return Ok(true),
                Some((UpperKind::Dir { opaque: false }, _)) => {}
                _ => return Ok(false),
            }
            match open_beneath(&dir, name).map_err(|e| on_path(&e, rel))? {
                Some(sub) => dir = sub,
                None => return Ok(false),
            }
        }
        Ok(false)
    }

    /// Removes the upper directory `rel` if it is empty, not opaque and a directory in the
    /// base too; whether it did.
    fn prune_dir(&mut self, rel: &str) -> bool {
        let (parent, leaf) = parent_leaf(rel);
        let Ok(Some(udir)) = open_beneath(self.upper(), parent) else {
            return false;
        };
        let Ok(Some((UpperKind::Dir { opaque: false }, _))) =
            super::session::upper_kind(&udir, leaf)
        else {
            return false;
        };
        if !matches!(open_beneath(&self.base.dir, rel), Ok(Some(_))) {
            return false;
        }
        // Its before-image first (after a checkpoint).
        if self.capture(&[rel]).is_err() {
            return false;
        }
        let Ok(raw) = fs_name(leaf) else {
            return false;
        };
        let removed = rustix::fs::unlinkat(&udir, &*raw, AtFlags::REMOVEDIR).is_ok();
        if removed {
            let _ = store::fsync_dir(&udir);
        }
        removed
    }
}

/// Whether the upper directory `upper` shows every entry of the base directory `base` as
/// the session has it, were it plain: each base name has an upper entry, and where both are
/// directories and the upper one is plain (it would merge with the base's), recursively so.
/// Only base directories the upper tree also holds are listed.
fn covers(upper: &cap_std::fs::Dir, base: &cap_std::fs::Dir) -> std::io::Result<bool> {
    for entry in base.entries()? {
        let entry = entry?;
        let raw = entry.file_name();
        let name = crate::names::encode(raw.as_bytes());
        match super::session::upper_kind(upper, &name)? {
            None => return Ok(false),
            Some((UpperKind::Dir { opaque: false }, _)) if entry.file_type()?.is_dir() => {
                let (Some(usub), Some(bsub)) =
                    (open_beneath(upper, &name)?, open_beneath(base, &name)?)
                else {
                    return Ok(false);
                };
                if !covers(&usub, &bsub)? {
                    return Ok(false);
                }
            }
            Some(_) => {}
        }
    }
    Ok(true)
}

/// At open: finishes a commit a crash interrupted (the base's journal is recovered first).
pub fn recover(session: &mut Session) -> Result<()> {
    let bytes = match session.meta.read(INTENT) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(machinery("cannot read the session's commit intent", &e)),
    };
    // A torn intent was never acted on (it is written whole before the base changes).
    if let Ok(mut intent) = serde_json::from_slice::<Vec<Intended>>(&bytes) {
        for it in intent.iter_mut().filter(|it| !it.escaped) {
            it.path = store::upgrade_path(&it.path);
            it.owner = store::upgrade_path(&it.owner);
        }
        session.finish(&intent)?;
    }
    let _ = session.meta.remove_file(INTENT);
    let _ = store::fsync_dir(&session.meta);
    Ok(())
}
