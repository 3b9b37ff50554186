//! [`Runner::run`]: one program, start to end, under the sandbox (see the module doc of
//! `exec` for the order of things, and `confinement.rs` for what is stopped).

use super::capture::Captured;
use super::child::{self, CwdPlan};
use super::confinement::{self, Bounds, Request, SandboxReport};
use super::env::{self, EnvSources};
use super::landlock_rules;
use super::mounts::{self, ReadOnlyRest};
use super::overlay::{self, OverlayDirs};
use super::program;
use super::scratch::Scratch;
use super::supervise::{self, Stopped, Watch};
use crate::error::{ErrorCode, WsfsError};
#[cfg(feature = "overlay")]
use crate::workspace::overlay::{runs::Run, SessionView};
use rustix::fs::{Mode, OFlags};
use std::ffi::{OsStr, OsString};
use std::os::fd::AsRawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The directories of one workspace that a run may write.
#[derive(Debug, Clone)]
pub struct ExecPlaces {
    /// The workspace root: what the program sees as the workspace, at this path. In overlay
    /// mode (`overlay` set) the base, which the program never sees alone.
    pub view_root: PathBuf,
    /// Overlay mode: where each run's layers come from. Each run then sees the kernel
    /// overlay of them over `view_root`, mounted on `view_root` in the run's own namespaces
    /// (`overlay.rs`); where that cannot be made the run is refused (`overlay_unavailable`).
    pub overlay: Option<ViewLayers>,
    /// Whether programs may write the view (the policy's `writes_enabled`); read-only
    /// otherwise, under Landlock like everything else.
    pub view_writable: bool,
    /// `HOME`: caches that outlive a call (Go's build cache, pip's), kept in the state
    /// directory. `None`: each run's temp directory is its home.
    pub home: Option<PathBuf>,
    /// Where each run's private temp directory is made (in the state directory).
    pub scratch_parent: PathBuf,
}

/// The layers of a run in overlay mode.
#[derive(Debug, Clone)]
pub enum ViewLayers {
    /// The same directories for every run (the runner's own tests).
    Fixed(OverlayDirs),
    /// A workspace's session: each run gets an upper of its own over the session's, merged
    /// into the session when the program has ended (`wsfs_core::workspace::overlay::runs`).
    #[cfg(feature = "overlay")]
    Session(Arc<SessionView>),
}

/// The host's decisions (the `exec_*` policy switches).
#[derive(Debug, Clone)]
pub struct ExecSettings {
    /// `exec_read_paths`: toolchain homes to read and execute (`~/.cargo`, `/opt/go`, a venv).
    pub read_paths: Vec<PathBuf>,
    /// `exec_env_allow`: host variables passed through (names, or prefixes ending in `*`).
    pub env_allow: Vec<String>,
    /// The `PATH` programs get; `None`: the host's own.
    pub path: Option<String>,
    /// `exec_network` (default false).
    pub network: bool,
    /// `exec_require_sandbox` (default true): refuse with `sandbox_unavailable` without Landlock.
    pub require_sandbox: bool,
    pub limits: ExecLimits,
}

impl Default for ExecSettings {
    fn default() -> Self {
        ExecSettings {
            read_paths: Vec::new(),
            env_allow: Vec::new(),
            path: None,
            network: false,
            require_sandbox: true,
            limits: ExecLimits::default(),
        }
    }
}

#[derive(Debug, Clone, Copy)]
pub struct ExecLimits {
    /// Default and ceiling of a run's wall clock; a tool's `timeout_sec` may only shorten it.
    pub wall_clock: Duration,
    /// Bytes kept of stdout and of stderr each (head and tail).
    pub output_bytes: usize,
    pub processes: u64,
    /// `RLIMIT_AS`; 0 for none (the Go race detector reserves terabytes).
    pub address_space_bytes: u64,
    /// `RLIMIT_FSIZE`: the largest file a program may write.
    pub file_size_bytes: u64,
}

impl Default for ExecLimits {
    fn default() -> Self {
        ExecLimits {
            wall_clock: Duration::from_secs(60),
            output_bytes: 256 * 1024,
            processes: 512,
            address_space_bytes: 16 << 30,
            file_size_bytes: 1 << 30,
        }
    }
}

/// The calling tool's deadline and cancel flag (phase 2 fills it from the call's
/// `CallControl`), handed to every program a tool runs.
#[derive(Debug, Clone, Default)]
pub struct Control {
    pub deadline: Option<Instant>,
    pub cancel: Option<Arc<AtomicBool>>,
}

impl Control {
    pub fn check(&self) -> Result<(), WsfsError> {
        if self
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Acquire))
        {
            return Err(WsfsError::new(
                ErrorCode::Cancelled,
                "the call was cancelled",
            ));
        }
        if self.deadline.is_some_and(|d| Instant::now() >= d) {
            return Err(WsfsError::new(
                ErrorCode::Timeout,
                "the call's deadline passed",
            ));
        }
        Ok(())
    }
}

/// One program to run.
#[derive(Debug, Clone)]
pub struct ExecRequest {
    pub program: OsString,
    pub args: Vec<OsString>,
    /// Absolute, inside the view (the caller resolved the tool's `cwd` argument).
    pub cwd: PathBuf,
    /// Variables the tool sets on top of the built environment.
    pub env: Vec<(OsString, OsString)>,
    /// Shortens the policy's wall clock, never lengthens it.
    pub timeout: Option<Duration>,
    /// A stream cap other than the policy's (a machine format the tool parses whole).
    pub stdout_cap: Option<usize>,
    pub stderr_cap: Option<usize>,
    /// The call's own deadline and cancel flag.
    pub deadline: Option<Instant>,
    pub cancel: Option<Arc<AtomicBool>>,
}

impl ExecRequest {
    pub fn new(program: impl Into<OsString>, cwd: impl Into<PathBuf>) -> Self {
        ExecRequest {
            program: program.into(),
            args: Vec::new(),
            cwd: cwd.into(),
            env: Vec::new(),
            timeout: None,
            stdout_cap: None,
            stderr_cap: None,
            deadline: None,
            cancel: None,
        }
    }

    pub fn arg(mut self, arg: impl Into<OsString>) -> Self {
        self.args.push(arg.into());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<OsString>,
    {
        self.args.extend(args.into_iter().map(Into::into));
        self
    }

    pub fn env(mut self, name: impl Into<OsString>, value: impl Into<OsString>) -> Self {
        self.env.push((name.into(), value.into()));
        self
    }

    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    pub fn control(mut self, deadline: Option<Instant>, cancel: Option<Arc<AtomicBool>>) -> Self {
        self.deadline = deadline;
        self.cancel = cancel;
        self
    }

    /// The calling tool's deadline and cancel flag.
    pub fn under(self, ctl: &Control) -> Self {
        self.control(ctl.deadline, ctl.cancel.clone())
    }
}

/// How a run ended.
#[derive(Debug, Clone)]
pub struct ExecOutcome {
    pub exit_code: Option<i32>,
    pub signal: Option<i32>,
    pub stdout: Captured,
    pub stderr: Captured,
    pub stopped: Option<Stopped>,
    /// The wall clock the run had.
    pub limit: Duration,
    pub sandbox: SandboxReport,
    /// Forks the pids limit refused (0 without a cgroup).
    pub refused_forks: u64,
}

impl ExecOutcome {
    #[cfg(any(test, feature = "test-support"))]
    pub fn success(&self) -> bool {
        self.exit_code == Some(0) && self.stopped.is_none()
    }

    /// `timeout` / `cancelled` for a run the runner stopped, with the end of its output so the
    /// model can see where it hung; `None` for a run that ended by itself.
    pub fn stop_error(&self, what: &str) -> Option<WsfsError> {
        let tail = || {
            let out = self.stdout.tail_text(1500);
            let err = self.stderr.tail_text(1500);
            let mut s = String::new();
            if self.refused_forks > 0 {
                // A fork bomb ends here: say why it was stuck, not only that it was slow.
                s.push_str(&format!(
                    "\nthe process limit refused {} fork(s): it tried to start more processes \
                     than a run may have",
                    self.refused_forks
                ));
            }
            if !out.trim().is_empty() {
                s.push_str(&format!("\nlast stdout:\n{out}"));
            }
            if !err.trim().is_empty() {
                s.push_str(&format!("\nlast stderr:\n{err}"));
            }
            s
        };
        match self.stopped? {
            Stopped::Timeout => Some(WsfsError::new(
                ErrorCode::Timeout,
                format!(
                    "{what} ran longer than {} s and was killed with everything it started; \
                     run a narrower selection or pass a longer timeout_sec (at most the \
                     host's limit){}",
                    self.limit.as_secs(),
                    tail()
                ),
            )),
            Stopped::Cancelled => Some(WsfsError::new(
                ErrorCode::Cancelled,
                format!(
                    "{what} was cancelled and killed with everything it started{}",
                    tail()
                ),
            )),
        }
    }

    /// Why the program died, when a signal killed it and the reason is one of the limits.
    pub fn limit_note(&self) -> Option<String> {
        let note = match self.signal? {
            libc::SIGXCPU => "it used up its CPU time limit".to_string(),
            libc::SIGXFSZ => "it tried to write a file larger than the file size limit".into(),
            libc::SIGSYS => "it made a system call the sandbox forbids".into(),
            libc::SIGKILL if self.stopped.is_none() => {
                "it was killed (SIGKILL; out of memory?)".into()
            }
            sig => format!("it was killed by signal {sig}"),
        };
        Some(note)
    }
}

/// Runs programs for one workspace.
#[derive(Debug, Clone)]
pub struct Runner {
    places: ExecPlaces,
    policy: ExecSettings,
    /// Programs started so far (workspace_info's cache is tested with it).
    started: Arc<std::sync::atomic::AtomicU64>,
    /// Tests only: run as on a system where no namespace can be made.
    simulate_no_namespaces: bool,
}

impl Runner {
    pub fn new(places: ExecPlaces, policy: ExecSettings) -> Runner {
        Runner {
            places,
            policy,
            started: Arc::default(),
            simulate_no_namespaces: false,
        }
    }

    /// Tests only: runs as on a system where no mount namespace can be made (the seccomp
    /// fallback for metadata).
    #[cfg(any(test, feature = "test-support"))]
    pub fn without_namespaces(mut self) -> Runner {
        self.simulate_no_namespaces = true;
        self
    }

    /// How many programs this runner (and its clones) started.
    #[cfg(any(test, feature = "test-support"))]
    pub fn started(&self) -> u64 {
        self.started.load(Ordering::Relaxed)
    }

    /// Where `program` would be found on the PATH programs get (`None`: not installed).
    pub fn locate(&self, program: &str, cwd: &Path) -> Option<PathBuf> {
        program::resolve(OsStr::new(program), &self.path_var(), cwd)
    }

    /// The `PATH` programs get.
    pub fn path_var(&self) -> OsString {
        match &self.policy.path {
            Some(p) => p.into(),
            None => std::env::var_os("PATH").unwrap_or_else(|| env::DEFAULT_PATH.into()),
        }
    }

    pub fn places(&self) -> &ExecPlaces {
        &self.places
    }

    pub fn policy(&self) -> &ExecSettings {
        &self.policy
    }

    /// A fresh private temp directory for one call (removed when dropped).
    pub fn scratch(&self) -> Result<Scratch, WsfsError> {
        Scratch::create(&self.places.scratch_parent).map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("the run's private temp directory could not be made: {e}"),
            )
        })
    }

    /// Runs `req` in its own temp directory.
    pub fn run_once(&self, req: &ExecRequest) -> Result<ExecOutcome, WsfsError> {
        let scratch = self.scratch()?;
        self.run(req, &scratch)
    }

    /// Runs `req` to its end (or its limit) under the sandbox, with `scratch` as `TMPDIR`.
    /// Errors are for runs that could not start; a program that fails is an `Ok` outcome.
    /// In a session's overlay mode, what the program changed is merged into the session when
    /// it ends, whether it exited, failed or was stopped (a host-mode program's writes stay
    /// too); a merge that fails is the call's error.
    pub fn run(&self, req: &ExecRequest, scratch: &Scratch) -> Result<ExecOutcome, WsfsError> {
        match &self.places.overlay {
            None => self.run_in(req, scratch, None),
            Some(ViewLayers::Fixed(dirs)) => self.run_in(req, scratch, Some(dirs)),
            #[cfg(feature = "overlay")]
            Some(ViewLayers::Session(view)) => {
                let run: Run = view.begin_run()?;
                let dirs = OverlayDirs {
                    lower: Some(run.dirs().lower.clone()),
                    ..OverlayDirs::new(&run.dirs().upper, &run.dirs().work)
                };
                let outcome = self.run_in(req, scratch, Some(&dirs));
                let merged = view.end_run(run, outcome.is_ok());
                let outcome = outcome?;
                merged?;
                Ok(outcome)
            }
        }
    }

    fn run_in(
        &self,
        req: &ExecRequest,
        scratch: &Scratch,
        overlay_dirs: Option<&OverlayDirs>,
    ) -> Result<ExecOutcome, WsfsError> {
        if req
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(Ordering::Acquire))
        {
            return Err(WsfsError::new(
                ErrorCode::Cancelled,
                "the call was cancelled before the program started",
            ));
        }
        let started = Instant::now();
        let limit = req.timeout.map_or(self.policy.limits.wall_clock, |t| {
            t.min(self.policy.limits.wall_clock)
        });
        let mut deadline = started + limit;
        if let Some(call) = req.deadline {
            deadline = deadline.min(call);
        }

        let home = self.places.home.as_deref().unwrap_or(scratch.path());
        if let Some(home) = &self.places.home {
            std::fs::create_dir_all(home).map_err(|e| {
                WsfsError::new(
                    ErrorCode::IoError,
                    format!("the tools' home could not be made: {e}"),
                )
            })?;
        }
        let mut writable = vec![scratch.path().to_path_buf()];
        let mut readable = self.policy.read_paths.clone();
        if let Some(home) = &self.places.home {
            writable.push(home.clone());
        }
        // In overlay mode the base gets no rule at all: the child grants the overlay's root.
        let overlay_plan = match overlay_dirs {
            Some(dirs) => {
                let granted: Vec<PathBuf> = writable.iter().chain(&readable).cloned().collect();
                Some(overlay::plan(
                    &self.places.view_root,
                    dirs,
                    &granted,
                    self.places.view_writable,
                    landlock_rules::view_access(self.places.view_writable),
                )?)
            }
            None if self.places.view_writable => {
                writable.push(self.places.view_root.clone());
                None
            }
            None => {
                readable.push(self.places.view_root.clone());
                None
            }
        };
        let prepared = confinement::prepare(&Request {
            writable: &writable,
            readable: &readable,
            network: self.policy.network,
            require_landlock: self.policy.require_sandbox,
            namespaces: overlay_dirs.map(overlay::namespaces),
            simulate_no_namespaces: self.simulate_no_namespaces,
            bounds: Bounds {
                wall_clock: limit,
                processes: self.policy.limits.processes,
                address_space_bytes: self.policy.limits.address_space_bytes,
                file_size_bytes: self.policy.limits.file_size_bytes,
            },
        })
        .map_err(|e| WsfsError::new(ErrorCode::SandboxUnavailable, e.0))?;

        let mut host: Vec<(OsString, OsString)> = std::env::vars_os().collect();
        if self.policy.path.is_some() {
            host.retain(|(k, _)| k != "PATH");
            host.push(("PATH".into(), self.path_var()));
        }
        let vars = env::build(&EnvSources {
            host: &host,
            allow: &self.policy.env_allow,
            home,
            tmp: scratch.path(),
            tool: &req.env,
        });
        let path_var = env::lookup(&vars, "PATH").unwrap_or_default();
        let exe = program::resolve(&req.program, path_var, &req.cwd).ok_or_else(|| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "{} was not found on the PATH the tools run with ({}); use workspace_info \
                     to see which tools are installed",
                    req.program.to_string_lossy(),
                    path_var.to_string_lossy()
                ),
            )
        })?;

        let mut cmd = Command::new(&exe);
        cmd.arg0(&req.program)
            .args(&req.args)
            .env_clear()
            .envs(vars.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        if overlay_plan.is_none() {
            // In overlay mode the child enters the cwd in the view itself: it may exist in the
            // session only, and the base's must not be entered at all.
            cmd.current_dir(&req.cwd);
        }
        let view_root_fd = match overlay_dirs {
            Some(_) => None,
            None => rustix::fs::open(
                &self.places.view_root,
                OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
                Mode::empty(),
            )
            .ok(),
        };
        let mut plan = prepared.plan;
        if prepared.read_only_mounts {
            plan.read_only_rest = Some(self.read_only_rest(
                &writable,
                overlay_plan.as_ref(),
                view_root_fd.as_ref(),
            )?);
        }
        if let Some(mut overlay_plan) = overlay_plan {
            if plan.landlock_ruleset.is_none() {
                overlay_plan.view_access = 0;
            }
            // The program starts in the view, not in the base std's chdir reached.
            let rel = cwd_rel(&self.places.view_root, &req.cwd).ok_or_else(|| {
                WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "the working directory {} is not inside the workspace {}",
                        req.cwd.display(),
                        self.places.view_root.display()
                    ),
                )
            })?;
            plan.cwd = Some(CwdPlan { root: None, rel });
            plan.overlay = Some(overlay_plan);
        } else if let (Some(rel), Some(root)) = (
            cwd_rel(&self.places.view_root, &req.cwd),
            view_root_fd.as_ref(),
        ) {
            // std's chdir by path may follow a name swapped for a symlink since the tool
            // resolved it: the child enters it again beneath the root, following none.
            plan.cwd = Some(CwdPlan {
                root: Some(root.as_raw_fd()),
                rel,
            });
        }
        // SAFETY: the closure runs in the forked child before exec; `ChildPlan::apply` makes
        // only raw system calls on memory prepared before fork (see child.rs).
        #[allow(unsafe_code)]
        unsafe {
            cmd.pre_exec(move || plan.apply());
        }
        self.started.fetch_add(1, Ordering::Relaxed);
        let spawned = cmd.spawn();
        // The child holds its own copies of these descriptors until exec.
        drop(prepared.ruleset);
        drop(view_root_fd);
        drop(cmd);
        let child = spawned.map_err(|e| {
            spawn_error(&e, &exe, &req.program, &self.policy, overlay_dirs.is_some())
        })?;

        let watched = supervise::watch(Watch {
            child,
            cage: prepared.cage.as_ref(),
            deadline,
            cancel: req.cancel.as_deref(),
            stdout_cap: req.stdout_cap.unwrap_or(self.policy.limits.output_bytes),
            stderr_cap: req.stderr_cap.unwrap_or(self.policy.limits.output_bytes),
        })
        .map_err(|e| {
            WsfsError::new(
                ErrorCode::IoError,
                format!("watching the program failed: {e}"),
            )
        })?;
        let refused_forks = prepared.cage.as_ref().map_or(0, |c| c.refused_forks());
        // Dropping the cage kills whatever is left in it and removes it.
        drop(prepared.cage);

        Ok(ExecOutcome {
            exit_code: watched.status.code(),
            signal: watched.status.signal(),
            stdout: watched.stdout,
            stderr: watched.stderr,
            stopped: watched.stopped,
            limit,
            sandbox: prepared.report,
            refused_forks,
        })
    }
}

impl Runner {
    /// The places made writable again once every mount is read-only (`mounts.rs`): the
    /// Landlock-writable ones, and a writable overlay view; in host mode also the workspace's
    /// path and identity, to enter the working directory on the child's own mounts.
    fn read_only_rest(
        &self,
        writable: &[PathBuf],
        overlay_plan: Option<&child::OverlayPlan>,
        view_root_fd: Option<&rustix::fd::OwnedFd>,
    ) -> Result<ReadOnlyRest, WsfsError> {
        let c_path = |p: &Path| {
            let canonical = std::fs::canonicalize(p).map_err(|e| {
                WsfsError::new(
                    ErrorCode::IoError,
                    format!("{} could not be resolved for the run: {e}", p.display()),
                )
            })?;
            mounts::c_path(&canonical).ok_or_else(|| {
                WsfsError::new(ErrorCode::InvalidArguments, "a path holds a NUL byte")
            })
        };
        let mut rest = ReadOnlyRest::default();
        for place in writable {
            rest.binds.push(c_path(place)?);
        }
        match overlay_plan {
            Some(view) if self.places.view_writable => rest.also_writable.push(view.target.clone()),
            Some(_) => {}
            None => {
                if let Some(fd) = view_root_fd {
                    let st = rustix::fs::fstat(fd).map_err(|e| {
                        WsfsError::new(
                            ErrorCode::IoError,
                            format!("the workspace root could not be examined: {e}"),
                        )
                    })?;
                    let path = c_path(&self.places.view_root)?;
                    rest.view = Some((path, st.st_dev, st.st_ino));
                }
            }
        }
        Ok(rest)
    }
}

/// `cwd` relative to the view's root, for the child's `openat2` (`.` for the root); `None`
/// for a directory outside the view (a probe run in a temp directory).
fn cwd_rel(root: &Path, cwd: &Path) -> Option<std::ffi::CString> {
    use std::os::unix::ffi::OsStrExt;
    let rel = cwd.strip_prefix(root).ok()?;
    let bytes = if rel.as_os_str().is_empty() {
        b".".to_vec()
    } else {
        rel.as_os_str().as_bytes().to_vec()
    };
    std::ffi::CString::new(bytes).ok()
}

fn spawn_error(
    err: &std::io::Error,
    exe: &Path,
    name: &OsStr,
    policy: &ExecSettings,
    overlay: bool,
) -> WsfsError {
    let name = name.to_string_lossy();
    match child::decode(err) {
        (Some(step), errno) if overlay && step.is_overlay() => overlay::step_error(step, errno),
        (Some(child::Step::WorkingDirectory), errno) => {
            let (code, why) = match errno {
                Some(libc::ELOOP | libc::EXDEV) => (
                    ErrorCode::OutsideWorkspace,
                    "it leads outside the workspace now (a name on the way was replaced by a \
                     symlink while the call ran)",
                ),
                Some(libc::ENOENT) => (ErrorCode::PathNotFound, "it no longer exists"),
                Some(libc::ENOTDIR) => (ErrorCode::NotADirectory, "it is no longer a directory"),
                _ => (ErrorCode::IoError, "it could not be opened"),
            };
            WsfsError::new(
                code,
                format!("{name} was not started in its working directory: {why}; nothing ran"),
            )
        }
        (Some(step), errno) => {
            let errno = errno.map_or(String::new(), |n| {
                format!(": {}", std::io::Error::from_raw_os_error(n))
            });
            let code = if policy.require_sandbox {
                ErrorCode::SandboxUnavailable
            } else {
                ErrorCode::IoError
            };
            WsfsError::new(
                code,
                format!(
                    "{name} was not started: {} failed{errno}; nothing ran",
                    step.describe()
                ),
            )
        }
        (None, Some(libc::EACCES)) => WsfsError::new(
            ErrorCode::PermissionDenied,
            format!(
                "{name} ({}) may not be executed inside the sandbox: it is outside the system \
                 directories and the host's exec_read_paths; the host can add its directory \
                 to exec_read_paths, or \"auto\" (workspace_info names the directory)",
                exe.display()
            ),
        ),
        (None, _) => WsfsError::new(
            ErrorCode::IoError,
            format!("{name} ({}) could not be started: {err}", exe.display()),
        ),
    }
}
