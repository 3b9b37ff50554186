//! A five-file multi-file commit and its workspace, for the tests that fail, kill and recover
//! commits (tests/commit_faults.rs, tests/patch_crash.rs).

use super::*;
use serde_json::{json, Value};
use std::fs;
use std::path::PathBuf;
use wsfs::testing::{set_thread_faults, take_thread_faults, FaultLog, FaultPlan, Sys, SysFault};

/// Five sections, six names: two updates, a deletion, an addition in two new directories, a
/// move into a new directory.
pub const PATCH: &str = "*** Begin Patch
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
pub const NEW: [(&str, Option<&str>); 6] = [
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
        let mut case = Case::unopened();
        case.ws = open_ws(&case.root, json!({ "state_dir": case.state }));
        case
    }

    /// The files, with no workspace open on them yet (`ws` is 0).
    pub fn unopened() -> Case {
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
        Case {
            _tmp: tmp,
            root,
            state,
            ws: 0,
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

    /// Journals (and anything else) in the workspace's state directory, and any file beside
    /// it.
    pub fn state_files(&self) -> Vec<String> {
        let mut names = vec![];
        for entry in fs::read_dir(&self.state).into_iter().flatten() {
            let entry = entry.unwrap();
            if !entry.file_type().unwrap().is_dir() {
                names.push(entry.file_name().to_string_lossy().into_owned());
                continue;
            }
            for e in fs::read_dir(entry.path()).unwrap() {
                names.push(e.unwrap().file_name().to_string_lossy().into_owned());
            }
        }
        names
    }

    /// Whether the tree is exactly as before the patch (the same inodes too).
    pub fn is_old(&self) -> bool {
        snapshot(&self.root) == self.before
    }

    /// Whether every file is as before the patch, though wsfs's hidden temp files and the
    /// directories the patch created may still be there.
    pub fn files_old(&self) -> bool {
        let mut now = snapshot(&self.root);
        now.retain(|p, _| {
            let name = p.to_string_lossy();
            !name.contains(".wsfs-") && !["nd", "nd/x", "nd2"].contains(&name.as_ref())
        });
        now == self.before
    }

    /// Whether the tree is exactly what the patch makes, with nothing else in it but wsfs's
    /// temp files (checked apart).
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
        let visible = snapshot(&self.root)
            .into_keys()
            .filter(|p| !p.to_string_lossy().contains(".wsfs-"));
        visible.collect::<Vec<_>>() == want
    }
}

impl Drop for Case {
    fn drop(&mut self) {
        if self.ws != 0 {
            let _ = close_ws(self.ws);
        }
    }
}

/// The hooked calls of an undisturbed commit.
pub fn calls_of_a_commit() -> Vec<Sys> {
    let case = Case::new();
    let (v, log) = case.patch_with(FaultPlan::default());
    assert_eq!(assert_ok(&v)["applied"], json!(true), "{}", short(&v));
    assert!(case.is_new() && case.state_files().is_empty());
    log.calls
}

pub fn fail_at(at: usize, errno: i32, persistent: bool) -> FaultPlan {
    FaultPlan {
        fail: Some(SysFault {
            at,
            errno,
            persistent,
        }),
        kill_at: None,
    }
}
