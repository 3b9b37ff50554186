//! Overlay sessions' store (issue 20): a session keeps an agent's changes to a workspace (the
//! read-only **base**) in an upper tree of its own, in the state directory, and the host diffs,
//! commits (all, some files or some hunks), checkpoints, rewinds or discards them.
//!
//! Depends on `wsfs-sandbox` only: `wsfs-core`'s overlay mode (`workspace/overlay.rs`, the
//! view the tools work on) and its session operations are its one user. The modules:
//! `session` (the directories, the touch before every change, the upper-tree operations),
//! `store` (the touch log, base originals, intents), `diff`, `review` (what `diff` and
//! `commit` leave out as ignored, and a git repository's changes as one entry), `commit` (into the base through
//! the sandbox's journaled commit, conflicts checked against the first touch's fingerprints),
//! `checkpoint` (lazy before-images, rewind), `adopt` (what a program run changed, merged in).
//! The store's own operations on the base pass `Ungated`; a workspace's session commit passes
//! its policy (`SessionCommitGate`).
//!
//! The upper tree is in the kernel overlayfs upper-layer format (its `userxattr` flavour), so
//! that a subprocess can run on a kernel overlay mount of base + upper in a private mount
//! namespace: a deleted base entry is a whiteout (a character device 0/0), a directory that
//! hides the base's (a deleted base directory made again) is opaque (xattr
//! `user.overlay.opaque` = `y`), and `work/` beside `upper/` is the kernel's work directory.
//! docs/decisions/session-store.md has the reasons for this layout, the guarantees, the
//! measurements and the probe of the format.
//!
//! ```text
//! <state>/sessions/<name>/upper/        changed and created entries, whiteouts, opaque dirs
//!                        /work/         empty: the kernel overlay's workdir
//!                        /meta/lock     flock: one open session per name
//!                        /meta/touched.log   base fingerprints (and, before the first
//!                                            checkpoint, what changed)
//!                        /meta/objects/<sha256>  base originals (for three-way merges)
//!                        /meta/commit.json, rewind.json   intents of an operation under way
//!                        /checkpoints/<n>/meta.json   id, label, time, paths of its step
//!                        /checkpoints/<n>/images      before-images taken lazily after it
//! ```
//!
//! Every path is a plain workspace-relative path (no `.`, `..`, symlink or wsfs temp name on
//! the way); every open is beneath the upper's or the base's directory handle, refusing any
//! symlink (`openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)`), never decided on strings.
//!
//! A **session path** (what every `Session` method takes, the touch log, checkpoints and
//! intents record, and `diff` and `commit` report) is a string: its names in the escaped form
//! the tools show and accept (`crate::names`: `caf\xe9.txt` for the name with byte E9, `\\`
//! for a backslash in a name that would look escaped), joined by `/`. A name that is UTF-8 and
//! does not look escaped is itself. Only where a name reaches the file system is it decoded
//! to its bytes (`session::fs_name`, `fs_path`), and the names a directory listing of the
//! upper tree or the base yields are encoded (`names::encode`), so a file whose name is not
//! UTF-8 is changed, diffed, committed, checkpointed and rewound like any other.

#![deny(unsafe_code)]

use wsfs_sandbox as sandbox;
use wsfs_sandbox::{control, error, lines, names, paths};

pub mod adopt;
mod checkpoint;
mod commit;
mod diff;
mod review;
mod session;
mod store;

pub use checkpoint::{CheckpointInfo, CheckpointOptions, CheckpointResult, RewindOptions};
pub use commit::{CommitOptions, CommitResult, Conflict};
pub use diff::{Change, DiffOptions, DiffResult, Hunk};
pub use review::{RepositoryCommit, BUILTIN_IGNORES, GIT_REPOSITORY};
pub use session::session_path;
pub use session::{check_name, Session, OPAQUE_XATTR};
pub use store::Fingerprint;

use crate::error::Result;
use crate::sandbox::root::Root;
use cap_std::fs::Dir;
use std::os::fd::AsFd;
use std::path::Path;

impl Session {
    /// Opens (creating) the session `name` of the workspace rooted at `base_root`, its state
    /// under `state_dir` (the workspace's `state_dir` setting: the session lives in
    /// `<state_dir>/<workspace id>/sessions/<name>`; `None`: the default state directory).
    /// A state directory inside the workspace is refused. Reopening continues the session;
    /// an operation a crash interrupted is finished (or rolled back) first.
    pub fn open(base_root: &Path, state_dir: Option<&str>, name: &str) -> Result<Session> {
        let mut session = Session::open_path(base_root, state_dir, name)?;
        finish_open(&mut session)?;
        Ok(session)
    }

    /// Opens the session `name` over `base` (a workspace's root), whose state directory is
    /// `state_path`: for the view.
    #[allow(dead_code)]
    pub fn open_in(base: Root, state_path: &Path, name: &str) -> Result<Session> {
        let mut session = Session::open_raw(base, state_path, name)?;
        finish_open(&mut session)?;
        Ok(session)
    }
}

impl Session {
    /// The workspace-relative path of every entry the upper tree holds below `rel` (a
    /// directory of the view), deepest first within each directory; empty when the upper
    /// tree has no directory there.
    pub fn upper_paths_below(&self, rel: &str) -> Result<Vec<String>> {
        let mut out = Vec::new();
        if rel.is_empty() {
            return Ok(out); // the root is never moved or removed
        }
        if let Some(dir) =
            session::open_beneath(self.upper(), rel).map_err(|e| session::on_path(&e, rel))?
        {
            session::list_upper(&dir, rel, &mut out).map_err(|e| session::on_path(&e, rel))?;
        }
        Ok(out)
    }
}

impl Session {
    /// Whether a view (a kernel overlay mount of this session) that shows `rel` as `view`
    /// (its `lstat`; `None`: absent) shows what the session and the base hold now. The
    /// kernel caches the base's names and files, so a base changed behind a long-lived mount
    /// can show the old state; a write must not copy that up. An upper entry at `rel`, or a
    /// whiteout or opaque directory above it, decides by itself; else the base's kind and, for
    /// a file, size, mtime and ctime must agree. The view showed every directory above `rel`
    /// (the resolution went through them): those the upper tree does not hold came from the
    /// base, which must still have them as directories (not swapped for a symlink, a file, or
    /// renamed away), else the view is stale too.
    pub fn view_shows_now(&self, rel: &str, view: Option<&cap_std::fs::Metadata>) -> Result<bool> {
        use cap_std::fs::MetadataExt;
        let names = session::split_rel(rel)?;
        let mut dir = self
            .upper()
            .try_clone()
            .map_err(|e| session::machinery("dup", &e))?;
        for (i, name) in names.iter().enumerate() {
            let kind = session::upper_kind(&dir, name).map_err(|e| session::on_path(&e, rel))?;
            match kind {
                None if i + 1 < names.len() => {
                    let (parent, _) = session::parent_leaf(rel);
                    if self.base_dir(parent)?.is_none() {
                        // Missing from the base altogether is what a fresh view shows too
                        // (the call makes the directories); a name on the way that is now a
                        // symlink or a file is a base that changed under the view.
                        return self.base_lacks_from_first_missing(parent);
                    }
                    break;
                }
                None => break,
                Some(_) if i + 1 == names.len() => return Ok(true),
                Some((session::UpperKind::Whiteout, _)) => return Ok(true),
                Some((session::UpperKind::Dir { opaque: true }, _)) => return Ok(true),
                Some((session::UpperKind::Dir { .. }, _)) => {
                    use std::os::unix::ffi::OsStrExt;
                    let raw = session::fs_name(name).map_err(|e| session::on_path(&e, rel))?;
                    dir = Dir::from(
                        crate::sandbox::sys::open_child_dir(dir.as_fd(), raw.as_bytes())
                            .map_err(|e| session::on_path(&e, rel))?,
                    );
                }
                Some(_) => return Ok(true),
            }
        }
        let now = self.base_fingerprint_kind(rel)?;
        Ok(match (now.kind.as_str(), view) {
            ("absent", None) => true,
            ("absent", Some(_)) | (_, None) => false,
            ("dir", Some(m)) => m.is_dir(),
            (_, Some(m)) => {
                let ns = |s: i64, n: i64| i128::from(s) * 1_000_000_000 + i128::from(n);
                m.size() == now.size
                    && ns(m.mtime(), m.mtime_nsec()) == now.mtime_ns
                    && ns(m.ctime(), m.ctime_nsec()) == now.ctime_ns
            }
        })
    }
}

impl Session {
    /// Whether the first name of `rel` that is not a base directory is absent from the base
    /// (rather than a symlink, a file or another entry).
    fn base_lacks_from_first_missing(&self, rel: &str) -> Result<bool> {
        let mut end = 0;
        for name in rel.split('/') {
            end += name.len();
            let prefix = &rel[..end];
            match self.base_fingerprint_kind(prefix)?.kind.as_str() {
                "dir" => end += 1,
                "absent" => return Ok(true),
                _ => return Ok(false),
            }
        }
        Ok(false)
    }
}

/// What a crash interrupted: a commit's or a rewind's intent (the base's journals were
/// recovered when the session opened).
fn finish_open(session: &mut Session) -> Result<()> {
    // Program runs a crash interrupted (their changes were never adopted whole).
    session.sweep_runs();
    commit::recover(session)?;
    checkpoint::recover(session)?;
    session.compact_if_needed()
}
