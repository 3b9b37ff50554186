//! The developer tools (issue 21): `workspace_info`, `git_status`, `git_diff`, `git_commit`,
//! `run_tests`, `run_lint`, `typecheck`, `safe_shell` and `shell`, listed in `DEV_TOOLS` (the C
//! ABI crate puts them after the file tools when it is built with the feature `exec`).
//!
//! - **The cores**, as plain functions of a `wsfs_exec::Runner`, a directory and their
//!   arguments: argument and result structs, detection, the command each runs, the parsing of
//!   what it printed. `workspace_info.rs` (what the sandbox offers, probed once and cached),
//!   `run_tests.rs`, `lint.rs` (`run_lint`, `typecheck`), `shells.rs` (`safe_shell` judged by
//!   its rules, `shell`), `command.rs` (a `command` argument split into words when it is one
//!   plain command), `git/` (status, diff, commit on `wsfs_exec::git`). `ProjectFiles` is how a
//!   core looks at the project's files to decide what to run.
//! - **The entries** (`entries/`): each core wired to the tool contract: off unless the policy
//!   sets `exec_enabled` (`Switch::Exec`; `shell` also needs `shell_enabled`), every path
//!   argument resolved beneath the root with the policy as gate (`Workspace::program_dir`,
//!   `program_path`), the call's deadline and cancel token handed to the runner, one runner and
//!   one `workspace_info` cache per workspace (`Workspace::slot`).
//!
//! Every program runs under `wsfs-exec`'s confined runner: what it stops is written in
//! `wsfs_exec::confinement`. With the feature `overlay`, an overlay workspace's programs run on
//! its session's view and their changes go into the session
//! (docs/decisions/programs-on-the-overlay.md). The tests' projects are `projects.rs`.

#![deny(unsafe_code)]

pub mod entries;
pub mod git;
#[cfg(test)]
mod overhead_bench;

use wsfs_core::{control, error, sandbox, tools, workspace};
use wsfs_exec as exec;

use wsfs_core::tools::contract::{entry, ToolEntry};

/// The developer tools, in the order specs list them: off unless the policy turns exec on
/// (see `entries`).
pub static DEV_TOOLS: &[ToolEntry] = &[
    entry::<entries::info::WorkspaceInfoTool>(),
    entry::<entries::git::GitStatusTool>(),
    entry::<entries::git::GitDiffTool>(),
    entry::<entries::git::GitCommitTool>(),
    entry::<entries::checks::RunTestsTool>(),
    entry::<entries::checks::RunLintTool>(),
    entry::<entries::checks::TypecheckTool>(),
    entry::<entries::shells::SafeShellTool>(),
    entry::<entries::shells::ShellTool>(),
];

pub mod command;
pub mod lint;
pub mod run_tests;
pub mod shells;
pub mod toolchains;
pub mod workspace_info;

/// How a tool looks at the project's files to decide what to run (`package.json`'s scripts,
/// `go.mod`'s module). The wiring implements it with the workspace's resolver and read
/// policy; `DirFiles` is the plain version the tests use.
pub trait ProjectFiles {
    fn is_file(&self, rel: &str) -> bool;
    fn is_dir(&self, rel: &str) -> bool;
    /// A small text file's contents (at most `max` bytes; None if larger, missing or not a
    /// regular file).
    fn read_small(&self, rel: &str, max: u64) -> Option<String>;
    /// The names of the regular files in the directory `rel` ("." for the root), as many as
    /// a `list_dir` shows; empty when it is missing or unreadable.
    fn file_names(&self, rel: &str) -> Vec<String>;
}

/// Whether `name` is a Python test file as pytest finds them by default (`test_*.py`,
/// `*_test.py`).
pub fn is_python_test_file(name: &str) -> bool {
    name.strip_suffix(".py")
        .is_some_and(|stem| stem.starts_with("test_") || stem.ends_with("_test"))
}

/// [`ProjectFiles`] beneath a directory handle (cap-std: nothing outside is reachable), for
/// the tests of the cores; the tools use the workspace's operations (`entries::WsFiles`).
#[cfg(test)]
pub struct DirFiles(pub cap_std::fs::Dir);

#[cfg(test)]
impl DirFiles {
    pub fn open(path: &std::path::Path) -> std::io::Result<DirFiles> {
        cap_std::fs::Dir::open_ambient_dir(path, cap_std::ambient_authority()).map(DirFiles)
    }
}

#[cfg(test)]
impl ProjectFiles for DirFiles {
    fn is_file(&self, rel: &str) -> bool {
        self.0.metadata(rel).is_ok_and(|m| m.is_file())
    }

    fn is_dir(&self, rel: &str) -> bool {
        self.0.metadata(rel).is_ok_and(|m| m.is_dir())
    }

    fn read_small(&self, rel: &str, max: u64) -> Option<String> {
        let meta = self.0.metadata(rel).ok()?;
        if !meta.is_file() || meta.len() > max {
            return None;
        }
        self.0.read_to_string(rel).ok()
    }

    fn file_names(&self, rel: &str) -> Vec<String> {
        let Ok(entries) = self.0.read_dir(rel) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_file()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect()
    }
}

/// Bytes of `raw_output` a result carries (head and tail of stdout, then stderr).
pub const MAX_RAW_OUTPUT: usize = 32 * 1024;

/// stdout and stderr as one bounded text for the model.
pub fn raw_output(out: &crate::exec::ExecOutcome) -> String {
    let mut text = out.stdout.text();
    let err = out.stderr.text();
    if !err.trim().is_empty() {
        if !text.is_empty() && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&err);
    }
    bound(&text, MAX_RAW_OUTPUT)
}

/// `text` within `max` bytes: its first quarter and last three quarters, marked where cut.
pub fn bound(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_string();
    }
    let mut head = max / 4;
    while !text.is_char_boundary(head) {
        head -= 1;
    }
    let mut tail = text.len() - (max - head);
    while !text.is_char_boundary(tail) {
        tail += 1;
    }
    format!(
        "{}\n[... {} bytes cut ...]\n{}",
        &text[..head],
        tail - head,
        &text[tail..]
    )
}

#[cfg(test)]
mod detection_tests;
#[cfg(test)]
pub mod projects;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod toolchain_tests;
