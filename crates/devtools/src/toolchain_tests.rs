//! `exec_read_paths: ["auto"]` and `workspace_info`'s unreadable toolchains, on a fake pyenv
//! in a fake home, so they run on any machine: the fake Python is a script outside every
//! directory programs may read.

use super::toolchains::{self, Toolchain};
use super::workspace_info::InfoCache;
use super::DirFiles;
use crate::error::ErrorCode;
use crate::exec::runner::{Control, ExecPlaces, ExecRequest, ExecSettings, Runner};
use crate::exec::testutil::landlock_here;
use std::ffi::OsString;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};

struct FakeHost {
    tmp: tempfile::TempDir,
    /// `<home>/.pyenv/versions/3.99.0`.
    version: PathBuf,
    path_var: OsString,
}

impl FakeHost {
    fn new() -> FakeHost {
        let tmp = tempfile::tempdir().unwrap();
        let version = tmp.path().join("home/.pyenv/versions/3.99.0");
        let bin = version.join("bin");
        std::fs::create_dir_all(&bin).unwrap();
        std::fs::write(version.join("marker"), "untouched\n").unwrap();
        let python = bin.join("python3");
        std::fs::write(&python, "#!/bin/sh\necho 'Python 3.99.0'\n").unwrap();
        std::fs::set_permissions(&python, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::create_dir_all(tmp.path().join("ws")).unwrap();
        let path_var = format!("{}:/usr/bin:/bin", bin.display()).into();
        FakeHost {
            tmp,
            version,
            path_var,
        }
    }

    fn home(&self) -> PathBuf {
        self.tmp.path().join("home")
    }

    fn ws(&self) -> PathBuf {
        self.tmp.path().join("ws")
    }

    /// A runner whose policy's `exec_read_paths` is `configured`.
    fn runner(&self, configured: &[&str]) -> Runner {
        let configured: Vec<String> = configured.iter().map(|s| s.to_string()).collect();
        let read_paths = toolchains::read_paths(&configured, &self.path_var, Some(&self.home()));
        Runner::new(
            ExecPlaces {
                view_root: self.ws(),
                overlay: None,
                view_writable: true,
                home: Some(self.tmp.path().join("state/home")),
                scratch_parent: self.tmp.path().join("state/tmp"),
            },
            ExecSettings {
                read_paths,
                path: Some(self.path_var.to_string_lossy().into_owned()),
                ..ExecSettings::default()
            },
        )
    }
}

#[test]
fn a_pyenv_version_on_the_path_is_detected_as_its_version_directory() {
    let host = FakeHost::new();
    let found = toolchains::detect(&host.path_var, Some(&host.home()));
    let python = Toolchain {
        program: "python3".into(),
        path: host.version.join("bin/python3").display().to_string(),
        kind: "pyenv",
        root: host.version.display().to_string(),
    };
    assert!(found.contains(&python), "{found:?}");
    // Programs in the system directories are no toolchain to grant.
    assert!(
        found.iter().all(|t| !t.root.starts_with("/usr")),
        "{found:?}"
    );
    let paths = toolchains::read_paths(
        &["auto".into(), "/opt/x".into()],
        &host.path_var,
        Some(&host.home()),
    );
    assert_eq!(paths[0], Path::new("/opt/x"));
    assert!(paths.contains(&host.version), "{paths:?}");
    // Without "auto" nothing is added.
    let paths = toolchains::read_paths(&["/opt/x".into()], &host.path_var, Some(&host.home()));
    assert_eq!(paths, [PathBuf::from("/opt/x")]);
}

#[test]
fn auto_lets_the_toolchain_run_and_never_write() {
    if !landlock_here() {
        return;
    }
    let host = FakeHost::new();
    let run = |runner: &Runner, program: &str, args: &[&str]| {
        runner.run_once(
            &ExecRequest::new(program, host.ws())
                .args(args)
                .under(&Control::default()),
        )
    };
    let refused = run(&host.runner(&[]), "python3", &["--version"]).unwrap_err();
    assert_eq!(refused.code, ErrorCode::PermissionDenied, "{refused}");
    assert!(refused.message.contains("exec_read_paths"), "{refused}");

    let auto = host.runner(&["auto"]);
    let out = run(&auto, "python3", &["--version"]).unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr.text());
    assert_eq!(out.stdout.text().trim(), "Python 3.99.0");

    // Read and execute only: no write, no new file, no removal, no chmod in the toolchain.
    let marker = host.version.join("marker");
    let mode_before = std::fs::metadata(&marker).unwrap().permissions().mode();
    let attempts = format!(
        "echo changed > {m}; echo new > {d}/new; rm -f {m}; chmod 777 {m}; touch {d}/bin/python3; cat {m}",
        m = marker.display(),
        d = host.version.display()
    );
    let out = run(&auto, "sh", &["-c", &attempts]).unwrap();
    assert_eq!(out.stdout.text(), "untouched\n", "{}", out.stderr.text());
    assert_eq!(std::fs::read_to_string(&marker).unwrap(), "untouched\n");
    assert!(!host.version.join("new").exists());
    let mode = std::fs::metadata(&marker).unwrap().permissions().mode();
    assert_eq!(mode, mode_before, "{mode:o}");
}

#[test]
fn workspace_info_names_the_unreadable_toolchain_and_the_policy_entry() {
    if !landlock_here() {
        return;
    }
    let host = FakeHost::new();
    let files = DirFiles::open(&host.ws()).unwrap();
    let ctl = Control::default();
    let info = InfoCache::default()
        .get(&host.runner(&[]), &files, false, &ctl)
        .unwrap();
    let hint = info
        .unreadable_toolchains
        .iter()
        .find(|h| h.toolchain.program == "python3")
        .unwrap_or_else(|| panic!("{:?}", info.unreadable_toolchains));
    let root = host.version.display().to_string();
    assert_eq!(hint.toolchain.root, root);
    assert_eq!(
        hint.policy,
        serde_json::json!({ "exec_read_paths": [root] })
    );
    let python = &info.runtimes["python"];
    assert!(!python.available, "{python:?}");
    let note = python.note.as_deref().unwrap_or_default();
    assert!(
        note.contains(&root) && note.contains("exec_read_paths") && note.contains("auto"),
        "{note}"
    );

    let info = InfoCache::default()
        .get(&host.runner(&["auto"]), &files, false, &ctl)
        .unwrap();
    assert!(
        info.unreadable_toolchains
            .iter()
            .all(|h| h.toolchain.root != root),
        "{:?}",
        info.unreadable_toolchains
    );
    let python = &info.runtimes["python"];
    assert_eq!(python.version.as_deref(), Some("3.99.0"), "{python:?}");
}

/// An npm-installed tool: `node_modules/.bin/eslint` links to `node_modules/eslint/bin/`, and
/// the tool loads a dependency from a sibling package, which only a grant of the whole
/// `node_modules` lets it read.
#[test]
fn an_npm_tool_is_granted_its_whole_node_modules() {
    let host = FakeHost::new();
    let modules = host.tmp.path().join("proj/node_modules");
    std::fs::create_dir_all(modules.join("eslint/bin")).unwrap();
    std::fs::create_dir_all(modules.join("debug")).unwrap();
    std::fs::create_dir_all(modules.join(".bin")).unwrap();
    std::fs::write(modules.join("debug/index.js"), "debug 1.0\n").unwrap();
    let tool = modules.join("eslint/bin/eslint.js");
    let script = format!(
        "#!/bin/sh\ncat {}\n",
        modules.join("debug/index.js").display()
    );
    std::fs::write(&tool, script).unwrap();
    std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::os::unix::fs::symlink("../eslint/bin/eslint.js", modules.join(".bin/eslint")).unwrap();
    let path_var: OsString = format!("{}:/usr/bin:/bin", modules.join(".bin").display()).into();

    let found = toolchains::detect(&path_var, Some(&host.home()));
    let eslint: Vec<&Toolchain> = found.iter().filter(|t| t.program == "eslint").collect();
    assert!(!eslint.is_empty(), "{found:?}");
    for t in &eslint {
        assert_eq!(
            (t.kind, t.root.as_str()),
            ("node_modules", &*modules.display().to_string())
        );
    }

    if !landlock_here() {
        return;
    }
    let read_paths = toolchains::read_paths(&["auto".into()], &path_var, Some(&host.home()));
    let runner = Runner::new(
        ExecPlaces {
            view_root: host.ws(),
            overlay: None,
            view_writable: true,
            home: Some(host.tmp.path().join("state/home")),
            scratch_parent: host.tmp.path().join("state/tmp"),
        },
        ExecSettings {
            read_paths,
            path: Some(path_var.to_string_lossy().into_owned()),
            ..ExecSettings::default()
        },
    );
    let out = runner
        .run_once(&ExecRequest::new("eslint", host.ws()).under(&Control::default()))
        .unwrap();
    assert_eq!(out.exit_code, Some(0), "{}", out.stderr.text());
    assert_eq!(out.stdout.text(), "debug 1.0\n");
}
