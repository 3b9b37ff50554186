//! Tests that need the host: the test binary re-run as a child process (for process-wide
//! limits), descriptor limits, deep trees and mounts.

use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use std::ffi::OsStr;
use std::fs;
use std::os::unix::process::ExitStatusExt;
use std::path::{Path, PathBuf};

/// The name libtest gives the test function `$name` of the calling module, for `--exact`:
/// its module path without the crate's name (`walk_race::deep_walk_child`; the integration
/// tests are one binary, tests/tests.rs, with a module per file). Naming the function, not a
/// string, makes a renamed child test a compile error.
#[macro_export]
macro_rules! test_name {
    ($name:ident) => {{
        let _: fn() = $name;
        $crate::common::test_path(module_path!(), stringify!($name))
    }};
}

/// `module::name` without the crate's name at the start of `module` (a `module_path!()`).
pub fn test_path(module: &str, name: &str) -> String {
    match module.split_once("::") {
        Some((_crate, path)) => format!("{path}::{name}"),
        None => name.to_owned(),
    }
}

/// Opens every free descriptor but `free` of them (under a lowered RLIMIT_NOFILE); they stay
/// taken until the returned files are dropped.
pub fn take_all_descriptors_but(free: usize) -> Vec<fs::File> {
    let mut held = Vec::new();
    while let Ok(f) = fs::File::open("/dev/null") {
        held.push(f);
    }
    held.truncate(held.len().saturating_sub(free));
    held
}

/// The command that runs only the ignored test `name` (its full name, from `test_name!`) of
/// this binary, in a child process of its own; the caller adds its environment and output.
pub fn child_test(name: &str) -> std::process::Command {
    let mut command = std::process::Command::new(std::env::current_exe().unwrap());
    command.args([name, "--exact", "--ignored", "--test-threads=1"]);
    command
}

/// Sets this process's soft open-file limit to `n`, keeping the hard one (so it can be raised
/// again), and returns the limits it had.
pub fn lower_open_file_limit(n: u64) -> Rlimit {
    let before = getrlimit(Resource::Nofile);
    let lowered = Rlimit {
        current: Some(n),
        maximum: before.maximum,
    };
    setrlimit(Resource::Nofile, lowered).unwrap();
    before
}

/// Runs the ignored test `name` (its full name, from `test_name!`) of this binary in a child
/// process with `env` set to `value`; fails unless it exited cleanly (naming any killing
/// signal) after running exactly that test. Returns its stdout and stderr.
#[track_caller]
pub fn run_child_test(name: &str, env: &str, value: impl AsRef<OsStr>) -> String {
    let out = child_test(name)
        .arg("--nocapture")
        .env(env, value)
        .output()
        .unwrap();
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    if let Some(signal) = out.status.signal() {
        panic!("the child {name} was killed by signal {signal} (25 is SIGXFSZ):\n{log}");
    }
    assert!(out.status.success(), "the child {name} failed:\n{log}");
    assert!(
        log.contains("1 passed"),
        "the child {name} did not run the test:\n{log}"
    );
    log
}

/// Sets this process's open-file limit, soft and hard, to `n` (for good: child processes only).
pub fn limit_open_files(n: u64) {
    setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(n),
            maximum: Some(n),
        },
    )
    .unwrap();
}

/// Builds `depth` nested directories `d/d/...` in `top`, each level holding a `z.txt` ("zz\n")
/// beside its `d`, and `bottom.txt` ("deepest\n") in the last.
pub fn deep_chain(top: &Path, depth: usize) {
    let mut dir = top.to_path_buf();
    for _ in 0..depth {
        fs::create_dir(dir.join("d")).unwrap();
        fs::write(dir.join("z.txt"), "zz\n").unwrap();
        dir = dir.join("d");
    }
    fs::write(dir.join("bottom.txt"), "deepest\n").unwrap();
}

/// A mount that is unmounted on drop, so a failing test does not leave it behind.
pub struct Mount(PathBuf);

impl Mount {
    /// `mount ARGS... at`, or `None` where this process may not mount (not root).
    pub fn new(args: &[&str], at: &Path) -> Option<Mount> {
        let ok = std::process::Command::new("mount")
            .args(args)
            .arg(at)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Mount(at.to_path_buf()))
    }
}

impl Drop for Mount {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount").arg(&self.0).status();
    }
}
