//! `run_tests`, `run_lint`, `typecheck`: a project's own tools, read back as structured results.

use super::{control, cwd, files, program_paths, state};
use crate::error::Result;
use crate::lint::{run_check, Check, CheckArgs, CheckRun};
use crate::run_tests::{run_tests, RunTestsArgs, TestRun};
use crate::sandbox::gate::Access;
use crate::tools::contract::{Annotations, Call, Switch, Tool, ToolOutput, Warning};
use std::borrow::Cow;

impl ToolOutput for TestRun {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(TestRun::text(self))
    }
}

impl ToolOutput for CheckRun {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(CheckRun::text(self))
    }
}

/// Programs run the project's code: they may change files.
const RUNS_CODE: Annotations = Annotations {
    read_only: false,
    destructive: true,
    idempotent: false,
};

pub struct RunTestsTool;

impl Tool for RunTestsTool {
    const NAME: &'static str = "run_tests";
    const ANNOTATIONS: Annotations = RUNS_CODE;
    const SWITCH: Switch = Switch::Exec;
    const RUNS_ON_READ_ONLY_VIEW: bool = true;
    type Args = RunTestsArgs;
    type Output = TestRun;

    fn description() -> String {
        format!("{} {}", "Run the project's tests and get structured results: counts, and each failure with its \
         file, line, test name, reason and snippet. Detects pytest, go test, cargo test and npm \
         test from the workspace unless command is given; focus narrows the run. Runs in a \
         kernel sandbox confined to the workspace, without network, killed at its time limit.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: RunTestsArgs) -> Result<(TestRun, Vec<Warning>)> {
        let dir = cwd(call, "")?;
        let dev = state(call.ws)?;
        let files = files(call);
        Ok((
            run_tests(&dev.runner, &dir, &files, &args, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}

fn check(call: &mut Call<'_>, which: Check, mut args: CheckArgs) -> Result<CheckRun> {
    args.paths = program_paths(call, &args.paths, Access::READ)?;
    let dir = cwd(call, "")?;
    let dev = state(call.ws)?;
    let files = files(call);
    run_check(which, &dev.runner, &dir, &files, &args, &control(call.ctl))
}

pub struct RunLintTool;

impl Tool for RunLintTool {
    const NAME: &'static str = "run_lint";
    const ANNOTATIONS: Annotations = RUNS_CODE;
    const SWITCH: Switch = Switch::Exec;
    const RUNS_ON_READ_ONLY_VIEW: bool = true;
    type Args = CheckArgs;
    type Output = CheckRun;

    fn description() -> String {
        format!(
            "{} {}",
            "Run the project's linter and get each issue as {file, line, col, rule, message, \
         severity}: ruff or eslint detected from the workspace (their JSON output), or your \
         command (read best-effort as file:line:col). paths limits it to some files.",
            crate::tools::fields::PATHS
        )
    }

    fn run(call: &mut Call<'_>, args: CheckArgs) -> Result<(CheckRun, Vec<Warning>)> {
        Ok((check(call, Check::Lint, args)?, Vec::new()))
    }
}

pub struct TypecheckTool;

impl Tool for TypecheckTool {
    const NAME: &'static str = "typecheck";
    const ANNOTATIONS: Annotations = RUNS_CODE;
    const SWITCH: Switch = Switch::Exec;
    const RUNS_ON_READ_ONLY_VIEW: bool = true;
    type Args = CheckArgs;
    type Output = CheckRun;

    fn description() -> String {
        format!("{} {}", "Run the project's type checker and get each error as {file, line, col, rule, message, \
         severity}: mypy, pyright or tsc detected from the workspace, or your command (read \
         best-effort as file:line:col). paths limits it to some files.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: CheckArgs) -> Result<(CheckRun, Vec<Warning>)> {
        Ok((check(call, Check::Typecheck, args)?, Vec::new()))
    }
}
