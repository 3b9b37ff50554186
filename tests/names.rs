//! Finding 7: file names that are not UTF-8 are listed in a reversible escaped form (`\xNN`)
//! that every tool accepts back, and no two names are ever listed alike.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::ffi::OsStr;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

fn raw(f: &Fixture, name: &[u8]) -> PathBuf {
    f.disk_path("").join(OsStr::from_bytes(name))
}

crate::backend_tests! {
#[test]
fn non_utf8_names_are_listed_distinctly_and_can_be_named_back() {
    let f = Fixture::new();
    fs::write(raw(&f, b"caf\xe9.txt"), "latin-1 e acute\n").unwrap();
    fs::write(raw(&f, b"caf\xe8.txt"), "latin-1 e grave\n").unwrap();
    // A valid UTF-8 name that literally reads like the escaped form of the first one.
    fs::write(raw(&f, b"caf\\xe9.txt"), "literal backslash\n").unwrap();
    fs::write(raw(&f, "café.txt".as_bytes()), "utf-8\n").unwrap();
    fs::create_dir(raw(&f, b"d\xff")).unwrap();
    fs::write(raw(&f, b"d\xff/inner.txt"), "inside\n").unwrap();

    let v = f.call("list_dir", json!({}));
    let names: Vec<String> = assert_ok(&v)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect();
    let expected = [
        r"caf\\xe9.txt",
        r"caf\xe8.txt",
        r"caf\xe9.txt",
        "café.txt",
        r"d\xff",
    ];
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(sorted, expected, "listed as {names:?}");
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains(r"caf\xe8.txt") && text.contains(r"d\xff"),
        "{text}"
    );

    let contents = [
        (r"caf\xe9.txt", "latin-1 e acute\n"),
        (r"caf\xE9.txt", "latin-1 e acute\n"),
        (r"caf\xe8.txt", "latin-1 e grave\n"),
        (r"caf\\xe9.txt", "literal backslash\n"),
        ("café.txt", "utf-8\n"),
        (r"d\xff/inner.txt", "inside\n"),
    ];
    for (name, content) in contents {
        let v = f.call("read_file", json!({ "path": name }));
        assert_eq!(assert_ok(&v)["content"], json!(content), "read_file {name}");
        assert_eq!(
            v["data"]["path"].as_str().unwrap().to_lowercase(),
            name.to_lowercase()
        );
    }
    let v = f.call("list_dir", json!({"path": r"d\xff"}));
    assert_eq!(assert_ok(&v)["entries"][0]["name"], json!("inner.txt"));

    // Writing, appending and editing through the escaped form reach the raw name.
    assert_ok(&f.call(
        "write_file",
        json!({"path": r"new\xff\xfe.txt", "content": "one\n"}),
    ));
    assert_ok(&f.call(
        "append_file",
        json!({"path": r"new\xff\xfe.txt", "content": "two\n"}),
    ));
    assert_ok(&f.call(
        "edit_file",
        json!({"path": r"new\xff\xfe.txt", "old_text": "one", "new_text": "uno"}),
    ));
    assert_eq!(
        f.read_raw(b"new\xff\xfe.txt"),
        b"uno\ntwo\n"
    );
    assert_ok(&f.call(
        "write_file",
        json!({"path": r"sub\x80/x.txt", "content": "x"}),
    ));
    assert_eq!(f.read_raw(b"sub\x80/x.txt"), b"x");

    // Ordinary names with backslashes stay literal.
    assert_ok(&f.call(
        "write_file",
        json!({"path": r"C:\temp\x.txt", "content": "win"}),
    ));
    assert_eq!(f.read(r"C:\temp\x.txt"), b"win");
}

#[test]
fn escapes_cannot_name_a_slash_or_nul() {
    let f = Fixture::new();
    for path in [r"a\xff\x2fb", r"a\xff\x00"] {
        let message = assert_err(
            &f.call("write_file", json!({"path": path, "content": "x"})),
            "invalid_path",
        );
        assert!(message.contains("'/' or NUL"), "{message}");
    }
    assert!(f.snapshot("").is_empty());
}

/// The walking tools report names in the same form, and a reported path reads back its file.
#[test]
fn walks_report_escaped_names_that_read_back() {
    let f = Fixture::new();
    fs::create_dir(raw(&f, b"d\xff")).unwrap();
    fs::write(raw(&f, b"d\xff/caf\xe9.txt"), "needle latin-1\n").unwrap();
    fs::write(raw(&f, b"d\xff/caf\\xe9.txt"), "needle literal\n").unwrap();

    let found = f.call("find_files", json!({"pattern": "**/*.txt"}));
    let files: Vec<&str> = assert_ok(&found)["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p.as_str().unwrap())
        .collect();
    assert_eq!(files, [r"d\xff/caf\\xe9.txt", r"d\xff/caf\xe9.txt"]);

    let hits = f.call("search_text", json!({"query": "needle"}));
    let matches = assert_ok(&hits)["matches"].as_array().unwrap().clone();
    assert_eq!(matches.len(), 2, "{}", short(&hits));
    for m in &matches {
        let file = m["file"].as_str().unwrap();
        let read = f.call("read_file", json!({"path": file}));
        let content = assert_ok(&read)["content"].as_str().unwrap().to_owned();
        assert_eq!(content.trim_end(), m["snippet"].as_str().unwrap(), "{file}");
    }

    let tree = f.call("list_dir", json!({"depth": 2}));
    let text = assert_ok(&tree);
    let shown = text.to_string();
    assert!(
        shown.contains(r"caf\\xe9.txt") && shown.contains(r"caf\\\\xe9.txt"),
        "{shown}"
    );
}

}
