//! Issue 19, "the model's view": what a coding model reads after the calls it gets wrong most
//! often, through the tool calls as a model makes them. Each test names the item it covers.
#![allow(unused_unsafe)]

use crate::common::*;
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

/// Item 4: an edit or a patch sent twice says it looks applied, with the line.
#[test]
fn an_edit_or_patch_sent_twice_says_it_looks_applied() {
    let f = Fixture::new();
    f.write("a.py", "def f():\n    a = 1\n    return a\n");
    let edit =
        json!({"path": "a.py", "old_text": "    a = 1\n", "new_text": "    a = 2\n    b = 3\n"});
    assert_ok(&f.call("edit_file", edit.clone()));
    let msg = assert_err(&f.call("edit_file", edit), "edit_not_found");
    assert!(
        msg.contains("new_text is already there, at lines 2-3: the edit looks applied already"),
        "{msg}"
    );
    assert!(msg.contains("read_file with start_line=2"), "{msg}");
    assert_eq!(
        f.read("a.py"),
        b"def f():\n    a = 2\n    b = 3\n    return a\n"
    );
    // A new_text that old_text holds says nothing of the kind.
    let msg = assert_err(
        &f.call(
            "edit_file",
            json!({"path": "a.py", "old_text": "return a + 1", "new_text": "return a"}),
        ),
        "edit_not_found",
    );
    assert!(!msg.contains("looks applied"), "{msg}");

    let patch = "*** Begin Patch\n*** Update File: a.py\n@@\n def f():\n-    a = 2\n+    a = 5\n*** End Patch\n";
    let v = f.call("apply_patch", json!({"patch": patch}));
    assert_eq!(assert_ok(&v)["applied"], json!(true));
    let v = f.call("apply_patch", json!({"patch": patch}));
    assert_eq!(assert_ok(&v)["applied"], json!(false));
    let t = v["text"].as_str().unwrap();
    assert!(
        t.contains("context_not_found: its old lines are not in the file, but its result is, at line 1: the patch looks applied already"),
        "{t}"
    );
    assert_eq!(v["data"]["rejected_hunks"][0]["nearest_line"], json!(1));
}

/// Item 7: context_not_found shows the file's lines at the most similar place, marked as
/// edit_file marks them, and the read_file call that shows them.
#[test]
fn context_not_found_shows_the_most_similar_place_and_the_call_that_reads_it() {
    let f = Fixture::new();
    f.write(
        "p.py",
        "import os\n\ndef f():\n    a = 1\n\tb = 2  \n    return a\n",
    );
    let patch = "*** Begin Patch\n*** Update File: p.py\n@@\n def f():\n-    a = 10\n-    c = 2\n+    a = 3\n*** End Patch\n";
    let v = f.call("apply_patch", json!({"patch": patch}));
    let t = v["text"].as_str().unwrap().to_owned();
    assert!(t.starts_with("PATCH NOT APPLIED"), "{t}");
    assert!(
        t.contains(
            "  the file at lines 3-5 (read_file with start_line=3, max_lines=3 shows them):\n    3| def f():\n    4|     a = 1\n    5| →b = 2··\n    (→ is a tab, · a trailing space, ␍ a carriage return)"
        ),
        "{t}"
    );
    // The call named shows exactly those lines.
    let r = f.call(
        "read_file",
        json!({"path": "p.py", "start_line": 3, "max_lines": 3}),
    );
    assert!(
        text(&r).starts_with("def f():\n    a = 1\n\tb = 2  \n[lines 3-5 of 6;"),
        "{}",
        text(&r)
    );
}

/// Item 8: an old_text that differs only in line endings is matched with the file's (which
/// it keeps, and the result says so); a spacing-only miss names the exact columns.
#[test]
fn line_endings_are_matched_and_spacing_misses_name_the_columns() {
    let f = Fixture::new();
    f.write("crlf.rs", "fn main() {\r\n    let x = foo(1, 2);\r\n}\r\n");
    let v = f.call(
        "edit_file",
        json!({"path": "crlf.rs", "old_text": "fn main() {\n    let x = foo(1, 2);\n", "new_text": "fn main() {\n    let x = foo(3, 4);\n    y();\n"}),
    );
    let t = text(&v);
    assert!(t.starts_with("replaced 1 occurrence in crlf.rs"), "{t}");
    assert!(
        t.contains("old_text and new_text have LF line endings and the file has CRLF: they were matched and written with the file's, which it keeps"),
        "{t}"
    );
    assert_eq!(v["warnings"].as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        f.read("crlf.rs"),
        b"fn main() {\r\n    let x = foo(3, 4);\r\n    y();\r\n}\r\n"
    );
    // The reverse: CRLF sent, LF on disk.
    f.write("lf.rs", "a\nb\nc\n");
    let v = f.call(
        "edit_file",
        json!({"path": "lf.rs", "old_text": "a\r\nb\r\n", "new_text": "A\r\nB\r\n"}),
    );
    assert!(
        text(&v).contains("have CRLF line endings and the file has LF"),
        "{v}"
    );
    assert_eq!(f.read("lf.rs"), b"A\nB\nc\n");

    f.write(
        "sp.rs",
        "fn f() {\n    let y = bar(a,b);\n    if y  == 2 { z(); }\n}\n",
    );
    let msg = assert_err(
        &f.call("edit_file", json!({"path": "sp.rs", "old_text": "let y = bar(a, b);\n    if y == 2 {", "new_text": "x"})),
        "edit_not_found",
    );
    assert!(
        msg.contains("The text at lines 2-3 matches it except for spacing inside lines:\nline 2, column 19: the file has none where old_text has 1 space; line 3, column 9: the file has 2 spaces where old_text has 1 space\n"),
        "{msg}"
    );
    assert_eq!(
        f.read("sp.rs"),
        b"fn f() {\n    let y = bar(a,b);\n    if y  == 2 { z(); }\n}\n"
    );
}

/// Item 10: the paths rule is said once (wsfs_tool_instructions) and each spec keeps one short
/// clause; no spec points to a file the model cannot read; apply_patch's file_hash comes from
/// something the model sees (get_path_info's text), and that hash works.
#[test]
fn specs_say_the_paths_rule_once_and_only_what_the_model_can_see() {
    let specs = take_json(wsfs::ffi::wsfs_tool_specs());
    let instructions = take_string(wsfs::ffi::wsfs_tool_instructions());
    assert!(
        instructions.contains("Paths are relative to the workspace root ('.' is the root)"),
        "{instructions}"
    );
    assert!(instructions
        .contains("'..' above the root and symlinks leading outside the workspace are refused"));
    let all = specs.to_string();
    assert!(
        !all.contains("above the root and symlinks"),
        "the paths rule is repeated in the specs"
    );
    assert!(
        !all.contains("docs/patch_vs_write"),
        "a spec points to a file the model cannot read"
    );
    for spec in specs.as_array().unwrap() {
        let d = spec["description"].as_str().unwrap();
        assert!(
            d.ends_with(" Paths are relative to the workspace root."),
            "{}: {d}",
            spec["name"]
        );
    }
    let apply = specs
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "apply_patch")
        .unwrap();
    let file_hash = apply["parameters"]["properties"]["files"]["items"]["properties"]["file_hash"]
        ["description"]
        .as_str()
        .unwrap();
    assert!(file_hash.contains("get_path_info"), "{file_hash}");
    // The hash as the model sees it in get_path_info's text guards a `files` edit.
    let f = Fixture::new();
    f.write("a.txt", "one\ntwo\n");
    let info = text(&f.call("get_path_info", json!({"path": "a.txt"})));
    let sha = info
        .split_whitespace()
        .skip_while(|w| *w != "sha256")
        .nth(1)
        .unwrap_or_else(|| panic!("no sha256 in {info}"))
        .to_string();
    let v = f.call(
        "apply_patch",
        json!({"files": [{"path": "a.txt", "file_hash": sha, "hunks": [{"start_line": 2, "end_line": 2, "replace_with": "TWO"}]}]}),
    );
    assert_eq!(assert_ok(&v)["applied"], json!(true), "{v}");
    assert_eq!(f.read("a.txt"), b"one\nTWO\n");
}

/// Item 5: a tree of a real repository leaves out what .gitignore ignores by default (and
/// says how much), never enters .git, and shows everything when asked.
#[test]
fn trees_respect_gitignore_by_default_and_count_what_they_hid() {
    let f = Fixture::new();
    f.write(".gitignore", "node_modules/\n*.log\n");
    f.write(".git/objects/ab/cdef", "x");
    f.write("node_modules/left-pad/index.js", "x");
    f.write("src/main.go", "package main\n");
    f.write("debug.log", "x");
    let v = f.call("list_dir", json!({"depth": 3}));
    let t = text(&v);
    assert!(
        !t.contains("node_modules") && !t.contains("debug.log"),
        "{t}"
    );
    assert!(!t.contains("objects"), "{t}");
    assert!(t.contains(".git/ (not entered"), "{t}");
    assert!(
        t.contains(
            "(2 entries were ignored by .gitignore; set respect_gitignore=false to include them)"
        ),
        "{t}"
    );
    assert_eq!(v["data"]["ignored"], json!(2));
    // Asked: everything but .git's inside.
    let v = f.call("list_dir", json!({"depth": 3, "respect_gitignore": false}));
    let t = text(&v);
    assert!(t.contains("node_modules/\n    left-pad/"), "{t}");
    assert!(t.contains("debug.log"), "{t}");
    assert!(!t.contains("objects"), "{t}");
    assert!(v["data"].get("ignored").is_none());
    // One level still lists everything, as ls does.
    let t = text(&f.call("list_dir", json!({})));
    assert!(
        t.contains("node_modules/") && t.contains("debug.log"),
        "{t}"
    );
    // .git itself, named: listed.
    let t = text(&f.call("list_dir", json!({"path": ".git", "depth": 2})));
    assert!(t.contains("objects/"), "{t}");
}

/// Item 6: a directory at the depth limit is marked, not shown like an empty one; one line
/// says how to see deeper; the JSON node says `listed: false`.
#[test]
fn a_directory_at_the_depth_limit_is_marked_and_says_how_to_see_deeper() {
    let f = Fixture::new();
    f.write("a/b/c.txt", "x");
    std::fs::create_dir_all(f.p("a/empty")).unwrap();
    let v = f.call("list_dir", json!({"depth": 2}));
    let t = text(&v);
    assert!(t.contains("\n  a/\n    b/ …\n    empty/ …\n"), "{t}");
    assert!(
        t.contains("[2 directories at the depth limit (2) are marked '…': their entries are not listed; list one of them, or raise depth (at most 60), to see deeper]"),
        "{t}"
    );
    let a = &v["data"]["tree"]["children"][0];
    assert_eq!(a["children"][0]["name"], json!("b"));
    assert_eq!(a["children"][0]["listed"], json!(false));
    assert!(a["children"][0].get("children").is_none());
    // Listed and empty: no mark.
    let v = f.call("list_dir", json!({"depth": 3}));
    let t = text(&v);
    assert!(t.ends_with("\n    empty/"), "{t}");
    assert!(!t.contains("…"), "{t}");
    let empty = &v["data"]["tree"]["children"][0]["children"][1];
    assert_eq!(empty["children"], json!([]));
    assert!(empty.get("listed").is_none());
}

/// Item 3: path_not_found for a name that exists elsewhere in the workspace names it; the
/// search leaves out what the policy denies, what .gitignore ignores, and stays bounded.
#[test]
fn path_not_found_names_the_same_file_elsewhere_in_the_workspace() {
    let f = Fixture::with_config(json!({"policy": {"deny_read": ["secret/**"]}}));
    f.write("src/main.go", "package main\n");
    f.write("cmd/tool/main.go", "package main\n");
    f.write("secret/config.yaml", "token: x\n");
    f.write(".gitignore", "node_modules/\n");
    f.write("node_modules/pkg/main.go", "x\n");
    let msg = assert_err(
        &f.call("read_file", json!({"path": "main.go"})),
        "path_not_found",
    );
    assert!(
        msg.ends_with("; did you mean cmd/tool/main.go or src/main.go?"),
        "{msg}"
    );
    // The path's trailing names rank the candidates.
    let msg = assert_err(
        &f.call("read_file", json!({"path": "app/tool/main.go"})),
        "path_not_found",
    );
    assert!(
        msg.ends_with("; did you mean cmd/tool/main.go or src/main.go?"),
        "{msg}"
    );
    // Letter case aside, and for any tool that reports path_not_found.
    let msg = assert_err(
        &f.call(
            "edit_file",
            json!({"path": "MAIN.go", "old_text": "a", "new_text": "b"}),
        ),
        "path_not_found",
    );
    assert!(
        msg.contains("did you mean cmd/tool/main.go or src/main.go?"),
        "{msg}"
    );
    // A denied path is never named.
    let msg = assert_err(
        &f.call("read_file", json!({"path": "config.yaml"})),
        "path_not_found",
    );
    assert!(!msg.contains("secret"), "{msg}");
    assert!(!msg.contains("did you mean"), "{msg}");
    // Bounded: a large tree answers quickly.
    for i in 0..3000 {
        f.write(&format!("big/d{}/f{i}.txt", i % 50), "");
    }
    let started = std::time::Instant::now();
    let msg = assert_err(
        &f.call("read_file", json!({"path": "nowhere.txt"})),
        "path_not_found",
    );
    assert!(!msg.contains("did you mean"), "{msg}");
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
