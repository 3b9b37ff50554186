//! `run_lint` and `typecheck`: one shape of result, `{clean, issue_count, issues, raw_output,
//! parser_used}`, from ruff / eslint (lint) and mypy / pyright / tsc (typecheck), each asked
//! for its machine format; any other command's output is scanned for `file:line:col`.

use super::command::{plain_words, runs_python_tool};
use super::{raw_output, ProjectFiles};
use crate::error::{ErrorCode, WsfsError};
use crate::exec::confinement::SandboxReport;
use crate::exec::report::{self, fallback, Issue};
use crate::exec::runner::{Control, ExecRequest, Runner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

const MAX_ISSUES: usize = 500;
const MAX_MACHINE_OUTPUT: usize = 64 << 20;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckArgs {
    /// The command, e.g. 'ruff check src' or 'mypy app'. Empty: detected from the workspace.
    #[serde(default)]
    pub command: String,
    /// Only these files or directories (workspace paths). Empty: the whole project.
    #[serde(default)]
    pub paths: Vec<String>,
}

#[derive(Debug, Clone, Serialize)]
pub struct CheckRun {
    pub clean: bool,
    pub issue_count: usize,
    pub issues: Vec<Issue>,
    pub raw_output: String,
    /// ruff, eslint, mypy, pyright, tsc, or fallback.
    pub parser_used: &'static str,
    pub command: String,
    pub exit_code: Option<i32>,
    pub sandbox: SandboxReport,
}

/// Which check a tool runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Check {
    Lint,
    Typecheck,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Tool {
    Ruff,
    Eslint,
    Mypy,
    Pyright,
    Tsc,
    Other,
}

impl Tool {
    fn name(self) -> &'static str {
        match self {
            Tool::Ruff => "ruff",
            Tool::Eslint => "eslint",
            Tool::Mypy => "mypy",
            Tool::Pyright => "pyright",
            Tool::Tsc => "tsc",
            Tool::Other => "fallback",
        }
    }

    fn of(words: &[String]) -> Tool {
        let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
        let first = words.first().map(|w| base(w)).unwrap_or_default();
        let npx_tool = if first == "npx" {
            words.get(1).map(|w| base(w))
        } else {
            None
        };
        let name = npx_tool.unwrap_or(first);
        if name == "ruff" || runs_python_tool(words, "ruff") {
            Tool::Ruff
        } else if name == "mypy" || runs_python_tool(words, "mypy") {
            Tool::Mypy
        } else if name == "pyright" {
            Tool::Pyright
        } else if name == "eslint" {
            Tool::Eslint
        } else if name == "tsc" {
            Tool::Tsc
        } else {
            Tool::Other
        }
    }

    /// The flags that make it print its machine format (or plain, parseable text).
    fn format_flags(self) -> &'static [&'static str] {
        match self {
            Tool::Ruff => &["--output-format=json", "--no-fix"],
            Tool::Eslint => &["--format=json"],
            Tool::Mypy => &["-O", "json"],
            Tool::Pyright => &["--outputjson"],
            Tool::Tsc => &["--pretty", "false"],
            Tool::Other => &[],
        }
    }
}

/// A program the project has installed locally (`node_modules/.bin/eslint`) or the PATH has.
fn find(runner: &Runner, files: &dyn ProjectFiles, dir: &Path, name: &str) -> Option<String> {
    let local = format!("node_modules/.bin/{name}");
    if files.is_file(&local) {
        return Some(dir.join(local).display().to_string());
    }
    runner.locate(name, dir).map(|_| name.to_string())
}

fn detect(
    check: Check,
    runner: &Runner,
    files: &dyn ProjectFiles,
    dir: &Path,
) -> Option<Vec<String>> {
    let kinds = super::workspace_info::project_kinds(files);
    let python = kinds.contains(&"python") || has_python_files(files);
    let node = kinds.contains(&"node");
    let candidates: &[(&str, bool, &[&str])] = match check {
        Check::Lint => &[("ruff", python, &["check"]), ("eslint", node, &[])],
        Check::Typecheck => &[
            ("mypy", python, &[]),
            ("pyright", python, &[]),
            ("tsc", node && files.is_file("tsconfig.json"), &["--noEmit"]),
        ],
    };
    candidates.iter().find_map(|(name, fits, sub)| {
        if !fits {
            return None;
        }
        let program = find(runner, files, dir, name)?;
        let mut words = vec![program];
        words.extend(sub.iter().map(|s| s.to_string()));
        Some(words)
    })
}

/// `.py` files in `src/` or `app/` (the root's own make it a Python project already).
fn has_python_files(files: &dyn ProjectFiles) -> bool {
    ["src", "app"]
        .iter()
        .any(|d| files.file_names(d).iter().any(|n| n.ends_with(".py")))
}

/// Runs the check in `dir`. `paths` are workspace paths the caller resolved (relative to `dir`).
pub fn run_check(
    check: Check,
    runner: &Runner,
    dir: &Path,
    files: &dyn ProjectFiles,
    args: &CheckArgs,
    ctl: &Control,
) -> Result<CheckRun, WsfsError> {
    let (mut words, shell) = if args.command.trim().is_empty() {
        let Some(words) = detect(check, runner, files, dir) else {
            let what = match check {
                Check::Lint => "no linter was found for this project (ruff for Python, eslint for JavaScript)",
                Check::Typecheck => "no type checker was found for this project (mypy or pyright for Python, tsc with a tsconfig.json)",
            };
            return Err(WsfsError::new(
                ErrorCode::CommandRequired,
                format!("{what}; pass command, and see workspace_info for what is installed"),
            ));
        };
        (words, false)
    } else {
        match plain_words(&args.command) {
            Some(words) => (words, false),
            None => (vec![args.command.clone()], true),
        }
    };
    let tool = if shell { Tool::Other } else { Tool::of(&words) };
    let has_format = words.iter().any(|w| {
        w.starts_with("--output-format")
            || w.starts_with("--format")
            || w == "-f"
            || w == "-O"
            || w == "--outputjson"
            || w == "--pretty"
    });
    if !has_format {
        words.extend(tool.format_flags().iter().map(|s| s.to_string()));
    }
    if !shell {
        if args.paths.is_empty() {
            if args.command.trim().is_empty()
                && matches!(tool, Tool::Ruff | Tool::Eslint | Tool::Mypy)
            {
                words.push(".".into());
            }
        } else {
            // A file named `--version` must reach the program as a file, not an option.
            words.extend(args.paths.iter().map(|p| {
                if p.starts_with('-') {
                    format!("./{p}")
                } else {
                    p.clone()
                }
            }));
        }
    }
    let mut req = if shell {
        ExecRequest::new("bash", dir).args(["--noprofile", "--norc", "-c", args.command.as_str()])
    } else {
        ExecRequest::new(&words[0], dir).args(&words[1..])
    };
    req = req.under(ctl).env("NO_COLOR", "1").env("CI", "1");
    req.stdout_cap = Some(MAX_MACHINE_OUTPUT);
    let out = runner.run_once(&req)?;
    if let Some(err) = out.stop_error(tool.name()) {
        return Err(err);
    }
    let base = dir.display().to_string();
    let stdout = out
        .stdout
        .complete()
        .map(|b| String::from_utf8_lossy(b).into_owned());
    let parsed = stdout.as_deref().and_then(|text| match tool {
        Tool::Ruff => report::ruff::parse(text, &base).ok(),
        Tool::Eslint => report::eslint::parse(text, &base).ok(),
        Tool::Mypy => report::mypy::parse(text, &base).ok(),
        Tool::Pyright => report::pyright::parse(text, &base).ok(),
        Tool::Tsc => Some(report::tsc::parse(text, &base)),
        Tool::Other => None,
    });
    let (mut issues, parser_used) = match parsed {
        Some(issues) => (issues, tool.name()),
        None => (
            fallback::parse(
                &format!("{}\n{}", out.stdout.text(), out.stderr.text()),
                &base,
            ),
            "fallback",
        ),
    };
    let issue_count = issues.len();
    issues.truncate(MAX_ISSUES);
    let command = if shell {
        args.command.clone()
    } else {
        words
            .iter()
            .map(|w| crate::exec::shell::words::quote(w))
            .collect::<Vec<_>>()
            .join(" ")
    };
    Ok(CheckRun {
        clean: issue_count == 0 && out.exit_code == Some(0),
        issue_count,
        issues,
        raw_output: raw_output(&out),
        parser_used,
        command,
        exit_code: out.exit_code,
        sandbox: out.sandbox,
    })
}

impl CheckRun {
    pub fn text(&self) -> String {
        if self.clean {
            return format!("clean ({})", self.command);
        }
        let mut s = format!(
            "{} issue(s) ({}, parsed by {})\n",
            self.issue_count, self.command, self.parser_used
        );
        for i in &self.issues {
            let rule = if i.rule.is_empty() {
                String::new()
            } else {
                format!(" [{}]", i.rule)
            };
            s.push_str(&format!(
                "{}:{}:{}: {}: {}{rule}\n",
                i.file, i.line, i.col, i.severity, i.message
            ));
        }
        if self.issues.is_empty() {
            s.push_str(&super::bound(&self.raw_output, 4000));
        }
        s
    }
}
