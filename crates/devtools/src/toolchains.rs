//! Toolchains outside the directories programs may read: a Python under pyenv, a virtualenv,
//! nvm's node, rustup's cargo, any other prefix, found where the programs the developer tools
//! run (`python3`, `node`, `cargo`, ...) resolve on the PATH programs get (a tool npm
//! installed in a project's `node_modules` needs that whole directory: node finds a package's
//! dependencies beside it). `workspace_info`
//! names each one programs cannot read with the policy entry that grants it;
//! `exec_read_paths: ["auto"]` grants every one found, read and execute only (Landlock's
//! read rules; every mount but the writable places is read-only), decided when the workspace
//! opens. Only names and metadata are looked at (`stat`, `realpath`), no file is read.

use crate::exec::landlock_rules::SYSTEM_DIRS;
use crate::exec::program;
use serde::Serialize;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// The word in `exec_read_paths` that grants the toolchains found.
pub const AUTO: &str = "auto";

/// The programs whose toolchains are looked for: the runtimes and tools `workspace_info`
/// probes.
pub const PROGRAMS: &[&str] = &[
    "python3", "python", "pytest", "ruff", "mypy", "pyright", "node", "npm", "eslint", "tsc", "go",
    "rustc", "cargo", "java", "git",
];

/// A toolchain a program was found in.
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Toolchain {
    /// The program found (`python3`, `node`, `cargo`, ...).
    pub program: String,
    /// Where the PATH finds it.
    pub path: String,
    /// `pyenv`, `venv`, `nvm`, `rustup`, `node_modules` (an npm install's outermost
    /// `node_modules`), `prefix` (the directory above a `bin/`) or `directory` (the program's
    /// own directory).
    pub kind: &'static str,
    /// The directory programs need to read and execute for it to run.
    pub root: String,
}

/// Every toolchain outside the system directories that a program of [`PROGRAMS`] resolves
/// into on `path_var`. `home` is the host's home directory, never granted whole.
pub fn detect(path_var: &OsStr, home: Option<&Path>) -> Vec<Toolchain> {
    let mut found: Vec<Toolchain> = Vec::new();
    for name in PROGRAMS {
        let Some(located) = program::resolve(OsStr::new(name), path_var, Path::new("/")) else {
            continue;
        };
        let mut files = vec![located.clone()];
        files.extend(std::fs::canonicalize(&located).ok());
        let mut roots: Vec<(&'static str, PathBuf)> = Vec::new();
        for file in &files {
            for (kind, root) in roots_of(file, home) {
                // A virtualenv's python is a link to the Python that made it.
                if kind == "venv" {
                    for py in ["bin/python3", "bin/python"] {
                        if let Ok(real) = std::fs::canonicalize(root.join(py)) {
                            roots.extend(roots_of(&real, home));
                        }
                    }
                }
                roots.push((kind, root));
            }
        }
        for (kind, root) in roots {
            if !grantable(&root, home) {
                continue;
            }
            let t = Toolchain {
                program: name.to_string(),
                path: located.display().to_string(),
                kind,
                root: root.display().to_string(),
            };
            if !found.contains(&t) {
                found.push(t);
            }
        }
    }
    found
}

/// The read paths a policy's `exec_read_paths` stands for: its directories, and for
/// [`AUTO`] the roots of the toolchains [`detect`] finds.
pub fn read_paths(configured: &[String], path_var: &OsStr, home: Option<&Path>) -> Vec<PathBuf> {
    let mut paths: Vec<PathBuf> = configured
        .iter()
        .filter(|p| *p != AUTO)
        .map(PathBuf::from)
        .collect();
    if configured.iter().any(|p| p == AUTO) {
        for t in detect(path_var, home) {
            let root = PathBuf::from(t.root);
            if !covered(&root, &paths) {
                paths.push(root);
            }
        }
    }
    paths
}

/// The toolchains found whose root programs may not read under `readable`.
pub fn unreadable(found: Vec<Toolchain>, readable: &[PathBuf]) -> Vec<Toolchain> {
    found
        .into_iter()
        .filter(|t| !covered(Path::new(&t.root), readable))
        .collect()
}

fn covered(path: &Path, by: &[PathBuf]) -> bool {
    let real = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    by.iter().any(|p| {
        let p_real = std::fs::canonicalize(p).unwrap_or_else(|_| p.clone());
        path.starts_with(p) || real.starts_with(&p_real)
    })
}

/// The system directories are readable already; `/`, the home directory and what holds it
/// are never granted whole.
fn grantable(root: &Path, home: Option<&Path>) -> bool {
    let system = SYSTEM_DIRS
        .iter()
        .chain(&["/etc"])
        .any(|d| root.starts_with(d));
    let holds_home = home.is_some_and(|h| h.starts_with(root));
    !system && !holds_home && root.parent().is_some()
}

/// The directories the program `file` needs: its toolchain's root by the layouts of pyenv,
/// nvm, rustup and virtualenvs, else the prefix above its `bin/`, else its directory.
fn roots_of(file: &Path, home: Option<&Path>) -> Vec<(&'static str, PathBuf)> {
    let dirs: Vec<&Path> = file.ancestors().skip(1).collect();
    for (i, dir) in dirs.iter().enumerate() {
        let name = dir.file_name().and_then(OsStr::to_str);
        match name {
            // A version's own directory, or all of pyenv for its shims (which run pyenv).
            Some(".pyenv") => {
                let version = dirs
                    .get(i.wrapping_sub(2))
                    .filter(|_| i >= 2 && dirs[i - 1].file_name() == Some(OsStr::new("versions")));
                return vec![("pyenv", version.copied().unwrap_or(dir).to_path_buf())];
            }
            Some(".rustup") => return vec![("rustup", dir.to_path_buf())],
            Some(".cargo") => {
                // rustup's proxies in ~/.cargo/bin run the toolchains in ~/.rustup.
                let mut roots = vec![("rustup", dir.to_path_buf())];
                if let Some(rustup) = dir.parent().map(|p| p.join(".rustup")) {
                    if rustup.is_dir() {
                        roots.push(("rustup", rustup));
                    }
                }
                return roots;
            }
            Some("node")
                if i > 0
                    && dir.parent().and_then(Path::file_name) == Some(OsStr::new("versions")) =>
            {
                return vec![("nvm", dirs[i - 1].to_path_buf())];
            }
            _ => {}
        }
    }
    // node resolves a package's dependencies in the node_modules directories above it, so an
    // npm-installed tool (`node_modules/.bin/eslint` -> `node_modules/eslint/bin/eslint.js`)
    // needs the outermost one whole, not its own package.
    if let Some(modules) = dirs
        .iter()
        .rev()
        .find(|d| d.file_name() == Some(OsStr::new("node_modules")))
    {
        return vec![("node_modules", modules.to_path_buf())];
    }
    let Some(dir) = file.parent() else {
        return Vec::new();
    };
    match dir.parent() {
        Some(prefix) if prefix.join("pyvenv.cfg").is_file() => vec![("venv", prefix.into())],
        Some(prefix) if dir.file_name() == Some(OsStr::new("bin")) && !home_like(prefix, home) => {
            vec![("prefix", prefix.into())]
        }
        _ => vec![("directory", dir.into())],
    }
}

/// A home directory or `~/.local`, where other programs' files and secrets live: a program
/// in its `bin/` gets that directory only.
fn home_like(prefix: &Path, home: Option<&Path>) -> bool {
    home == Some(prefix)
        || prefix.file_name() == Some(OsStr::new(".local"))
        || prefix.parent() == Some(Path::new("/home"))
        || prefix == Path::new("/root")
}
