//! wsfs's lowest crate: the base modules every crate shares, the sandbox every path goes
//! through, and the journaled multi-file commit. It knows no policy, tool, session or
//! workspace: the crates above pass a `gate::Gate` (the policy) to each resolution and a
//! `commit::Scope` (root + gate) to each commit.
//!
//! - **Base**: `error` (the stable error codes, `feature_not_built`), `control` (a call's
//!   deadline and cancel token), `text` (NUL and UTF-8 checked in one pass), `lines` (lines as
//!   every tool counts them, the whole-file digest), `names` (how a name that is not UTF-8 is
//!   shown and read back), `paths` (paths as the host configures them), `json` (strict
//!   argument objects).
//! - **The root**: `root` (`Root`, the workspace root as a directory handle; `ToolPath`, a
//!   parsed tool path; `DirRef`), `resolve` (a tool path to a directory handle and one leaf,
//!   opened beneath the root with `openat2(RESOLVE_BENEATH)`, the gate asked once on the path
//!   actually opened), `gate` (`Access`, `Gate`), `proc` (a handle's path from `/proc/self/fd`).
//! - **Files**: `fileops` (no-follow opens, `flock`, the atomic replace), `sys` (the system
//!   calls on handles), `tempfile` (`Staged`: every file wsfs creates is an `O_TMPFILE` linked
//!   into place; the one temp name `.wsfs-<16 hex>.tmp`; the open-time sweep), `create_dirs` and
//!   `new_dirs` (missing parents made one name at a time by handle, each checked by
//!   `Gate::check_new_dir` and recorded so that a killed call's are removed at the next open),
//!   `walk` (depth-first walks, breadth-first trees, recursive removal, the walk filter),
//!   `gitignore` (gitignore patterns: the `.gitignore` files walks honour, the policy's rules),
//!   `state_dir` (where what must survive a crash is kept, outside the workspace), `protected`
//!   (unrestricted mode and the protected system locations), `view_mount` (an overlay
//!   workspace's view: a detached kernel overlay mount).
//! - **`commit`**: several files changed together under a journal in the state directory, with
//!   one commit point (its rename to `committed`): rolled back before the call returns, or
//!   recovered at the next open.
//!
//! Guarantees: confinement is decided by the kernel, never by comparing strings
//! (docs/decisions/confinement-by-the-kernel.md); every file is written whole, staged and
//! renamed (docs/decisions/temp-files.md); a commit is all or nothing across crashes
//! (docs/decisions/journaled-commit.md); a killed call leaves no directory it made
//! (docs/decisions/new-directories.md).
//!
//! `unsafe` is allowed in `view_mount` (the mount helper's child) and in one call of `sys`.

#![deny(unsafe_code)]

pub mod commit;
pub mod control;
pub mod error;
pub mod json;
pub mod lines;
pub mod names;
pub mod paths;
pub mod text;

pub mod create_dirs;
pub mod fileops;
pub mod gate;
pub mod gitignore;
pub mod new_dirs;
pub mod proc;
pub mod protected;
pub mod resolve;
pub mod root;
pub mod state_dir;
pub mod sys;
pub mod tempfile;
pub mod view_mount;
pub mod walk;
