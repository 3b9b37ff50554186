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
