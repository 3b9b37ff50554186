//! `workspace_info`: what this machine offers the developer tools, probed once per workspace
//! through the sandboxed runner itself (so "available" means "runs inside the sandbox"), and
//! cached: only `refresh: true` starts a process again.

use super::toolchains::{self, Toolchain};
use super::ProjectFiles;
use crate::error::WsfsError;
use crate::exec::confinement::SandboxReport;
use crate::exec::git::Git;
use crate::exec::runner::{Control, ExecRequest, Runner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkspaceInfoArgs {
    /// Probe again instead of answering from the cache (after installing a tool). Default false.
    #[serde(default)]
    pub refresh: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct WorkspaceInfo {
    pub os: String,
    pub platform: String,
    pub runtimes: BTreeMap<&'static str, Probe>,
    pub tools: BTreeMap<&'static str, Probe>,
    /// Whether the workspace is in a git repository (the capability plan's name for
    /// `git_repo_root` being set).
    pub git_present: bool,
    /// The repository's root relative to the workspace ("." for the root); null outside one.
    pub git_repo_root: Option<String>,
    /// What the project looks like: python, node, go, rust.
    pub project: Vec<&'static str>,
    /// Toolchains the PATH leads to that programs may not read (a Python under pyenv, a
    /// virtualenv, nvm's node, rustup's cargo), each with the policy entry that grants it.
    pub unreadable_toolchains: Vec<ToolchainHint>,
    pub sandbox: SandboxReport,
}

/// A toolchain programs cannot read, and what the host adds to its policy to grant it.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct ToolchainHint {
    #[serde(flatten)]
    pub toolchain: Toolchain,
    /// The policy entry to add: `{"exec_read_paths": [root]}` (or `["auto"]` for all).
    pub policy: serde_json::Value,
}

impl ToolchainHint {
    fn new(toolchain: Toolchain) -> ToolchainHint {
        let policy = serde_json::json!({ "exec_read_paths": [toolchain.root] });
        ToolchainHint { toolchain, policy }
    }

    /// One line for the model and the host.
    pub fn advice(&self) -> String {
        let t = &self.toolchain;
        format!(
            "{} at {} is in a toolchain programs may not read ({} at {}): the host adds \
             {:?} to policy.exec_read_paths, or \"auto\" for every toolchain wsfs finds",
            t.program, t.path, t.kind, t.root, t.root
        )
    }
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct Probe {
    pub available: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    /// Why an installed program is not available (it does not run in the sandbox).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// (name in the result, program, version argument).
const RUNTIMES: &[(&str, &str, &str)] = &[
    ("python", "python3", "--version"),
    ("node", "node", "--version"),
    ("go", "go", "version"),
    ("rust", "rustc", "--version"),
    ("java", "java", "-version"),
];

const TOOLS: &[(&str, &str, &str)] = &[
    ("git", "git", "--version"),
    ("pytest", "pytest", "--version"),
    ("npm", "npm", "--version"),
    ("ruff", "ruff", "--version"),
    ("eslint", "eslint", "--version"),
    ("mypy", "mypy", "--version"),
    ("pyright", "pyright", "--version"),
    ("tsc", "tsc", "--version"),
    ("cargo", "cargo", "--version"),
    ("go", "go", "version"),
];

/// A probe's own time limit: a version never takes long.
const PROBE_LIMIT: Duration = Duration::from_secs(20);

/// The cache, one per workspace.
#[derive(Debug, Default)]
pub struct InfoCache(Mutex<Option<Arc<WorkspaceInfo>>>);

impl InfoCache {
    /// The cached answer, or a new probe when there is none or `refresh` is set.
    pub fn get(
        &self,
        runner: &Runner,
        files: &dyn ProjectFiles,
        refresh: bool,
        ctl: &Control,
    ) -> Result<Arc<WorkspaceInfo>, WsfsError> {
        if !refresh {
            // A poisoned lock only means a probe panicked; the value is still whole.
            if let Some(info) = self.0.lock().unwrap_or_else(|p| p.into_inner()).as_ref() {
                return Ok(info.clone());
            }
        }
        let info = Arc::new(probe(runner, files, ctl)?);
        *self.0.lock().unwrap_or_else(|p| p.into_inner()) = Some(info.clone());
        Ok(info)
    }
}

/// Probes everything, two programs at a time.
pub fn probe(
    runner: &Runner,
    files: &dyn ProjectFiles,
    ctl: &Control,
) -> Result<WorkspaceInfo, WsfsError> {
    let root = runner.places().view_root.clone();
    let all: Vec<(bool, &(&str, &str, &str))> = RUNTIMES
        .iter()
        .map(|p| (true, p))
        .chain(TOOLS.iter().map(|p| (false, p)))
        .collect();
    let results: Vec<(bool, &str, Probe)> = std::thread::scope(|s| {
        let handles: Vec<_> = all
            .chunks(all.len().div_ceil(2))
            .map(|chunk| {
                let root = root.clone();
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|(runtime, (name, program, arg))| {
                            (*runtime, *name, probe_one(runner, &root, program, arg, ctl))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().unwrap_or_default())
            .collect()
    });
    ctl.check()?;
    let mut runtimes = BTreeMap::new();
    let mut tools = BTreeMap::new();
    for (runtime, name, p) in results {
        if runtime {
            runtimes.insert(name, p);
        } else {
            tools.insert(name, p);
        }
    }
    let sandbox = runner
        .run_once(&ExecRequest::new("true", &root).under(ctl))
        .map(|o| o.sandbox)?;
    let unreadable_toolchains = unreadable_toolchains(runner);
    for (program, p) in runtimes.iter_mut().chain(tools.iter_mut()) {
        let program = RUNTIMES
            .iter()
            .chain(TOOLS)
            .find(|(name, _, _)| name == program)
            .map_or(*program, |(_, program, _)| *program);
        if let Some(hint) = unreadable_toolchains
            .iter()
            .find(|h| !p.available && h.toolchain.program == program)
        {
            p.note = Some(hint.advice());
        }
    }
    let git_repo_root = repo_root(runner, &root, ctl);
    Ok(WorkspaceInfo {
        os: std::env::consts::OS.to_string(),
        platform: platform(),
        runtimes,
        tools,
        git_present: git_repo_root.is_some(),
        git_repo_root,
        project: project_kinds(files),
        unreadable_toolchains,
        sandbox,
    })
}

/// The toolchains on the programs' PATH outside what they may read: the system directories,
/// the read paths, the workspace and the tools' home.
fn unreadable_toolchains(runner: &Runner) -> Vec<ToolchainHint> {
    let home = std::env::var_os("HOME").map(std::path::PathBuf::from);
    let places = runner.places();
    let mut readable = runner.policy().read_paths.clone();
    readable.push(places.view_root.clone());
    readable.extend(places.home.clone());
    let found = toolchains::detect(&runner.path_var(), home.as_deref());
    toolchains::unreadable(found, &readable)
        .into_iter()
        .map(ToolchainHint::new)
        .collect()
}

fn probe_one(runner: &Runner, root: &Path, program: &str, arg: &str, ctl: &Control) -> Probe {
    let req = ExecRequest::new(program, root)
        .arg(arg)
        .timeout(PROBE_LIMIT)
        .under(ctl);
    let path = runner
        .locate(program, root)
        .map(|p| p.display().to_string());
    match runner.run_once(&req) {
        Ok(out) if out.exit_code == Some(0) => Probe {
            available: true,
            version: version_in(&format!("{}\n{}", out.stdout.text(), out.stderr.text())),
            path,
            note: None,
        },
        Ok(out) => Probe {
            available: false,
            path,
            note: Some(format!(
                "installed, but `{program} {arg}` failed inside the sandbox: {}",
                failure_line(&out.stderr.text(), &out.stdout.text())
            )),
            ..Probe::default()
        },
        Err(e) if path.is_some() => Probe {
            available: false,
            path,
            note: Some(e.message),
            ..Probe::default()
        },
        Err(_) => Probe::default(),
    }
}

/// The line of a failed probe's output that says what went wrong: the first naming an error
/// (a stack trace's tail never does), else the last; at most [`NOTE_CHARS`] characters.
fn failure_line(stderr: &str, stdout: &str) -> String {
    let text = if stderr.trim().is_empty() {
        stdout
    } else {
        stderr
    };
    let lines = || text.lines().map(str::trim).filter(|l| !l.is_empty());
    let line = lines()
        .find(|l| l.to_ascii_lowercase().contains("error"))
        .or_else(|| lines().next_back())
        .unwrap_or("(no output)");
    match line.char_indices().nth(NOTE_CHARS) {
        Some((at, _)) => format!("{}...", &line[..at]),
        None => line.to_string(),
    }
}

/// The longest line of a failed probe's output a note quotes.
const NOTE_CHARS: usize = 300;

/// The first dotted version number in a program's banner (`Python 3.11.7`, `v20.1.0`,
/// `go version go1.26.8 linux/amd64`, `openjdk version "17.0.9"`).
pub fn version_in(text: &str) -> Option<String> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit()
            && (i == 0
                || !bytes[i - 1].is_ascii_alphanumeric()
                || bytes[i - 1] == b'v'
                || bytes[i - 1] == b'o')
        {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_digit() || bytes[i] == b'.') {
                i += 1;
            }
            let v = text[start..i].trim_end_matches('.');
            if v.contains('.') {
                return Some(v.to_string());
            }
        }
        i += 1;
    }
    None
}

fn platform() -> String {
    let kernel = std::fs::read_to_string("/proc/sys/kernel/osrelease").unwrap_or_default();
    let distro = std::fs::read_to_string("/etc/os-release")
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("PRETTY_NAME="))
                .map(|v| v.trim_matches('"').to_string())
        })
        .unwrap_or_default();
    format!(
        "{}-{} {} (kernel {})",
        std::env::consts::OS,
        std::env::consts::ARCH,
        distro,
        kernel.trim()
    )
}

fn repo_root(runner: &Runner, root: &Path, ctl: &Control) -> Option<String> {
    let git = Git::open(runner, root, ctl).ok()?;
    let out = git.run(&["rev-parse", "--show-toplevel"], None).ok()?;
    if out.exit_code != Some(0) {
        return None;
    }
    let top = out.stdout.text();
    let top = Path::new(top.trim());
    let rel = top.strip_prefix(root).ok()?;
    Some(if rel.as_os_str().is_empty() {
        ".".into()
    } else {
        rel.display().to_string()
    })
}

/// Files at the root that make a directory a Python project (so do `.py` files there): its
/// packaging, test and checker configurations.
pub const PYTHON_MARKERS: &[&str] = &[
    "pyproject.toml",
    "setup.py",
    "setup.cfg",
    "requirements.txt",
    "Pipfile",
    "pytest.ini",
    "conftest.py",
    "tox.ini",
    "ruff.toml",
    ".ruff.toml",
    "mypy.ini",
    ".mypy.ini",
];

/// What the project at the root is: `python`, `node`, `go`, `rust`.
pub fn project_kinds(files: &dyn ProjectFiles) -> Vec<&'static str> {
    let mut kinds = Vec::new();
    let any = |names: &[&str]| names.iter().any(|n| files.is_file(n));
    if any(PYTHON_MARKERS) || files.file_names(".").iter().any(|n| n.ends_with(".py")) {
        kinds.push("python");
    }
    if any(&["package.json"]) {
        kinds.push("node");
    }
    if any(&["go.mod"]) {
        kinds.push("go");
    }
    if any(&["Cargo.toml"]) {
        kinds.push("rust");
    }
    kinds
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_in_banners() {
        for (banner, want) in [
            ("Python 3.11.7", "3.11.7"),
            ("v20.20.2", "20.20.2"),
            ("go version go1.26.8 linux/amd64", "1.26.8"),
            ("rustc 1.95.0 (59807616e 2026-04-14)", "1.95.0"),
            ("openjdk version \"17.0.9\" 2023-10-17", "17.0.9"),
            ("ruff 0.8.4", "0.8.4"),
            ("pytest 8.3.4", "8.3.4"),
            ("Version 5.7.2", "5.7.2"),
        ] {
            assert_eq!(version_in(banner).as_deref(), Some(want), "{banner}");
        }
        assert_eq!(version_in("no version"), None);
    }
}

#[cfg(test)]
mod failure_line_tests {
    use super::failure_line;

    #[test]
    fn a_failed_probe_is_quoted_by_its_error_line_not_its_stack_trace() {
        let node = "\nOops! Something went wrong! :(\n\nESLint: 10.15.0\n\nError: Cannot find module 'debug'\nRequire stack:\n- /x/eslint.js\n    at Module._load (node:internal/modules/cjs/loader:1038:27)\n";
        assert_eq!(failure_line(node, ""), "Error: Cannot find module 'debug'");
        assert_eq!(failure_line("", "only stdout\nlast words\n"), "last words");
        assert_eq!(failure_line(" \n", ""), "(no output)");
        let long = "error: ".to_string() + &"é".repeat(400);
        let quoted = failure_line(&long, "");
        assert_eq!(quoted.chars().count(), super::NOTE_CHARS + 3, "{quoted}");
        assert!(quoted.ends_with("..."));
    }
}
