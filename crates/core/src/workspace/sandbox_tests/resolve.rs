//! `wsfs_sandbox::resolve` through an open workspace (the sandbox crate cannot open one).

use crate::config::{Config, Limits};
use crate::control::CallControl;
use crate::error::ErrorCode;
use crate::sandbox::gate::Access;
use crate::workspace::Workspace;
use std::ffi::OsString;
use std::path::Path;
use std::time::Duration;

fn workspace(root: &Path) -> Workspace {
    let config = Config {
        root: root.to_string_lossy().into_owned(),
        create_root: false,
        restrict_to_workspace: true,
        limits: Limits::default(),
        state_dir: None,
        policy: Default::default(),
        profile: "wsfs".into(),
        wasm_tools: Vec::new(),
        wasm_policy: Default::default(),
        mode: Default::default(),
        session: None,
        session_refresh_ms: None,
        model_gateway: None,
    };
    Workspace::open(&config).unwrap().0
}

#[test]
fn failed_resolution_removes_the_directories_it_created() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = workspace(tmp.path());
    let ctl = CallControl::new(Duration::from_secs(10), None);
    // Creates new/deeper, then finds the parent escapes the root.
    let path = ws.parse_path("new/deeper/../../../x").unwrap();
    let err = ws.resolve(&path, Access::WRITE, true, &ctl).unwrap_err();
    assert_eq!(err.code, ErrorCode::OutsideWorkspace);
    assert!(
        !tmp.path().join("new").exists(),
        "created directories were left behind"
    );
}

#[test]
fn symlinked_leaf_resolves_to_its_target_directory() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir(tmp.path().join("real")).unwrap();
    std::os::unix::fs::symlink("real/f.txt", tmp.path().join("link")).unwrap();
    let ws = workspace(tmp.path());
    let ctl = CallControl::new(Duration::from_secs(10), None);
    let located = ws
        .resolve(&ws.parse_path("link").unwrap(), Access::READ, false, &ctl)
        .unwrap();
    assert_eq!(located.leaf, Some(OsString::from("f.txt")));
    assert_eq!(located.dir_rel(), Path::new("real"));
}

#[test]
fn symlink_loops_are_invalid_paths() {
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink("b", tmp.path().join("a")).unwrap();
    std::os::unix::fs::symlink("a", tmp.path().join("b")).unwrap();
    let ws = workspace(tmp.path());
    let ctl = CallControl::new(Duration::from_secs(10), None);
    let err = ws
        .resolve(&ws.parse_path("a").unwrap(), Access::READ, false, &ctl)
        .unwrap_err();
    assert_eq!(err.code, ErrorCode::InvalidPath);
}

/// `..` further in than the first name is left to the kernel, which follows it physically;
/// a leading `..` is refused before any system call (`resolve::leaves_root`).
#[test]
fn parent_names_are_the_kernels_to_follow() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("ws/a/b")).unwrap();
    std::os::unix::fs::symlink("a/b", tmp.path().join("ws/deep")).unwrap();
    std::fs::write(tmp.path().join("ws/in.txt"), "in").unwrap();
    let ws = workspace(&tmp.path().join("ws"));
    let ctl = CallControl::new(Duration::from_secs(10), None);
    for path in ["../x", "./../x", "..", "../ws/in.txt"] {
        let p = ws.parse_path(path).unwrap();
        let err = ws.resolve(&p, Access::READ, false, &ctl).unwrap_err();
        assert_eq!(err.code, ErrorCode::OutsideWorkspace, "{path}");
    }
    // `deep/../..` is `a/b/../..` for the kernel: the root itself, inside.
    let p = ws.parse_path("deep/../../in.txt").unwrap();
    let located = ws.resolve(&p, Access::READ, false, &ctl).unwrap();
    assert_eq!(located.leaf, Some(OsString::from("in.txt")));
}
