//! Errors that tell the model its next move: similar names after `path_not_found`, the
//! closest text and the kind of difference after `edit_not_found`, match lines after
//! `ambiguous_edit`, and `invalid_arguments` for an edit that changes nothing. Hints never
//! make an edit match inexact text.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::fs;

crate::backend_tests! {
#[test]
fn path_not_found_suggests_similar_names_from_the_nearest_existing_directory() {
    let f = Fixture::new();
    f.write("src/main.rs", "x\n");
    f.write("src/mainly.rs", "x\n");
    f.write("notes.md", "x\n");
    f.mkdir("src/models");
    for (tool, path, want) in [
        ("read_file", "src/mian.rs", "did you mean src/main.rs"),
        // The same name elsewhere first (issue 19 item 3), then the similar directory.
        ("read_file", "sr/main.rs", "did you mean src/main.rs or src/?"),
        ("edit_file", "notes.txt", "did you mean notes.md?"),
        ("list_dir", "src/model", "did you mean src/models/?"),
    ] {
        let v = f.call(tool, args_for(tool, path, "x", "y"));
        let msg = assert_err(&v, "path_not_found");
        assert!(msg.contains(want), "{tool} {path}: {msg}");
    }
    let v = f.call("read_file", json!({"path": "zzzzzz.txt"}));
    assert!(!assert_err(&v, "path_not_found").contains("did you mean"));
}

#[test]
fn suggestions_are_few_hide_temp_files_and_stay_bounded() {
    let f = Fixture::new();
    f.mkdir("many");
    for i in 0..20_000 {
        f.write(&format!("many/file{i:05}.txt"), "");
    }
    let started = std::time::Instant::now();
    let v = f.call("read_file", json!({"path": "many/file0000.txt"}));
    let msg = assert_err(&v, "path_not_found");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
    let (_, suggested) = msg.split_once("did you mean").expect(&msg);
    let suggested = suggested.matches("many/file").count();
    assert!((1..=3).contains(&suggested), "{msg}");
    // wsfs's own temp files are never offered.
    f.write("few/.wsfs-0123456789abcdef.tmp", "");
    f.write("few/.wsfs-0123456789abcdef.tmq", "");
    let v = f.call(
        "read_file",
        json!({"path": "few/.wsfs-0123456789abcdef.tm"}),
    );
    let msg = assert_err(&v, "path_not_found");
    assert!(
        msg.ends_with("did you mean few/.wsfs-0123456789abcdef.tmq?"),
        "{msg}"
    );
}

#[test]
fn suggestions_never_list_outside_the_workspace() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret-plans.txt"), "OUTSIDE\n").unwrap();
    f.symlink(&outside, "abs");
    f.symlink("../outside", "rel");
    for path in [
        "abs/secret-plan.txt",
        "rel/secret-plan.txt",
        "../outside/secret-plan.txt",
    ] {
        let v = f.call("read_file", json!({ "path": path }));
        assert_eq!(v["ok"], json!(false));
        assert!(
            !v.to_string().contains("secret-plans"),
            "{path}: {}",
            short(&v)
        );
        let v = f.call("get_path_info", json!({ "path": path }));
        assert!(
            !v.to_string().contains("secret-plans"),
            "{path}: {}",
            short(&v)
        );
    }
}

#[test]
fn edit_not_found_names_the_closest_lines_and_the_difference() {
    let f = Fixture::new();
    f.write("crlf.rs", "fn a() {}\r\nfn main() {\r\n    x();\r\n}\r\n");
    f.write("tabs.py", "def f():\n\tif x:\n\t\treturn 1\n");
    f.write("spaces.py", "def f():\n    if x:\n        return 1\n");
    f.write("trail.txt", "a\nlet x = 1;  \nlet y = 2;\n");
    f.write("case.txt", "one\nHello World\n");
    f.write("typo.txt", "alpha\nbeta gamma delta\nomega\n");
    for (path, old, want) in [
        // An old_text that differs only in line endings is no miss any more: it is matched
        // with the file's endings (tests/model_view.rs); with other text it is one, shown
        // with its carriage returns marked.
        (
            "crlf.rs",
            "fn main() {\n    y();\n",
            &["lines 2-3", "2| fn main() {␍"][..],
        ),
        (
            "tabs.py",
            "    if x:\n        return 1",
            &[
                "lines 2-3",
                "tabs where old_text has spaces",
                "3| →→return 1",
            ],
        ),
        (
            "spaces.py",
            "\tif x:\n\t\treturn 1",
            &["lines 2-3", "spaces where old_text has tabs"],
        ),
        (
            "spaces.py",
            "  if x:\n      return 1",
            &["lines 2-3", "indentation (the amount"],
        ),
        (
            "trail.txt",
            "let x = 1;\nlet y = 2;",
            &["lines 2-3", "trailing whitespace", "2| let x = 1;··"],
        ),
        (
            "case.txt",
            "hello world",
            &["line 2 ", "letter case", "2| Hello World"],
        ),
        (
            "typo.txt",
            "beta gamma delts",
            &["The closest text is at line 2:", "2| beta gamma delta"],
        ),
    ] {
        let before = f.read(path);
        let v = f.call(
            "edit_file",
            json!({"path": path, "old_text": old, "new_text": "CHANGED"}),
        );
        let msg = assert_err(&v, "edit_not_found");
        for w in want {
            assert!(msg.contains(w), "{path}: want {w:?} in:\n{msg}");
        }
        assert!(msg.contains("start_line="), "{msg}");
        assert_eq!(
            f.read(path),
            before,
            "{path}: a hint must never apply the edit"
        );
    }
}

#[test]
fn ambiguous_edit_names_the_lines_of_the_first_matches() {
    let f = Fixture::new();
    f.write("m.txt", "a\nfoo\nb\nfoo\nfoo\nc\nfoo\nfoo\nfoo\n");
    let v = f.call(
        "edit_file",
        json!({"path": "m.txt", "old_text": "foo", "new_text": "bar"}),
    );
    let msg = assert_err(&v, "ambiguous_edit");
    assert!(msg.contains("occurs 6 times"), "{msg}");
    assert!(msg.contains("at lines 2, 4, 5, 7, 8, ..."), "{msg}");
    let v = f.call(
        "edit_file",
        json!({"path": "m.txt", "old_text": "foo\nb", "new_text": "x"}),
    );
    assert_ok(&v);
    let v = f.call(
        "edit_file",
        json!({"path": "m.txt", "old_text": "c\nfoo", "new_text": "c\nfoo"}),
    );
    assert!(assert_err(&v, "invalid_arguments").contains("no change"));
}

}
