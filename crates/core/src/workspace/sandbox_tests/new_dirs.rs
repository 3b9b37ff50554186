//! `wsfs_sandbox::new_dirs` through an open workspace (the sandbox crate cannot open one).

use crate::sandbox::new_dirs::*;
use crate::workspace::Workspace;
use std::ffi::OsStr;
use std::path::Path;

fn open(root: &Path, state: &Path) -> Workspace {
    let json = serde_json::json!({"root": root, "state_dir": state}).to_string();
    let config = crate::config::Config::from_json(&json).unwrap();
    Workspace::open(&config).unwrap().0
}

fn records(state: &Path) -> usize {
    std::fs::read_dir(state).map_or(0, |d| {
        d.filter(|e| e.as_ref().unwrap().path().is_file()).count()
    })
}

/// A directory made as `create_dirs` makes one: recorded, under its temp name, then
/// renamed unless `rename` is false (killed in between).
fn make(ws: &Workspace, record: &mut DirRecord, name: &str, rename: bool) -> String {
    let temp = crate::sandbox::tempfile::temp_name();
    let intent = Intent {
        parent: Path::new(""),
        name: OsStr::new(name),
        temp: &temp,
    };
    let index = record.intend(&[intent]).unwrap();
    ws.test_root().dir.create_dir(&temp).unwrap();
    let made = ws.test_root().dir.open_dir(&temp).unwrap();
    record.made(index, &made.dir_metadata().unwrap()).unwrap();
    if rename {
        ws.test_root()
            .dir
            .rename(&temp, &ws.test_root().dir, name)
            .unwrap();
    }
    temp
}

/// Another open never replays the record of a call still running (in this process or
/// another: the lock says which); a record a killed call left is replayed, temp names
/// included; a call that ends removes its record and keeps its directories.
#[test]
fn only_the_records_of_dead_calls_are_replayed() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let (root, state) = (base.join("ws"), base.join("state"));
    std::fs::create_dir(&root).unwrap();
    let ws = open(&root, &state);
    let mut live = DirRecord::begin(ws.test_root()).unwrap();
    make(&ws, &mut live, "live", true);
    let _ = open(&root, &state);
    assert!(
        root.join("live").is_dir(),
        "a live call's directory was removed"
    );
    assert_eq!(records(&state), 1);
    drop(live);
    assert_eq!(records(&state), 0, "an ended call's record stays");
    let _ = open(&root, &state);
    assert!(
        root.join("live").is_dir(),
        "an ended call's directory was removed"
    );
    // Killed: once after the rename, once between the temp directory and the rename.
    let mut dead = DirRecord::begin(ws.test_root()).unwrap();
    make(&ws, &mut dead, "named", true);
    let temp = make(&ws, &mut dead, "never", false);
    dead.abandon();
    assert!(root.join(&temp).is_dir() && root.join("named").is_dir());
    let _ = open(&root, &state);
    assert!(!root.join(&temp).exists() && !root.join("named").exists());
    assert!(root.join("live").is_dir());
    assert_eq!(records(&state), 0);
}
