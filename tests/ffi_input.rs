//! Malformed and hostile input at the C boundary: NULLs, bad UTF-8/JSON, wrong types, unknown
//! fields/tools/handles, NUL bytes, huge inputs, version/tool_specs shape, valid JSON everywhere.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::ffi::CString;
use std::ptr::null;

#[test]
fn version_is_json_with_abi_1() {
    let v = take_json(unsafe { ffi::wsfs_version() });
    assert_eq!(v["abi"], json!(1), "{v}");
    assert_eq!(v["version"], json!(env!("CARGO_PKG_VERSION")), "{v}");
}

/// The header's version macros are the library's: a C host compares them with
/// `wsfs_version()` at run time.
#[test]
fn header_versions_are_the_librarys() {
    let header = include_str!("../include/wsfs.h");
    let v = take_json(unsafe { ffi::wsfs_version() });
    let version = format!("#define WSFS_VERSION \"{}\"\n", env!("CARGO_PKG_VERSION"));
    assert!(
        header.contains(&version),
        "include/wsfs.h lacks {version:?}: run make build"
    );
    let abi = format!("#define WSFS_ABI_VERSION {}\n", v["abi"]);
    assert!(
        header.contains(&abi),
        "include/wsfs.h lacks {abi:?}: run make build"
    );
    assert_eq!(v["abi"], json!(ffi::WSFS_ABI_VERSION), "{v}");
}

#[test]
fn tool_specs_describe_every_tool() {
    let v = take_json(unsafe { ffi::wsfs_tool_specs() });
    let specs = v
        .as_array()
        .unwrap_or_else(|| panic!("tool_specs is not an array: {v}"));
    let expected: &[(&str, &[&str], &[&str])] = &[
        (
            "read_file",
            &[
                "path",
                "start_line",
                "max_lines",
                "line_numbers",
                "encoding_errors",
            ],
            &["path"],
        ),
        (
            "write_file",
            &["path", "content", "mode"],
            &["path", "content"],
        ),
        ("append_file", &["path", "content"], &["path", "content"]),
        (
            "list_dir",
            &[
                "path",
                "depth",
                "include_hidden",
                "max_entries",
                "respect_gitignore",
                "include_files",
                "include_dirs",
            ],
            &[],
        ),
        (
            "edit_file",
            &["path", "old_text", "new_text", "replace_all"],
            &["path", "old_text", "new_text"],
        ),
        ("get_path_info", &["path"], &["path"]),
        (
            "find_files",
            &[
                "pattern",
                "path",
                "max_results",
                "include_hidden",
                "respect_gitignore",
            ],
            &["pattern"],
        ),
        (
            "search_text",
            &[
                "query",
                "path",
                "glob",
                "use_regex",
                "case_sensitive",
                "max_matches",
                "context_lines",
                "include_hidden",
                "respect_gitignore",
            ],
            &["query"],
        ),
        ("apply_patch", &["patch", "files", "dry_run", "strict"], &[]),
        ("create_directory", &["path", "parents"], &["path"]),
        ("move_file", &["src", "dst", "overwrite"], &["src", "dst"]),
        ("delete_file", &["path", "recursive"], &["path"]),
    ];
    // The developer tools (off unless the policy's exec_enabled: tests/devtools.rs), in a
    // library built with them (cargo feature exec); absent from the specs otherwise.
    let developer_tools: &[(&str, &[&str], &[&str])] = &[
        ("workspace_info", &["refresh"], &[]),
        ("git_status", &[], &[]),
        (
            "git_diff",
            &["staged", "pathspec", "base_ref", "target_ref"],
            &[],
        ),
        (
            "git_commit",
            &["message", "paths", "signoff", "confirmed"],
            &["message"],
        ),
        ("run_tests", &["command", "focus", "timeout_sec"], &[]),
        ("run_lint", &["command", "paths"], &[]),
        ("typecheck", &["command", "paths"], &[]),
        ("safe_shell", &["command", "cwd"], &["command"]),
        ("shell", &["command", "cwd", "timeout_sec"], &["command"]),
    ];
    let mut expected = expected.to_vec();
    match cfg!(feature = "exec") {
        true => expected.extend_from_slice(developer_tools),
        false => {
            for (name, _, _) in developer_tools {
                assert!(
                    !specs.iter().any(|s| s["name"] == json!(name)),
                    "{name}: {v}"
                );
            }
        }
    }
    assert_eq!(specs.len(), expected.len(), "{v}");
    for (name, props, required) in expected {
        let spec = specs
            .iter()
            .find(|s| s["name"] == json!(name))
            .unwrap_or_else(|| panic!("no spec for {name}"));
        assert!(
            spec["description"]
                .as_str()
                .is_some_and(|d| !d.trim().is_empty()),
            "{spec}"
        );
        let params = &spec["parameters"];
        assert_eq!(params["type"], json!("object"), "{spec}");
        let p = params["properties"]
            .as_object()
            .unwrap_or_else(|| panic!("no properties: {spec}"));
        let mut got: Vec<&str> = p.keys().map(String::as_str).collect();
        got.sort();
        let mut want = props.to_vec();
        want.sort();
        assert_eq!(got, want, "properties of {name}");
        let req = params["required"]
            .as_array()
            .unwrap_or_else(|| panic!("no required array: {spec}"));
        let mut got: Vec<&str> = req.iter().map(|r| r.as_str().unwrap()).collect();
        got.sort();
        let mut want = required.to_vec();
        want.sort();
        assert_eq!(got, want, "required of {name}");
    }
}

#[test]
fn null_pointers_are_clean_errors() {
    let f = Fixture::new();
    let v = take_envelope(unsafe { ffi::wsfs_workspace_open(null()) });
    assert_err(&v, "invalid_arguments");
    for tool in TOOLS {
        let v = take_envelope(unsafe { tool_fn(tool)(f.ws, null()) });
        assert_err(&v, "invalid_arguments");
        let t = cs(tool);
        let v = take_envelope(unsafe { ffi::wsfs_call(f.ws, t.as_ptr(), null()) });
        assert_err(&v, "invalid_arguments");
        let v =
            take_envelope(unsafe { ffi::wsfs_call_with_options(f.ws, t.as_ptr(), null(), null()) });
        assert_err(&v, "invalid_arguments");
    }
    let a = cs(r#"{"path":"."}"#);
    let v = take_envelope(unsafe { ffi::wsfs_call(f.ws, null(), a.as_ptr()) });
    assert_err_in(&v, &["invalid_arguments", "unknown_tool"]);
    let v = take_envelope(unsafe { ffi::wsfs_call_with_options(f.ws, null(), a.as_ptr(), null()) });
    assert_err_in(&v, &["invalid_arguments", "unknown_tool"]);
    // NULL options means "none".
    let t = cs("list_dir");
    let v =
        take_envelope(unsafe { ffi::wsfs_call_with_options(f.ws, t.as_ptr(), a.as_ptr(), null()) });
    assert_ok(&v);
}

#[test]
fn string_free_null_is_a_noop() {
    unsafe { ffi::wsfs_string_free(std::ptr::null_mut()) };
    unsafe { ffi::wsfs_string_free(std::ptr::null_mut()) };
}

#[test]
fn invalid_utf8_is_invalid_arguments() {
    let f = Fixture::new();
    for tool in TOOLS {
        let v = call_bytes(f.ws, tool, b"{\"path\":\"\xff\xfe.txt\",\"content\":\"x\"}");
        assert_err(&v, "invalid_arguments");
    }
    let bad = CString::new(&b"{\"root\":\"/tmp/\xff\"}"[..]).unwrap();
    assert_err(
        &take_envelope(unsafe { ffi::wsfs_workspace_open(bad.as_ptr()) }),
        "invalid_arguments",
    );
    let bad_tool = CString::new(&b"read_\xfffile"[..]).unwrap();
    let a = cs(r#"{"path":"."}"#);
    let v = take_envelope(unsafe { ffi::wsfs_call(f.ws, bad_tool.as_ptr(), a.as_ptr()) });
    assert_err_in(&v, &["invalid_arguments", "unknown_tool"]);
    let bad_opts = CString::new(&b"{\"output\":\"\xff\"}"[..]).unwrap();
    let t = cs("list_dir");
    let v = take_envelope(unsafe {
        ffi::wsfs_call_with_options(f.ws, t.as_ptr(), a.as_ptr(), bad_opts.as_ptr())
    });
    assert_err(&v, "invalid_arguments");
    assert!(
        std::fs::read_dir(&f.root).unwrap().next().is_none(),
        "something was created"
    );
}

#[test]
fn invalid_json_and_wrong_types_are_invalid_arguments() {
    let f = Fixture::new();
    for tool in TOOLS {
        for bad in [
            "",
            " ",
            "{",
            "[]",
            "42",
            "\"path\"",
            "{\"path\":\"a\"} trailing",
            "{'path':'a'}",
            "{\"path\":\"a\",}",
            "[\"x.txt\"]",
            "[\"x.txt\", \"c\", \"d\"]",
        ] {
            eprintln!("input: {tool} {bad}");
            let v = call_str(f.ws, tool, bad);
            assert_err(&v, "invalid_arguments");
        }
        for bad in [
            json!({"path": 1}),
            json!({"path": ["a"]}),
            json!({"path": {"p": "a"}}),
            json!({"path": true}),
        ] {
            let mut args = args_for(tool, "x.txt", "a", "b");
            args["path"] = bad["path"].clone();
            assert_err(&call(f.ws, tool, args), "invalid_arguments");
        }
    }
    for tool in ["read_file", "write_file", "append_file", "edit_file"] {
        assert_err(&call_str(f.ws, tool, "null"), "invalid_arguments");
        assert_err(&call(f.ws, tool, json!({})), "invalid_arguments");
    }
    for tool in ["write_file", "append_file"] {
        assert_err(
            &call(f.ws, tool, json!({"path": "x.txt"})),
            "invalid_arguments",
        );
        assert_err(
            &call(f.ws, tool, json!({"path": "x.txt", "content": 5})),
            "invalid_arguments",
        );
        assert_err(
            &call(f.ws, tool, json!({"path": "x.txt", "content": null})),
            "invalid_arguments",
        );
        assert_err(
            &call(f.ws, tool, json!({"path": "x.txt", "content": ["a"]})),
            "invalid_arguments",
        );
    }
    f.write("e.txt", "alpha beta");
    let bad_edits = [
        json!({"path": "e.txt", "old_text": "alpha"}),
        json!({"path": "e.txt", "new_text": "x"}),
        json!({"path": "e.txt", "old_text": 1, "new_text": "x"}),
        json!({"path": "e.txt", "old_text": "alpha", "new_text": false}),
        json!({"path": "e.txt", "old_text": "alpha", "new_text": "x", "replace_all": "yes"}),
        json!({"path": "e.txt", "old_text": "alpha", "new_text": "x", "replace_all": 1}),
        json!({"path": "e.txt", "old_text": "", "new_text": "x"}),
        json!({"path": "e.txt", "old_text": "", "new_text": "x", "replace_all": true}),
    ];
    for a in bad_edits {
        assert_err(&f.call("edit_file", a), "invalid_arguments");
    }
    assert_eq!(f.read("e.txt"), b"alpha beta");
    assert!(!f.p("x.txt").exists(), "a rejected call created x.txt");
}

#[test]
fn unknown_fields_name_the_field_and_the_expected_ones() {
    let f = Fixture::new();
    f.write("e.txt", "alpha");
    let v = f.call(
        "edit_file",
        json!({"path": "e.txt", "old-text": "alpha", "new_text": "b"}),
    );
    let msg = assert_err(&v, "invalid_arguments");
    for needle in ["old-text", "old_text", "new_text", "replace_all", "path"] {
        assert!(
            msg.contains(needle),
            "message {msg:?} does not mention {needle}"
        );
    }
    assert!(
        v["text"].as_str().unwrap().contains("old-text"),
        "{}",
        short(&v)
    );
    assert_eq!(f.read("e.txt"), b"alpha");
    for tool in TOOLS {
        let mut args = args_for(tool, "e.txt", "alpha", "beta");
        args["bogus_field"] = json!(1);
        let msg = assert_err(&f.call(tool, args), "invalid_arguments");
        assert!(msg.contains("bogus_field"), "{tool}: {msg:?}");
        assert!(
            msg.contains("path"),
            "{tool}: message does not list the expected fields: {msg:?}"
        );
    }
    assert_eq!(f.read("e.txt"), b"alpha");
}

#[test]
fn unknown_tool() {
    let f = Fixture::new();
    for name in [
        "remove_file",
        "",
        "READ_FILE",
        "read_file ",
        "wsfs_read_file",
        "read-file",
    ] {
        assert_err(&call_named(f.ws, name, r#"{"path":"."}"#), "unknown_tool");
        assert_err(
            &call_opts(f.ws, name, r#"{"path":"."}"#, None),
            "unknown_tool",
        );
    }
}

#[test]
fn wsfs_call_routes_every_tool() {
    let f = Fixture::new();
    assert_ok(&call_named(
        f.ws,
        "write_file",
        r#"{"path":"a.txt","content":"one\n"}"#,
    ));
    assert_ok(&call_named(
        f.ws,
        "append_file",
        r#"{"path":"a.txt","content":"two\n"}"#,
    ));
    assert_ok(&call_named(
        f.ws,
        "edit_file",
        r#"{"path":"a.txt","old_text":"one","new_text":"1"}"#,
    ));
    let d = assert_ok(&call_named(f.ws, "read_file", r#"{"path":"a.txt"}"#)).clone();
    assert_eq!(d["content"], json!("1\ntwo\n"));
    let d = assert_ok(&call_named(f.ws, "list_dir", "{}")).clone();
    assert_eq!(d["entries"][0]["name"], json!("a.txt"));
    assert_eq!(d["total"], json!(1));
    let d = assert_ok(&call_opts(
        f.ws,
        "read_file",
        r#"{"path":"a.txt"}"#,
        Some("{}"),
    ))
    .clone();
    assert_eq!(d["content"], json!("1\ntwo\n"));
}

#[test]
fn bad_handles_are_invalid_workspace() {
    let f = Fixture::new();
    f.write("a.txt", "x");
    let closed = open_ws(&f.root, json!({}));
    assert_ok(&close_ws(closed));
    for h in [0, u64::MAX, 987_654_321, closed] {
        for tool in TOOLS {
            assert_err(
                &call(h, tool, args_for(tool, "a.txt", "x", "y")),
                "invalid_workspace",
            );
            assert_err(
                &call_named(h, tool, &args_for(tool, "a.txt", "x", "y").to_string()),
                "invalid_workspace",
            );
            assert_err(
                &call_opts(
                    h,
                    tool,
                    &args_for(tool, "a.txt", "x", "y").to_string(),
                    Some("{}"),
                ),
                "invalid_workspace",
            );
        }
        assert_err(&close_ws(h), "invalid_workspace");
    }
    assert_eq!(f.read("a.txt"), b"x");
    assert_eq!(snapshot(&f.root).len(), 1);
}

#[test]
fn handles_are_unique_and_never_reused() {
    let dir = tempfile::tempdir().unwrap();
    let mut seen = std::collections::HashSet::new();
    for _ in 0..20 {
        let h = open_ws(dir.path(), json!({}));
        assert!(seen.insert(h), "handle {h} reused");
        assert_ok(&close_ws(h));
        assert_err(&close_ws(h), "invalid_workspace");
    }
}

#[test]
fn nul_byte_in_path_is_invalid_path() {
    let f = Fixture::new();
    f.write("a", "x");
    for tool in TOOLS {
        for p in ["a\u{0}b", "\u{0}", "a\u{0}", "dir/\u{0}/x"] {
            assert_err(&f.call(tool, args_for(tool, p, "x", "y")), "invalid_path");
        }
        assert_err(&f.call(tool, args_for(tool, "", "x", "y")), "invalid_path");
        let long = "a".repeat(5000);
        assert_err(
            &f.call(tool, args_for(tool, &long, "x", "y")),
            "invalid_path",
        );
        let long = format!("{}/f", ["d"; 2100].join("/"));
        assert_err(
            &f.call(tool, args_for(tool, &long, "x", "y")),
            "invalid_path",
        );
    }
    assert_eq!(snapshot(&f.root).len(), 1, "something was created");
    assert_eq!(f.read("a"), b"x");
}

#[test]
fn huge_inputs_get_clean_errors() {
    let f = Fixture::new();
    let path = "p".repeat(10 * 1024 * 1024);
    for tool in TOOLS {
        assert_err_in(
            &f.call(tool, args_for(tool, &path, "x", "y")),
            &["invalid_path", "too_large"],
        );
    }
    let content = "c".repeat(100 * 1024 * 1024);
    for tool in ["write_file", "append_file"] {
        assert_err(
            &f.call(tool, json!({"path": "big.txt", "content": content})),
            "too_large",
        );
    }
    f.write("e.txt", "x");
    assert_err(
        &f.call(
            "edit_file",
            json!({"path": "e.txt", "old_text": "x", "new_text": content}),
        ),
        "too_large",
    );
    let v = f.call(
        "edit_file",
        json!({"path": "e.txt", "old_text": content, "new_text": "y"}),
    );
    assert_err_in(&v, &["too_large", "edit_not_found"]);
    assert!(!f.p("big.txt").exists());
    assert_eq!(f.read("e.txt"), b"x");
}

#[test]
fn every_function_returns_valid_json() {
    // take_json/take_envelope parse and free every returned string; this drives each export once
    // on the happy path and on an error path.
    let _ = take_json(unsafe { ffi::wsfs_version() });
    let _: Value = take_json(unsafe { ffi::wsfs_tool_specs() });
    let f = Fixture::new();
    for tool in TOOLS {
        let args = args_for(
            tool,
            if tool == "list_dir" { "." } else { "j.txt" },
            "1",
            "1",
        );
        let _ = call(f.ws, tool, args.clone());
        let _ = call(f.ws, tool, json!({"path": "\u{1}\"\\/\u{7f}é😀"}));
        let _ = call_named(f.ws, tool, &args.to_string());
        let _ = call_opts(f.ws, tool, &args.to_string(), Some(r#"{"output":"text"}"#));
    }
    let v = call(
        f.ws,
        "write_file",
        json!({"path": "q\"uote\\.txt", "content": "\u{1}\"\\\n\t"}),
    );
    assert_ok(&v);
    let d = assert_ok(&f.call("read_file", json!({"path": "q\"uote\\.txt"}))).clone();
    assert_eq!(d["content"], json!("\u{1}\"\\\n\t"));
    assert_eq!(d["path"], json!("q\"uote\\.txt"));
}
