//! `safe_shell` (judged by the policy file, then run as rebuilt) and `shell` (the raw shell,
//! for hosts that turn it on). Both run `bash` under the same runner, with git hardened
//! through the environment, so neither can write outside the workspace.

use crate::error::{ErrorCode, WsfsError};
use crate::exec::confinement::SandboxReport;
use crate::exec::runner::{Control, ExecRequest, Runner};
use crate::exec::shell::{judge, ReasonCode, ShellRules, Verdict};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

/// Bytes of stdout and of stderr a shell result carries.
const MAX_STREAM: usize = 64 * 1024;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SafeShellArgs {
    /// The command line: plain words joined by && || ; | (for example 'ls -la src' or 'git log --oneline -5').
    pub command: String,
    /// Directory to run in (a workspace path). Default: the workspace root.
    #[serde(default)]
    pub cwd: String,
}

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ShellArgs {
    /// The command line, run by bash as it is.
    pub command: String,
    /// Directory to run in (a workspace path). Default: the workspace root.
    #[serde(default)]
    pub cwd: String,
    /// Seconds before it is killed (default and most: the host's limit).
    #[serde(default)]
    pub timeout_sec: u64,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ShellRun {
    pub blocked: bool,
    pub stdout: String,
    pub stderr: String,
    pub exit_code: Option<i32>,
    /// What bash ran (safe_shell rebuilds the command from what it judged).
    pub command_run: String,
    pub sandbox: SandboxReport,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
#[serde(untagged)]
pub enum SafeShellResult {
    Ran(ShellRun),
    Blocked {
        blocked: bool,
        /// Why, as a stable code (`NOT_IN_ALLOWLIST`, `DENYLIST_MATCH`, ...); `reason` says
        /// it in words.
        reason_code: ReasonCode,
        reason: String,
        matched_pattern: String,
        suggested_safe_alternative: String,
    },
}

/// Judges and, when allowed, runs `args.command` in `dir`.
pub fn safe_shell(
    runner: &Runner,
    policy: &ShellRules,
    dir: &Path,
    args: &SafeShellArgs,
    ctl: &Control,
) -> Result<SafeShellResult, WsfsError> {
    match judge(policy, &args.command) {
        Verdict::Blocked(b) => Ok(SafeShellResult::Blocked {
            blocked: true,
            reason_code: b.reason_code,
            reason: b.reason,
            matched_pattern: b.matched_pattern,
            suggested_safe_alternative: b.suggested_safe_alternative,
        }),
        Verdict::Allowed(a) => {
            run_bash(runner, dir, &a.command, None, ctl).map(SafeShellResult::Ran)
        }
    }
}

/// Runs `args.command` as it is.
pub fn shell(
    runner: &Runner,
    dir: &Path,
    args: &ShellArgs,
    ctl: &Control,
) -> Result<ShellRun, WsfsError> {
    if args.command.trim().is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "command is empty",
        ));
    }
    let timeout = (args.timeout_sec > 0).then(|| Duration::from_secs(args.timeout_sec));
    run_bash(runner, dir, &args.command, timeout, ctl)
}

fn run_bash(
    runner: &Runner,
    dir: &Path,
    command: &str,
    timeout: Option<Duration>,
    ctl: &Control,
) -> Result<ShellRun, WsfsError> {
    let mut req = ExecRequest::new("bash", dir)
        .args(["--noprofile", "--norc", "-c", command])
        .under(ctl);
    for (k, v) in crate::exec::git::shell_env(runner, dir, ctl) {
        req = req.env(k, v);
    }
    req.timeout = timeout;
    req.stdout_cap = Some(MAX_STREAM);
    req.stderr_cap = Some(MAX_STREAM);
    let out = runner.run_once(&req)?;
    if let Some(err) = out.stop_error("the command") {
        return Err(err);
    }
    let mut stderr = out.stderr.text();
    if let Some(note) = out.limit_note() {
        stderr.push_str(&format!("\n[{note}]"));
    }
    if out.refused_forks > 0 {
        stderr.push_str(&format!(
            "\n[the process limit ({}) refused {} fork(s)]",
            runner.policy().limits.processes,
            out.refused_forks
        ));
    }
    Ok(ShellRun {
        blocked: false,
        stdout: out.stdout.text(),
        stderr,
        exit_code: out.exit_code,
        command_run: command.to_string(),
        sandbox: out.sandbox,
    })
}
