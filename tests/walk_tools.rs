//! The walking tools through the C ABI: `list_dir` with a depth, `find_files`, `search_text`.
//! Happy paths, limits and truncation, hidden files, `.gitignore`, `.git`, binary files,
//! huge lines, invalid regexes, symlinks inside and outside, special files.

use crate::common::*;
use serde_json::{json, Value};
use std::fs;

fn named(f: &Fixture, tool: &str, args: Value) -> Value {
    call_named(f.ws, tool, &args.to_string())
}

fn files(v: &Value) -> Vec<String> {
    assert_ok(v)["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files: {}", short(v)))
        .iter()
        .map(|f| f.as_str().unwrap().to_owned())
        .collect()
}

/// `file:line` of every match.
fn hits(v: &Value) -> Vec<String> {
    assert_ok(v)["matches"]
        .as_array()
        .unwrap_or_else(|| panic!("no matches: {}", short(v)))
        .iter()
        .map(|m| format!("{}:{}", m["file"].as_str().unwrap(), m["line"]))
        .collect()
}

/// A small project: sources, a .gitignore with a directory rule and a negation, a nested
/// .gitignore, hidden files, a .git directory, a binary file.
fn project() -> Fixture {
    let f = Fixture::new();
    f.write("src/main.rs", "fn main() {\n    println!(\"needle\");\n}\n");
    f.write("src/lib.rs", "// needle in lib\npub fn f() {}\n");
    f.write("src/a/test_x.py", "needle = 1\n");
    f.write("src/a/b/test_y.py", "x = 2\n");
    f.write("a.rs", "needle top\n");
    f.write(".gitignore", "target/\n*.log\n!keep.log\n");
    f.write("target/out.rs", "needle in target\n");
    f.write("debug.log", "needle log\n");
    f.write("keep.log", "needle kept\n");
    f.write("sub/.gitignore", "gen_*.rs\n!gen_keep.rs\n");
    f.write("sub/gen_a.rs", "needle generated\n");
    f.write("sub/gen_keep.rs", "needle generated but kept\n");
    f.write(".hidden/h.rs", "needle hidden\n");
    f.write(".env", "needle=secret\n");
    f.write(".git/config", "needle in git\n");
    f.write("bin.dat", b"needle\0\x01\x02binary");
    f
}

crate::backend_tests! {
#[test]
fn plain_list_dir_is_unchanged() {
    let f = project();
    let v = f.call("list_dir", json!({"path": "."}));
    let d = assert_ok(&v);
    assert!(d.get("tree").is_none(), "{}", short(&v));
    let names: Vec<&str> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            ".env",
            ".git",
            ".gitignore",
            ".hidden",
            "a.rs",
            "bin.dat",
            "debug.log",
            "keep.log",
            "src",
            "sub",
            "target"
        ]
    );
    assert_eq!(d["total"], json!(11));
}

#[test]
fn list_dir_tree_is_breadth_first_sorted_and_skips_git() {
    let f = project();
    f.symlink("src", "link");
    // Everything, .gitignore'd names included (a tree's default leaves them out: see
    // tests/model_view.rs).
    let v = f.call(
        "list_dir",
        json!({"path": ".", "depth": 3, "respect_gitignore": false}),
    );
    let d = assert_ok(&v);
    let tree = &d["tree"];
    assert_eq!(tree["name"], json!("."));
    assert_eq!(tree["type"], json!("dir"));
    let top: Vec<&str> = tree["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        top,
        [
            ".env",
            ".git",
            ".gitignore",
            ".hidden",
            "a.rs",
            "bin.dat",
            "debug.log",
            "keep.log",
            "link",
            "src",
            "sub",
            "target"
        ]
    );
    let child = |name: &str| {
        tree["children"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["name"] == json!(name))
            .unwrap()
            .clone()
    };
    // .git is shown but never entered; the symlink is not followed.
    assert_eq!(child(".git")["type"], json!("dir"));
    assert!(child(".git").get("children").is_none(), "{}", short(&v));
    assert_eq!(child("link")["type"], json!("symlink"));
    assert!(child("link").get("children").is_none());
    assert_eq!(child("a.rs")["size"], json!(11));
    let src = child("src");
    let a = src["children"].as_array().unwrap()[0].clone();
    assert_eq!(a["name"], json!("a"));
    // depth 3: src/a/b is listed, its content is not.
    let b = a["children"].as_array().unwrap()[0].clone();
    assert_eq!(b["name"], json!("b"));
    assert!(b.get("children").is_none());
    // ... and marked as not listed, in data and text (not an empty directory).
    assert_eq!(b["listed"], json!(false));
    assert_eq!(child(".git")["listed"], json!(false));
    assert_eq!(d["truncated"], json!(false));
    assert_eq!(d["entries"], json!([]));
    // total counts the tree's entries.
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with(". ("), "{text}");
    assert!(text.contains("\n  src/\n    a/\n      b/ …\n"), "{text}");
    assert!(text.contains("\n  link@\n"), "{text}");
    // One entry a line, then the line on the depth limit.
    let last = text.lines().last().unwrap();
    assert!(last.contains("at the depth limit (3)"), "{text}");
    assert_eq!(
        d["total"].as_u64().unwrap() as usize,
        text.lines().count() - 2,
        "{text}"
    );
}

#[test]
fn list_dir_tree_truncates_breadth_first_and_says_how_to_narrow() {
    let f = Fixture::with_config(limits(json!({"max_list_entries": 6})));
    for d in ["a", "b", "c"] {
        for i in 0..4 {
            f.write(&format!("{d}/f{i}"), "x");
        }
    }
    let v = f.call("list_dir", json!({"depth": 2, "max_entries": 1000}));
    let d = assert_ok(&v);
    assert_eq!(
        d["total"],
        json!(6),
        "clamped to max_list_entries: {}",
        short(&v)
    );
    assert_eq!(d["truncated"], json!(true));
    let kids = d["tree"]["children"].as_array().unwrap();
    assert_eq!(kids.len(), 3);
    // Level 1 first, then a's first three entries; a is cut, b and c are not listed.
    assert_eq!(kids[0]["children"].as_array().unwrap().len(), 3);
    assert_eq!(kids[0]["truncated"], json!(true));
    assert!(kids[1].get("children").is_none());
    assert_eq!(kids[1]["truncated"], json!(true));
    let text = v["text"].as_str().unwrap();
    assert!(text.contains("[truncated: showing 6 entries"), "{text}");
    assert!(text.contains("lower depth"), "{text}");
    assert!(text.contains("... 1 more entry"), "{text}");
    let v = f.call("list_dir", json!({"depth": 2, "max_entries": 2}));
    assert_eq!(assert_ok(&v)["total"], json!(2));
}

#[test]
fn list_dir_filters_hidden_and_gitignored() {
    let f = project();
    let v = f.call(
        "list_dir",
        json!({"include_hidden": false, "respect_gitignore": true}),
    );
    let names: Vec<String> = assert_ok(&v)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(names, ["a.rs", "bin.dat", "keep.log", "src", "sub"]);
    let v = f.call(
        "list_dir",
        json!({"depth": 2, "include_hidden": false, "respect_gitignore": true}),
    );
    let text = assert_ok(&v);
    let sub = text["tree"]["children"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["name"] == json!("sub"))
        .unwrap();
    let names: Vec<&str> = sub["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["gen_keep.rs"], "nested .gitignore with a negation");
}

#[test]
fn list_dir_argument_errors() {
    let f = project();
    for depth in [0, 61] {
        let v = f.call("list_dir", json!({"depth": depth}));
        let msg = assert_err(&v, "invalid_arguments");
        assert!(msg.contains("60"), "{msg}");
    }
    let v = f.call("list_dir", json!({"path": "a.rs", "depth": 2}));
    assert_err(&v, "not_a_directory");
    let v = f.call("list_dir", json!({"path": "..", "depth": 2}));
    assert_err(&v, "outside_workspace");
    let v = f.call("list_dir", json!({"depth": 2, "nope": 1}));
    assert_err(&v, "invalid_arguments");
}

#[test]
fn find_files_globs_in_path_order() {
    let f = project();
    let v = named(&f, "find_files", json!({"pattern": "**/*.rs"}));
    // Sorted by path (a directory's content right after its name), hidden and ignored left
    // out, sub/gen_keep.rs re-included by the nested negation.
    assert_eq!(
        files(&v),
        ["a.rs", "src/lib.rs", "src/main.rs", "sub/gen_keep.rs"]
    );
    assert_eq!(
        files(&named(&f, "find_files", json!({"pattern": "*.rs"}))),
        files(&v)
    );
    let v = named(&f, "find_files", json!({"pattern": "src/**/test_*.py"}));
    assert_eq!(files(&v), ["src/a/b/test_y.py", "src/a/test_x.py"]);
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "**/*.py", "path": "src/a/b"}),
    );
    assert_eq!(files(&v), ["src/a/b/test_y.py"]);
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "b/*.py", "path": "src/a"}),
    );
    assert_eq!(files(&v), ["src/a/b/test_y.py"], "relative to path too");
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "**/*.rs", "include_hidden": true, "respect_gitignore": false}),
    );
    assert_eq!(
        files(&v),
        [
            ".hidden/h.rs",
            "a.rs",
            "src/lib.rs",
            "src/main.rs",
            "sub/gen_a.rs",
            "sub/gen_keep.rs",
            "target/out.rs"
        ]
    );
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "*", "include_hidden": true}),
    );
    assert!(
        !files(&v).iter().any(|p| p.starts_with(".git/")),
        "{}",
        short(&v)
    );
    assert!(files(&v).contains(&".env".to_owned()));
    let d = assert_ok(&v);
    assert!(d["files_scanned"].as_u64().unwrap() >= files(&v).len() as u64);
}

#[test]
fn find_files_limits_and_errors() {
    let f = Fixture::new();
    for i in 0..30 {
        f.write(&format!("d/f{i:02}.txt"), "");
    }
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "**/*.txt", "max_results": 5}),
    );
    assert_eq!(
        files(&v),
        [
            "d/f00.txt",
            "d/f01.txt",
            "d/f02.txt",
            "d/f03.txt",
            "d/f04.txt"
        ]
    );
    assert_eq!(assert_ok(&v)["truncated"], json!(true));
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("[truncated: showing the first 5"));
    let v = named(
        &f,
        "find_files",
        json!({"pattern": "**/*.txt", "max_results": 30}),
    );
    assert_eq!(
        assert_ok(&v)["truncated"],
        json!(false),
        "exactly the cap is not truncated"
    );
    let v = named(&f, "find_files", json!({"pattern": "**/*.nothing"}));
    assert!(
        v["text"].as_str().unwrap().starts_with("no files match"),
        "{}",
        short(&v)
    );
    assert_err(
        &named(&f, "find_files", json!({"pattern": "a["})),
        "invalid_arguments",
    );
    assert_err(
        &named(&f, "find_files", json!({"pattern": ""})),
        "invalid_arguments",
    );
    assert_err(
        &named(&f, "find_files", json!({"pattern": "*", "max_results": 0})),
        "invalid_arguments",
    );
    assert_err(
        &named(
            &f,
            "find_files",
            json!({"pattern": "*", "path": "d/f00.txt"}),
        ),
        "not_a_directory",
    );
    assert_err(
        &named(&f, "find_files", json!({"pattern": "*", "path": "../"})),
        "outside_workspace",
    );
    assert_err(
        &named(&f, "find_files", json!({"pattern": "*", "path": "missing"})),
        "path_not_found",
    );
    assert_err(&named(&f, "find_files", json!({})), "invalid_arguments");
}

#[test]
fn search_text_literal_regex_case_glob_and_single_file() {
    let f = project();
    let v = named(&f, "search_text", json!({"query": "needle"}));
    assert_eq!(
        hits(&v),
        [
            "a.rs:1",
            "keep.log:1",
            "src/a/test_x.py:1",
            "src/lib.rs:1",
            "src/main.rs:2",
            "sub/gen_keep.rs:1"
        ],
        "bin.dat is binary, debug.log and target/ ignored, hidden skipped"
    );
    let d = assert_ok(&v);
    assert_eq!(d["binary_files_skipped"], json!(1));
    let m = &d["matches"][4];
    assert_eq!(m["snippet"], json!("    println!(\"needle\");"));
    assert_eq!(m["column"], json!(15));
    assert_eq!(
        (m["match_start"].clone(), m["match_end"].clone()),
        (json!(14), json!(20))
    );
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("src/main.rs:2:15:     println!(\"needle\");"));
    // Literal mode does not interpret regex syntax.
    f.write("dots.txt", "a.c\nabc\n");
    let v = named(&f, "search_text", json!({"query": "a.c"}));
    assert_eq!(hits(&v), ["dots.txt:1"]);
    let v = named(
        &f,
        "search_text",
        json!({"query": "a.c", "use_regex": true}),
    );
    assert_eq!(hits(&v), ["dots.txt:1", "dots.txt:2"]);
    let v = named(
        &f,
        "search_text",
        json!({"query": "NEEDLE", "case_sensitive": false, "glob": "src/*.rs"}),
    );
    assert_eq!(hits(&v), ["src/lib.rs:1", "src/main.rs:2"]);
    let v = named(&f, "search_text", json!({"query": "NEEDLE"}));
    assert!(hits(&v).is_empty());
    assert!(v["text"].as_str().unwrap().starts_with("no matches"));
    // An explicit file is searched whatever the filters say.
    let v = named(
        &f,
        "search_text",
        json!({"query": "needle", "path": "debug.log"}),
    );
    assert_eq!(hits(&v), ["debug.log:1"]);
    let v = named(
        &f,
        "search_text",
        json!({"query": "needle", "include_hidden": true, "respect_gitignore": false}),
    );
    let h = hits(&v);
    assert!(h.contains(&".env:1".to_owned()) && h.contains(&"target/out.rs:1".to_owned()));
    assert!(
        !h.iter().any(|x| x.starts_with(".git/")),
        "never inside .git: {h:?}"
    );
}

#[test]
fn search_text_context_limits_and_truncation() {
    let f = Fixture::new();
    let body: String = (1..=20)
        .map(|i| format!("line {i}{}\n", if i % 5 == 0 { " hit" } else { "" }))
        .collect();
    f.write("a.txt", &body);
    let v = named(
        &f,
        "search_text",
        json!({"query": "hit", "context_lines": 2}),
    );
    let d = assert_ok(&v);
    assert_eq!(d["matches"][0]["before"], json!(["line 3", "line 4"]));
    assert_eq!(d["matches"][0]["after"], json!(["line 6", "line 7"]));
    assert!(
        d["matches"][3].get("after").is_none(),
        "no lines after the last one"
    );
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("a.txt-4- line 4\na.txt:5:8: line 5 hit\na.txt-6- line 6"));
    let v = named(&f, "search_text", json!({"query": "hit", "max_matches": 2}));
    assert_eq!(hits(&v), ["a.txt:5", "a.txt:10"]);
    assert_eq!(assert_ok(&v)["truncated"], json!(true));
    let v = named(&f, "search_text", json!({"query": "hit", "max_matches": 4}));
    assert_eq!(assert_ok(&v)["truncated"], json!(false));
    for (args, code) in [
        (json!({"query": ""}), "invalid_arguments"),
        (json!({"query": "a\nb"}), "invalid_arguments"),
        (json!({"query": "x".repeat(5000)}), "invalid_arguments"),
        (
            json!({"query": "x", "context_lines": 11}),
            "invalid_arguments",
        ),
        (json!({"query": "x", "max_matches": 0}), "invalid_arguments"),
        (json!({"query": "x", "glob": "a["}), "invalid_arguments"),
        (json!({"query": "x", "path": "nope"}), "path_not_found"),
        (json!({"query": "x", "path": "/etc"}), "outside_workspace"),
    ] {
        assert_err(&named(&f, "search_text", args), code);
    }
}

#[test]
fn invalid_regex_quotes_the_parser() {
    let f = project();
    let v = named(
        &f,
        "search_text",
        json!({"query": "fn (main", "use_regex": true}),
    );
    let msg = assert_err(&v, "invalid_regex");
    assert!(
        msg.contains("unclosed group") && msg.contains("fn (main"),
        "{msg}"
    );
    let v = named(
        &f,
        "search_text",
        json!({"query": "a{1000}{1000}", "use_regex": true}),
    );
    let msg = assert_err(&v, "invalid_regex");
    assert!(msg.contains("size limit"), "{msg}");
    // The same text as a literal is fine.
    assert_ok(&named(&f, "search_text", json!({"query": "fn (main"})));
}

#[test]
fn long_lines_are_cut_and_huge_lines_skip_the_file() {
    let f = Fixture::new();
    let line = format!("{}NEEDLE{}\n", "é".repeat(3000), "x".repeat(3000));
    f.write("long.txt", &line);
    let mut huge = "y".repeat(3 << 20);
    huge.push_str("NEEDLE\n");
    f.write("huge.txt", &huge);
    let v = named(&f, "search_text", json!({"query": "NEEDLE"}));
    let d = assert_ok(&v);
    assert_eq!(hits(&v), ["long.txt:1"]);
    let m = &d["matches"][0];
    let snippet = m["snippet"].as_str().unwrap();
    assert_eq!(snippet.chars().count(), 200);
    assert_eq!(m["column"], json!(3001));
    let (s, e) = (
        m["match_start"].as_u64().unwrap() as usize,
        m["match_end"].as_u64().unwrap() as usize,
    );
    assert_eq!(
        snippet.chars().skip(s).take(e - s).collect::<String>(),
        "NEEDLE"
    );
    assert_eq!(d["files_skipped"], json!(1), "{}", short(&v));
    assert!(v["text"]
        .as_str()
        .unwrap()
        .contains("could not be searched"));
}

#[test]
fn symlinks_are_never_followed() {
    let f = Fixture::new();
    let outside = f.base.join("outside");
    fs::create_dir_all(outside.join("deep")).unwrap();
    let canary = format!("canary-{}", token());
    fs::write(outside.join("deep/c.txt"), &canary).unwrap();
    fs::write(outside.join("c.txt"), &canary).unwrap();
    f.write("in/real.txt", "inside\n");
    f.symlink(&outside, "abs_out");
    f.symlink("../outside", "rel_out");
    f.symlink("in", "in_link");
    f.symlink("../outside/c.txt", "file_out");
    let v = named(
        &f,
        "search_text",
        json!({"query": canary, "include_hidden": true, "respect_gitignore": false}),
    );
    assert!(hits(&v).is_empty(), "{}", short(&v));
    let v = named(&f, "search_text", json!({"query": "inside"}));
    assert_eq!(
        hits(&v),
        ["in/real.txt:1"],
        "in-workspace links are not followed either"
    );
    let v = named(&f, "find_files", json!({"pattern": "**/*"}));
    assert_eq!(
        files(&v),
        ["abs_out", "file_out", "in/real.txt", "in_link", "rel_out"]
    );
    let v = f.call("list_dir", json!({"depth": 5}));
    let text = v["text"].as_str().unwrap();
    assert!(!text.contains("c.txt") && !text.contains("deep"), "{text}");
    assert!(text.contains("rel_out@"), "{text}");
    // A symlinked search root inside the workspace resolves like every tool's path.
    let v = named(
        &f,
        "search_text",
        json!({"query": "inside", "path": "in_link"}),
    );
    assert_eq!(hits(&v), ["in_link/real.txt:1"]);
    assert_err(
        &named(&f, "search_text", json!({"query": "x", "path": "rel_out"})),
        "outside_workspace",
    );
}

#[test]
fn special_files_never_block_a_walk() {
    let f = Fixture::new();
    f.write("d/a.txt", "needle\n");
    f.mkfifo("d/fifo");
    f.mkfifo("d/zfifo.txt");
    let ws = f.ws;
    let v = with_watchdog(20, "search over a FIFO", move || {
        call_named(ws, "search_text", r#"{"query":"needle"}"#)
    });
    assert_eq!(hits(&v), ["d/a.txt:1"]);
    let v = with_watchdog(20, "find over a FIFO", move || {
        call_named(ws, "find_files", r#"{"pattern":"**/*"}"#)
    });
    assert_eq!(files(&v), ["d/a.txt"], "special files are not files");
    let v = with_watchdog(20, "tree over a FIFO", move || {
        call_named(ws, "list_dir", r#"{"depth":3}"#)
    });
    assert!(v["text"].as_str().unwrap().contains("fifo  (special file)"));
    let v = with_watchdog(20, "search of a FIFO path", move || {
        call_named(ws, "search_text", r#"{"query":"x","path":"d/fifo"}"#)
    });
    assert_err(&v, "not_a_file");
}

#[test]
fn deadlines_stop_large_walks() {
    let f = Fixture::new();
    for d in 0..40 {
        for i in 0..100 {
            f.write(&format!("d{d}/f{i}.txt"), "some text\n");
        }
    }
    for (tool, args) in [
        ("search_text", r#"{"query":"nothing here"}"#),
        ("find_files", r#"{"pattern":"**/*.none"}"#),
        ("list_dir", r#"{"depth":5}"#),
    ] {
        let v = call_opts(f.ws, tool, args, Some(r#"{"timeout_ms":0}"#));
        assert_err(&v, "timeout");
        let t = std::time::Instant::now();
        let v = call_opts(f.ws, tool, args, Some(r#"{"timeout_ms":2}"#));
        assert!(
            v["ok"] == json!(true) || err_code(&v) == Some("timeout"),
            "{}",
            short(&v)
        );
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{tool} overran its deadline"
        );
    }
}

#[test]
fn utf16_files_with_a_bom_are_searched_as_text() {
    let f = Fixture::new();
    let mut bytes = vec![0xff, 0xfe];
    for u in "hi needle\n".encode_utf16() {
        bytes.extend_from_slice(&u.to_le_bytes());
    }
    f.write("u16.txt", bytes);
    let v = named(&f, "search_text", json!({"query": "needle"}));
    assert_eq!(hits(&v), ["u16.txt:1"]);
    assert_eq!(assert_ok(&v)["matches"][0]["snippet"], json!("hi needle"));
}

}
