//! Fixtures for the runner's tests: a workspace, a state directory and an outside directory in
//! one temp directory, and a runner over them.

use super::runner::{ExecLimits, ExecPlaces, ExecRequest, ExecSettings, Runner};
use super::ExecOutcome;
use crate::error::WsfsError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The system's own tools: the host's PATH may lead to shims under /root.
pub const SYSTEM_PATH: &str = "/usr/local/bin:/usr/bin:/bin";

pub struct Fixture {
    pub _tmp: tempfile::TempDir,
    pub ws: PathBuf,
    pub outside: PathBuf,
    pub state: PathBuf,
    pub runner: Runner,
}

impl Default for Fixture {
    fn default() -> Fixture {
        Fixture::new()
    }
}

impl Fixture {
    pub fn new() -> Fixture {
        Fixture::with(|_| {})
    }

    pub fn with(tune: impl FnOnce(&mut ExecSettings)) -> Fixture {
        Fixture::with_view(true, tune)
    }

    /// A fixture whose workspace programs may only read (`writes_enabled: false`).
    pub fn read_only() -> Fixture {
        Fixture::with_view(false, |_| {})
    }

    fn with_view(view_writable: bool, tune: impl FnOnce(&mut ExecSettings)) -> Fixture {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        let outside = tmp.path().join("outside");
        let state = tmp.path().join("state");
        for d in [&ws, &outside, &state] {
            std::fs::create_dir_all(d).unwrap();
        }
        let mut policy = ExecSettings {
            limits: ExecLimits {
                wall_clock: Duration::from_secs(30),
                ..ExecLimits::default()
            },
            ..ExecSettings::default()
        };
        tune(&mut policy);
        let runner = Runner::new(
            ExecPlaces {
                view_root: ws.clone(),
                overlay: None,
                view_writable,
                home: Some(state.join("home")),
                scratch_parent: state.join("tmp"),
            },
            policy,
        );
        Fixture {
            _tmp: tmp,
            ws,
            outside,
            state,
            runner,
        }
    }

    /// `sh -c script` in the workspace, with the system PATH.
    pub fn sh(&self, script: &str) -> ExecRequest {
        ExecRequest::new("sh", &self.ws)
            .arg("-c")
            .arg(script)
            .env("PATH", SYSTEM_PATH)
    }

    pub fn run(&self, req: &ExecRequest) -> Result<ExecOutcome, WsfsError> {
        self.runner.run_once(req)
    }

    pub fn run_sh(&self, script: &str) -> ExecOutcome {
        self.run(&self.sh(script))
            .unwrap_or_else(|e| panic!("{script}: {e}"))
    }
}

/// Whether this kernel can confine; tests of confinement skip (loudly) where it cannot.
pub fn landlock_here() -> bool {
    let abi = super::landlock_rules::kernel_abi();
    if abi < 1 {
        eprintln!("SKIPPED: this kernel has no Landlock");
    }
    abi >= 1
}

/// Processes whose command line contains `marker`.
pub fn processes_with(marker: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Some(pid) = entry
            .file_name()
            .to_str()
            .and_then(|n| n.parse::<i32>().ok())
        else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) {
            found.push(pid);
        }
    }
    found
}

pub fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir)
        .map(|mut d| d.next().is_none())
        .unwrap_or(true)
}
