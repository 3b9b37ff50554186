//! Faults the host's environment injects: a full disk, a file size limit (RLIMIT_FSIZE, whose
//! default SIGXFSZ kills the process), too few file descriptors, and deadlines against deep
//! directory creation. Every failure must be a clean envelope that changed nothing.
//!
//! Tests that change a process-wide limit run in a child process (this test binary, started
//! again with one ignored test), so the limit cannot disturb the other tests.
#![allow(unused_unsafe)]

use crate::common::*;
use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// Every name under `root` (recursively), relative to it.
fn tree(root: &Path) -> Vec<PathBuf> {
    snapshot(root).into_keys().collect()
}

fn assert_no_temp_files(root: &Path) {
    let temps: Vec<_> = tree(root)
        .into_iter()
        .filter(|p| p.to_string_lossy().contains(".wsfs-"))
        .collect();
    assert!(temps.is_empty(), "temp files left behind: {temps:?}");
}

// ------------------------------------------------------------ RLIMIT_FSIZE (findings 1, 2, 3)

const FSIZE_ENV: &str = "WSFS_FSIZE_CHILD";
const FSIZE_LIMIT: u64 = 64 * 1024;

#[test]
#[ignore = "child process of file_size_limit_is_no_space_not_a_dead_host"]
fn file_size_limit_child() {
    let Ok(dir) = std::env::var(FSIZE_ENV) else {
        return;
    };
    let root = PathBuf::from(dir);
    let big = format!("HEAD\n{}", "b".repeat(49_995));
    fs::write(root.join("big.txt"), &big).unwrap();
    let hard = getrlimit(Resource::Fsize).maximum;
    setrlimit(
        Resource::Fsize,
        Rlimit {
            current: Some(FSIZE_LIMIT),
            maximum: hard,
        },
    )
    .unwrap();
    let ws = open_ws(&root, json!({}));
    let before = tree(&root);
    let over = "x".repeat(100_000);
    let refusals: Vec<(&str, Value)> = vec![
        ("write_file", json!({"path": "new.txt", "content": over})),
        ("write_file", json!({"path": "big.txt", "content": over})),
        (
            "write_file",
            json!({"path": "n1/n2/n3/new.txt", "content": over}),
        ),
        (
            "append_file",
            json!({"path": "big.txt", "content": "a".repeat(30_000)}),
        ),
        (
            "append_file",
            json!({"path": "fresh/log.txt", "content": over}),
        ),
        (
            "edit_file",
            json!({"path": "big.txt", "old_text": "HEAD", "new_text": "c".repeat(20_000)}),
        ),
    ];
    for (tool, args) in refusals {
        let v = call(ws, tool, args.clone());
        let message = assert_err(&v, "no_space");
        assert!(
            message.contains("Retrying will not help") && message.contains("RLIMIT_FSIZE"),
            "{tool}: {message}"
        );
        assert_eq!(
            tree(&root),
            before,
            "{tool} {} changed the tree",
            args["path"]
        );
        assert_eq!(fs::read(root.join("big.txt")).unwrap(), big.as_bytes());
    }
    // Up to the limit everything still works.
    let fits = "y".repeat((FSIZE_LIMIT - 50_000) as usize);
    let v = call(
        ws,
        "append_file",
        json!({"path": "big.txt", "content": fits}),
    );
    assert_eq!(assert_ok(&v)["size"], json!(FSIZE_LIMIT));
    let v = call(
        ws,
        "write_file",
        json!({"path": "exact.txt", "content": "z".repeat(FSIZE_LIMIT as usize)}),
    );
    assert_ok(&v);
    assert_no_temp_files(&root);
    assert_ok(&close_ws(ws));
}

/// Findings 1-3: under RLIMIT_FSIZE, writes past the limit used to kill the host with SIGXFSZ
/// (and leave a 64 KiB temp file); now they are `no_space` and change nothing.
#[test]
fn file_size_limit_is_no_space_not_a_dead_host() {
    let tmp = tempfile::tempdir().unwrap();
    run_child_test(
        &crate::test_name!(file_size_limit_child),
        FSIZE_ENV,
        tmp.path(),
    );
}

// ------------------------------------------------------------ full disk (findings 1, 2)

/// A 64 KiB tmpfs, unmounted when dropped. `None` (with the reason printed) where mounting is
/// not allowed, as in unprivileged CI containers.
struct SmallTmpfs {
    _tmp: tempfile::TempDir,
    mount: PathBuf,
}

impl SmallTmpfs {
    fn mount() -> Option<SmallTmpfs> {
        let tmp = tempfile::tempdir().unwrap();
        let mount = tmp.path().join("mnt");
        fs::create_dir(&mount).unwrap();
        let out = std::process::Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=64k", "tmpfs"])
            .arg(&mount)
            .output();
        match out {
            Ok(out) if out.status.success() => Some(SmallTmpfs { _tmp: tmp, mount }),
            Ok(out) => {
                eprintln!(
                    "SKIPPED: cannot mount a small tmpfs ({}); the full-disk logic is still \
                     covered by the RLIMIT_FSIZE tests",
                    String::from_utf8_lossy(&out.stderr).trim()
                );
                None
            }
            Err(e) => {
                eprintln!("SKIPPED: cannot run mount ({e})");
                None
            }
        }
    }
}

impl Drop for SmallTmpfs {
    fn drop(&mut self) {
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(&self.mount)
            .status();
    }
}

/// Fills the file system with `filler` until it is full, then frees `free_pages` pages.
fn fill_leaving(filler: &Path, free_pages: u64) {
    use std::io::Write;
    let mut file = fs::File::create(filler).unwrap();
    let page = [b'f'; 4096];
    while file.write_all(&page).is_ok() {}
    let len = file.metadata().unwrap().len();
    // A failed write may have left a partial page: round down, then free the pages.
    file.set_len(len / 4096 * 4096 - free_pages * 4096).unwrap();
}

/// Findings 1 and 2: with 12 KiB free, appending 20,000 bytes used to write part of it and
/// report `too_large`; now nothing is written and the code is `no_space`.
#[test]
fn a_full_disk_is_no_space_and_changes_nothing() {
    let Some(disk) = SmallTmpfs::mount() else {
        return;
    };
    let root = disk.mount.join("ws");
    let ws = open_ws(&root, json!({}));
    let log = format!("top\n{}", "log line\n".repeat(454)); // 4090 bytes: one page
    assert_ok(&call(
        ws,
        "write_file",
        json!({"path": "log.txt", "content": log}),
    ));
    fill_leaving(&disk.mount.join("filler"), 3);
    let before = tree(&root);
    let content = "n".repeat(20_000);
    let attempts: Vec<(&str, Value)> = vec![
        (
            "append_file",
            json!({"path": "log.txt", "content": content}),
        ),
        (
            "append_file",
            json!({"path": "new.log", "content": content}),
        ),
        ("write_file", json!({"path": "new.txt", "content": content})),
        ("write_file", json!({"path": "log.txt", "content": content})),
        (
            "write_file",
            json!({"path": "a/b/c.txt", "content": content}),
        ),
        (
            "edit_file",
            json!({"path": "log.txt", "old_text": "top", "new_text": content}),
        ),
    ];
    for (tool, args) in attempts {
        let v = call(ws, tool, args.clone());
        let message = assert_err(&v, "no_space");
        assert!(
            message.contains("Retrying will not help"),
            "{tool}: {message}"
        );
        assert_eq!(
            tree(&root),
            before,
            "{tool} {} changed the tree",
            args["path"]
        );
        assert_eq!(
            fs::read(root.join("log.txt")).unwrap(),
            log.as_bytes(),
            "{tool}"
        );
    }
    // Once there is room, the same append succeeds.
    fs::remove_file(disk.mount.join("filler")).unwrap();
    let v = call(
        ws,
        "append_file",
        json!({"path": "log.txt", "content": content}),
    );
    assert_eq!(assert_ok(&v)["size"], json!(log.len() + content.len()));
    assert_ok(&close_ws(ws));
}

// ------------------------------------------------------------ descriptors (finding 5)

const FD_ENV: &str = "WSFS_FD_CHILD";

#[test]
#[ignore = "child process of failed_writes_remove_the_directories_they_created"]
fn fd_starvation_child() {
    let Ok(dir) = std::env::var(FD_ENV) else {
        return;
    };
    let root = PathBuf::from(dir);
    lower_open_file_limit(128);
    let ws = open_ws(&root, json!({}));
    let (mut failed, mut succeeded) = (0, 0);
    for tool in ["write_file", "append_file"] {
        for free in 0..12 {
            let top = format!("{tool}-{free}");
            let path = format!("{top}/n2/n3/new.txt");
            let held = take_all_descriptors_but(free);
            let v = call(ws, tool, json!({"path": path, "content": "x"}));
            drop(held);
            if v["ok"] == json!(true) {
                succeeded += 1;
                assert_eq!(fs::read(root.join(&path)).unwrap(), b"x");
            } else {
                failed += 1;
                assert!(
                    !root.join(&top).exists(),
                    "{tool} with {free} free descriptors failed ({}) and left {:?}",
                    short(&v),
                    tree(&root.join(&top))
                );
            }
        }
    }
    assert_no_temp_files(&root);
    assert!(
        failed > 0 && succeeded > 0,
        "{failed} failed, {succeeded} succeeded: the test proves nothing"
    );
    assert_ok(&close_ws(ws));
}

/// Finding 5: with one free descriptor, a failed `write_file n1/n2/n3/new.txt` used to leave
/// `n1/n2/n3`. Now every failure removes what the call created, at every descriptor count.
#[test]
fn failed_writes_remove_the_directories_they_created() {
    let tmp = tempfile::tempdir().unwrap();
    run_child_test(&crate::test_name!(fd_starvation_child), FD_ENV, tmp.path());
}

// ------------------------------------------------------------ deadlines (finding 6)

/// Finding 6: a write creating 2,000 nested directories under `timeout_ms: 50` used to overrun
/// its deadline by 0.5-4 s (each mkdir resolved the whole path again, and the deadline was
/// checked only after all of them). Now it stops before the next directory once the deadline
/// has passed, and removes what it created. Only tiny deadlines are used: removing the
/// directories costs a few times as long as creating them, and the bound must hold on a
/// loaded 2-core CI machine.
#[test]
fn deep_directory_creation_stops_at_the_deadline() {
    let f = Fixture::new();
    let deep = format!("{}f.txt", "d/".repeat(2000));
    let args = json!({"path": deep, "content": "x"}).to_string();
    // The same write without a deadline, on this machine now: the bound scales with it, so a
    // busy machine is not mistaken for a deadline that does not work. Its own deadline is the
    // longest a workspace takes: on a loaded machine 2,000 mkdirs have taken over the default
    // 10 s.
    let whole = {
        let g = Fixture::with_config(json!({"limits": {"operation_timeout_ms": 600_000}}));
        let started = Instant::now();
        assert_ok(&call_opts(g.ws, "write_file", &args, None));
        started.elapsed()
    };
    let bound = Duration::from_millis(400) + whole * 3;
    for timeout_ms in [1, 5] {
        let options = json!({ "timeout_ms": timeout_ms }).to_string();
        let started = Instant::now();
        let v = call_opts(f.ws, "write_file", &args, Some(&options));
        let took = started.elapsed();
        assert_err(&v, "timeout");
        eprintln!("timeout_ms {timeout_ms}: returned after {took:?} (the whole write: {whole:?})");
        assert!(
            took < bound,
            "timeout_ms {timeout_ms}: returned after {took:?}, the whole write took {whole:?}"
        );
        assert!(
            tree(&f.root).is_empty(),
            "left behind: {} entries",
            tree(&f.root).len()
        );
    }
}

// ------------------------------------------------------------ apply_patch's descriptors (issue 16 findings 7, 8)

const PATCH_CAP_ENV: &str = "WSFS_PATCH_CAP_CHILD";

/// A patch moving `n` files, each from a directory of its own (`{tag}s{i}/f.txt`) into another
/// existing one (`{tag}d{i}/f.txt`), changing its line: the shape that holds the most
/// descriptors per file (two directories, the lock, the staged file).
fn spread_moves(root: &Path, tag: &str, n: usize) -> String {
    let mut p = String::from("*** Begin Patch\n");
    for i in 0..n {
        fs::create_dir(root.join(format!("{tag}s{i}"))).unwrap();
        fs::create_dir(root.join(format!("{tag}d{i}"))).unwrap();
        fs::write(root.join(format!("{tag}s{i}/f.txt")), format!("{i}\n")).unwrap();
        p.push_str(&format!(
            "*** Update File: {tag}s{i}/f.txt\n*** Move to: {tag}d{i}/f.txt\n@@\n-{i}\n+moved {i}\n"
        ));
    }
    p + "*** End Patch\n"
}

#[test]
#[ignore = "child process of a_patch_at_the_file_cap_commits_within_1024_descriptors"]
fn patch_cap_child() {
    let Ok(dir) = std::env::var(PATCH_CAP_ENV) else {
        return;
    };
    let base = PathBuf::from(dir);
    let (root, state) = (base.join("ws"), base.join("state"));
    fs::create_dir(&root).unwrap();
    lower_open_file_limit(1024);
    let ws = open_ws(&root, json!({ "state_dir": state }));
    let p = spread_moves(&root, "a", 200);
    let v = call(ws, "apply_patch", json!({ "patch": p }));
    assert_eq!(assert_ok(&v)["applied"], json!(true), "{}", short(&v));
    for i in 0..200 {
        let moved = fs::read_to_string(root.join(format!("ad{i}/f.txt"))).unwrap();
        assert_eq!(moved, format!("moved {i}\n"));
        assert!(!root.join(format!("as{i}/f.txt")).exists());
    }
    assert_no_temp_files(&root);
    let journals: Vec<_> = fs::read_dir(&state)
        .unwrap()
        .flat_map(|d| fs::read_dir(d.unwrap().path()).unwrap())
        .collect();
    assert!(journals.is_empty(), "{journals:?}");
    // One file more is refused before anything is written.
    let p = spread_moves(&root, "b", 201);
    let before = tree(&root);
    let v = call(ws, "apply_patch", json!({ "patch": p }));
    let msg = assert_err(&v, "invalid_arguments");
    assert!(msg.contains("at most 200 files"), "{msg}");
    assert_eq!(tree(&root), before);
    assert_ok(&close_ws(ws));
}

/// Finding 7: a commit held a few descriptors per file and never fewer, so under
/// RLIMIT_NOFILE 1024 400 updates left 183 temp files and a journal, and 600 failed with
/// EMFILE. Now a patch changes at most 200 files (more is `invalid_arguments` before anything
/// is written), and one at the cap, in the shape that needs the most descriptors, commits
/// under a 1024 limit and leaves nothing behind.
#[test]
fn a_patch_at_the_file_cap_commits_within_1024_descriptors() {
    let tmp = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    run_child_test(
        &crate::test_name!(patch_cap_child),
        PATCH_CAP_ENV,
        tmp.path(),
    );
}

const PATCH_STARVED_ENV: &str = "WSFS_PATCH_STARVED_CHILD";

#[test]
#[ignore = "child process of a_commit_short_of_descriptors_is_rolled_back_before_it_returns"]
fn patch_starved_child() {
    if std::env::var(PATCH_STARVED_ENV).is_err() {
        return;
    }
    lower_open_file_limit(256);
    let (mut failed, mut succeeded) = (0, 0);
    for free in 0..48 {
        let case = Case::new();
        let held = take_all_descriptors_but(free);
        let v = call_named(
            case.ws,
            "apply_patch",
            &json!({ "patch": PATCH }).to_string(),
        );
        drop(held);
        let tidy = case.state_files().is_empty() && wsfs_names(&case.root).is_empty();
        if v["ok"] == json!(true) {
            succeeded += 1;
            assert!(case.is_new() && tidy, "{free} free: {}", short(&v));
        } else {
            failed += 1;
            assert!(
                case.is_old() && tidy,
                "{free} free descriptors: {} left {:?} {:?}",
                short(&v),
                tree(&case.root),
                case.state_files()
            );
        }
    }
    assert!(
        failed > 0 && succeeded > 0,
        "{failed} failed, {succeeded} succeeded"
    );
}

/// Finding 8: with a few descriptors left, a five-file commit could fail part-way with
/// EMFILE and return `io_error` while the workspace held a mix of new and old files and stray
/// directories, until it was reopened. Now at every count of free descriptors the call either
/// succeeds or has rolled everything back before it returns: its rollback opens nothing to
/// undo the renames, and the descriptors it needs for the rest are reserved beforehand.
#[test]
fn a_commit_short_of_descriptors_is_rolled_back_before_it_returns() {
    run_child_test(
        &crate::test_name!(patch_starved_child),
        PATCH_STARVED_ENV,
        "1",
    );
}
