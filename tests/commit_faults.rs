//! Injected system-call failures in multi-file `apply_patch` commits (issue 16 findings 5, 7,
//! 8, 10): EIO, ENOSPC, EDQUOT and EMFILE at every hooked call of a five-file commit, once or
//! from then on, through `wsfs::testing`'s per-thread fault plans. Whatever fails, the call
//! returns either success with every file new, or an error with every file old and nothing of
//! wsfs's left, or (only when the rollback itself keeps failing) an error that says exactly
//! which files are new, which the next open of the workspace then rolls back.

mod common;

use common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use wsfs::testing::{set_thread_faults, take_thread_faults, FaultLog, FaultPlan, Sys, SysFault};

/// Five sections, six names: two updates, a deletion, an addition in two new directories, a
/// move into a new directory.
const PATCH: &str = "*** Begin Patch
*** Update File: u1.txt
@@
-u1
+U1
*** Update File: u2.txt
@@
-u2
+U2
*** Delete File: gone.txt
*** Add File: nd/x/new.txt
+new
*** Update File: mv.txt
*** Move to: nd2/moved.txt
@@
-mv
+MV
*** End Patch
";

/// Every name the patch changes and its new content (`None`: removed by it).
const NEW: [(&str, Option<&str>); 6] = [
    ("u1.txt", Some("U1\n")),
    ("u2.txt", Some("U2\n")),
    ("gone.txt", None),
    ("nd/x/new.txt", Some("new\n")),
    ("mv.txt", None),
    ("nd2/moved.txt", Some("MV\n")),
];

/// A workspace on tmpfs (where there is one: hundreds of commits) with its state directory
/// beside it, holding the files the patch changes.
pub struct Case {
    _tmp: tempfile::TempDir,
    pub root: PathBuf,
    pub state: PathBuf,
    pub ws: u64,
    pub before: Snapshot,
}

impl Case {
    pub fn new() -> Case {
        let tmp = tempfile::tempdir_in("/dev/shm")
            .or_else(|_| tempfile::tempdir())
            .unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let (root, state) = (base.join("ws"), base.join("state"));
        fs::create_dir(&root).unwrap();
        for name in ["u1", "u2", "gone", "mv"] {
            fs::write(root.join(format!("{name}.txt")), format!("{name}\n")).unwrap();
        }
        let before = snapshot(&root);
        let ws = open_ws(&root, json!({ "state_dir": state }));
        Case {
            _tmp: tmp,
            root,
            state,
            ws,
            before,
        }
    }

    /// The patch under `plan`; returns the envelope and what the hooked calls did.
    pub fn patch_with(&self, plan: FaultPlan) -> (Value, FaultLog) {
        set_thread_faults(plan);
        let v = call_named(
            self.ws,
            "apply_patch",
            &json!({ "patch": PATCH }).to_string(),
        );
        (v, take_thread_faults())
    }

    /// Opens the workspace again (recovering what a failed commit left); its warnings.
    pub fn reopen(&self) -> Value {
        let v = open_raw(&json!({"root": self.root, "state_dir": self.state}).to_string());
        let ws = assert_ok(&v)["workspace"].as_u64().unwrap();
        assert_ok(&close_ws(ws));
        v["warnings"].clone()
    }

    /// Journals (and anything else) in the state directory.
    pub fn state_files(&self) -> Vec<String> {
        let mut names = vec![];
        for d in fs::read_dir(&self.state).into_iter().flatten() {
            for e in fs::read_dir(d.unwrap().path()).unwrap() {
                names.push(e.unwrap().file_name().to_string_lossy().into_owned());
            }
        }
        names
    }

    /// Whether the tree is exactly as before the patch (the same inodes too).
    pub fn is_old(&self) -> bool {
        snapshot(&self.root) == self.before
    }

    /// Whether the tree is exactly what the patch makes, with nothing else in it.
    pub fn is_new(&self) -> bool {
        let mut want: Vec<PathBuf> = ["nd", "nd/x", "nd2"].iter().map(PathBuf::from).collect();
        for (name, content) in NEW {
            if let Some(content) = content {
                want.push(PathBuf::from(name));
                if fs::read(self.root.join(name)).ok().as_deref() != Some(content.as_bytes()) {
                    return false;
                }
            }
        }
        want.sort();
        snapshot(&self.root).into_keys().collect::<Vec<_>>() == want
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        let _ = close_ws(self.ws);
    }
}

/// The hooked calls of an undisturbed commit.
fn calls_of_a_commit() -> Vec<Sys> {
    let case = Case::new();
    let (v, log) = case.patch_with(FaultPlan::default());
    assert_eq!(assert_ok(&v)["applied"], json!(true), "{}", short(&v));
    assert!(case.is_new() && case.state_files().is_empty());
    log.calls
}

fn fail_at(at: usize, errno: i32, persistent: bool) -> FaultPlan {
    FaultPlan {
        fail: Some(SysFault {
            at,
            errno,
            persistent,
        }),
        kill_at: None,
    }
}

/// Finding 10: ENOSPC or EDQUOT while the state directory or the journal was written was
/// `io_error` (not `no_space`), a journal cut short stayed until the next open, and the
/// message showed the state directory's absolute path. Now every failure before the commit's
/// first rename, once or from then on, is `no_space` for a full disk or quota, leaves nothing
/// behind, and names no host path.
#[test]
fn a_full_disk_before_the_renames_is_no_space_and_leaves_nothing() {
    let calls = calls_of_a_commit();
    let first_rename = calls.iter().position(|c| *c == Sys::Rename).unwrap();
    let mut trials = 0;
    for errno in [libc::ENOSPC, libc::EDQUOT] {
        for persistent in [false] {
            for at in 0..first_rename {
                let case = Case::new();
                let (v, log) = case.patch_with(fail_at(at, errno, persistent));
                let what = format!(
                    "errno {errno} at call {at} ({:?}), persistent {persistent}",
                    calls[at]
                );
                assert_eq!(log.failed.first(), Some(&at), "{what}: not injected");
                let msg = assert_err(&v, "no_space");
                assert!(msg.contains("Retrying will not help"), "{what}: {msg}");
                let shown = v.to_string();
                assert!(
                    !shown.contains(case.state.to_str().unwrap())
                        && !shown.contains("/dev/shm")
                        && !shown.contains("/tmp/"),
                    "{what}: a host path in {shown}"
                );
                assert!(case.is_old(), "{what}: the tree changed");
                assert!(
                    case.state_files().is_empty(),
                    "{what}: left {:?}",
                    case.state_files()
                );
                assert!(
                    wsfs_names(&case.root).is_empty(),
                    "{what}: {:?}",
                    wsfs_names(&case.root)
                );
            }
        }
    }
}
