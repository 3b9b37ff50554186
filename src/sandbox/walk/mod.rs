//! Walking directory trees beneath a handle, for `list_dir` with a depth, `find_files`,
//! `search_text`, recursive deletion ([`remove`]); the workspace policy decides through the
//! deny hooks what they leave out.
//!
//! - Never follows a symlink: links are reported as links; every directory is opened as one
//!   name inside the directory handle it was listed in (`O_NOFOLLOW | O_DIRECTORY`), or again
//!   beneath the walk's root with `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` and checked
//!   to be the same directory. A directory swapped for a symlink mid-walk is refused (counted
//!   in [`WalkStats::refused`]), never followed.
//! - A few file descriptors however deep ([`dfs`] keeps a bounded number of handles open).
//! - Bounded by the call's deadline (checked per entry) and memory by a name budget.
//! - Deterministic: names in byte order. `.git` is never entered, except by
//!   [`dfs::walk_all`], which leaves nothing out (for the checks of a directory move, which
//!   must see every entry it carries). Hidden = starts with '.'.
//! - What is left out is decided in one place ([`filter::skip`]); names become text in one
//!   place ([`names::shown`]).

pub mod deny;
pub mod dfs;
pub mod filter;
pub mod names;
pub mod remove;
pub mod tree;

use crate::error::WsfsError;

pub use crate::sandbox::sys::Kind;
pub use filter::WalkOptions;

/// Why reading a directory stopped.
#[derive(Debug)]
pub enum Stop {
    Io(std::io::Error),
    Call(WsfsError),
}

impl Stop {
    /// The error, naming `display` for an I/O failure.
    pub fn into_error(self, display: &str) -> WsfsError {
        match self {
            Stop::Io(e) => WsfsError::from_io(&e, display),
            Stop::Call(e) => e,
        }
    }
}

/// Counts of what a walk found and left out.
#[derive(Debug, Default, Clone, Copy)]
pub struct WalkStats {
    /// Entries passed to the caller.
    pub entries: u64,
    /// Hidden names (and wsfs's own temp files) left out.
    pub hidden: u64,
    /// Entries a `.gitignore` rule left out.
    pub ignored: u64,
    /// Entries the host's deny hook left out.
    pub denied: u64,
    /// Protected system locations left out (unrestricted mode).
    pub protected: u64,
    /// Directories that could not be opened or read, or were replaced during the walk
    /// (such as a directory swapped for a symlink): skipped, never followed.
    pub refused: u64,
}
