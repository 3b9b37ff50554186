//! The tools' cores on real projects with the real tools, under the sandbox.

use super::lint::{run_check, Check, CheckArgs};
use super::projects::{self, have};
use super::run_tests::{run_tests, RunTestsArgs};
use super::shells::{safe_shell, shell, SafeShellArgs, SafeShellResult, ShellArgs};
use super::workspace_info::InfoCache;
use super::DirFiles;
use crate::error::ErrorCode;
use crate::exec::runner::{Control, Runner};
use crate::exec::shell::{ReasonCode, ShellRules};
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
    let policy = ShellRules::builtin().unwrap();
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
            reason_code,
            suggested_safe_alternative,
            ..
        } => {
            assert!(blocked);
            assert_eq!(reason_code, ReasonCode::DenylistMatch);
            assert!(suggested_safe_alternative.contains("delete_file"));
        }
        other => panic!("{other:?}"),
    }
    assert!(p.ws.join("app").exists());
}

#[test]
fn safe_shell_readers_do_not_write_through_their_options() {
    let p = Project::new(projects::python);
    let policy = ShellRules::builtin().unwrap();
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
    let policy = ShellRules::builtin().unwrap();
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

fn safe_shell_ran(p: &Project, command: &str) -> super::shells::ShellRun {
    let r = safe_shell(
        &p.runner,
        ShellRules::builtin().unwrap(),
        &p.ws,
        &SafeShellArgs {
            command: command.into(),
            cwd: String::new(),
        },
        &Control::default(),
    )
    .unwrap();
    match r {
        SafeShellResult::Ran(run) => run,
        blocked => panic!("{command}: {blocked:?}"),
    }
}

fn shell_ran(p: &Project, command: &str) -> super::shells::ShellRun {
    shell(
        &p.runner,
        &p.ws,
        &ShellArgs {
            command: command.into(),
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap()
}

/// A repository with a second commit that adds src/m.txt, then a.txt and src/m.txt changed.
fn repo_with_changes(ws: &Path) {
    use crate::exec::git::fixture::{git, repo};
    repo(ws);
    std::fs::create_dir_all(ws.join("src")).unwrap();
    std::fs::write(ws.join("src/m.txt"), "m\n").unwrap();
    git(ws, &["add", "src/m.txt"]);
    git(ws, &["commit", "-q", "-m", "second"]);
    std::fs::write(ws.join("a.txt"), "one\nchanged a\n").unwrap();
    std::fs::write(ws.join("src/m.txt"), "m\nchanged m\n").unwrap();
}

#[test]
fn git_diff_through_the_shells_shows_the_diff() {
    if !landlock_here() {
        return;
    }
    let p = Project::new(repo_with_changes);
    for (tool, run) in [
        ("safe_shell", safe_shell_ran(&p, "git diff")),
        ("shell", shell_ran(&p, "git diff")),
    ] {
        assert_eq!(run.exit_code, Some(0), "{tool}: {run:?}");
        assert!(run.stdout.contains("+changed a"), "{tool}: {run:?}");
        assert!(run.stdout.contains("+changed m"), "{tool}: {run:?}");
    }
    // The policy's own example.
    for (tool, run) in [
        ("safe_shell", safe_shell_ran(&p, "git diff HEAD~1 -- src")),
        ("shell", shell_ran(&p, "git diff HEAD~1 -- src")),
    ] {
        assert_eq!(run.exit_code, Some(0), "{tool}: {run:?}");
        assert!(
            run.stdout.contains("diff --git a/src/m.txt"),
            "{tool}: {run:?}"
        );
        assert!(run.stdout.contains("+changed m"), "{tool}: {run:?}");
        assert!(!run.stdout.contains("a.txt"), "{tool}: {run:?}");
    }
}

/// A script in the workspace that leaves `<name>-ran` behind and passes its input through.
fn marker_script(ws: &Path, name: &str) -> (PathBuf, PathBuf) {
    let marker = ws.join(format!("{name}-ran"));
    let script = ws.join(format!("{name}.sh"));
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ntouch '{}'\nif [ $# -le 1 ]; then cat \"$@\"; fi\nexit 0\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    (script, marker)
}

#[test]
fn the_repository_config_runs_no_program_through_the_shells() {
    use crate::exec::git::fixture::git;
    if !landlock_here() {
        return;
    }
    let p = Project::new(repo_with_changes);
    let mut markers = Vec::new();
    let mut program = |name: &str| {
        let (script, marker) = marker_script(&p.ws, name);
        markers.push(marker);
        script.display().to_string()
    };
    let local = [
        ("filter.evil.clean", program("clean")),
        ("filter.evil.smudge", program("smudge")),
        ("filter.proc.process", program("process")),
        ("diff.evil.textconv", program("textconv")),
        ("diff.cmd.command", program("command")),
        ("diff.external", program("external")),
        ("merge.evil.driver", program("merge")),
    ];
    // And through include.path: a file the repository's config includes.
    let included = [
        ("filter.inc.clean", program("included-clean")),
        ("diff.inc.textconv", program("included-textconv")),
    ];
    for (key, value) in local {
        git(&p.ws, &["config", key, &value]);
    }
    git(&p.ws, &["config", "filter.proc.required", "true"]);
    let include = p.ws.join("more.gitconfig");
    for (key, value) in included {
        git(
            &p.ws,
            &["config", "--file", include.to_str().unwrap(), key, &value],
        );
    }
    git(
        &p.ws,
        &["config", "include.path", include.to_str().unwrap()],
    );
    std::fs::write(
        p.ws.join(".gitattributes"),
        "a.txt filter=evil diff=evil merge=evil\nb.txt filter=proc diff=cmd\n\
         src/*.txt filter=inc diff=inc\n",
    )
    .unwrap();
    std::fs::write(p.ws.join("b.txt"), "b changed\n").unwrap();
    let markers = markers;
    let ran = || -> Vec<String> {
        markers
            .iter()
            .filter(|m| m.exists())
            .map(|m| m.display().to_string())
            .collect()
    };
    // The control: plain git runs them.
    let plain = std::process::Command::new("git")
        .args(["diff"])
        .current_dir(&p.ws)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    assert!(
        !ran().is_empty(),
        "control: plain git ran nothing: {plain:?}"
    );
    for marker in &markers {
        let _ = std::fs::remove_file(marker);
    }

    for command in [
        "git status --short",
        "git diff",
        "git diff HEAD~1 -- src",
        "git log -p -2",
        "git show HEAD",
        "git show HEAD:a.txt",
        "git blame a.txt",
        "git grep -n changed",
    ] {
        let run = safe_shell_ran(&p, command);
        assert_eq!(run.exit_code, Some(0), "safe_shell {command}: {run:?}");
        assert_eq!(ran(), Vec::<String>::new(), "safe_shell {command}: {run:?}");
        let run = shell_ran(&p, command);
        assert_eq!(run.exit_code, Some(0), "shell {command}: {run:?}");
        assert_eq!(ran(), Vec::<String>::new(), "shell {command}: {run:?}");
    }
    // The diff is still shown, the external one by plain `diff -u`.
    let run = safe_shell_ran(&p, "git diff");
    for change in ["+changed a", "+b changed", "+changed m"] {
        assert!(run.stdout.contains(change), "{change}: {run:?}");
    }
}

#[test]
fn lint_paths_that_look_like_options_reach_the_program_as_files() {
    let p = Project::new(|ws| std::fs::write(ws.join("--version"), "").unwrap());
    let run = run_check(
        Check::Lint,
        &p.runner,
        &p.ws,
        &p.files(),
        &CheckArgs {
            command: "echo".into(),
            paths: vec!["--version".into()],
        },
        &Control::default(),
    )
    .unwrap();
    assert_eq!(run.raw_output, "./--version\n", "{run:?}");
}

#[test]
fn run_tests_names_no_host_path_outside_the_workspace() {
    // A stand-in for pytest that says where its report goes, as pytest does.
    let p = Project::new(|ws| {
        projects::python(ws);
        let fake = ws.join("pytest");
        std::fs::write(
            &fake,
            "#!/bin/sh\nfor a in \"$@\"; do case $a in --junitxml=*) \
             echo \"- generated xml file: ${a#--junitxml=} -\";; esac; done\n\
             echo \"tmp $TMPDIR home $HOME\"\necho '1 passed'\n",
        )
        .unwrap();
        std::fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755))
            .unwrap();
    });
    let run = run_tests(
        &p.runner,
        &p.ws,
        &p.files(),
        &RunTestsArgs {
            command: "./pytest".into(),
            ..Default::default()
        },
        &Control::default(),
    )
    .unwrap();
    assert_eq!(run.runner, "pytest", "{run:?}");
    assert!(
        run.command.contains("--junitxml='$TMPDIR/junit.xml'")
            || run.command.contains("--junitxml=$TMPDIR/junit.xml"),
        "{run:?}"
    );
    assert!(
        run.raw_output
            .contains("generated xml file: $TMPDIR/junit.xml"),
        "{run:?}"
    );
    let json = serde_json::to_string(&run).unwrap();
    let state = p._tmp.path().join("state").display().to_string();
    let home = p.runner.places().home.clone().unwrap_or_default();
    for host in [state.as_str(), &home.display().to_string(), "exec-tmp"] {
        assert!(!json.contains(host), "{host} in {json}");
    }
}
