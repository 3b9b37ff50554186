//! wsfs's core: the policy (deny rules, read-only mode, the audit log), the patch parsers, the
//! configuration, an open workspace and the twelve file tools with the registry that lists
//! them. Built on `wsfs-sandbox`; overlay mode (feature `overlay`) adds `wsfs-overlay`; the
//! feature `wasmtime` only lets a configuration choose that engine (it lives in `wsfs-wasm`).
//!
//! - `guard`: `policy` (`Policy`, the resolver's gate: `deny_read` / `deny_write` matched on the
//!   path the kernel opened, the audit log's file kept out, the session commit's gate) and
//!   `audit` (one line per call, appended and fsynced before the result returns).
//! - `patch`: `apply_patch`'s planning without I/O (unified diffs, `*** Begin Patch`, the
//!   structured form). `config`: `Config`, `Limits`, the policy's settings; overlay mode or the
//!   wasmtime engine asked of a build without them is `feature_not_built`. `render`: wording.
//! - `workspace`: `Workspace` composes a root (private: no tool holds it), the policy, the
//!   limits, per-workspace slots for the crates above and, in overlay mode, the session.
//!   `workspace/files.rs` is every operation a tool performs on files (docs/ARCHITECTURE.md,
//!   "The workspace's operations"); `workspace/overlay.rs` and `overlay/` are overlay mode's
//!   differences (the session touched before a change, a directory the base has moved by copy,
//!   the view kept current, program runs adopted); `workspace/session.rs` the host's session
//!   operations behind `wsfs_session_*`.
//! - `tools`: the contract every tool implements (`tools/contract.rs`: `Tool`, `ToolOutput`,
//!   `Call`, `ToolRunner`, `Frame`), one file or folder per file tool, listed in `FILE_TOOLS`,
//!   and what they share: `kind.rs` (`FileKind`, the one type an entry's `"type"` comes from),
//!   `fields.rs` and `aliases.rs` (arguments), `walking.rs` and `globs.rs` (the walking tools),
//!   `write.rs` (`write_file`, `append_file`), `entry.rs` (what `move_file` and `delete_file`
//!   share: the entry a path names without following it, identities by device and inode, the
//!   writers' `flock` before a name moves), `hints.rs` (similar names after `path_not_found`;
//!   `shown_name` / `hidden_entry` are where names become text and entries are skipped),
//!   `edit_file/hints.rs` (the closest text), `read_file/range.rs` (line ranges, streamed).
//!
//! Guarantees: a tool reaches files only through the workspace's operations (the root crate's
//! `src/tool_handles.rs` scans `tools/` for the rest); every resolution asks the policy on the
//! path the kernel opened (docs/decisions/policy-on-resolved-paths.md); a tool behaves the same
//! in host and overlay mode (docs/decisions/one-code-path.md, docs/decisions/overlay-view.md);
//! `edit_file` writes the kept and new pieces, never the whole file built in memory
//! (docs/decisions/edit-in-pieces.md); schemas are derived from the argument structs
//! (docs/decisions/derived-schemas.md).

#![deny(unsafe_code)]

pub mod config;
pub mod guard;
pub mod patch;
pub mod render;
pub mod tools;
pub mod workspace;

#[cfg(feature = "overlay")]
pub use wsfs_overlay as overlay;
pub use wsfs_sandbox as sandbox;
pub use wsfs_sandbox::{commit, control, error, json, lines, names, paths, text};
