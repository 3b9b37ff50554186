//! The developer tools' one way to run a program: tests, linters, type checkers, git and the
//! shells all go through [`Runner::run`], which confines the program with the kernel, never
//! with a list of command names (`git status` runs `core.fsmonitor`, test runners run
//! `conftest.py` and `build.rs` by design, `LD_PRELOAD=` smuggles code into anything).
//!
//! One run, in order (`runner.rs`):
//! 1. **Before fork**, in the parent, where allocating is fine (`confinement.rs`): the program is
//!    found on `PATH` (`program.rs`); the environment is built from nothing (`env.rs`); a
//!    private temp directory exists (`scratch.rs`); the Landlock ruleset is created and filled
//!    (`landlock_rules.rs`); the seccomp program is compiled (`seccomp.rs`); a pids cgroup is
//!    made for the run (`cgroup.rs`); everything the child needs is laid out in a
//!    [`child::ChildPlan`] of plain integers, pointers and pre-built C strings.
//! 2. **Between fork and exec**, in the child, which may be the fork of a multithreaded Go
//!    host (`child.rs`): raw system calls only, no allocation, no lock: join the cgroup, set
//!    the rlimits, mark every inherited descriptor close-on-exec, enter a user and mount
//!    namespace of its own, in overlay mode mount the session's view on the workspace
//!    (`overlay.rs`), make every mount read-only but the places it may write (`mounts.rs`),
//!    enter the working directory, drop every capability, `no_new_privs`, the seccomp
//!    filter, `landlock_restrict_self`.
//! 3. **After exec**, in the parent (`supervise.rs`): stdout and stderr are read into
//!    head-and-tail buffers (`capture.rs`) while a pidfd, the deadline and the cancel flag are
//!    watched; when the program ends, times out or is cancelled, its process group and its
//!    cgroup are killed, so nothing it started outlives the call; the temp directory is removed.
//!
//! The host's decisions (the `exec_*` policy switches) reach the runner as `ExecSettings`, the
//! places a run may write as `ExecPlaces`. On top of the runner: hardened git (`git/`), the
//! parsers of test, lint and type-check reports (`report/`), and safe_shell's judge and its
//! rules (`shell/`, `ShellRules`, loaded from `config/safe_shell_policy.toml`). The tools that
//! use them (their cores and registry entries) are the crate above, `wsfs-devtools`.
//!
//! Features: `overlay` runs programs on an overlay workspace's session (`ViewLayers::Session`:
//! each run gets an upper of its own, adopted into the session when it ends;
//! docs/decisions/programs-on-the-overlay.md); `test-support` exports the runner's test
//! fixtures (`testutil`, `git::fixture`) to the crates above.
//!
//! What the sandbox stops and what it does not is written down once, in `confinement.rs`.
//! Besides the tests, `unsafe` is allowed only for the raw system calls between fork and exec
//! (`child.rs`, `mounts.rs`) and one statement each in `runner.rs` (`pre_exec`) and
//! `landlock_rules.rs`.

#![deny(unsafe_code)]

use wsfs_core::error;
#[cfg(feature = "overlay")]
use wsfs_core::workspace;

pub mod capture;
pub mod cgroup;
pub mod child;
pub mod confinement;
pub mod env;
pub mod git;
pub mod landlock_rules;
pub mod mounts;
pub mod overlay;
pub mod program;
pub mod report;
pub mod runner;
pub mod scratch;
pub mod seccomp;
pub mod shell;
pub mod step;
pub mod supervise;
pub mod testing;

pub use runner::{Control, ExecLimits, ExecOutcome, ExecPlaces, ExecSettings, Runner};

#[cfg(test)]
mod confinement_tests;
#[cfg(test)]
mod metadata_tests;
#[cfg(test)]
mod runner_tests;
/// Fixtures for the runner's tests and the developer tools' (feature `test-support`).
#[cfg(any(test, feature = "test-support"))]
pub mod testutil;
