//! What the host's review of a session (`diff`, and a `commit` of all or of some paths)
//! leaves out and what it groups (issue 31, item 6).
//!
//! **Ignored changes.** A change whose path the workspace's `.gitignore` files ignore, or the
//! built-in list of caches ([`BUILTIN_IGNORES`]), is left out of `diff` and `commit` and
//! counted (`ignored`); it stays in the session, and `include_ignored` shows and commits it.
//! The rules are the base's `.gitignore` files (the root's and those of the directories on
//! the way, the innermost with an opinion deciding, as git and the walks apply them), not the
//! session's edits of them: an agent cannot hide a change from the review by writing a
//! `.gitignore`. The built-in list is the outermost layer, as git's global excludes file is:
//! a workspace rule `!.tox/` re-includes. A deletion below a deleted directory that is not
//! ignored goes with that directory. Nothing inside a `.git` directory is ever ignored.
//!
//! **Git repositories.** Every change below a `.git` directory is one entry of `diff`: the
//! repository (`type` `git_repository`, its path the `.git` directory's), with how many paths
//! changed and the commits the session made, oldest first: hash and subject from the new
//! lines of the session's reflog (`logs/HEAD`), or without one the new tips of
//! `refs/heads/*` (no subject). Nothing is run; the files are the session's. A commit carries
//! a repository whole or not at all: a path inside one is refused as a selection.

use super::diff::{Change, Found};
use super::session::{fs_name, on_path, open_beneath, Session};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::sandbox::gitignore::{Gitignore, GitignoreBuilder};
use crate::sandbox::walk::filter::{ignored, load_gitignore};
use serde::Serialize;
use std::collections::{HashMap, HashSet};
use std::io;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

/// Caches no review wants, ignored at any depth unless a workspace `.gitignore` re-includes
/// them: Python's byte code and its test, type-check, lint and property-test caches, tox's
/// and nox's environments, and the tools' cache in `node_modules`.
pub const BUILTIN_IGNORES: &[&str] = &[
    "__pycache__/",
    ".pytest_cache/",
    ".mypy_cache/",
    ".ruff_cache/",
    ".hypothesis/",
    ".tox/",
    ".nox/",
    "**/node_modules/.cache/",
];

/// The `type` of a repository's entry in `diff`.
pub const GIT_REPOSITORY: &str = "git_repository";

/// A commit the session made in a repository.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RepositoryCommit {
    pub hash: String,
    /// Its subject (the message's first line); `None` where the repository keeps no reflog.
    pub subject: Option<String>,
}

/// The session's changes a review covers, and what it left out.
pub struct Review {
    pub found: Vec<Found>,
    /// Changes the ignore rules left out (0 with `include_ignored`).
    pub ignored: usize,
    /// `.gitignore` files that could not be applied.
    pub warnings: Vec<String>,
}

/// The `.git` directory that `path` is in or is (`a/.git` for `a/.git/HEAD`); a file named
/// `.git` (a worktree's link) is no repository.
pub fn repository_of(path: &str, is_dir: bool) -> Option<&str> {
    let mut end = 0;
    for name in path.split('/') {
        end += name.len();
        if name == ".git" && (end < path.len() || is_dir) {
            return Some(&path[..end]);
        }
        end += 1;
    }
    None
}

/// Refuses a selection (`paths` or `hunks` of a commit) inside a repository.
pub fn check_selection<'p>(paths: impl IntoIterator<Item = &'p String>) -> Result<()> {
    for p in paths {
        if let Some(repo) = repository_of(p, false).filter(|r| r != p) {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("{p} is inside the git repository {repo}, which is committed whole so that it stays consistent; select {repo:?} instead"),
            ));
        }
    }
    Ok(())
}

impl Session {
    /// The session's changes selected by `paths`, less those the ignore rules leave out
    /// (unless `include_ignored`).
    pub fn reviewed_changes(
        &self,
        paths: &Option<Vec<String>>,
        include_ignored: bool,
    ) -> Result<Review> {
        let found = self.changes(paths)?;
        let mut review = Review {
            found: Vec::with_capacity(found.len()),
            ignored: 0,
            warnings: Vec::new(),
        };
        if include_ignored {
            review.found = found;
            return Ok(review);
        }
        let mut rules = Rules::new(self);
        let mut left_out = Vec::with_capacity(found.len());
        for f in &found {
            let path = &f.change.path;
            let ignored = rules
                .ignores(path, f.change.kind == "dir")
                .map_err(|e| on_path(&e, path))?;
            left_out.push(ignored);
        }
        leave_out_dirs_of_ignored(&found, &mut left_out);
        let kept_gone: Vec<&str> = found
            .iter()
            .zip(&left_out)
            .filter(|(f, ignored)| f.dir_gone && !**ignored)
            .map(|(f, _)| f.change.path.as_str())
            .collect();
        let below = |dir: &str, p: &str| {
            p.len() > dir.len() && p.starts_with(dir) && p.as_bytes()[dir.len()] == b'/'
        };
        let with_dir: Vec<bool> = found
            .iter()
            .map(|f| f.change.status == "D" && kept_gone.iter().any(|d| below(d, &f.change.path)))
            .collect();
        for ((f, ignored), goes_with_dir) in found.into_iter().zip(left_out).zip(with_dir) {
            if ignored && !goes_with_dir {
                review.ignored += 1;
            } else {
                review.found.push(f);
            }
        }
        review.warnings = rules.warnings;
        Ok(review)
    }
}

/// The directories `path` is below (`a`, `a/b` for `a/b/c`).
fn ancestors(path: &str) -> impl Iterator<Item = &str> {
    path.match_indices('/').map(move |(i, _)| &path[..i])
}

/// An added directory that holds changes, all of them ignored, is left out too (git shows
/// no directory of ignored files either); an added empty one is a change of its own.
fn leave_out_dirs_of_ignored(found: &[Found], left_out: &mut [bool]) {
    let mut has_below: HashSet<&str> = HashSet::new();
    for f in found {
        has_below.extend(ancestors(&f.change.path));
    }
    // Below each directory: whether a change that is not an added directory holding
    // others is kept.
    let mut kept_below: HashSet<&str> = HashSet::new();
    for (f, ignored) in found.iter().zip(left_out.iter()) {
        let holder = f.dir_added && has_below.contains(f.change.path.as_str());
        if !holder && !ignored {
            kept_below.extend(ancestors(&f.change.path));
        }
    }
    for (f, ignored) in found.iter().zip(left_out.iter_mut()) {
        let path = f.change.path.as_str();
        if f.dir_added && has_below.contains(path) && !kept_below.contains(path) {
            *ignored = true;
        }
    }
}

/// The base's `.gitignore` files, read as they are needed, and the built-in list.
struct Rules<'s> {
    session: &'s Session,
    builtin: Option<Gitignore>,
    /// A directory's session path → its rules.
    dirs: HashMap<String, Option<Gitignore>>,
    /// A directory's session path → whether it is ignored.
    decided: HashMap<String, bool>,
    warnings: Vec<String>,
}

impl<'s> Rules<'s> {
    fn new(session: &'s Session) -> Rules<'s> {
        Rules {
            session,
            builtin: builtin(),
            dirs: HashMap::new(),
            decided: HashMap::new(),
            warnings: Vec::new(),
        }
    }

    /// Reads the `.gitignore` of the base directory `dir` (a session path) once.
    fn load(&mut self, dir: &str, raw: &[u8]) -> io::Result<()> {
        if self.dirs.contains_key(dir) {
            return Ok(());
        }
        let base = &self.session.base.dir;
        let opened = match dir {
            "" => Some(base.try_clone()?),
            _ => open_beneath(base, dir)?,
        };
        let rules = opened.and_then(|d| load_gitignore(d.as_fd(), raw, &mut self.warnings));
        self.dirs.insert(dir.to_string(), rules);
        Ok(())
    }

    /// Whether `path` (a directory if `is_dir`), or a directory above it, is ignored.
    fn ignores(&mut self, path: &str, is_dir: bool) -> io::Result<bool> {
        let names: Vec<&str> = path.split('/').collect();
        // The end of each name in `path` and in its raw bytes.
        let mut raw = Vec::with_capacity(path.len());
        let mut ends = Vec::with_capacity(names.len());
        let mut end = 0;
        for (i, name) in names.iter().enumerate() {
            if i > 0 {
                raw.push(b'/');
                end += 1;
            }
            raw.extend_from_slice(fs_name(name)?.as_bytes());
            end += name.len();
            ends.push((end, raw.len()));
        }
        for (i, name) in names.iter().enumerate() {
            if *name == ".git" {
                return Ok(false); // a repository's own files: git ignores none of them either
            }
            let here = &path[..ends[i].0];
            let dir_here = i + 1 < names.len() || is_dir;
            if let Some(&known) = self.decided.get(here).filter(|_| dir_here) {
                if known {
                    return Ok(true);
                }
                continue;
            }
            // The directories above `here`, the root first.
            let dirs: Vec<(&str, &[u8])> = std::iter::once(("", &raw[..0]))
                .chain((0..i).map(|j| (&path[..ends[j].0], &raw[..ends[j].1])))
                .collect();
            for (d, r) in &dirs {
                self.load(d, r)?;
            }
            let chain: Vec<(usize, &Gitignore)> = dirs
                .iter()
                .rev()
                .filter_map(|(d, r)| Some((r.len(), self.dirs.get(*d)?.as_ref()?)))
                .chain(self.builtin.as_ref().map(|b| (0, b)))
                .collect();
            let is_ignored = ignored(chain.into_iter(), &raw[..ends[i].1], dir_here);
            if dir_here {
                self.decided.insert(here.to_string(), is_ignored);
            }
            if is_ignored {
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// The built-in list's rules (each pattern is valid: the tests build them).
fn builtin() -> Option<Gitignore> {
    let mut b = GitignoreBuilder::new();
    for line in BUILTIN_IGNORES {
        b.add_line(line).ok()?;
    }
    b.build().ok()
}

/// One entry of `diff`: a change, or a repository's changes together.
pub enum Entry<'f> {
    One(&'f Found),
    Repository(Change),
}

/// The changes as `diff` lists them: each repository's as one entry, where its first change
/// was; then deletions first again.
pub fn entries(found: &[Found]) -> Vec<Entry<'_>> {
    let mut out: Vec<Entry<'_>> = Vec::new();
    let mut repos: Vec<(String, usize, Vec<&Found>)> = Vec::new();
    for f in found {
        let Some(repo) = repository_of(&f.change.path, f.change.kind == "dir") else {
            out.push(Entry::One(f));
            continue;
        };
        match repos.iter_mut().find(|(r, _, _)| r == repo) {
            Some((_, _, members)) => members.push(f),
            None => {
                repos.push((repo.to_string(), out.len(), vec![f]));
                out.push(Entry::Repository(repository_change(repo, &[])));
            }
        }
    }
    for (repo, at, members) in repos {
        out[at] = Entry::Repository(repository_change(&repo, &members));
    }
    out.sort_by_key(|e| match e {
        Entry::One(f) => f.change.status != "D",
        Entry::Repository(c) => c.status != "D",
    });
    out
}

fn repository_change(repo: &str, members: &[&Found]) -> Change {
    let own = |pred: fn(&Found) -> bool| members.iter().any(|f| f.change.path == repo && pred(f));
    let status = if own(|f| f.dir_added) {
        "A"
    } else if own(|f| f.dir_gone) {
        "D"
    } else {
        "M"
    };
    Change {
        path: repo.to_string(),
        status,
        kind: GIT_REPOSITORY,
        bytes_before: None,
        bytes_after: None,
        binary: false,
        mode_only: false,
        hunks: Vec::new(),
        changed_paths: Some(members.iter().filter(|f| f.change.path != repo).count()),
        commits: Some(new_commits(repo, members)),
    }
}

/// The commits the session made in the repository `repo`, oldest first.
fn new_commits(repo: &str, members: &[&Found]) -> Vec<RepositoryCommit> {
    let log = format!("{repo}/logs/HEAD");
    if let Some(f) = members.iter().find(|f| f.change.path == log) {
        let (old, new) = (
            f.old.as_deref().unwrap_or_default(),
            f.new.as_deref().unwrap_or_default(),
        );
        // Lines appended, as git does; a rewritten log is read whole.
        let added = new.strip_prefix(old).unwrap_or(new);
        let commits: Vec<RepositoryCommit> = String::from_utf8_lossy(added)
            .lines()
            .filter_map(reflog_commit)
            .collect();
        if !commits.is_empty() {
            return commits;
        }
    }
    let heads = format!("{repo}/refs/heads/");
    members
        .iter()
        .filter(|f| f.change.path.starts_with(&heads) && f.change.status != "D")
        .filter_map(|f| {
            let text = std::str::from_utf8(f.new.as_deref()?).ok()?.trim();
            is_hash(text).then(|| RepositoryCommit {
                hash: text.to_string(),
                subject: None,
            })
        })
        .collect()
}

/// A reflog line's commit: `<old> <new> <who> <when> <zone>\t<action>: <subject>`, where the
/// action is `commit`, `commit (initial)`, `commit (amend)` or `commit (merge)`.
fn reflog_commit(line: &str) -> Option<RepositoryCommit> {
    let (head, message) = line.split_once('\t')?;
    let hash = head.split(' ').nth(1)?;
    let (action, subject) = message.split_once(": ")?;
    (is_hash(hash) && (action == "commit" || action.starts_with("commit ("))).then(|| {
        RepositoryCommit {
            hash: hash.to_string(),
            subject: Some(subject.to_string()),
        }
    })
}

/// A SHA-1 or SHA-256 object name.
fn is_hash(s: &str) -> bool {
    matches!(s.len(), 40 | 64) && s.bytes().all(|b| b.is_ascii_hexdigit())
}

/// `diff`'s text of a repository's entry.
pub fn repository_text(c: &Change) -> String {
    let commits = c.commits.as_deref().unwrap_or_default();
    let mut text = format!(
        "{} {GIT_REPOSITORY} {}: {} changed paths, {} new commits\n",
        c.status,
        c.path,
        c.changed_paths.unwrap_or_default(),
        commits.len()
    );
    for commit in commits {
        let short = commit.hash.get(..12).unwrap_or(&commit.hash);
        text.push_str(&format!(
            "  {short} {}\n",
            commit
                .subject
                .as_deref()
                .unwrap_or("(no reflog: subject unknown)")
        ));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_list_compiles_and_matches_at_any_depth() {
        let rules = builtin().expect("the built-in patterns compile");
        let is = |p: &str, dir| ignored(std::iter::once((0, &rules)), p.as_bytes(), dir);
        assert!(is(".pytest_cache", true));
        assert!(is("src/pkg/__pycache__", true));
        assert!(is("web/node_modules/.cache", true));
        assert!(!is("node_modules", true));
        assert!(
            !is("__pycache__", false),
            "directory patterns match directories only"
        );
    }

    #[test]
    fn repositories_and_their_paths() {
        assert_eq!(repository_of(".git/objects/ab/cd", false), Some(".git"));
        assert_eq!(repository_of("sub/.git/HEAD", false), Some("sub/.git"));
        assert_eq!(repository_of(".git", true), Some(".git"));
        assert_eq!(
            repository_of("wt/.git", false),
            None,
            "a worktree's .git file"
        );
        assert_eq!(repository_of("a.git/x", false), None);
        assert!(check_selection(&[".git".to_string()]).is_ok());
        let e = check_selection(&[".git/objects".to_string()]).unwrap_err();
        assert!(e.message.contains("select \".git\""), "{}", e.message);
    }

    #[test]
    fn reflog_lines_name_commits_only() {
        let h1 = "1".repeat(40);
        let h2 = "2".repeat(40);
        let line = |action: &str| format!("{h1} {h2} T <t@x> 1700000000 +0000\t{action}");
        assert_eq!(
            reflog_commit(&line("commit: fix: the parser")),
            Some(RepositoryCommit {
                hash: h2.clone(),
                subject: Some("fix: the parser".into())
            })
        );
        assert!(reflog_commit(&line("commit (initial): start")).is_some());
        assert!(reflog_commit(&line("checkout: moving from a to b")).is_none());
        assert!(reflog_commit(&line("reset: moving to HEAD~1")).is_none());
    }
}
