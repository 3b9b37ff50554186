//! The depth-first walk behind `find_files` and `search_text`: entries in path order (each
//! directory's names in byte order, a directory's contents right after it), a few file
//! descriptors however deep, memory bounded by a name budget.

use super::filter::{self, Candidate, Skip, WalkOptions};
use super::names::{read_batch, Batch};
use super::stats::{Stop, WalkStats};
use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::gitignore::Gitignore;
use crate::sys::{self, Kind};
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};

/// Directory handles kept open below the walk's root; deeper ancestors are closed and
/// reopened beneath the root (checked to be the same directory) when the walk returns to
/// them. The walk holds at most this many + 3 descriptors (root, file, a reopen).
const MAX_OPEN_DIRS: usize = 8;

/// Names held in memory by all levels of the walk together; a directory larger than what is
/// left is read in several sorted batches.
const NAME_BUDGET: usize = 32 * 1024;

/// The smallest batch a level gets, whatever the others hold.
const MIN_BATCH: usize = 256;

/// An entry the walk found and the caller may use.
pub struct Entry<'a> {
    /// Path relative to the walk's root, `/`-separated (bytes, as on disk).
    pub rel: &'a [u8],
    pub name: &'a [u8],
    pub kind: Kind,
    /// The directory holding the entry: open the entry through it, by `name`.
    pub dir: BorrowedFd<'a>,
}

/// What the caller wants after an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flow {
    Continue,
    Stop,
}

/// What a finished walk reports besides what the visitor saw.
#[derive(Debug, Default)]
pub struct Walked {
    pub stats: WalkStats,
    pub warnings: Vec<String>,
    /// The visitor stopped the walk.
    pub stopped: bool,
}

struct Frame {
    /// `None` for the root (its handle is `Walker::root`) and for closed ancestors.
    fd: Option<OwnedFd>,
    id: (u64, u64),
    batch: Batch,
    /// Length of this directory's walk-relative path in `Walker::path`.
    path_len: usize,
    ignore: Option<Gitignore>,
    depth: usize,
}

struct Walker<'a, 'o> {
    opts: &'a WalkOptions<'o>,
    /// Every entry is visited and every directory entered: no filter applies (`walk_all`).
    all: bool,
    /// NAME_BUDGET, smaller in tests.
    budget: usize,
    ctl: &'a CallControl,
    root: OwnedFd,
    frames: Vec<Frame>,
    path: Vec<u8>,
    buf: Vec<u8>,
    held_names: usize,
    out: Walked,
}

/// Walks the directory `root` depth-first in path order, calling `visit` for every entry the
/// options let through. Symlinks are reported, never followed; `.git` is not entered; a
/// directory that cannot be opened, or was swapped for something else, is counted in
/// `refused` and skipped. Errors: reading the root itself (mapped with `display`), the
/// deadline, or the visitor's.
pub fn walk(
    root: BorrowedFd<'_>,
    display: &str,
    opts: &WalkOptions<'_>,
    ctl: &CallControl,
    visit: impl FnMut(&Entry<'_>) -> Result<Flow>,
) -> Result<Walked> {
    walk_with_budget(root, display, opts, false, ctl, NAME_BUDGET, visit)
}

/// [`walk`] leaving nothing out: hidden names, wsfs's own temp files and what is inside
/// `.git` directories are visited too. For the checks of a change that carries a whole tree
/// along (a directory move), which must see every entry it carries.
pub fn walk_all(
    root: BorrowedFd<'_>,
    display: &str,
    ctl: &CallControl,
    visit: impl FnMut(&Entry<'_>) -> Result<Flow>,
) -> Result<Walked> {
    let opts = WalkOptions::new(true, false);
    walk_with_budget(root, display, &opts, true, ctl, NAME_BUDGET, visit)
}

fn walk_with_budget(
    root: BorrowedFd<'_>,
    display: &str,
    opts: &WalkOptions<'_>,
    all: bool,
    ctl: &CallControl,
    budget: usize,
    mut visit: impl FnMut(&Entry<'_>) -> Result<Flow>,
) -> Result<Walked> {
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let root = sys::open_readable(root).map_err(io_err)?;
    let id = sys::identity(root.as_fd()).map_err(io_err)?;
    let mut w = Walker {
        opts,
        all,
        budget,
        ctl,
        root,
        frames: Vec::new(),
        path: Vec::new(),
        buf: Vec::new(),
        held_names: 0,
        out: Walked::default(),
    };
    let cap = batch_cap(budget, 0);
    let batch = read_batch(w.root.as_fd(), None, cap, &mut w.buf, ctl, |_, _, _| true)
        .map_err(|e| e.into_error(display))?;
    let ignore = load_ignore(opts, w.root.as_fd(), &batch, b"", &mut w.out.warnings);
    w.held_names = batch.len();
    w.frames.push(Frame {
        fd: None,
        id,
        batch,
        path_len: 0,
        ignore,
        depth: 0,
    });
    w.run(&mut visit)?;
    Ok(w.out)
}

impl Walker<'_, '_> {
    fn run(&mut self, visit: &mut impl FnMut(&Entry<'_>) -> Result<Flow>) -> Result<()> {
        while let Some(top) = self.frames.len().checked_sub(1) {
            let Some((i, kind)) = self.frames[top].batch.next_entry() else {
                if self.frames[top].batch.more {
                    self.refill(top)?;
                } else {
                    self.pop();
                }
                continue;
            };
            self.ctl.check()?;
            if !self.ensure_open(top) {
                self.pop();
                continue;
            }
            let frame = &self.frames[top];
            let dir = frame.fd.as_ref().map_or(self.root.as_fd(), |fd| fd.as_fd());
            self.path.truncate(frame.path_len);
            if !self.path.is_empty() {
                self.path.push(b'/');
            }
            let name_start = self.path.len();
            self.path.extend_from_slice(frame.batch.get(i).0);
            let name = &self.path[name_start..];
            let ino = frame.batch.ino(i);
            let kind = match kind {
                Kind::Unknown => match sys::lstat(dir, name) {
                    Ok(st) => st.kind,
                    Err(_) => continue, // gone since it was listed
                },
                kind => kind,
            };
            let ignores = self
                .frames
                .iter()
                .rev()
                .filter_map(|f| f.ignore.as_ref().map(|g| (f.path_len, g)));
            let candidate = Candidate {
                dir,
                name,
                rel: &self.path,
                kind,
                ino,
            };
            let skipped = match self.all {
                true => None,
                false => filter::skip(self.opts, &candidate, ignores),
            };
            if let Some(why) = skipped {
                self.out.stats.count_skip(why);
                continue;
            }
            let depth = frame.depth + 1;
            self.out.stats.entries += 1;
            let entry = Entry {
                rel: &self.path,
                name,
                kind,
                dir,
            };
            match visit(&entry)? {
                Flow::Stop => {
                    self.out.stopped = true;
                    return Ok(());
                }
                Flow::Continue => {}
            }
            let enters = self.all || filter::descends_into(name);
            if kind == Kind::Dir && depth < self.opts.max_depth && enters {
                match sys::open_child_dir(dir, name) {
                    Ok(child) => self.push(child, depth)?,
                    Err(_) => self.out.stats.refused += 1,
                }
            }
        }
        Ok(())
    }

    fn read(&mut self, fd: BorrowedFd<'_>) -> std::result::Result<Batch, Stop> {
        let cap = batch_cap(self.budget, self.held_names);
        read_batch(fd, None, cap, &mut self.buf, self.ctl, |_, _, _| true)
    }

    /// Enters the directory just reported (its path is `self.path`).
    fn push(&mut self, child: OwnedFd, depth: usize) -> Result<()> {
        let batch = match self.read(child.as_fd()) {
            Ok(b) => b,
            Err(Stop::Call(e)) => return Err(e),
            Err(Stop::Io(_)) => {
                self.out.stats.refused += 1;
                return Ok(());
            }
        };
        let Ok(id) = sys::identity(child.as_fd()) else {
            self.out.stats.refused += 1;
            return Ok(());
        };
        let ignore = load_ignore(
            self.opts,
            child.as_fd(),
            &batch,
            &self.path,
            &mut self.out.warnings,
        );
        self.held_names += batch.len();
        self.frames.push(Frame {
            fd: Some(child),
            id,
            batch,
            path_len: self.path.len(),
            ignore,
            depth,
        });
        // Keep descriptors bounded: close the handle of the ancestor MAX_OPEN_DIRS up.
        if let Some(far) = self.frames.len().checked_sub(MAX_OPEN_DIRS + 1) {
            if far > 0 {
                self.frames[far].fd = None;
            }
        }
        Ok(())
    }

    fn pop(&mut self) {
        if let Some(f) = self.frames.pop() {
            self.held_names -= f.batch.len();
        }
    }

    /// Reopens frame `i`'s directory beneath the root if its handle was closed; false (and
    /// counted as refused) if it is gone or is no longer the same directory.
    fn ensure_open(&mut self, i: usize) -> bool {
        if i == 0 || self.frames[i].fd.is_some() {
            return true;
        }
        let rel = &self.path[..self.frames[i].path_len];
        let reopened = sys::reopen_beneath(self.root.as_fd(), rel)
            .and_then(|fd| Ok((sys::identity(fd.as_fd())?, fd)));
        match reopened {
            Ok((id, fd)) if id == self.frames[i].id => {
                self.frames[i].fd = Some(fd);
                true
            }
            _ => {
                self.out.stats.refused += 1;
                false
            }
        }
    }

    /// Reads the next batch of frame `i`'s names, after the last one handed out.
    fn refill(&mut self, i: usize) -> Result<()> {
        if !self.ensure_open(i) {
            self.pop();
            return Ok(());
        }
        let after = self.frames[i].batch.last().map(<[u8]>::to_vec);
        self.held_names -= self.frames[i].batch.len();
        let cap = batch_cap(self.budget, self.held_names);
        let fd = match &self.frames[i].fd {
            Some(fd) => fd.as_fd(),
            None => self.root.as_fd(),
        };
        let read = read_batch(
            fd,
            after.as_deref(),
            cap,
            &mut self.buf,
            self.ctl,
            |_, _, _| true,
        );
        match read {
            Ok(batch) => {
                self.held_names += batch.len();
                self.frames[i].batch = batch;
            }
            Err(Stop::Call(e)) => return Err(e),
            Err(Stop::Io(_)) => {
                self.frames[i].batch = Batch::default();
                self.out.stats.refused += 1;
                self.pop();
            }
        }
        Ok(())
    }
}

/// The rules of the directory's `.gitignore`, when the walk applies them and it has one.
fn load_ignore(
    opts: &WalkOptions<'_>,
    fd: BorrowedFd<'_>,
    batch: &Batch,
    rel: &[u8],
    warnings: &mut Vec<String>,
) -> Option<Gitignore> {
    if !opts.respect_gitignore || batch.find(b".gitignore").is_none() {
        return None;
    }
    filter::load_gitignore(fd, rel, warnings)
}

/// How many names a new batch may hold, given what the levels above hold.
fn batch_cap(budget: usize, held_names: usize) -> usize {
    budget.saturating_sub(held_names).max(MIN_BATCH.min(budget))
}

impl WalkStats {
    pub fn count_skip(&mut self, why: Skip) {
        match why {
            Skip::Hidden | Skip::Internal => self.hidden += 1,
            Skip::Ignored => self.ignored += 1,
            Skip::Denied => self.denied += 1,
            Skip::Protected => self.protected += 1,
            Skip::Excluded => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Directories larger than the name budget are read in several sorted batches; the walk
    /// still sees every entry once, in path order.
    #[test]
    fn large_directories_are_read_in_batches_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let mut want = Vec::new();
        for d in ["a", "b"] {
            std::fs::create_dir(tmp.path().join(d)).unwrap();
            want.push(d.to_string());
            for i in (0..25).rev() {
                let rel = format!("{d}/f{i:02}");
                std::fs::write(tmp.path().join(&rel), b"").unwrap();
                want.push(rel);
            }
        }
        want.sort_by(|x, y| std::path::Path::new(x).cmp(std::path::Path::new(y)));
        let root = std::fs::File::open(tmp.path()).unwrap();
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let opts = WalkOptions::new(true, false);
        let mut got = Vec::new();
        let walked = walk_with_budget(root.as_fd(), ".", &opts, false, &ctl, 4, |e| {
            got.push(String::from_utf8(e.rel.to_vec()).unwrap());
            Ok(Flow::Continue)
        })
        .unwrap();
        assert_eq!(got, want);
        assert_eq!(walked.stats.entries, 52);
        assert_eq!(walked.stats.refused, 0);
    }
}
