//! `diff`: the session's changes against the base, found by walking the upper tree only (its
//! cost follows the session's changes, never the base's size).

use super::review::{self, Entry, RepositoryCommit};
use super::session::{fs_name, on_path, open_beneath, Session, UpperKind};
use crate::error::Result;
use crate::lines::sha256_hex;
use crate::sandbox::tempfile::is_temp_name;
use cap_std::fs::Dir;
use rustix::fs::{AtFlags, FileType};
use serde::{Deserialize, Serialize};
use similar::{DiffOp, DiffTag, TextDiff};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

/// Unified text shown by default, in bytes.
pub const DEFAULT_MAX_BYTES: usize = 256 << 10;

/// Lines of context around a change (and the distance that joins two changes into a hunk).
const CONTEXT: usize = 3;

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DiffOptions {
    /// Only these paths (a directory: everything below it).
    #[serde(default)]
    pub paths: Option<Vec<String>>,
    /// The unified text's bound (default 256 KiB); `changes` is never cut.
    #[serde(default)]
    pub max_bytes: Option<usize>,
    /// Show the changes `.gitignore` files and the built-in cache list ignore too
    /// (`review`).
    #[serde(default)]
    pub include_ignored: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Hunk {
    /// Stable while the file's change is: a hash of the hunk's position and lines.
    pub id: String,
    pub old_start: usize,
    pub old_lines: usize,
    pub new_start: usize,
    pub new_lines: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct Change {
    pub path: String,
    /// `A`, `M` or `D`.
    pub status: &'static str,
    /// `file`, `dir`, `symlink` or `other` (the new entry's; the old one's for `D`).
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub bytes_before: Option<u64>,
    pub bytes_after: Option<u64>,
    /// Not text (NUL bytes or not UTF-8) on either side: no hunks.
    pub binary: bool,
    /// Only the mode changed.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub mode_only: bool,
    pub hunks: Vec<Hunk>,
    /// A `git_repository` entry: how many paths below it changed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub changed_paths: Option<usize>,
    /// A `git_repository` entry: the commits the session made, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commits: Option<Vec<RepositoryCommit>>,
}

#[derive(Debug, Clone, Serialize)]
pub struct DiffResult {
    /// Deletions first (always all of them), then the rest, each part by path.
    pub changes: Vec<Change>,
    pub unified: String,
    /// The unified text was cut at `max_bytes` (a note at its end says what is missing).
    pub truncated: bool,
    /// Changes left out because `.gitignore` or the built-in cache list ignores them (they
    /// stay in the session; `include_ignored` shows them).
    pub ignored: usize,
    /// `.gitignore` files that could not be applied.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

/// One change with what a commit needs.
pub struct Found {
    pub change: Change,
    pub old: Option<Vec<u8>>,
    pub new: Option<Vec<u8>>,
    /// The upper entry's mode (files).
    pub new_mode: u32,
    /// A `D` of a directory: removed after its files.
    pub dir_gone: bool,
    /// An added directory (created after the files, if still missing).
    pub dir_added: bool,
    /// The session path whose touch record covers this change (a file inside a deleted
    /// directory is covered by the directory's).
    pub owner: String,
}

fn kind_name(ft: FileType) -> &'static str {
    match ft {
        FileType::RegularFile => "file",
        FileType::Directory => "dir",
        FileType::Symlink => "symlink",
        _ => "other",
    }
}

fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}/{name}")
    }
}

/// Whether `path` is selected by `paths` (itself or below one of them).
pub fn selected(paths: &Option<Vec<String>>, path: &str) -> bool {
    match paths {
        None => true,
        Some(list) => list.iter().any(|p| {
            let p = p.trim_end_matches('/');
            p.is_empty()
                || path == p
                || (path.starts_with(p) && path.as_bytes().get(p.len()) == Some(&b'/'))
        }),
    }
}

/// Paths a host selects (`paths` of diff or commit), each checked and in the canonical
/// escaped form of session paths (a host may write `\xNN` in either case); a trailing `/` is
/// dropped.
pub fn canonical_paths(paths: Option<&[String]>) -> Result<Option<Vec<String>>> {
    let Some(paths) = paths else {
        return Ok(None);
    };
    paths
        .iter()
        .map(|p| super::session::canonical(p.trim_end_matches('/')))
        .collect::<Result<Vec<_>>>()
        .map(Some)
}

pub fn is_text(bytes: &[u8]) -> bool {
    memchr::memchr(0, bytes).is_none() && std::str::from_utf8(bytes).is_ok()
}

/// Lines with their endings.
fn lines(text: &str) -> Vec<&str> {
    text.split_inclusive('\n').collect()
}

/// The hunks between `old` and `new` (text), each with its ops.
pub fn hunks(old: &str, new: &str) -> Vec<(Hunk, Vec<DiffOp>)> {
    let (a, b) = (lines(old), lines(new));
    let diff = TextDiff::from_slices(&a, &b);
    diff.grouped_ops(CONTEXT)
        .into_iter()
        .filter(|g| g.iter().any(|op| op.tag() != DiffTag::Equal))
        .map(|group| {
            let first = group.first().expect("a group has ops");
            let last = group.last().expect("a group has ops");
            let (o0, o1) = (first.old_range().start, last.old_range().end);
            let (n0, n1) = (first.new_range().start, last.new_range().end);
            let mut key = format!("{o0}\0");
            for op in &group {
                if op.tag() != DiffTag::Equal {
                    for l in &a[op.old_range()] {
                        key.push('-');
                        key.push_str(l);
                    }
                    for l in &b[op.new_range()] {
                        key.push('+');
                        key.push_str(l);
                    }
                }
            }
            let hunk = Hunk {
                id: format!("h{}", &sha256_hex(key.as_bytes())[..10]),
                old_start: if o1 > o0 { o0 + 1 } else { o0 },
                old_lines: o1 - o0,
                new_start: if n1 > n0 { n0 + 1 } else { n0 },
                new_lines: n1 - n0,
            };
            (hunk, group)
        })
        .collect()
}

/// `old` with the hunks whose ids are in `chosen` applied (the others left as in `old`).
pub fn apply_hunks(old: &str, new: &str, chosen: &[String]) -> String {
    let (a, b) = (lines(old), lines(new));
    let mut out = String::with_capacity(old.len().max(new.len()));
    let mut cursor = 0;
    for (hunk, ops) in hunks(old, new) {
        if !chosen.contains(&hunk.id) {
            continue;
        }
        for op in ops {
            if op.tag() == DiffTag::Equal {
                continue;
            }
            let (o, n) = (op.old_range(), op.new_range());
            for l in &a[cursor..o.start] {
                out.push_str(l);
            }
            for l in &b[n] {
                out.push_str(l);
            }
            cursor = o.end;
        }
    }
    for l in &a[cursor..] {
        out.push_str(l);
    }
    out
}

fn unified_of(change: &Change, old: &[u8], new: &[u8]) -> String {
    let path = &change.path;
    let a = if change.status == "A" {
        "/dev/null".to_string()
    } else {
        format!("a/{path}")
    };
    let b = if change.status == "D" {
        "/dev/null".to_string()
    } else {
        format!("b/{path}")
    };
    if change.kind != "file" && change.kind != "symlink" {
        return format!(
            "{} {} {path} ({})\n",
            change.status,
            change.kind,
            if change.status == "D" {
                "deleted"
            } else {
                "added"
            }
        );
    }
    if change.binary {
        return format!("Binary files {a} and {b} differ\n");
    }
    if change.mode_only {
        return format!("mode changed: {path}\n");
    }
    let (old, new) = (
        std::str::from_utf8(old).unwrap_or_default(),
        std::str::from_utf8(new).unwrap_or_default(),
    );
    let (la, lb) = (lines(old), lines(new));
    let diff = TextDiff::configure()
        .newline_terminated(true)
        .diff_slices(&la, &lb);
    diff.unified_diff()
        .context_radius(CONTEXT)
        .header(&a, &b)
        .to_string()
}

struct Walk<'s> {
    session: &'s Session,
    out: Vec<Found>,
}

impl Walk<'_> {
    /// The entries of the upper directory `upper` (the session's `prefix`), against the base
    /// directory `base` (`None`: the base has none). `hiding`: `upper` is opaque or below an
    /// opaque directory, so the view shows none of the base's entries it does not hold itself
    /// (the kernel looks no further below an opaque directory): those are deleted. The entries
    /// it holds are still compared with the base's, so that one a commit made equal is no
    /// change.
    fn dir(
        &mut self,
        upper: &Dir,
        base: Option<&Dir>,
        prefix: &str,
        owner: Option<&str>,
        hiding: bool,
    ) -> io::Result<()> {
        let names = escaped_names(upper)?;
        if let (true, Some(b)) = (hiding, base) {
            let mut hidden = Vec::new();
            for n in escaped_names(b)? {
                if super::session::upper_kind(upper, &n)?.is_none() {
                    hidden.push(n);
                }
            }
            let own = owner.unwrap_or(prefix).to_string();
            for n in hidden {
                self.deleted(b, &n, &join(prefix, &n), &own)?;
            }
        }
        for name in names {
            let rel = join(prefix, &name);
            let Some((kind, ustat)) = super::session::upper_kind(upper, &name)? else {
                continue;
            };
            let raw = fs_name(&name)?;
            let bstat = match base {
                Some(b) => match rustix::fs::statat(b, &*raw, AtFlags::SYMLINK_NOFOLLOW) {
                    Ok(s) => Some(s),
                    Err(rustix::io::Errno::NOENT) => None,
                    Err(e) => return Err(e.into()),
                },
                None => None,
            };
            let btype = bstat.map(|s| FileType::from_raw_mode(s.st_mode));
            let own = owner.map(str::to_string).unwrap_or_else(|| rel.clone());
            match kind {
                UpperKind::Whiteout => {
                    if let (Some(b), Some(_)) = (base, btype) {
                        self.deleted(b, &name, &rel, &own)?;
                    }
                }
                UpperKind::Dir { opaque } => {
                    let sub = Dir::from(crate::sandbox::sys::open_child_dir(
                        upper.as_fd(),
                        raw.as_bytes(),
                    )?);
                    let base_dir = match (base, btype) {
                        (Some(b), Some(FileType::Directory)) => open_beneath(b, &name)?,
                        _ => None,
                    };
                    if let (Some(b), Some(t)) = (base, btype) {
                        if t != FileType::Directory {
                            self.deleted(b, &name, &rel, &own)?;
                        }
                    }
                    if base_dir.is_none() {
                        self.push(Found {
                            change: Change {
                                path: rel.clone(),
                                status: "A",
                                kind: "dir",
                                bytes_before: None,
                                bytes_after: None,
                                binary: false,
                                mode_only: false,
                                hunks: Vec::new(),
                                changed_paths: None,
                                commits: None,
                            },
                            old: None,
                            new: None,
                            new_mode: ustat.st_mode & 0o7777,
                            dir_gone: false,
                            dir_added: true,
                            owner: own.clone(),
                        });
                    }
                    if opaque {
                        self.dir(&sub, base_dir.as_ref(), &rel, Some(&own), true)?;
                    } else {
                        self.dir(&sub, base_dir.as_ref(), &rel, None, hiding)?;
                    }
                }
                UpperKind::File | UpperKind::Symlink | UpperKind::Other => {
                    let same_type = matches!(
                        (kind, btype),
                        (UpperKind::File, Some(FileType::RegularFile))
                            | (UpperKind::Symlink, Some(FileType::Symlink))
                    );
                    if let (Some(b), Some(_), false) = (base, btype, same_type) {
                        self.deleted(b, &name, &rel, &own)?;
                    }
                    let new = match kind {
                        UpperKind::File => Some(read_file(upper, &name)?),
                        UpperKind::Symlink => {
                            Some(rustix::fs::readlinkat(upper, &*raw, Vec::new())?.into_bytes())
                        }
                        _ => None,
                    };
                    let old = match (same_type, base) {
                        (true, Some(b)) => Some(match kind {
                            UpperKind::File => read_file(b, &name)?,
                            _ => rustix::fs::readlinkat(b, &*raw, Vec::new())?.into_bytes(),
                        }),
                        _ => None,
                    };
                    let umode = ustat.st_mode & 0o7777;
                    if let (Some(o), Some(n), Some(bs)) = (&old, &new, bstat) {
                        let mode_same = kind == UpperKind::Symlink || bs.st_mode & 0o7777 == umode;
                        if o == n && mode_same {
                            continue; // copied up, unchanged
                        }
                    }
                    let kname = kind_name(FileType::from_raw_mode(ustat.st_mode));
                    let status = if old.is_some() { "M" } else { "A" };
                    self.push_content(rel, status, kname, old, new, umode, own);
                }
            }
        }
        Ok(())
    }

    /// `name` in the base directory `base` (the session's `rel`) is deleted: it, and for a
    /// directory everything below it, files first.
    fn deleted(&mut self, base: &Dir, name: &str, rel: &str, owner: &str) -> io::Result<()> {
        let raw = fs_name(name)?;
        let stat = rustix::fs::statat(base, &*raw, AtFlags::SYMLINK_NOFOLLOW)?;
        let ft = FileType::from_raw_mode(stat.st_mode);
        if ft == FileType::Directory {
            let sub = Dir::from(crate::sandbox::sys::open_child_dir(
                base.as_fd(),
                raw.as_bytes(),
            )?);
            for n in escaped_names(&sub)? {
                self.deleted(&sub, &n, &join(rel, &n), owner)?;
            }
            self.push(Found {
                change: Change {
                    path: rel.to_string(),
                    status: "D",
                    kind: "dir",
                    bytes_before: None,
                    bytes_after: None,
                    binary: false,
                    mode_only: false,
                    hunks: Vec::new(),
                    changed_paths: None,
                    commits: None,
                },
                old: None,
                new: None,
                new_mode: 0,
                dir_gone: true,
                dir_added: false,
                owner: owner.to_string(),
            });
            return Ok(());
        }
        let old = match ft {
            FileType::RegularFile => Some(read_file(base, name)?),
            FileType::Symlink => {
                Some(rustix::fs::readlinkat(base, &*raw, Vec::new())?.into_bytes())
            }
            _ => None,
        };
        self.push_content(
            rel.to_string(),
            "D",
            kind_name(ft),
            old,
            None,
            0,
            owner.to_string(),
        );
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn push_content(
        &mut self,
        path: String,
        status: &'static str,
        kind: &'static str,
        old: Option<Vec<u8>>,
        new: Option<Vec<u8>>,
        new_mode: u32,
        owner: String,
    ) {
        let o = old.as_deref().unwrap_or_default();
        let n = new.as_deref().unwrap_or_default();
        let binary = kind == "file" && !(is_text(o) && is_text(n));
        let mode_only = status == "M" && o == n;
        let hunks = if binary || mode_only || kind != "file" {
            Vec::new()
        } else {
            hunks(
                std::str::from_utf8(o).unwrap_or_default(),
                std::str::from_utf8(n).unwrap_or_default(),
            )
            .into_iter()
            .map(|(h, _)| h)
            .collect()
        };
        self.push(Found {
            change: Change {
                path,
                status,
                kind,
                bytes_before: old.as_ref().map(|b| b.len() as u64),
                bytes_after: new.as_ref().map(|b| b.len() as u64),
                binary,
                mode_only,
                hunks,
                changed_paths: None,
                commits: None,
            },
            old,
            new,
            new_mode,
            dir_gone: false,
            dir_added: false,
            owner,
        });
    }

    fn push(&mut self, found: Found) {
        let _ = self.session;
        self.out.push(found);
    }
}

/// The names in `dir` (but wsfs temp names), escaped as session paths hold them, sorted.
fn escaped_names(dir: &Dir) -> io::Result<Vec<String>> {
    let mut names = Vec::new();
    for entry in dir.entries()? {
        let name = entry?.file_name();
        if !is_temp_name(name.as_bytes()) {
            names.push(crate::names::encode(name.as_bytes()).into_owned());
        }
    }
    names.sort();
    Ok(names)
}

/// The content of the file `name` (escaped) in `dir`.
pub fn read_file(dir: &Dir, name: &str) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let mut file = crate::sandbox::sys::open_file(dir.as_fd(), fs_name(name)?.as_bytes())?;
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes)?;
    Ok(bytes)
}

impl Session {
    /// Every change of the session against the base, as `diff` reports them (selected by
    /// `paths`), deletions first.
    pub fn changes(&self, paths: &Option<Vec<String>>) -> Result<Vec<Found>> {
        let mut walk = Walk {
            session: self,
            out: Vec::new(),
        };
        walk.dir(self.upper(), Some(&self.base.dir), "", None, false)
            .map_err(|e| on_path(&e, "the session's changes"))?;
        let mut out: Vec<Found> = walk
            .out
            .into_iter()
            .filter(|f| selected(paths, &f.change.path))
            .collect();
        // Deletions first; each part by path (stable: a directory's files before it).
        out.sort_by_key(|f| f.change.status != "D");
        Ok(out)
    }

    /// `diff {paths?, max_bytes?, include_ignored?}`: see the module documentation and
    /// `review`.
    pub fn diff(&self, opts: &DiffOptions) -> Result<DiffResult> {
        let paths = canonical_paths(opts.paths.as_deref())?;
        let review = self.reviewed_changes(&paths, opts.include_ignored)?;
        let cap = opts.max_bytes.unwrap_or(DEFAULT_MAX_BYTES);
        let mut unified = String::new();
        let mut truncated = false;
        let mut left = 0;
        let mut changes = Vec::new();
        for entry in review::entries(&review.found) {
            let (change, text) = match entry {
                Entry::One(f) => (
                    f.change.clone(),
                    unified_of(
                        &f.change,
                        f.old.as_deref().unwrap_or_default(),
                        f.new.as_deref().unwrap_or_default(),
                    ),
                ),
                Entry::Repository(c) => {
                    let text = review::repository_text(&c);
                    (c, text)
                }
            };
            changes.push(change);
            if truncated {
                left += 1;
                continue;
            }
            if unified.len() + text.len() > cap {
                truncated = true;
                left += 1;
                continue;
            }
            unified.push_str(&text);
        }
        if truncated {
            unified.push_str(&format!(
                "[diff text truncated at {cap} bytes: {left} more changed files are listed in changes but not shown here; call diff with paths, or a larger max_bytes]\n"
            ));
        }
        Ok(DiffResult {
            changes,
            unified,
            truncated,
            ignored: review.ignored,
            warnings: review.warnings,
        })
    }
}
