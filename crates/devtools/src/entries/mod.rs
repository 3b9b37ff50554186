//! The developer tools (issue 21) as registry entries: `workspace_info`, `git_status`,
//! `git_diff`, `git_commit`, `run_tests`, `run_lint`, `typecheck`, `safe_shell` and `shell`.
//! Their cores live in `crate::exec` (the confined runner, hardened git, the report parsers,
//! the safe_shell judge); this module only wires them to the contract:
//!
//! - Off unless the host sets `policy.exec_enabled` (`shell` also needs `shell_enabled`):
//!   dispatch refuses them with `exec_disabled` before their arguments are parsed
//!   ([`Switch`](crate::tools::contract::Switch)).
//! - Every path argument (`cwd`, `paths`, `pathspec`) is a tool path like any other: parsed and
//!   resolved beneath the root with the policy as gate (`Workspace::program_dir` /
//!   `program_path`), then handed to the program as the real path that was resolved.
//! - The call's deadline (`exec_timeout_sec`, shortened by a per-call timeout) and cancel token
//!   reach the runner, which kills the program's whole process group when either fires.
//! - One runner and one `workspace_info` cache per workspace (`Workspace::slot`).

pub mod checks;
pub mod git;
pub mod info;
pub mod shells;

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::exec::runner::ViewLayers;
pub use crate::exec::shell::ShellRules;
use crate::exec::{Control, ExecLimits, ExecPlaces, ExecSettings, Runner};
use crate::sandbox::fileops::{open_leaf_read, regular_file_size};
use crate::sandbox::gate::Access;
use crate::sandbox::resolve::Located;
use crate::tools::contract::Call;
use crate::tools::kind::FileKind;
use crate::tools::list_dir::list_dir;
use crate::workspace::Workspace;
use crate::workspace_info::InfoCache;
use crate::ProjectFiles;
use std::io::Read;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;
use wsfs_core::guard::policy::PolicyConfig;

/// The most a host's safe_shell rules file may hold (the shipped one is about 30 KiB).
const MAX_RULES_FILE_BYTES: u64 = 1024 * 1024;

/// The safe_shell rules of a workspace whose policy names a rules file (`safe_shell_rules`),
/// read and checked by [`open`].
struct HostShellRules(Option<Arc<ShellRules>>);

/// Run before a workspace opens: reads the host's safe_shell rules file, if the policy names
/// one, and checks every rule against its `match` / `not_match` examples. A file that cannot
/// be read, does not parse or disagrees with an example refuses the open, naming the file, the
/// rule and the example.
pub fn read_shell_rules(policy: &PolicyConfig) -> Result<Option<ShellRules>> {
    let Some(path) = policy.safe_shell_rules.as_deref() else {
        return Ok(None);
    };
    let refused = |why: String| {
        WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("policy.safe_shell_rules ({path}): {why}"),
        )
    };
    let file = std::fs::File::open(path).map_err(|e| refused(format!("cannot be read: {e}")))?;
    let mut text = String::new();
    file.take(MAX_RULES_FILE_BYTES + 1)
        .read_to_string(&mut text)
        .map_err(|e| refused(format!("cannot be read as UTF-8 text: {e}")))?;
    if text.len() as u64 > MAX_RULES_FILE_BYTES {
        return Err(refused(format!(
            "is larger than {MAX_RULES_FILE_BYTES} bytes"
        )));
    }
    ShellRules::from_toml(&text).map(Some).map_err(refused)
}

/// Makes `rules` (from [`read_shell_rules`]) the ones `ws`'s safe_shell judges by.
pub fn keep_shell_rules(ws: &Workspace, rules: ShellRules) {
    ws.slot(|| HostShellRules(Some(Arc::new(rules))));
}

/// The rules safe_shell judges by: the host's file, read at open, else the shipped ones.
pub fn shell_rules(ws: &Workspace) -> Result<ShellRulesRef> {
    if let Some(rules) = &ws.slot(|| HostShellRules(None)).0 {
        return Ok(ShellRulesRef::Host(rules.clone()));
    }
    ShellRules::builtin()
        .map(ShellRulesRef::Shipped)
        .map_err(|e| WsfsError::new(ErrorCode::IoError, e))
}

/// A workspace's safe_shell rules (see [`shell_rules`]).
pub enum ShellRulesRef {
    Shipped(&'static ShellRules),
    Host(Arc<ShellRules>),
}

impl std::ops::Deref for ShellRulesRef {
    type Target = ShellRules;

    fn deref(&self) -> &ShellRules {
        match self {
            ShellRulesRef::Shipped(rules) => rules,
            ShellRulesRef::Host(rules) => rules,
        }
    }
}

/// What the developer tools keep per workspace.
pub struct DevState {
    pub runner: Runner,
    pub info: InfoCache,
}

/// This workspace's runner and cache, made on first use from its policy. In overlay mode
/// each program runs on the session's view (base + session changes) and what it changes goes
/// into the session, never into the base (`wsfs_core::workspace::overlay::runs`).
pub fn state(ws: &Workspace) -> Result<Arc<DevState>> {
    // Looked up before: a slot's maker must not take another slot (one lock holds them).
    let read_paths = read_paths(ws);
    Ok(ws.slot(|| DevState {
        runner: Runner::new(places(ws), exec_settings(ws, &read_paths.0)),
        info: InfoCache::default(),
    }))
}

/// In overlay mode, the session the programs run on.
#[cfg(feature = "overlay")]
fn view_layers(ws: &Workspace) -> Option<ViewLayers> {
    ws.session_view().map(ViewLayers::Session)
}

/// Without overlay mode there is no session to run on.
#[cfg(not(feature = "overlay"))]
fn view_layers(_: &Workspace) -> Option<ViewLayers> {
    None
}

fn places(ws: &Workspace) -> ExecPlaces {
    let (home, scratch_parent) = match ws.state_path() {
        Some(state) => (Some(state.join("exec-home")), state.join("exec-tmp")),
        // No state directory: each run's private temp directory is its home.
        None => (
            None,
            std::env::temp_dir().join(format!("wsfs-exec-{}", rustix::process::getuid().as_raw())),
        ),
    };
    ExecPlaces {
        view_root: ws.root().to_path_buf(),
        overlay: view_layers(ws),
        view_writable: ws.policy().writes_enabled,
        home,
        scratch_parent,
    }
}

/// The directories programs may read and execute besides the system's: the policy's
/// `exec_read_paths`, `"auto"` replaced by the toolchains found on the host's PATH. Decided
/// once per workspace, when it opens ([`settle_read_paths`]).
struct ReadPaths(Vec<PathBuf>);

/// Decides what `exec_read_paths` grants (`"auto"` included) for `ws`; called when the
/// workspace opens, so a toolchain installed later is not granted before it reopens.
pub fn settle_read_paths(ws: &Workspace) {
    read_paths(ws);
}

fn read_paths(ws: &Workspace) -> Arc<ReadPaths> {
    ws.slot(|| {
        let path_var =
            std::env::var_os("PATH").unwrap_or_else(|| crate::exec::env::DEFAULT_PATH.into());
        let home = std::env::var_os("HOME").map(PathBuf::from);
        ReadPaths(crate::toolchains::read_paths(
            &ws.policy().exec_read_paths,
            &path_var,
            home.as_deref(),
        ))
    })
}

fn exec_settings(ws: &Workspace, read_paths: &[PathBuf]) -> ExecSettings {
    let p = ws.policy();
    ExecSettings {
        read_paths: read_paths.to_vec(),
        env_allow: p.exec_env_allow.clone(),
        path: None,
        network: p.exec_network,
        require_sandbox: p.exec_require_sandbox,
        limits: ExecLimits {
            wall_clock: Duration::from_secs(p.exec_timeout_sec),
            ..ExecLimits::default()
        },
    }
}

/// The call's deadline and cancel flag, for the runner.
pub fn control(ctl: &CallControl) -> Control {
    Control {
        deadline: Some(ctl.deadline()),
        cancel: ctl.cancel_flag(),
    }
}

/// The directory a program runs in: `raw` resolved as a tool path (empty: the root).
pub fn cwd(call: &mut Call<'_>, raw: &str) -> Result<PathBuf> {
    let raw = if raw.is_empty() { "." } else { raw };
    let path = call.path(raw)?;
    call.ws.program_dir(&path, call.ctl)
}

/// Tool paths as the workspace-relative real paths a program run at the root takes.
pub fn program_paths(call: &mut Call<'_>, raw: &[String], access: Access) -> Result<Vec<String>> {
    raw.iter()
        .map(|r| {
            let path = call.path(r)?;
            let rel = call.ws.program_path(&path, access, call.ctl)?;
            let rel = rel.to_str().ok_or_else(|| {
                WsfsError::new(
                    ErrorCode::InvalidPath,
                    format!("{}: a program argument must be valid UTF-8", path.display),
                )
            })?;
            Ok(if rel.is_empty() {
                ".".into()
            } else {
                rel.into()
            })
        })
        .collect()
}

/// How a tool looks at the project's files (`package.json`, `go.mod`): through the
/// workspace's operations like every tool (resolved beneath the root with the policy as
/// gate, read from the resolved handle), so it works in host and overlay mode alike.
pub struct WsFiles<'a> {
    ws: &'a Workspace,
    ctl: &'a CallControl,
}

pub fn files<'a>(call: &Call<'a>) -> WsFiles<'a> {
    WsFiles {
        ws: call.ws,
        ctl: call.ctl,
    }
}

impl WsFiles<'_> {
    fn located(&self, rel: &str) -> Option<Located<'_>> {
        let path = self.ws.parse_path(rel).ok()?;
        self.ws.resolve(&path, Access::READ, false, self.ctl).ok()
    }
}

impl ProjectFiles for WsFiles<'_> {
    fn is_file(&self, rel: &str) -> bool {
        self.located(rel)
            .is_some_and(|l| l.leaf_meta.as_ref().is_some_and(|m| m.is_file()))
    }

    fn is_dir(&self, rel: &str) -> bool {
        self.located(rel)
            .is_some_and(|l| l.leaf_meta.as_ref().is_some_and(|m| m.is_dir()))
    }

    fn read_small(&self, rel: &str, max: u64) -> Option<String> {
        let located = self.located(rel)?;
        let leaf = located.file_leaf(rel, false).ok()?;
        let file = open_leaf_read(&located.dir, leaf).ok()?;
        // Checked on the open file: the name may have been swapped since resolution.
        if regular_file_size(&file, rel).ok()? > max {
            return None;
        }
        let mut text = String::new();
        file.take(max + 1).read_to_string(&mut text).ok()?;
        (text.len() as u64 <= max).then_some(text)
    }

    fn file_names(&self, rel: &str) -> Vec<String> {
        let Ok(path) = self.ws.parse_path(rel) else {
            return Vec::new();
        };
        list_dir(self.ws, &path, self.ctl).map_or_else(
            |_| Vec::new(),
            |listed| {
                listed
                    .entries
                    .into_iter()
                    .filter(|e| e.kind == FileKind::File)
                    .map(|e| e.name)
                    .collect()
            },
        )
    }
}
