//! `safe_shell` (judged by the shipped policy file, then run) and `shell` (the raw shell, for
//! hosts that turn it on); both under the same sandbox as every program.

use super::{control, cwd, state};
use crate::error::Result;
use crate::shells::{safe_shell, shell, SafeShellArgs, SafeShellResult, ShellArgs, ShellRun};
use crate::tools::contract::{Annotations, Call, HostApproval, Switch, Tool, ToolOutput, Warning};
use std::borrow::Cow;

fn run_text(r: &ShellRun) -> String {
    let code = r
        .exit_code
        .map_or_else(|| "no exit code".to_string(), |c| format!("exit code {c}"));
    let mut s = format!("{code}\n");
    if !r.stdout.is_empty() {
        s.push_str(&r.stdout);
        if !r.stdout.ends_with('\n') {
            s.push('\n');
        }
    }
    if !r.stderr.trim().is_empty() {
        s.push_str("stderr:\n");
        s.push_str(&r.stderr);
        if !r.stderr.ends_with('\n') {
            s.push('\n');
        }
    }
    s
}

impl ToolOutput for ShellRun {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(run_text(self))
    }
}

impl ToolOutput for SafeShellResult {
    fn text(&self) -> Cow<'_, str> {
        match self {
            SafeShellResult::Ran(r) => Cow::Owned(run_text(r)),
            SafeShellResult::Blocked {
                reason_code,
                reason,
                matched_pattern,
                suggested_safe_alternative,
                ..
            } => Cow::Owned(format!(
                "blocked: {reason} ({}: matched {matched_pattern}); instead: \
                 {suggested_safe_alternative}",
                reason_code.as_str()
            )),
        }
    }
}

const RUNS_COMMANDS: Annotations = Annotations {
    read_only: false,
    destructive: true,
    idempotent: false,
};

pub struct SafeShellTool;

impl Tool for SafeShellTool {
    const NAME: &'static str = "safe_shell";
    const ANNOTATIONS: Annotations = RUNS_COMMANDS;
    const SWITCH: Switch = Switch::Exec;
    const RUNS_ON_READ_ONLY_VIEW: bool = true;
    type Args = SafeShellArgs;
    type Output = SafeShellResult;

    fn description() -> String {
        format!(
            "{} {}",
            "Run a simple command line (plain words joined by && || ; |, such as 'ls -la src' or \
         'git log --oneline -5') after it is checked against an allowlist; a blocked command \
         returns blocked: true with the reason and the tool or command to use instead. Prefer \
         the structured tools (run_tests, run_lint, git_status, ...) where one fits.",
            crate::tools::fields::PATHS
        )
    }

    fn run(call: &mut Call<'_>, args: SafeShellArgs) -> Result<(SafeShellResult, Vec<Warning>)> {
        let rules = super::shell_rules(call.ws)?;
        let dir = cwd(call, &args.cwd)?;
        let dev = state(call.ws)?;
        Ok((
            safe_shell(&dev.runner, &rules, &dir, &args, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}

pub struct ShellTool;

impl Tool for ShellTool {
    const NAME: &'static str = "shell";
    const ANNOTATIONS: Annotations = RUNS_COMMANDS;
    const SWITCH: Switch = Switch::Shell;
    const RUNS_ON_READ_ONLY_VIEW: bool = true;
    const HOST_APPROVAL: HostApproval =
        HostApproval::Always("shell runs any command line the model writes (under the sandbox)");
    type Args = ShellArgs;
    type Output = ShellRun;

    fn description() -> String {
        format!("{} {}", "Run a command line with bash as it is, in the workspace, under the kernel sandbox (no \
         writes outside the workspace, no network, killed at its time limit). Use safe_shell or \
         the structured tools when they can do the job.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: ShellArgs) -> Result<(ShellRun, Vec<Warning>)> {
        let dir = cwd(call, &args.cwd)?;
        let dev = state(call.ws)?;
        Ok((
            shell(&dev.runner, &dir, &args, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}
