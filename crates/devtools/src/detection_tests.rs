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
