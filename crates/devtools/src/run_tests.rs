//! `run_tests`: find the project's test runner (or take the model's command), run it under
//! the sandbox with its machine format switched on, and return structured failures.

use super::command::{plain_words, runs_python_tool};
use super::{raw_output, ProjectFiles};
use crate::error::{ErrorCode, WsfsError};
use crate::exec::confinement::SandboxReport;
use crate::exec::report::{self, fallback, TestCounts, TestFailure};
use crate::exec::runner::{Control, ExecOutcome, ExecRequest, Runner};
use crate::exec::scratch::ScratchFile;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Duration;

const JUNIT_FILE: &str = "junit.xml";
const MAX_REPORT: u64 = 64 << 20;
/// `go test -json` is parsed whole: it may print this much.
const MAX_JSON_STREAM: usize = 64 << 20;
const MAX_FAILURES: usize = 100;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct RunTestsArgs {
    /// The test command, e.g. 'pytest -x tests/test_api.py' or 'go test ./pkg/...'. Empty: detected from the workspace (pytest, go test, cargo test, npm test).
    #[serde(default)]
    pub command: String,
    /// Only these tests: files or node ids for pytest ('tests/test_a.py::test_x'), packages or test names for go ('./pkg/...', 'TestParse'), name filters for cargo and npm.
    #[serde(default)]
    pub focus: Vec<String>,
    /// Seconds before the run is killed (default and most: the host's limit, 60 s unless it set another).
    #[serde(default)]
    pub timeout_sec: u64,
}

#[derive(Debug, Clone, Serialize)]
pub struct TestRun {
    pub passed: bool,
    pub total: u64,
    pub passed_count: u64,
    pub failed_count: u64,
    pub skipped_count: u64,
    pub summary: String,
    pub failures: Vec<TestFailure>,
    pub raw_output: String,
    /// pytest, go, cargo, npm, or command (the model's own, parsed as text).
    pub runner: &'static str,
    pub command: String,
    pub exit_code: Option<i32>,
    pub sandbox: SandboxReport,
}

/// Which runner a command is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Pytest,
    Go,
    Cargo,
    Npm,
    Other,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Pytest => "pytest",
            Kind::Go => "go",
            Kind::Cargo => "cargo",
            Kind::Npm => "npm",
            Kind::Other => "command",
        }
    }
}

/// The runner the workspace's files point at.
fn detect(files: &dyn ProjectFiles, runner: &Runner, dir: &Path) -> Option<Vec<String>> {
    let python = [
        "pytest.ini",
        "conftest.py",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "tox.ini",
    ]
    .iter()
    .any(|f| files.is_file(f))
        || files.is_dir("tests") && !files.is_file("package.json") && !files.is_file("go.mod")
        || files
            .file_names(".")
            .iter()
            .any(|n| super::is_python_test_file(n));
    if python {
        return Some(if runner.locate("pytest", dir).is_some() {
            vec!["pytest".into()]
        } else {
            vec!["python3".into(), "-m".into(), "pytest".into()]
        });
    }
    if files.is_file("go.mod") {
        return Some(vec!["go".into(), "test".into()]);
    }
    if files.is_file("Cargo.toml") {
        return Some(vec!["cargo".into(), "test".into()]);
    }
    let has_test_script = files
        .read_small("package.json", 1 << 20)
        .and_then(|s| serde_json::from_str::<serde_json::Value>(&s).ok())
        .and_then(|v| v.get("scripts")?.get("test")?.as_str().map(str::to_string))
        .is_some_and(|t| !t.contains("no test specified"));
    if has_test_script {
        return Some(vec!["npm".into(), "test".into()]);
    }
    None
}

fn kind_of(words: &[String]) -> Kind {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    if runs_python_tool(words, "pytest") || words.first().is_some_and(|w| base(w) == "py.test") {
        return Kind::Pytest;
    }
    match (
        words.first().map(|w| base(w)).as_deref(),
        words.get(1).map(String::as_str),
    ) {
        (Some("go"), Some("test")) => Kind::Go,
        (Some("cargo"), Some("test")) => Kind::Cargo,
        (Some("npm" | "pnpm" | "yarn"), Some("test" | "t")) => Kind::Npm,
        _ => Kind::Other,
    }
}

/// Runs the tests in `dir` (the workspace view or a directory in it).
pub fn run_tests(
    runner: &Runner,
    dir: &Path,
    files: &dyn ProjectFiles,
    args: &RunTestsArgs,
    ctl: &Control,
) -> Result<TestRun, WsfsError> {
    let scratch = runner.scratch()?;
    let (mut words, shell) = if args.command.trim().is_empty() {
        let Some(words) = detect(files, runner, dir) else {
            return Err(WsfsError::new(
                ErrorCode::CommandRequired,
                "no test runner was found here (no pytest configuration, tests/ or test_*.py, \
                 go.mod, Cargo.toml, or package.json test script); pass command, e.g. 'make test'",
            ));
        };
        (words, false)
    } else {
        match plain_words(&args.command) {
            Some(words) => (words, false),
            None => (vec![args.command.clone()], true),
        }
    };
    let kind = if shell { Kind::Other } else { kind_of(&words) };
    let go_module = files.read_small("go.mod", 1 << 20).and_then(|s| {
        s.lines()
            .find_map(|l| l.strip_prefix("module ").map(|m| m.trim().to_string()))
    });
    let mut stdout_cap = None;
    match kind {
        Kind::Pytest => {
            words.extend(args.focus.iter().cloned());
            words.push("-o".into());
            words.push("junit_family=xunit1".into());
            words.push(format!(
                "--junitxml={}",
                scratch.path().join(JUNIT_FILE).display()
            ));
        }
        Kind::Go => {
            if !words.iter().any(|w| w == "-json") {
                words.insert(2, "-json".into());
            }
            let (packages, names): (Vec<&String>, Vec<&String>) = args
                .focus
                .iter()
                .partition(|f| f.starts_with('.') || f.contains('/'));
            if !names.is_empty() {
                let names: Vec<&str> = names.iter().map(|s| s.as_str()).collect();
                words.push(format!("-run=^({})$", names.join("|")));
            }
            if packages.is_empty() && !words.iter().skip(2).any(|w| !w.starts_with('-')) {
                words.push("./...".into());
            }
            words.extend(packages.into_iter().cloned());
            stdout_cap = Some(MAX_JSON_STREAM);
        }
        Kind::Cargo | Kind::Npm => {
            if !args.focus.is_empty() {
                if !words.iter().any(|w| w == "--") {
                    words.push("--".into());
                }
                words.extend(args.focus.iter().cloned());
            }
        }
        Kind::Other => {}
    }
    let mut req = if shell {
        ExecRequest::new("bash", dir).args(["--noprofile", "--norc", "-c", args.command.as_str()])
    } else {
        ExecRequest::new(&words[0], dir).args(&words[1..])
    };
    req = req
        .under(ctl)
        .env("NO_COLOR", "1")
        .env("CI", "1")
        .env("PYTHONDONTWRITEBYTECODE", "1");
    for (k, v) in crate::exec::git::shell_env(runner, dir, ctl) {
        req = req.env(k, v);
    }
    if args.timeout_sec > 0 {
        req = req.timeout(Duration::from_secs(args.timeout_sec));
    }
    req.stdout_cap = stdout_cap;
    let command = if shell {
        args.command.clone()
    } else {
        display(&words)
    };
    let out = runner.run(&req, &scratch)?;
    if let Some(err) = out.stop_error("the tests") {
        return Err(err);
    }
    let counts = match kind {
        Kind::Pytest => match scratch.read(JUNIT_FILE, MAX_REPORT) {
            Ok(ScratchFile::Contents(xml)) => report::junit::parse(&String::from_utf8_lossy(&xml))
                .unwrap_or_else(|_| text_counts(&out)),
            _ => text_counts(&out),
        },
        Kind::Go => {
            let stdout = out.stdout.complete().map(String::from_utf8_lossy);
            let r =
                report::gotest::parse(stdout.as_deref().unwrap_or_default(), go_module.as_deref());
            if r.saw_events {
                let mut c = r.counts;
                // Go before 1.24 prints build errors on stderr, not as events.
                if c.failures.is_empty() && out.exit_code != Some(0) {
                    c.failures.extend(build_errors(&out));
                    c.failed += c.failures.len() as u64;
                }
                c
            } else {
                text_counts(&out)
            }
        }
        Kind::Cargo => {
            report::cargo::parse(&format!("{}\n{}", out.stdout.text(), out.stderr.text()))
        }
        Kind::Npm | Kind::Other => {
            let text = format!("{}\n{}", out.stdout.text(), out.stderr.text());
            report::nodetest::parse(&text, &dir.display().to_string())
                .unwrap_or_else(|| text_counts(&out))
        }
    };
    let mut run = result(kind, command, counts, &out);
    hide_host_paths(&mut run, scratch.path(), runner.places().home.as_deref());
    Ok(run)
}

/// The run's temp directory (where pytest writes its report) and the tools' home are host
/// paths outside the workspace: the model sees them as `$TMPDIR` and `$HOME`, the variables
/// that name them in the program's environment.
fn hide_host_paths(run: &mut TestRun, tmp: &Path, home: Option<&Path>) {
    let names = [(tmp, "$TMPDIR")]
        .into_iter()
        .chain(home.map(|h| (h, "$HOME")))
        .map(|(path, name)| (path.display().to_string(), name))
        .filter(|(path, _)| path.len() > 1)
        .collect::<Vec<_>>();
    let hide = |text: &mut String| {
        for (path, name) in &names {
            if text.contains(path.as_str()) {
                *text = text.replace(path.as_str(), name);
            }
        }
    };
    hide(&mut run.command);
    hide(&mut run.summary);
    hide(&mut run.raw_output);
    for f in &mut run.failures {
        for field in [&mut f.file, &mut f.test, &mut f.reason, &mut f.snippet] {
            hide(field);
        }
    }
}

fn display(words: &[String]) -> String {
    words
        .iter()
        .map(|w| crate::exec::shell::words::quote(w))
        .collect::<Vec<_>>()
        .join(" ")
}

fn build_errors(out: &ExecOutcome) -> Vec<TestFailure> {
    fallback::parse(&out.stderr.text(), "")
        .into_iter()
        .map(|i| TestFailure {
            file: i.file,
            line: i.line,
            test: "(build)".into(),
            reason: i.message,
            snippet: String::new(),
        })
        .collect()
}

/// Counts from a runner's closing line when there is no machine report (`3 passed, 1 failed`
/// of pytest, jest's `Tests: 1 failed, 2 passed`, node's `# pass 2`, mocha's `2 passing`),
/// failures from `file:line` lines.
fn text_counts(out: &ExecOutcome) -> TestCounts {
    let text = format!("{}\n{}", out.stdout.text(), out.stderr.text());
    let mut c = TestCounts::default();
    for line in text.lines().rev() {
        let l = line.trim().trim_matches('=').trim();
        let mut found = false;
        for part in l.split([',', ' ']).collect::<Vec<_>>().windows(2) {
            let (Ok(n), word) = (part[0].parse::<u64>(), part[1]) else {
                continue;
            };
            match word.trim_end_matches(',') {
                "passed" | "passing" => (c.passed, found) = (n, true),
                "failed" | "failing" | "error" | "errors" => {
                    (c.failed, found) = (c.failed + n, true)
                }
                "skipped" | "pending" | "todo" => (c.skipped, found) = (n, true),
                _ => {}
            }
        }
        if let Some(n) = l
            .strip_prefix("# pass ")
            .and_then(|n| n.trim().parse().ok())
        {
            c.passed = n;
            found = true;
        }
        if let Some(n) = l
            .strip_prefix("# fail ")
            .and_then(|n| n.trim().parse().ok())
        {
            c.failed = n;
            found = true;
        }
        if found {
            break;
        }
    }
    if c.failed == 0 && out.exit_code != Some(0) {
        c.failed = 1;
    }
    c.failures = fallback::parse(&text, "")
        .into_iter()
        .filter(|i| i.severity == "error")
        .map(|i| TestFailure {
            file: i.file,
            line: i.line,
            test: String::new(),
            reason: i.message,
            snippet: String::new(),
        })
        .collect();
    c
}

fn result(kind: Kind, command: String, mut counts: TestCounts, out: &ExecOutcome) -> TestRun {
    let passed = out.exit_code == Some(0) && counts.failed == 0;
    let omitted = counts.failures.len().saturating_sub(MAX_FAILURES);
    counts.failures.truncate(MAX_FAILURES);
    let mut summary = format!(
        "{}: {} passed, {} failed, {} skipped",
        kind.name(),
        counts.passed,
        counts.failed,
        counts.skipped
    );
    if !passed && counts.total() == 0 {
        summary.push_str(&format!(
            " (exit code {}; see raw_output)",
            out.exit_code.map_or("none".into(), |c| c.to_string())
        ));
    }
    if let Some(note) = out.limit_note() {
        summary.push_str(&format!("; {note}"));
    }
    if omitted > 0 {
        summary.push_str(&format!("; {omitted} more failures not listed"));
    }
    TestRun {
        passed,
        total: counts.total(),
        passed_count: counts.passed,
        failed_count: counts.failed,
        skipped_count: counts.skipped,
        summary,
        failures: counts.failures,
        raw_output: raw_output(out),
        runner: kind.name(),
        command,
        exit_code: out.exit_code,
        sandbox: out.sandbox.clone(),
    }
}

impl TestRun {
    pub fn text(&self) -> String {
        let mut s = format!("{} ({})\n", self.summary, self.command);
        for f in &self.failures {
            let at = if f.line > 0 {
                format!("{}:{}", f.file, f.line)
            } else {
                f.file.clone()
            };
            s.push_str(&format!("FAILED {} at {at}: {}\n", f.test, f.reason));
        }
        if self.failures.is_empty() && !self.passed {
            s.push_str(&super::bound(&self.raw_output, 4000));
        }
        s
    }
}
