//! What the developer tools find on their own (issue 31, item 7): node's test reporter behind
//! `npm test`, a root-level Python test file, ruff and mypy without a pyproject.toml.

use super::lint::{run_check, Check, CheckArgs};
use super::projects::{self, have};
use super::run_tests::{run_tests, RunTestsArgs, TestRun};
use super::DirFiles;
use crate::exec::runner::{Control, Runner};
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

    fn run_tests(&self) -> TestRun {
        let files = DirFiles::open(&self.ws).unwrap();
        run_tests(
            &self.runner,
            &self.ws,
            &files,
            &RunTestsArgs::default(),
            &Control::default(),
        )
        .unwrap_or_else(|e| panic!("run_tests: {e}"))
    }
}

#[test]
fn npm_test_running_node_test_counts_both_tests_and_names_the_failing_one() {
    let p = Project::new(projects::node);
    if !have(&p.runner, "npm") {
        return;
    }
    let run = p.run_tests();
    assert_eq!(run.runner, "npm", "{}", run.raw_output);
    assert!(!run.passed);
    assert_eq!(
        (run.total, run.passed_count, run.failed_count),
        (2, 1, 1),
        "{}",
        run.raw_output
    );
    assert_eq!(run.failures.len(), 1, "{:?}", run.failures);
    let f = &run.failures[0];
    assert_eq!(
        (f.test.as_str(), f.file.as_str(), f.line),
        ("breaks", "test/a.test.js", 4),
        "{f:?}"
    );
    assert!(f.reason.contains("strictly equal"), "{f:?}");
}

/// Python files at the root and nothing else: no pyproject.toml, no configuration, no tests/.
/// `calc.py` has an unused import (line 1), a wrong sum (line 5) and a type error (line 9).
fn flat_python(root: &Path) {
    let files = [
        (
            "calc.py",
            "import os\n\n\ndef sub(a: int, b: int) -> int:\n    return a + b\n\n\ndef label(n: int) -> int:\n    return \"n=\" + str(n)\n",
        ),
        (
            "test_calc.py",
            "from calc import sub\n\n\ndef test_sub_small():\n    assert sub(3, 2) == 1\n\n\ndef test_sub_zero():\n    assert sub(0, 0) == 0\n",
        ),
    ];
    for (name, text) in files {
        std::fs::write(root.join(name), text).unwrap();
    }
}

#[test]
fn a_root_level_test_file_without_configuration_runs_under_pytest() {
    let p = Project::new(flat_python);
    if !have(&p.runner, "pytest") {
        return;
    }
    let run = p.run_tests();
    assert_eq!(run.runner, "pytest", "{}", run.raw_output);
    assert_eq!(
        (run.total, run.passed_count, run.failed_count),
        (2, 1, 1),
        "{}",
        run.raw_output
    );
    let f = &run.failures[0];
    assert_eq!((f.file.as_str(), f.line), ("test_calc.py", 5), "{f:?}");
    assert!(f.test.ends_with("test_sub_small"), "{f:?}");
}

#[test]
fn ruff_and_mypy_check_python_files_without_a_pyproject() {
    let p = Project::new(flat_python);
    if !have(&p.runner, "ruff") || !have(&p.runner, "mypy") {
        return;
    }
    let files = DirFiles::open(&p.ws).unwrap();
    let check = |check| {
        run_check(
            check,
            &p.runner,
            &p.ws,
            &files,
            &CheckArgs::default(),
            &Control::default(),
        )
        .unwrap_or_else(|e| panic!("{check:?}: {e}"))
    };
    let lint = check(Check::Lint);
    assert_eq!(lint.parser_used, "ruff", "{}", lint.raw_output);
    let unused = lint.issues.iter().find(|i| i.rule == "F401");
    assert!(
        unused.is_some_and(|i| (i.file.as_str(), i.line) == ("calc.py", 1)),
        "{:?}",
        lint.issues
    );
    let types = check(Check::Typecheck);
    assert_eq!(types.parser_used, "mypy", "{}", types.raw_output);
    assert!(
        types
            .issues
            .iter()
            .any(|i| (i.file.as_str(), i.line) == ("calc.py", 9)),
        "{:?}",
        types.issues
    );
}

#[test]
fn a_checker_configuration_or_python_files_make_a_python_project() {
    use super::workspace_info::project_kinds;
    for (name, python) in [
        ("ruff.toml", true),
        (".ruff.toml", true),
        ("mypy.ini", true),
        ("tox.ini", true),
        ("tool.py", true),
        ("README.md", false),
        ("notes.pyc", false),
    ] {
        let tmp = tempfile::tempdir().unwrap();
        std::fs::write(tmp.path().join(name), "").unwrap();
        let kinds = project_kinds(&DirFiles::open(tmp.path()).unwrap());
        assert_eq!(kinds.contains(&"python"), python, "{name}: {kinds:?}");
    }
}
