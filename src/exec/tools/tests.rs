//! The tools' cores on real projects with the real tools, under the sandbox.

use super::lint::{run_check, Check, CheckArgs};
use super::projects::{self, have};
use super::run_tests::{run_tests, RunTestsArgs};
use super::shells::{safe_shell, shell, SafeShellArgs, SafeShellResult, ShellArgs};
use super::workspace_info::InfoCache;
use super::DirFiles;
use crate::error::ErrorCode;
use crate::exec::runner::{Control, Runner};
use crate::exec::shell::Policy;
use crate::exec::testutil::landlock_here;
use std::path::{Path, PathBuf};

struct Project {
    _tmp: tempfile::TempDir,
    ws: PathBuf,
    runner: Runner,
}

impl Project {
    fn new(make: fn(&Path)) -> Project {
        let tmp = tempfile::tempdir().unwrap();
        let ws = tmp.path().join("ws");
        std::fs::create_dir_all(&ws).unwrap();
        make(&ws);
        let runner = projects::runner(&ws, &tmp.path().join("state"));
        Project {
            _tmp: tmp,
            ws,
            runner,
        }
    }

    fn files(&self) -> DirFiles {
        DirFiles::open(&self.ws).unwrap()
    }

    fn check(&self, check: Check, command: &str) -> super::lint::CheckRun {
        run_check(
            check,
            &self.runner,
            &self.ws,
            &self.files(),
            &CheckArgs {
                command: command.into(),
                paths: vec![],
            },
            &Control::default(),
        )
        .unwrap_or_else(|e| panic!("{command:?}: {e}"))
    }
}

#[test]
fn workspace_info_is_probed_once_and_cached() {
    let p = Project::new(projects::python);
    let cache = InfoCache::default();
    let ctl = Control::default();
    let first = cache.get(&p.runner, &p.files(), false, &ctl).unwrap();
    assert!(
        first.runtimes["python"].available,
        "{:?}",
        first.runtimes["python"]
    );
    assert!(first.runtimes["python"].version.is_some());
    assert_eq!(first.project, ["python"]);
    assert_eq!(first.git_repo_root, None);
    assert!(!first.tools.get("no-such").is_some_and(|t| t.available));
    let started = p.runner.started();
    let t = std::time::Instant::now();
    let second = cache.get(&p.runner, &p.files(), false, &ctl).unwrap();
    let cached = t.elapsed();
    assert_eq!(
        p.runner.started(),
        started,
        "the cached call started a program"
    );
    assert!(cached < std::time::Duration::from_micros(50), "{cached:?}");
    assert_eq!(*first, *second);
    cache.get(&p.runner, &p.files(), true, &ctl).unwrap();
    assert!(p.runner.started() > started, "refresh probes again");
}

#[test]
fn run_tests_on_a_python_project() {
    let p = Project::new(projects::python);
    if !have(&p.runner, "pytest") {
        return;
    }
    let run = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs::default(),
        &Control::default(),
    )
    .unwrap();
    assert_eq!(run.runner, "pytest", "{}", run.raw_output);
    assert!(!run.passed);
    assert_eq!(
        (run.passed_count, run.failed_count, run.total),
        (1, 1, 2),
        "{}",
        run.raw_output
    );
    let f = &run.failures[0];
    assert_eq!(
        (f.file.as_str(), f.line),
        ("tests/test_calc.py", 9),
        "{f:?}"
    );
    assert!(f.test.ends_with("test_sub"));
    assert!(f.reason.contains("assert"), "{f:?}");
    // focus narrows it to the passing test.
    let focused = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs {
            focus: vec!["tests/test_calc.py::test_add".into()],
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap();
    assert!(focused.passed && focused.total == 1, "{}", focused.summary);
}

#[test]
fn run_tests_on_a_go_module_with_a_failing_test_and_a_broken_package() {
    let p = Project::new(projects::go);
    if !have(&p.runner, "go") {
        return;
    }
    let run = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs::default(),
        &Control::default(),
    )
    .unwrap();
    assert_eq!(run.runner, "go");
    assert!(!run.passed);
    let sub = run
        .failures
        .iter()
        .find(|f| f.test.ends_with("TestSub"))
        .unwrap_or_else(|| panic!("{:?}\n{}", run.failures, run.raw_output));
    assert_eq!((sub.file.as_str(), sub.line), ("calc/calc_test.go", 13));
    assert!(sub.reason.contains("want 1"));
    let build = run
        .failures
        .iter()
        .find(|f| f.test.contains("(build)"))
        .unwrap_or_else(|| panic!("{:?}", run.failures));
    assert_eq!(
        (build.file.as_str(), build.line),
        ("broken/broken.go", 3),
        "{build:?}"
    );
    assert!(build.reason.contains("undefined: missing"));
    assert_eq!(run.passed_count, 1);
}

#[test]
fn run_tests_without_a_runner_asks_for_a_command() {
    let p = Project::new(|_| {});
    let err = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs::default(),
        &Control::default(),
    )
    .unwrap_err();
    assert_eq!(err.code, ErrorCode::CommandRequired);
    // A command of the model's own, parsed as text.
    let run = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs {
            command: "echo '3 passed, 1 failed' && false".into(),
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap();
    assert_eq!(
        (run.passed_count, run.failed_count, run.runner),
        (3, 1, "command")
    );
}

#[test]
fn lint_finds_the_unused_import_and_is_clean_once_fixed() {
    let p = Project::new(projects::python);
    if !have(&p.runner, "ruff") {
        return;
    }
    let run = p.check(Check::Lint, "");
    assert_eq!(run.parser_used, "ruff", "{}", run.raw_output);
    assert!(!run.clean);
    let issue = &run.issues[0];
    assert_eq!(
        (
            issue.file.as_str(),
            issue.line,
            issue.col,
            issue.rule.as_str()
        ),
        ("app/calc.py", 1, 8, "F401")
    );
    let text = std::fs::read_to_string(p.ws.join("app/calc.py")).unwrap();
    std::fs::write(
        p.ws.join("app/calc.py"),
        text.replacen("import os\n", "", 1),
    )
    .unwrap();
    let again = p.check(Check::Lint, "");
    assert!(again.clean, "{:?}", again.issues);
}

#[test]
fn typecheck_with_mypy_and_pyright_finds_the_same_line() {
    let p = Project::new(projects::python);
    if !have(&p.runner, "mypy") || !have(&p.runner, "pyright") {
        return;
    }
    let mypy = p.check(Check::Typecheck, "");
    assert_eq!(mypy.parser_used, "mypy", "{}", mypy.raw_output);
    let m = mypy
        .issues
        .iter()
        .find(|i| i.rule == "return-value")
        .unwrap_or_else(|| panic!("{:?}", mypy.issues));
    assert_eq!((m.file.as_str(), m.line, m.col), ("app/calc.py", 13, 12));
    let pyright = p.check(Check::Typecheck, "pyright");
    assert_eq!(pyright.parser_used, "pyright", "{}", pyright.raw_output);
    let r = pyright
        .issues
        .iter()
        .find(|i| i.file == "app/calc.py")
        .unwrap_or_else(|| panic!("{:?}", pyright.issues));
    assert_eq!((r.line, r.col), (13, 12), "{r:?}");
}

#[test]
fn eslint_and_tsc_on_a_node_project() {
    let p = Project::new(projects::node);
    if !have(&p.runner, "eslint") || !have(&p.runner, "tsc") {
        return;
    }
    let lint = p.check(Check::Lint, "");
    assert_eq!(lint.parser_used, "eslint", "{}", lint.raw_output);
    let i = &lint.issues[0];
    assert_eq!(
        (i.file.as_str(), i.line, i.col, i.rule.as_str()),
        ("src/a.js", 1, 7, "no-unused-vars")
    );
    let types = p.check(Check::Typecheck, "");
    assert_eq!(types.parser_used, "tsc", "{}", types.raw_output);
    let t = &types.issues[0];
    assert_eq!(
        (t.file.as_str(), t.line, t.rule.as_str()),
        ("src/b.ts", 2, "TS2322"),
        "{t:?}"
    );
}

#[test]
fn any_other_checker_falls_back_to_file_line_col() {
    let p = Project::new(|_| {});
    let run = p.check(
        Check::Lint,
        "echo 'src/x.py:3:4: error: bad thing' && exit 1",
    );
    assert_eq!(run.parser_used, "fallback");
    assert_eq!(
        (
            run.issues[0].file.as_str(),
            run.issues[0].line,
            run.issues[0].col
        ),
        ("src/x.py", 3, 4)
    );
    assert!(!run.clean);
}

#[test]
fn safe_shell_runs_what_it_allows_and_explains_what_it_blocks() {
    let p = Project::new(projects::python);
    let policy = Policy::builtin().unwrap();
    let ctl = Control::default();
    let run = |command: &str| {
        safe_shell(
            &p.runner,
            policy,
            &p.ws,
            &SafeShellArgs {
                command: command.into(),
                cwd: String::new(),
            },
            &ctl,
        )
        .unwrap()
    };
    match run("ls app | sort && echo \"it's\"") {
        SafeShellResult::Ran(r) => {
            assert_eq!(r.stdout, "__init__.py\ncalc.py\nit's\n", "{}", r.stderr);
            assert_eq!(r.exit_code, Some(0));
        }
        other => panic!("{other:?}"),
    }
    match run("rm -rf app") {
        SafeShellResult::Blocked {
            blocked,
            suggested_safe_alternative,
            ..
        } => {
            assert!(blocked);
            assert!(suggested_safe_alternative.contains("delete_file"));
        }
        other => panic!("{other:?}"),
    }
    assert!(p.ws.join("app").exists());
}

#[test]
fn safe_shell_readers_do_not_write_through_their_options() {
    let p = Project::new(projects::python);
    let policy = Policy::builtin().unwrap();
    for command in [
        "sort -o f app/calc.py",
        "uniq app/calc.py f",
        "xargs sort -o f",
    ] {
        let r = safe_shell(
            &p.runner,
            policy,
            &p.ws,
            &SafeShellArgs {
                command: command.into(),
                cwd: String::new(),
            },
            &Control::default(),
        )
        .unwrap();
        assert!(
            matches!(r, SafeShellResult::Blocked { .. }),
            "{command}: {r:?}"
        );
        assert!(!p.ws.join("f").exists(), "{command} wrote f");
    }
}

#[test]
fn git_inside_the_shells_is_hardened_too() {
    if !landlock_here() {
        return;
    }
    let p = Project::new(crate::exec::git::fixture::repo);
    let marker = p.ws.join("fsmonitor-ran");
    let script = p.ws.join("fsmonitor.sh");
    std::fs::write(
        &script,
        format!("#!/bin/sh\ntouch '{}'\n", marker.display()),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    crate::exec::git::fixture::git(
        &p.ws,
        &["config", "core.fsmonitor", script.to_str().unwrap()],
    );
    let policy = Policy::builtin().unwrap();
    let r = safe_shell(
        &p.runner,
        policy,
        &p.ws,
        &SafeShellArgs {
            command: "git status --short".into(),
            cwd: String::new(),
        },
        &Control::default(),
    )
    .unwrap();
    assert!(matches!(r, SafeShellResult::Ran(_)), "{r:?}");
    let raw = shell(
        &p.runner,
        &p.ws,
        &ShellArgs {
            command: "git status --short; echo $((1+2))".into(),
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap();
    assert!(raw.stdout.ends_with("3\n"), "{raw:?}");
    assert!(
        !marker.exists(),
        "a shell's git ran the repository's fsmonitor"
    );
}
