//! Issue 19, "the model's view": what a coding model reads after the calls it gets wrong most
//! often, through the tool calls as a model makes them. Each test names the item it covers.
#![allow(unused_unsafe)]

mod common;

use common::*;
use serde_json::json;

fn text(v: &serde_json::Value) -> String {
    assert_ok(v);
    v["text"].as_str().unwrap().to_owned()
}

/// Item 1: a literal query with regex syntax that finds nothing says so and names the
/// characters; a case-sensitive miss that matches with case ignored says where.
#[test]
fn search_text_misses_say_literal_regex_and_letter_case() {
    let f = Fixture::new();
    f.write(
        "src/main.rs",
        "fn main() {\n    let x = foo(1);\n    Foo::bar();\n}\n",
    );
    let t = text(&f.call("search_text", json!({"query": "foo\\(\\d+"})));
    assert!(t.starts_with("no matches for"), "{t}");
    assert!(t.contains("searched as literal text"), "{t}");
    assert!(t.contains("('\\' '(' '+')"), "{t}");
    assert!(t.contains("set use_regex: true"), "{t}");
    // The same as a regex finds it: the hint was right.
    let t = text(&f.call(
        "search_text",
        json!({"query": "foo\\(\\d+", "use_regex": true}),
    ));
    assert!(t.starts_with("src/main.rs:2:"), "{t}");
    // In regex mode there is nothing to say about regex syntax.
    let t = text(&f.call("search_text", json!({"query": "zz\\d", "use_regex": true})));
    assert!(!t.contains("use_regex"), "{t}");

    let t = text(&f.call("search_text", json!({"query": "foo::bar"})));
    assert!(
        t.contains("with letter case ignored the query matches, e.g. at src/main.rs:3: set case_sensitive: false"),
        "{t}"
    );
    assert!(!t.contains("use_regex"), "{t}");
    // No case-insensitive match: no suggestion; and none when case was already ignored.
    let t = text(&f.call("search_text", json!({"query": "nowhere"})));
    assert!(!t.contains("case_sensitive"), "{t}");
    let t = text(&f.call(
        "search_text",
        json!({"query": "nowhere", "case_sensitive": false}),
    ));
    assert!(!t.contains("case_sensitive"), "{t}");
}

/// Item 9: argument names from other tool sets are answered with the wsfs argument to use,
/// without the list of every field; "true"/"false" strings are booleans.
#[test]
fn foreign_argument_names_name_the_wsfs_argument() {
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\nthree\n");
    for (tool, args, want) in [
        (
            "read_file",
            json!({"file_path": "a.txt", "offset": 2, "limit": 1}),
            vec![
                "`file_path` (use `path`)",
                "`offset` (use `start_line`",
                "`limit` (use `max_lines`",
            ],
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_string": "one", "new_string": "1"}),
            vec![
                "`old_string` (use `old_text`)",
                "`new_string` (use `new_text`)",
            ],
        ),
        (
            "search_text",
            json!({"pattern": "one"}),
            vec!["`pattern` (use `query`"],
        ),
        (
            "write_file",
            json!({"path": "b.txt", "contents": "x"}),
            vec!["`contents` (use `content`)"],
        ),
        (
            "move_file",
            json!({"source": "a.txt", "destination": "c.txt"}),
            vec!["`source` (use `src`)", "`destination` (use `dst`)"],
        ),
    ] {
        let msg = assert_err(&f.call(tool, args), "invalid_arguments");
        for w in want {
            assert!(msg.contains(w), "{tool}: {msg}");
        }
        assert!(
            !msg.contains("expected {"),
            "{tool}: lists every field: {msg}"
        );
    }
    // An unknown name without a known meaning still gets the list of fields.
    let msg = assert_err(
        &f.call("read_file", json!({"path": "a.txt", "zz": 1})),
        "invalid_arguments",
    );
    assert!(
        msg.contains("unknown argument `zz`; expected {\"path\": string"),
        "{msg}"
    );
    // Strings for booleans.
    let t = text(&f.call(
        "read_file",
        json!({"path": "a.txt", "line_numbers": "true", "max_lines": 1}),
    ));
    assert!(t.starts_with("1| one\n"), "{t}");
    let t = text(&f.call(
        "search_text",
        json!({"query": "ONE", "case_sensitive": "false"}),
    ));
    assert!(t.starts_with("a.txt:1:1: one"), "{t}");
    // Other strings are still refused.
    let msg = assert_err(
        &f.call("search_text", json!({"query": "one", "use_regex": "yes"})),
        "invalid_arguments",
    );
    assert!(msg.contains("expected a boolean"), "{msg}");
}

/// Item 2: a plain read over `max_read_bytes` is cut at a line boundary and ends with the
/// exact next call; a range's hint repeats the page size (and numbering) the caller asked for.
#[test]
fn cut_reads_end_at_a_line_and_name_the_exact_next_call() {
    let f = Fixture::with_config(json!({"limits": {"max_read_bytes": 40}}));
    let body: String = (1..=10).map(|i| format!("line number {i:02}\n")).collect(); // 15 bytes each
    f.write("a.txt", &body);
    let v = f.call("read_file", json!({"path": "a.txt"}));
    let t = text(&v);
    assert_eq!(
        t,
        "line number 01\nline number 02\n[truncated: showing lines 1-2 (30 of 150 bytes); max_read_bytes is 40; continue with start_line=3]"
    );
    assert_eq!(v["data"]["next_start_line"], json!(3));
    assert_eq!(v["data"]["bytes"], json!(30));
    // The next call as named goes on exactly there.
    let t = text(&f.call("read_file", json!({"path": "a.txt", "start_line": 3})));
    assert!(
        t.starts_with("line number 03\nline number 04\n[lines 3-4 of 10;"),
        "{t}"
    );
    // One line longer than the limit: cut inside it, and the next call skips to line 2.
    f.write("long.txt", format!("{}\nshort\n", "x".repeat(100)));
    let v = f.call("read_file", json!({"path": "long.txt"}));
    assert_eq!(
        text(&v),
        format!("{}\n[truncated: line 1 is longer than max_read_bytes (40): only its first 40 of 107 bytes are shown; continue with start_line=2]", "x".repeat(40))
    );
    assert_eq!(v["data"]["next_start_line"], json!(2));
    // A whole read has no next line.
    f.write("small.txt", "one\n");
    assert!(f.call("read_file", json!({"path": "small.txt"}))["data"]
        .get("next_start_line")
        .is_none());

    // Ranges: the hint repeats max_lines and line_numbers as given.
    let t = text(&f.call(
        "read_file",
        json!({"path": "a.txt", "start_line": 1, "max_lines": 2}),
    ));
    assert!(
        t.ends_with("[lines 1-2 of 10; continue with start_line=3, max_lines=2]"),
        "{t}"
    );
    let t = text(&f.call(
        "read_file",
        json!({"path": "a.txt", "start_line": 3, "max_lines": 1, "line_numbers": true}),
    ));
    assert!(
        t.ends_with("[line 3 of 10; continue with start_line=4, max_lines=1, line_numbers=true]"),
        "{t}"
    );
    // Without max_lines the hint names none.
    let t = text(&f.call("read_file", json!({"path": "a.txt", "start_line": 9})));
    assert!(t.ends_with("[lines 9-10 of 10; end of file]"), "{t}");
}
