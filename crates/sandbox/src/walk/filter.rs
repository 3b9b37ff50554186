//! Which entries a walk leaves out, decided in one place: hidden names, wsfs's own temp files,
//! `.gitignore` rules, and the host's deny hook (the policy's `deny_read`).

use super::names::shown;
use crate::gitignore::{Gitignore, GitignoreBuilder, Match};
use crate::sys::{self, Kind};
use std::ffi::OsStr;
use std::os::fd::BorrowedFd;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Largest `.gitignore` read; rules past it are not applied (with a warning).
pub const MAX_GITIGNORE_BYTES: usize = 1 << 20;

/// Decides, for an entry a walk found, whether the walk must leave it out entirely (not
/// report it, not descend), and why (`Denied` and `Protected` are counted and reported,
/// `Internal` is not). The workspace policy plugs in here (`tools::target::WalkDeny`).
pub type DenyHook<'a> = &'a dyn Fn(&Candidate<'_>) -> Option<Skip>;

/// An entry a walk found, as the filters see it.
#[derive(Clone, Copy)]
pub struct Candidate<'a> {
    /// The directory holding it: look at it (`lstat`) by `name` there, never by path.
    pub dir: BorrowedFd<'a>,
    pub name: &'a [u8],
    /// Its path relative to the walk's root, `/`-separated.
    pub rel: &'a [u8],
    pub kind: Kind,
    /// Its inode number as `getdents` gave it.
    pub ino: u64,
}

/// What a walk shows and where it goes.
#[derive(Clone, Copy)]
pub struct WalkOptions<'a> {
    /// Names starting with '.' are shown (and descended into, except `.git`).
    pub include_hidden: bool,
    /// `.gitignore` files found in the walked directories are applied.
    pub respect_gitignore: bool,
    /// Levels below the walk's root that are reported (1: its own entries).
    pub max_depth: usize,
    /// Entries that are not directories (files, symlinks, special files) are shown.
    pub include_files: bool,
    /// Directories are shown (and entered); when false, a tree holds its start's files only.
    pub include_dirs: bool,
    /// Paths the host's policy hides.
    pub deny: Option<DenyHook<'a>>,
}

impl WalkOptions<'_> {
    pub fn new(include_hidden: bool, respect_gitignore: bool) -> Self {
        WalkOptions {
            include_hidden,
            respect_gitignore,
            max_depth: usize::MAX,
            include_files: true,
            include_dirs: true,
            deny: None,
        }
    }
}

/// Why an entry was left out.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Skip {
    Hidden,
    /// Left out by `include_files` / `include_dirs`: not counted (the caller asked).
    Excluded,
    /// One of wsfs's own temp files.
    Internal,
    Ignored,
    Denied,
    /// In unrestricted mode, a protected system location.
    Protected,
}

/// wsfs's own temp files (`.wsfs-<16 hex digits>.tmp`), which no listing or walk shows.
pub fn is_internal_name(name: &[u8]) -> bool {
    crate::tempfile::is_temp_name(name)
}

pub fn is_hidden(name: &[u8]) -> bool {
    name.first() == Some(&b'.')
}

/// Whether a walk descends into a directory of this name: never into `.git` (unless it is
/// the walk's own root, which is not an entry).
pub fn descends_into(name: &[u8]) -> bool {
    name != b".git"
}

/// The one decision about an entry found by a walk. `ignores` are the `.gitignore` matchers
/// that apply, innermost first, each with the byte length of its directory's walk-relative
/// path.
pub fn skip<'g>(
    opts: &WalkOptions<'_>,
    entry: &Candidate<'_>,
    ignores: impl Iterator<Item = (usize, &'g Gitignore)>,
) -> Option<Skip> {
    let (name, rel, kind) = (entry.name, entry.rel, entry.kind);
    if is_internal_name(name) {
        return Some(Skip::Internal);
    }
    if !opts.include_hidden && is_hidden(name) {
        return Some(Skip::Hidden);
    }
    let wanted = match kind {
        Kind::Dir => opts.include_dirs,
        _ => opts.include_files,
    };
    if !wanted {
        return Some(Skip::Excluded);
    }
    if opts.respect_gitignore && ignored(ignores, rel, kind == Kind::Dir) {
        return Some(Skip::Ignored);
    }
    if let Some(why) = opts.deny.and_then(|deny| deny(entry)) {
        return Some(why);
    }
    None
}

/// Whether the innermost `.gitignore` with an opinion on `rel` ignores it (`!` rules
/// re-include). `ignores` as for [`skip`]; the overlay session's review uses it too.
pub fn ignored<'g>(
    ignores: impl Iterator<Item = (usize, &'g Gitignore)>,
    rel: &[u8],
    is_dir: bool,
) -> bool {
    for (base, gi) in ignores {
        let sub = match rel.get(base..) {
            Some([b'/', rest @ ..]) => rest,
            Some(rest) => rest,
            None => continue,
        };
        match gi.matched(Path::new(OsStr::from_bytes(sub)), is_dir) {
            Match::Ignored(_) => return true,
            Match::Included(_) => return false,
            Match::None => {}
        }
    }
    false
}

/// The rules of the `.gitignore` in `dir` (read through the handle, never by path), or
/// `None` when there is none or it has no rules. `shown_dir` names the directory in warnings.
pub fn load_gitignore(
    dir: BorrowedFd<'_>,
    shown_dir: &[u8],
    warnings: &mut Vec<String>,
) -> Option<Gitignore> {
    let where_ = || {
        if shown_dir.is_empty() {
            ".gitignore".to_string()
        } else {
            format!("{}/.gitignore", shown(shown_dir))
        }
    };
    let (bytes, longer) = match sys::read_small_file(dir, b".gitignore", MAX_GITIGNORE_BYTES) {
        Ok(Some(read)) => read,
        Ok(None) => return None,
        Err(e) => {
            warnings.push(format!(
                "{} was not read ({e}); its rules are not applied",
                where_()
            ));
            return None;
        }
    };
    if longer {
        warnings.push(format!(
            "{} is larger than {MAX_GITIGNORE_BYTES} bytes; only its first {MAX_GITIGNORE_BYTES} bytes are applied",
            where_()
        ));
    }
    let mut builder = GitignoreBuilder::new();
    let text = String::from_utf8_lossy(&bytes);
    let mut lines: Vec<&str> = text.lines().collect();
    if longer {
        lines.pop(); // possibly cut in the middle
    }
    for line in lines {
        // Like git, a line that is not a valid pattern is ignored.
        let _ = builder.add_line(line);
    }
    match builder.build() {
        Ok(gi) if !gi.is_empty() => Some(gi),
        Ok(_) => None,
        Err(e) => {
            warnings.push(format!("{}: {e}; its rules are not applied", where_()));
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gi(lines: &[&str]) -> Gitignore {
        let mut b = GitignoreBuilder::new();
        for l in lines {
            b.add_line(l).unwrap();
        }
        b.build().unwrap()
    }

    #[test]
    fn innermost_rule_decides() {
        let outer = gi(&["*.log", "build/"]);
        let inner = gi(&["!keep.log"]);
        let chain =
            |rel: &[u8], dir| ignored([(3usize, &inner), (0, &outer)].into_iter(), rel, dir);
        assert!(chain(b"sub/a.log", false));
        assert!(!chain(b"sub/keep.log", false));
        assert!(chain(b"a.log", false));
        assert!(chain(b"sub/build", true));
        assert!(
            !chain(b"sub/build", false),
            "directory patterns match directories only"
        );
    }

    #[test]
    fn hidden_and_internal_names() {
        let dir = std::fs::File::open("/").unwrap();
        let entry = |name: &'static [u8], rel: &'static [u8]| Candidate {
            dir: std::os::fd::AsFd::as_fd(&dir),
            name,
            rel,
            kind: Kind::File,
            ino: 0,
        };
        let opts = WalkOptions::new(false, false);
        let none = std::iter::empty();
        assert_eq!(
            skip(&opts, &entry(b".env", b".env"), none),
            Some(Skip::Hidden)
        );
        let opts = WalkOptions::new(true, false);
        let none = std::iter::empty();
        let temp = entry(
            b".wsfs-0123456789abcdef.tmp",
            b"x/.wsfs-0123456789abcdef.tmp",
        );
        assert_eq!(skip(&opts, &temp, none), Some(Skip::Internal));
    }
}
