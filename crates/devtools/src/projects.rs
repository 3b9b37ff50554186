//! Projects the developer tools' tests run on, made in temp directories, and a runner set up
//! with the test tools (target/venv, target/devtools-node).

use crate::exec::runner::{ExecLimits, ExecPlaces, ExecSettings, Runner};
use std::path::{Path, PathBuf};
use std::time::Duration;

fn write(root: &Path, files: &[(&str, &str)]) {
    for (name, text) in files {
        let path = root.join(name);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }
}

/// A Python project with one failing test, one lint error (unused import, line 1) and one type
/// error (line 11).
pub fn python(root: &Path) {
    write(
        root,
        &[
            ("pyproject.toml", "[project]\nname = \"calc\"\nversion = \"0.1.0\"\n\n[tool.pytest.ini_options]\ntestpaths = [\"tests\"]\npythonpath = [\".\"]\n"),
            ("app/__init__.py", ""),
            (
                "app/calc.py",
                "import os\n\n\ndef add(a: int, b: int) -> int:\n    return a + b\n\n\ndef sub(a: int, b: int) -> int:\n    return a + b\n\n\ndef label(n: int) -> int:\n    return \"n=\" + str(n)\n",
            ),
            (
                "tests/test_calc.py",
                "from app.calc import add, sub\n\n\ndef test_add():\n    assert add(1, 2) == 3\n\n\ndef test_sub():\n    assert sub(3, 2) == 1\n",
            ),
        ],
    );
}

/// A Go module with a failing test (calc) and a package that does not compile (broken).
pub fn go(root: &Path) {
    write(
        root,
        &[
            ("go.mod", "module example.com/m\n\ngo 1.22\n"),
            ("calc/calc.go", "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a + b }\n"),
            (
                "calc/calc_test.go",
                "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) {\n\tif Add(1, 2) != 3 {\n\t\tt.Fatal(\"add\")\n\t}\n}\n\nfunc TestSub(t *testing.T) {\n\tif got := Sub(3, 2); got != 1 {\n\t\tt.Errorf(\"Sub(3, 2) = %d, want 1\", got)\n\t}\n}\n",
            ),
            ("broken/broken.go", "package broken\n\nfunc F() int { return missing }\n"),
            ("broken/broken_test.go", "package broken\n\nimport \"testing\"\n\nfunc TestF(t *testing.T) { F() }\n"),
        ],
    );
}

/// A JavaScript / TypeScript project: an unused variable (eslint) and a type error (tsc).
pub fn node(root: &Path) {
    write(
        root,
        &[
            ("package.json", "{\"name\": \"web\", \"private\": true, \"scripts\": {\"test\": \"node --test\"}}\n"),
            ("eslint.config.cjs", "module.exports = [{ files: [\"**/*.js\"], rules: { \"no-unused-vars\": \"error\" } }];\n"),
            ("src/a.js", "const unused = 1;\nconsole.log(\"a\");\n"),
            ("tsconfig.json", "{\"compilerOptions\": {\"strict\": true, \"noEmit\": true}, \"include\": [\"src/**/*.ts\"]}\n"),
            ("src/b.ts", "export function n(): number {\n  return \"x\";\n}\n"),
            ("test/a.test.js", "const test = require('node:test');\nconst assert = require('node:assert');\ntest('adds', () => assert.strictEqual(1 + 1, 2));\ntest('breaks', () => assert.strictEqual(1, 2));\n"),
        ],
    );
}

fn repo_target() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../target")
}

/// Whether `name` is installed for the tests; where `make test` runs them
/// (WSFS_REQUIRE_DEVTOOLS) a missing tool fails the test instead of skipping it.
pub fn have(runner: &Runner, name: &str) -> bool {
    if runner.locate(name, Path::new("/")).is_some() {
        return true;
    }
    let msg = format!("{name} is not installed (make venv devtools-node installs the test tools)");
    if std::env::var_os("WSFS_REQUIRE_DEVTOOLS").is_some() {
        panic!("{msg}");
    }
    eprintln!("SKIPPED: {msg}");
    false
}

/// Toolchain homes outside the system directories that the tools need to read.
fn toolchain_homes() -> Vec<PathBuf> {
    let mut homes = vec![
        repo_target().join("venv"),
        repo_target().join("devtools-node"),
    ];
    // The venv's python is a link to the Python that made it (pyenv's, here).
    if let Ok(real) = std::fs::canonicalize(repo_target().join("venv/bin/python3")) {
        if let Some(prefix) = real.parent().and_then(Path::parent) {
            homes.push(prefix.to_path_buf());
        }
    }
    homes
}

/// A runner over `ws` with the test tools on PATH, a shared home (so Go's build cache stays
/// warm across tests) and the state directory in `state`.
pub fn runner(ws: &Path, state: &Path) -> Runner {
    let path = format!(
        "{}:{}:/usr/local/go/bin:/usr/local/bin:/usr/bin:/bin",
        repo_target().join("venv/bin").display(),
        repo_target()
            .join("devtools-node/node_modules/.bin")
            .display(),
    );
    Runner::new(
        ExecPlaces {
            view_root: ws.to_path_buf(),
            overlay: None,
            view_writable: true,
            home: Some(repo_target().join("devtools-home")),
            scratch_parent: state.join("tmp"),
        },
        ExecSettings {
            read_paths: toolchain_homes(),
            env_allow: vec!["GOTOOLCHAIN".into()],
            path: Some(path),
            limits: ExecLimits {
                wall_clock: Duration::from_secs(240),
                ..ExecLimits::default()
            },
            ..ExecSettings::default()
        },
    )
}
