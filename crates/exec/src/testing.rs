//! The runner for wsfs's own integration tests (`wsfs::testing`): not part of the API, never
//! reachable through the C ABI or a tool argument. The runner's overlay view on hand-made
//! upper trees (whiteouts, opaque directories, symlinks out) is tested through it; the tools on
//! a workspace's session are tested through the C ABI (tests/overlay_programs.rs).

use super::overlay::OverlayDirs;
use super::runner::{ExecLimits, ExecPlaces, ExecRequest, ExecSettings, Runner, ViewLayers};
use crate::error::WsfsError;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A session view for [`run_sh`]: the upper and work directories.
#[derive(Debug, Clone)]
pub struct TestOverlay {
    pub upper: PathBuf,
    pub work: PathBuf,
    /// Make the child's `unshare` fail as on a kernel without user namespaces.
    pub simulate_unavailable: bool,
}

/// How a [`run_sh`] ended.
#[derive(Debug, Clone)]
pub struct TestRun {
    pub exit_code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    /// `landlock-v<N>` or `none`.
    pub sandbox: String,
}

/// Runs `sh -c script` under the runner with `root` as the workspace (writable), `cwd` (inside
/// it) as the working directory, home and temp directories in `state`, and the system PATH;
/// on the overlay view of `root` + `overlay` when it is given.
pub fn run_sh(
    root: &Path,
    overlay: Option<&TestOverlay>,
    state: &Path,
    cwd: &Path,
    script: &str,
) -> Result<TestRun, WsfsError> {
    let runner = Runner::new(
        ExecPlaces {
            view_root: root.to_path_buf(),
            overlay: overlay.map(|o| {
                ViewLayers::Fixed(OverlayDirs {
                    simulate_unavailable: o.simulate_unavailable,
                    ..OverlayDirs::new(&o.upper, &o.work)
                })
            }),
            view_writable: true,
            home: Some(state.join("home")),
            scratch_parent: state.join("tmp"),
        },
        ExecSettings {
            limits: ExecLimits {
                wall_clock: Duration::from_secs(30),
                ..ExecLimits::default()
            },
            ..ExecSettings::default()
        },
    );
    let req = ExecRequest::new("sh", cwd)
        .arg("-c")
        .arg(script)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin");
    let out = runner.run_once(&req)?;
    Ok(TestRun {
        exit_code: out.exit_code,
        stdout: out.stdout.text(),
        stderr: out.stderr.text(),
        sandbox: out.sandbox.sandbox,
    })
}
