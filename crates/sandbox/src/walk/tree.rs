//! The breadth-first tree behind `list_dir` with `depth > 1`: level by level, each directory's
//! names in byte order, at most `cap` entries. Work and memory are bounded by what is
//! returned: at most `cap` directories are read, and a directory handle is held only while
//! it is read (queued directories are reopened beneath the root and checked to be the same).

use super::filter::{self, Candidate, WalkOptions};
use super::names::read_batch;
use super::stats::{Stop, WalkStats};
use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::gitignore::Gitignore;
use crate::sys::{self, Kind};
use std::collections::VecDeque;
use std::os::fd::{AsFd, BorrowedFd};
use std::rc::Rc;

/// One entry of the tree.
#[derive(Debug)]
pub struct Node {
    /// The name as on disk (the root's is empty).
    pub name: Vec<u8>,
    pub kind: Kind,
    /// Regular files only.
    pub size: Option<u64>,
    /// Indices into `Tree::nodes`; `None` for a directory that was not listed (the depth
    /// limit, `.git`, the entry cap, or refused).
    pub children: Option<Vec<usize>>,
    /// Entries of this directory that are not shown (its children were cut at the entry
    /// cap); for a directory not listed because of the cap, `truncated` is set instead.
    pub more: u64,
    pub truncated: bool,
    /// Why a directory's entries are not listed, other than the entry cap (`truncated`).
    pub unlisted: Option<Unlisted>,
}

/// Why a directory in a tree was not listed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unlisted {
    /// It is at the depth limit.
    Depth,
    /// It is `.git` (never entered unless it is the listed directory).
    Git,
    /// It could not be opened or read, or was replaced during the listing.
    Refused,
}

#[derive(Debug, Default)]
pub struct Tree {
    /// `nodes[0]` is the listed directory.
    pub nodes: Vec<Node>,
    /// Something within the depth was left out because of the entry cap.
    pub truncated: bool,
    pub stats: WalkStats,
    pub warnings: Vec<String>,
}

impl Tree {
    /// Entries shown (the root is not one).
    pub fn shown(&self) -> u64 {
        self.nodes.len().saturating_sub(1) as u64
    }
}

/// A `.gitignore` and those of the directories above it.
struct IgnoreLink {
    base: usize,
    rules: Gitignore,
    parent: Option<Rc<IgnoreLink>>,
}

fn chain(link: &Option<Rc<IgnoreLink>>) -> impl Iterator<Item = (usize, &Gitignore)> {
    std::iter::successors(link.as_deref(), |l| l.parent.as_deref()).map(|l| (l.base, &l.rules))
}

struct Queued {
    node: usize,
    rel: Vec<u8>,
    depth: usize,
    id: (u64, u64),
    ignores: Option<Rc<IgnoreLink>>,
}

/// Lists `root` as a tree down to `opts.max_depth` levels, at most `cap` entries.
pub fn list_tree(
    root: BorrowedFd<'_>,
    display: &str,
    opts: &WalkOptions<'_>,
    cap: usize,
    ctl: &CallControl,
) -> Result<Tree> {
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let root = sys::open_readable(root).map_err(io_err)?;
    let mut tree = Tree::default();
    tree.nodes.push(Node {
        name: Vec::new(),
        kind: Kind::Dir,
        size: None,
        children: Some(Vec::new()),
        more: 0,
        truncated: false,
        unlisted: None,
    });
    let mut queue = VecDeque::new();
    let mut lister = Lister {
        opts,
        ctl,
        buf: Vec::new(),
        remaining: cap,
    };
    let first = Queued {
        node: 0,
        rel: Vec::new(),
        depth: 0,
        id: (0, 0),
        ignores: None,
    };
    lister
        .expand(root.as_fd(), first, &mut tree, &mut queue)
        .map_err(|e| e.into_error(display))?;
    while let Some(q) = queue.pop_front() {
        ctl.check()?;
        if lister.remaining == 0 {
            tree.nodes[q.node].children = None;
            tree.nodes[q.node].truncated = true;
            tree.truncated = true;
            continue;
        }
        let reopened = sys::reopen_beneath(root.as_fd(), &q.rel)
            .and_then(|fd| Ok((sys::identity(fd.as_fd())?, fd)));
        let fd = match reopened {
            Ok((id, fd)) if id == q.id => fd,
            _ => {
                // Gone, or replaced (by a symlink or another directory) since it was listed.
                tree.nodes[q.node].children = None;
                tree.nodes[q.node].unlisted = Some(Unlisted::Refused);
                tree.stats.refused += 1;
                continue;
            }
        };
        let node = q.node;
        match lister.expand(fd.as_fd(), q, &mut tree, &mut queue) {
            Ok(()) => {}
            Err(Stop::Call(e)) => return Err(e),
            Err(Stop::Io(_)) => {
                tree.nodes[node].children = None;
                tree.nodes[node].unlisted = Some(Unlisted::Refused);
                tree.stats.refused += 1;
            }
        }
    }
    Ok(tree)
}

struct Lister<'a, 'o> {
    opts: &'a WalkOptions<'o>,
    ctl: &'a CallControl,
    buf: Vec<u8>,
    remaining: usize,
}

impl Lister<'_, '_> {
    /// Lists the directory `fd` (queued as `q`) into the tree and queues its subdirectories.
    fn expand(
        &mut self,
        fd: BorrowedFd<'_>,
        q: Queued,
        tree: &mut Tree,
        queue: &mut VecDeque<Queued>,
    ) -> std::result::Result<(), Stop> {
        let ignores = match self.opts.respect_gitignore {
            true => match filter::load_gitignore(fd, &q.rel, &mut tree.warnings) {
                Some(rules) => Some(Rc::new(IgnoreLink {
                    base: q.rel.len(),
                    rules,
                    parent: q.ignores.clone(),
                })),
                None => q.ignores.clone(),
            },
            false => None,
        };
        let mut rel = q.rel.clone();
        let prefix = if rel.is_empty() {
            0
        } else {
            rel.push(b'/');
            rel.len()
        };
        let mut skipped = Vec::new();
        let batch = read_batch(
            fd,
            None,
            self.remaining,
            &mut self.buf,
            self.ctl,
            |name, kind, ino| {
                rel.truncate(prefix);
                rel.extend_from_slice(name);
                let kind = match kind {
                    Kind::Unknown => sys::lstat(fd, name).map_or(Kind::Other, |s| s.kind),
                    k => k,
                };
                let candidate = Candidate {
                    dir: fd,
                    name,
                    rel: &rel,
                    kind,
                    ino,
                };
                match filter::skip(self.opts, &candidate, chain(&ignores)) {
                    Some(why) => {
                        skipped.push(why);
                        false
                    }
                    None => true,
                }
            },
        )?;
        for why in skipped {
            tree.stats.count_skip(why);
        }
        let mut children = Vec::with_capacity(batch.len());
        for i in 0..batch.len() {
            let (name, kind) = batch.get(i);
            let Ok(st) = sys::lstat(fd, name) else {
                continue; // gone since it was listed
            };
            let kind = if kind == Kind::Unknown { st.kind } else { kind };
            let idx = tree.nodes.len();
            let entered = filter::descends_into(name);
            let expand = kind == Kind::Dir && q.depth + 1 < self.opts.max_depth && entered;
            let unlisted = match (kind == Kind::Dir && !expand, entered) {
                (false, _) => None,
                (true, false) => Some(Unlisted::Git),
                (true, true) => Some(Unlisted::Depth),
            };
            tree.nodes.push(Node {
                name: name.to_vec(),
                kind,
                size: (kind == Kind::File).then_some(st.size),
                children: expand.then(Vec::new),
                more: 0,
                truncated: false,
                unlisted,
            });
            tree.stats.entries += 1;
            children.push(idx);
            if expand {
                rel.truncate(prefix);
                rel.extend_from_slice(name);
                queue.push_back(Queued {
                    node: idx,
                    rel: rel.clone(),
                    depth: q.depth + 1,
                    id: st.id,
                    ignores: ignores.clone(),
                });
            }
        }
        self.remaining -= batch.len().min(self.remaining);
        let node = &mut tree.nodes[q.node];
        node.more = batch.total.saturating_sub(batch.len() as u64);
        if node.more > 0 {
            tree.truncated = true;
        }
        node.children = Some(children);
        Ok(())
    }
}
