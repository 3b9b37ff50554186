//! apply_patch through the C ABI: every patch form, every rejection reason, dry runs, strict
//! and non-strict, exact bytes, symlinks, modes, and failures part-way that roll back.

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::fs::PermissionsExt;

fn patch(f: &Fixture, args: Value) -> Value {
    call_named(f.ws, "apply_patch", &args.to_string())
}

#[track_caller]
fn applied(v: &Value) -> Value {
    let d = assert_ok(v).clone();
    assert_eq!(d["applied"], json!(true), "not applied: {}", short(v));
    assert_eq!(d["rejected_hunks"], json!([]), "{}", short(v));
    d
}

/// Asserts a rejected patch: success envelope, applied false, the reasons in order.
#[track_caller]
fn rejected(v: &Value, reasons: &[&str]) -> Value {
    let d = assert_ok(v).clone();
    assert_eq!(d["applied"], json!(false), "{}", short(v));
    let got: Vec<&str> = d["rejected_hunks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["reason"].as_str().unwrap())
        .collect();
    assert_eq!(got, reasons, "{}", short(v));
    assert!(
        v["text"].as_str().unwrap().starts_with("PATCH NOT APPLIED"),
        "{}",
        short(v)
    );
    d
}

fn actions(d: &Value) -> Vec<(String, String)> {
    d["files_changed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["action"].as_str().unwrap().to_string(),
                f["path"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn pairs(list: &[(&str, &str)]) -> Vec<(String, String)> {
    list.iter()
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .collect()
}

crate::backend_tests! {
#[test]
fn unified_diff_of_several_files() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("src/a.txt", "one\ntwo\nthree\n");
    f.write("gone.txt", "bye\n");
    let p = "\
diff --git a/src/a.txt b/src/a.txt
--- a/src/a.txt
+++ b/src/a.txt
@@ -1,3 +1,3 @@
 one
-two
+TWO
 three
--- /dev/null
+++ b/new/deep/b.txt
@@ -0,0 +1,2 @@
+hello
+world
--- a/gone.txt
+++ /dev/null
@@ -1 +0,0 @@
-bye
";
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(
        actions(&d),
        pairs(&[
            ("update", "src/a.txt"),
            ("add", "new/deep/b.txt"),
            ("delete", "gone.txt")
        ])
    );
    assert_eq!(d["files_changed"][0]["added_lines"], json!(1));
    assert_eq!(d["files_changed"][0]["removed_lines"], json!(1));
    assert_eq!(f.read("src/a.txt"), b"one\nTWO\nthree\n");
    assert_eq!(f.read("new/deep/b.txt"), b"hello\nworld\n");
    assert!(!f.target_exists("gone.txt"));
    assert!(d["diff"].as_str().unwrap().contains("+++ b/new/deep/b.txt"));
    assert!(f.wsfs_names().is_empty());
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
}

#[test]
fn git_rename_and_begin_patch_move() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("old.txt", "a\nb\n");
    f.set_mode("old.txt", 0o751);
    let p = "diff --git a/old.txt b/dir/new.txt\nsimilarity index 60%\nrename from old.txt\nrename to dir/new.txt\n--- a/old.txt\n+++ b/dir/new.txt\n@@ -1,2 +1,2 @@\n a\n-b\n+B\n";
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(actions(&d), pairs(&[("move", "dir/new.txt")]));
    assert_eq!(d["files_changed"][0]["from"], json!("old.txt"));
    assert!(!f.target_exists("old.txt"));
    assert_eq!(f.read("dir/new.txt"), b"a\nB\n");
    let mode = f
        .stat("dir/new.txt")
        .permissions()
        .mode()
        & 0o7777;
    assert_eq!(mode, 0o751, "a moved file keeps its mode");
    let p = "*** Begin Patch\n*** Update File: dir/new.txt\n*** Move to: back.txt\n*** End Patch\n";
    applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(f.read("back.txt"), b"a\nB\n");
    assert!(!f.target_exists("dir/new.txt"));
}

#[test]
fn begin_patch_every_section() {
    let f = Fixture::with_state_dir(json!({}));
    f.write(
        "app.py",
        "class A:\n    def run(self):\n        pass\nclass B:\n    def run(self):\n        pass\n",
    );
    f.write("old.txt", "x\n");
    f.write("m.txt", "keep\nx\n");
    let p = "\
*** Begin Patch
*** Update File: app.py
@@ class B:
@@     def run(self):
-        pass
+        return 1
*** Add File: docs/new.md
+# New
*** Delete File: old.txt
*** Update File: m.txt
*** Move to: moved/m.txt
@@
 keep
-x
+y
*** End Patch
";
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(
        actions(&d),
        pairs(&[
            ("update", "app.py"),
            ("add", "docs/new.md"),
            ("delete", "old.txt"),
            ("move", "moved/m.txt")
        ])
    );
    assert!(String::from_utf8(f.read("app.py"))
        .unwrap()
        .ends_with("class B:\n    def run(self):\n        return 1\n"));
    assert_eq!(f.read("docs/new.md"), b"# New\n");
    assert_eq!(f.read("moved/m.txt"), b"keep\ny\n");
    assert!(!f.target_exists("old.txt") && !f.target_exists("m.txt"));
}

#[test]
fn structured_files_with_file_hash() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("a.txt", "1\n2\n3\n");
    f.write("b.txt", "x\n");
    let hash = "67d4a36a9d0ab1b26c4ac3a1b9df74d3d00a3d8a0b8e6f2c4a5d6a7aaf15d5d8"; // wrong on purpose
    let d = rejected(
        &patch(
            &f,
            json!({"files": [{"path": "a.txt", "file_hash": hash, "hunks": [{"start_line": 2, "end_line": 2, "replace_with": "two"}]}]}),
        ),
        &["stale"],
    );
    assert_eq!(d["rejected_hunks"][0]["expected"], json!([]));
    let real = {
        use std::process::Command;
        let out = Command::new("sha256sum")
            .arg(f.disk_path("a.txt"))
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap()[..64].to_string()
    };
    let d = applied(&patch(
        &f,
        json!({"files": [
            {"path": "a.txt", "file_hash": real, "hunks": [{"start_line": 2, "end_line": 2, "replace_with": "two"}, {"start_line": 4, "end_line": 3, "replace_with": "four\n"}]},
            {"path": "b.txt", "hunks": [{"start_line": 1, "end_line": 0, "replace_with": "top"}]}
        ]}),
    ));
    assert_eq!(
        actions(&d),
        pairs(&[("update", "a.txt"), ("update", "b.txt")])
    );
    assert_eq!(f.read("a.txt"), b"1\ntwo\n3\nfour\n");
    assert_eq!(f.read("b.txt"), b"top\nx\n");
}

#[test]
fn every_rejection_reason_changes_nothing() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("a.txt", "alpha\nbeta\ngamma\nbeta\n");
    f.write("b.txt", "b\n");
    let before = f.snapshot("");
    let cases: Vec<(Value, Vec<&str>)> = vec![
        (
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-nothere\n+x\n"}),
            vec!["context_not_found"],
        ),
        (
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n-beta\n+B\n*** End Patch\n"}),
            vec!["ambiguous"],
        ),
        (
            json!({"files": [{"path": "a.txt", "file_hash": "0".repeat(64), "hunks": [{"start_line": 1, "end_line": 1, "replace_with": "x"}]}]}),
            vec!["stale"],
        ),
        (
            json!({"files": [{"path": "a.txt", "hunks": [{"start_line": 9, "end_line": 9, "replace_with": "x"}]}]}),
            vec!["out_of_range"],
        ),
        (
            json!({"patch": "*** Begin Patch\n*** Update File: missing.txt\n-a\n+b\n*** End Patch\n"}),
            vec!["file_not_found"],
        ),
        (
            json!({"patch": "*** Begin Patch\n*** Add File: b.txt\n+new\n*** End Patch\n"}),
            vec!["file_exists"],
        ),
        (
            json!({"files": [{"path": "a.txt", "hunks": [{"start_line": 1, "end_line": 2, "replace_with": "x"}, {"start_line": 2, "end_line": 3, "replace_with": "y"}]}]}),
            vec!["overlap"],
        ),
        // A rejection in one file keeps every other file of the patch unchanged (strict).
        (
            json!({"patch": "*** Begin Patch\n*** Update File: b.txt\n-b\n+B\n*** Update File: a.txt\n-zzz\n+y\n*** End Patch\n"}),
            vec!["context_not_found"],
        ),
    ];
    for (args, reasons) in cases {
        let v = patch(&f, args.clone());
        let d = rejected(&v, &reasons);
        let r = &d["rejected_hunks"][0];
        assert!(
            r["path"].is_string() && r["hunk"].is_u64() && r["expected"].is_array(),
            "{args}: {r}"
        );
        assert_eq!(d["files_changed"], json!([]));
        assert_eq!(f.snapshot(""), before, "{args} changed something");
    }
    // nearest_line names the candidate.
    let d = rejected(
        &patch(
            &f,
            json!({"patch": "*** Begin Patch\n*** Update File: a.txt\n alpha\n-BETA\n+x\n*** End Patch\n"}),
        ),
        &["context_not_found"],
    );
    assert_eq!(d["rejected_hunks"][0]["nearest_line"], json!(1));
    assert_eq!(d["rejected_hunks"][0]["expected"], json!(["alpha", "BETA"]));
}

#[test]
fn dry_run_changes_nothing_and_shows_the_diff() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("a.txt", "1\n2\n");
    let before = f.snapshot("");
    let p = "*** Begin Patch\n*** Update File: a.txt\n-2\n+two\n*** Add File: b.txt\n+b\n*** Delete File: a.txt\n*** End Patch\n";
    // a.txt twice: refused before anything.
    assert_err(
        &patch(&f, json!({"patch": p, "dry_run": true})),
        "invalid_arguments",
    );
    let p = "*** Begin Patch\n*** Update File: a.txt\n-2\n+two\n*** Add File: b.txt\n+b\n*** End Patch\n";
    let v = patch(&f, json!({"patch": p, "dry_run": true}));
    let d = applied(&v);
    assert_eq!(actions(&d).len(), 2);
    assert!(d["diff"].as_str().unwrap().contains("+two"));
    let text = v["text"].as_str().unwrap();
    assert!(
        text.starts_with("dry run") && text.contains("+two"),
        "{text}"
    );
    assert_eq!(f.snapshot(""), before);
    assert!(f.state_files().is_empty());
}

#[test]
fn strict_false_writes_the_files_that_applied() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("good.txt", "g\n");
    f.write("bad.txt", "b\n");
    let p = "*** Begin Patch\n*** Update File: good.txt\n-g\n+G\n*** Update File: bad.txt\n-nope\n+x\n*** End Patch\n";
    rejected(&patch(&f, json!({"patch": p})), &["context_not_found"]);
    assert_eq!(f.read("good.txt"), b"g\n");
    let v = patch(&f, json!({"patch": p, "strict": false}));
    let d = assert_ok(&v).clone();
    assert_eq!(d["applied"], json!(true));
    assert_eq!(actions(&d), pairs(&[("update", "good.txt")]));
    assert_eq!(d["rejected_hunks"][0]["path"], json!("bad.txt"));
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .starts_with("PATCH PARTLY APPLIED"),
        "{v}"
    );
    assert_eq!(f.read("good.txt"), b"G\n");
    assert_eq!(f.read("bad.txt"), b"b\n");
}

#[test]
fn crlf_bom_and_final_newline_survive_patches() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("crlf.txt", "\u{feff}a\r\nb\r\nc\r\n");
    f.write("nonl.txt", "a\nb\nc");
    f.write("mixed.txt", "a\r\nb\nc\r\n");
    let p = "*** Begin Patch\n*** Update File: crlf.txt\n a\n-b\n+B\n+B2\n*** Update File: nonl.txt\n b\n-c\n+C\n*** Update File: mixed.txt\n-b\n+B\n*** End Patch\n";
    applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(
        f.read("crlf.txt"),
        "\u{feff}a\r\nB\r\nB2\r\nc\r\n".as_bytes()
    );
    assert_eq!(f.read("nonl.txt"), b"a\nb\nC");
    assert_eq!(f.read("mixed.txt"), b"a\r\nB\r\nc\r\n");
    // A unified diff made by `diff -u` on the CRLF file applies, CRLF in the patch or not.
    let p = "--- a/crlf.txt\n+++ b/crlf.txt\n@@ -2,2 +2,2 @@\n B\n-B2\n+b2\n c\n";
    applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(
        f.read("crlf.txt"),
        "\u{feff}a\r\nB\r\nb2\r\nc\r\n".as_bytes()
    );
}

#[test]
fn symlinks_inside_are_followed_and_outside_refused() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("real/t.txt", "a\n");
    f.symlink("real/t.txt", "link.txt");
    fs::write(f.base.join("outside.txt"), "secret\n").unwrap();
    f.symlink("../outside.txt", "out.txt");
    let p = "*** Begin Patch\n*** Update File: link.txt\n-a\n+A\n*** End Patch\n";
    applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(f.read("real/t.txt"), b"A\n");
    assert!(f
        .lstat("link.txt")
        .file_type()
        .is_symlink());
    for p in [
        "*** Begin Patch\n*** Update File: out.txt\n-secret\n+pwned\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: ../outside.txt\n-secret\n+pwned\n*** End Patch\n",
        "*** Begin Patch\n*** Add File: ../evil.txt\n+x\n*** End Patch\n",
        "*** Begin Patch\n*** Update File: real/t.txt\n*** Move to: ../moved.txt\n*** End Patch\n",
    ] {
        assert_err(&patch(&f, json!({ "patch": p })), "outside_workspace");
    }
    assert_eq!(fs::read(f.base.join("outside.txt")).unwrap(), b"secret\n");
    assert!(!f.base.join("evil.txt").exists() && !f.base.join("moved.txt").exists());
    assert_eq!(f.read("real/t.txt"), b"A\n");
    // Deleting or moving a symlink's target through the link is refused.
    let p = "*** Begin Patch\n*** Delete File: link.txt\n*** End Patch\n";
    assert_err(&patch(&f, json!({ "patch": p })), "not_a_file");
    assert!(f.target_exists("real/t.txt"));
    // Adding over a symlink (even a dangling one) is file_exists.
    f.symlink("nowhere", "dangling");
    let p = "*** Begin Patch\n*** Add File: dangling\n+x\n*** End Patch\n";
    rejected(&patch(&f, json!({ "patch": p })), &["file_exists"]);
}

#[test]
fn bad_arguments_and_limits() {
    let f = Fixture::with_state_dir(json!({"limits": {"max_write_bytes": 100}}));
    f.write("a.txt", "a\n");
    assert_err(&patch(&f, json!({})), "invalid_arguments");
    assert_err(
        &patch(
            &f,
            json!({"patch": "x", "files": [{"path": "a.txt", "hunks": []}]}),
        ),
        "invalid_arguments",
    );
    assert_err(
        &patch(&f, json!({"patch": "not a patch"})),
        "invalid_arguments",
    );
    assert_err(
        &patch(
            &f,
            json!({"patch": "--- a/a.txt\n+++ b/a.txt\n@@ -1,5 +1,5 @@\n-a\n+b\n"}),
        ),
        "invalid_arguments",
    );
    assert_err(
        &patch(
            &f,
            json!({"files": [{"path": "a.txt", "hunks": [], "extra": 1}]}),
        ),
        "invalid_arguments",
    );
    let big = format!(
        "*** Begin Patch\n*** Add File: big.txt\n{}*** End Patch\n",
        "+0123456789\n".repeat(20)
    );
    assert_err(&patch(&f, json!({ "patch": big })), "too_large");
    f.write("binary.bin", b"a\0b\n");
    let p = "*** Begin Patch\n*** Update File: binary.bin\n-a\n+b\n*** End Patch\n";
    assert_err(&patch(&f, json!({ "patch": p })), "io_error");
    let p = "*** Begin Patch\n*** Update File: .\n-a\n+b\n*** End Patch\n";
    assert_err(&patch(&f, json!({ "patch": p })), "not_a_file");
    assert!(!f.target_exists("big.txt"));
}

/// Issue 16 finding 6: a patch path whose last name is `..` or `.` names a directory. It used
/// to be planned anyway: `Add File: nd/x/..` beside a deletion created `nd/x`, wrote a journal
/// no recovery could replay (every open warned, and the sweep kept its names), and `Add File:
/// s1/..` alone left `s1`. Every path is now checked before anything is created.
#[test]
fn a_path_naming_a_directory_is_refused_before_anything_is_created() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("victim.txt", "v\n");
    f.write("keep.txt", "k\n");
    let before = f.snapshot("");
    let sections = [
        (
            "*** Delete File: victim.txt\n*** Add File: nd/x/..\n+x\n",
            "nd/x/..",
        ),
        ("*** Add File: s1/..\n+x\n", "s1/.."),
        (
            "*** Add File: s2/.\n+x\n*** Add File: s3/x/..\n+y\n",
            "s3/x/..",
        ),
        (
            "*** Delete File: victim.txt\n*** Delete File: d1/..\n",
            "d1/..",
        ),
        (
            "*** Update File: keep.txt\n*** Move to: m1/m2/..\n@@\n-k\n+K\n",
            "m1/m2/..",
        ),
        (
            "*** Add File: a1/b1.txt\n+x\n*** Update File: u1/..\n@@\n-k\n+K\n",
            "u1/..",
        ),
    ];
    for (body, bad) in sections {
        let p = format!("*** Begin Patch\n{body}*** End Patch\n");
        let v = patch(&f, json!({ "patch": p }));
        let msg = assert_err(&v, "not_a_file");
        assert!(
            msg.contains(bad) && msg.contains("directory"),
            "{bad}: {msg}"
        );
        assert_eq!(f.snapshot(""), before, "{bad}: the tree changed");
        assert!(f.state_files().is_empty(), "{bad}: {:?}", f.state_files());
    }
    // Nothing is left for an open to warn about.
    let v = open_raw(&json!({"root": f.root, "state_dir": f.base.join("state")}).to_string());
    let again = assert_ok(&v)["workspace"].as_u64().unwrap();
    assert_eq!(v["warnings"], json!([]), "{v}");
    assert_ok(&close_ws(again));
}

#[test]
fn an_expired_deadline_changes_nothing() {
    let f = Fixture::with_state_dir(json!({}));
    f.write("a.txt", "a\n");
    f.write("b.txt", "b\n");
    let before = f.snapshot("");
    let p = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n";
    let args = json!({ "patch": p }).to_string();
    let v = call_opts(f.ws, "apply_patch", &args, Some(r#"{"timeout_ms": 0}"#));
    assert_err(&v, "timeout");
    assert_eq!(f.snapshot(""), before);
}
}

#[test]
fn a_state_dir_inside_the_workspace_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("ws");
    fs::create_dir(&root).unwrap();
    let cfg = json!({"root": root, "state_dir": root.join(".state")}).to_string();
    let v = open_raw(&cfg);
    assert!(
        assert_err(&v, "invalid_arguments").contains("inside the workspace"),
        "{v}"
    );
}

/// A `state_dir` reached through a symlink that dangled at open and later leads into the
/// workspace: the commit is refused, and nothing is created inside the workspace on the way.
#[test]
fn a_state_dir_that_later_leads_inside_creates_nothing_there() {
    let tmp = tempfile::tempdir().unwrap();
    let base = fs::canonicalize(tmp.path()).unwrap();
    let root = base.join("ws");
    fs::create_dir(&root).unwrap();
    std::os::unix::fs::symlink(root.join("later"), base.join("later")).unwrap();
    let cfg = json!({"state_dir": base.join("later/st")});
    let ws = open_ws(&root, cfg);
    let call = |tool: &str, args: Value| call_named(ws, tool, &args.to_string());
    fs::write(root.join("a.txt"), "a\n").unwrap();
    fs::write(root.join("b.txt"), "b\n").unwrap();
    // The model makes the directory the symlink names.
    assert_ok(&call("create_directory", json!({"path": "later"})));
    let two = "*** Begin Patch\n*** Update File: a.txt\n-a\n+A\n*** Update File: b.txt\n-b\n+B\n*** End Patch\n";
    let v = call("apply_patch", json!({"patch": two}));
    let msg = assert_err(&v, "io_error");
    assert!(msg.contains("inside the workspace"), "{msg}");
    // Calls that create directories keep working, and put nothing there either.
    assert_ok(&call(
        "write_file",
        json!({"path": "new/dir/f.txt", "content": "f"}),
    ));
    assert_eq!(
        fs::read_dir(root.join("later")).unwrap().count(),
        0,
        "the state directory was created inside the workspace"
    );
    assert_eq!(fs::read(root.join("a.txt")).unwrap(), b"a\n");
    assert_ok(&close_ws(ws));
}

crate::backend_tests! {
/// Patches and appends to the same file from several threads: every append survives.
#[test]
fn patches_and_appends_lose_nothing() {
    let f = Fixture::with_state_dir(json!({}));
    let body: String = (0..40).map(|i| format!("<M{i:02}>\n")).collect();
    f.write("shared.txt", &body);
    let ws = f.ws;
    let mut threads = vec![];
    for t in 0..4 {
        threads.push(std::thread::spawn(move || {
            for i in (t..40).step_by(4) {
                let p = format!("*** Begin Patch\n*** Update File: shared.txt\n-<M{i:02}>\n+<D{i:02}>\n*** End Patch\n");
                let v = call_named(ws, "apply_patch", &json!({ "patch": p }).to_string());
                applied(&v);
            }
        }));
    }
    threads.push(std::thread::spawn(move || {
        for i in 0..50 {
            assert_ok(&call(
                ws,
                "append_file",
                json!({"path": "shared.txt", "content": format!("append {i}\n")}),
            ));
        }
    }));
    for t in threads {
        t.join().unwrap();
    }
    let text = String::from_utf8(f.read("shared.txt")).unwrap();
    assert!(!text.contains("<M"), "a patch was lost");
    assert_eq!(text.matches("<D").count(), 40);
    assert_eq!(text.matches("append ").count(), 50, "an append was lost");
}

/// A file whose name is not UTF-8 is patched by the escaped name a listing shows, in every
/// patch form, alone and with other files; the results show the same escaped names.
#[test]
fn names_that_are_not_utf8_round_trip_through_patches() {
    use std::ffi::OsStr;
    use std::os::unix::ffi::OsStrExt;
    let f = Fixture::with_state_dir(json!({}));
    let raw = |name: &[u8]| f.disk_path("").join(OsStr::from_bytes(name));
    fs::create_dir(raw(b"d\xff")).unwrap();
    fs::write(raw(b"d\xff/caf\xe9.txt"), "one\ntwo\n").unwrap();
    // A UTF-8 name that reads like the escaped form of the other: it must stay untouched.
    fs::write(raw(b"d\xff/caf\\xe9.txt"), "one\ntwo\n").unwrap();
    f.write("plain.txt", "p\n");
    let listed = f.call("list_dir", json!({"path": r"d\xff"}));
    let names: Vec<&str> = assert_ok(&listed)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, [r"caf\\xe9.txt", r"caf\xe9.txt"], "{listed}");
    let shown = format!(r"d\xff/{}", names[1]);

    // Unified diff, one file.
    let p = format!("--- a/{shown}\n+++ b/{shown}\n@@ -1,2 +1,2 @@\n-one\n+ONE\n two\n");
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(actions(&d), pairs(&[("update", &shown)]));
    assert_eq!(f.read_raw(b"d\xff/caf\xe9.txt"), b"ONE\ntwo\n");

    // Begin Patch, several files (a journaled commit): update it, add a new non-UTF-8 name.
    let p = format!(
        "*** Begin Patch\n*** Update File: {shown}\n-two\n+TWO\n*** Add File: d\\xff/new\\xfe.txt\n+new\n*** Update File: plain.txt\n-p\n+P\n*** End Patch\n"
    );
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(
        actions(&d),
        pairs(&[
            ("update", &shown),
            ("add", r"d\xff/new\xfe.txt"),
            ("update", "plain.txt")
        ])
    );
    assert!(d["diff"].as_str().unwrap().contains(&shown), "{d}");
    assert_eq!(f.read_raw(b"d\xff/caf\xe9.txt"), b"ONE\nTWO\n");
    assert_eq!(f.read_raw(b"d\xff/new\xfe.txt"), b"new\n");

    // A unified diff as git writes it: the same names C-quoted, in octal.
    let p = "diff --git \"a/d\\377/caf\\351.txt\" \"b/d\\377/caf\\351.txt\"\n--- \"a/d\\377/caf\\351.txt\"\n+++ \"b/d\\377/caf\\351.txt\"\n@@ -1,2 +1,2 @@\n-ONE\n+One\n TWO\n";
    let d = applied(&patch(&f, json!({ "patch": p })));
    assert_eq!(actions(&d), pairs(&[("update", &shown)]));
    assert_eq!(f.read_raw(b"d\xff/caf\xe9.txt"), b"One\nTWO\n");

    // The line-range form, by the name and hash read_file reports.
    let read = f.call("read_file", json!({ "path": shown }));
    let sha = assert_ok(&read)["sha256"].as_str().unwrap().to_string();
    let args = json!({"files": [{"path": shown, "file_hash": sha,
        "hunks": [{"start_line": 1, "end_line": 1, "replace_with": "uno"}]}]});
    let d = applied(&patch(&f, args));
    assert_eq!(actions(&d), pairs(&[("update", &shown)]));
    assert_eq!(f.read_raw(b"d\xff/caf\xe9.txt"), b"uno\nTWO\n");

    // The look-alike UTF-8 name was never touched, and no temp name is left.
    assert_eq!(f.read_raw(b"d\xff/caf\\xe9.txt"), b"one\ntwo\n");
    assert!(f.wsfs_names().is_empty(), "{:?}", f.wsfs_names());
}

}
