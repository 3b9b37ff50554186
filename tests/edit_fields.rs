//! `edit_file`'s result fields beyond the counts (issue 18, gap 5): the file's size before
//! and after, how many lines of the original the replaced text touched, and the range of lines
//! of the new file that hold the replacement.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;

#[test]
fn an_edit_reports_sizes_lines_changed_and_the_changed_range() {
    let f = Fixture::new();
    f.write("a.py", "a\nb\nc\n");
    let v = f.call(
        "edit_file",
        json!({"path": "a.py", "old_text": "b\n", "new_text": "B1\nB2\n"}),
    );
    assert_eq!(
        assert_ok(&v),
        &json!({"path": "a.py", "matches": 1, "replaced": 1, "original_size": 6, "new_size": 10,
                "lines_changed": 1, "first_changed_line": 2, "last_changed_line": 3})
    );
    assert_eq!(f.read("a.py"), b"a\nB1\nB2\nc\n");
}

#[test]
fn replace_all_counts_each_touched_line_once() {
    let f = Fixture::new();
    f.write("t.txt", "x x\ny\nx\n");
    let v = f.call(
        "edit_file",
        json!({"path": "t.txt", "old_text": "x", "new_text": "zz", "replace_all": true}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["replaced"], 3);
    assert_eq!(data["original_size"], 8);
    assert_eq!(data["new_size"], 11);
    assert_eq!(data["lines_changed"], 2, "{data}");
    assert_eq!(data["first_changed_line"], 1);
    assert_eq!(data["last_changed_line"], 3);
}

#[test]
fn a_deletion_and_a_multi_line_match_have_their_range() {
    let f = Fixture::new();
    f.write("d.txt", "one\ntwo\nthree\nfour");
    let v = f.call(
        "edit_file",
        json!({"path": "d.txt", "old_text": "two\nthree\n", "new_text": ""}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["lines_changed"], 2, "{data}");
    assert_eq!(data["first_changed_line"], 2);
    assert_eq!(data["last_changed_line"], 2);
    assert_eq!(data["new_size"], 8);
    assert_eq!(f.read("d.txt"), b"one\nfour");
}
