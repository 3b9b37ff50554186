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
pub mod stats;
pub mod tree;

pub use crate::sys::Kind;
pub use filter::WalkOptions;
pub use stats::WalkStats;
