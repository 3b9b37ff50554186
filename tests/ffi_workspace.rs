//! Workspace lifecycle and call options at the C boundary: open config and its errors, call
//! options (errors, output trimming), cancel tokens, and close while calls are in flight.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[test]
fn bad_options_are_invalid_arguments_and_change_nothing() {
    let f = Fixture::new();
    let args = r#"{"path":"o.txt","content":"data"}"#;
    for bad in [
        "{",
        "[]",
        "42",
        "null x",
        r#"{"timeout_ms":"100"}"#,
        r#"{"timeout_ms":-1}"#,
        r#"{"timeout_ms":1.5}"#,
        r#"{"cancel_token":"t"}"#,
        r#"{"cancel_token":-3}"#,
        r#"{"output":"xml"}"#,
        r#"{"output":1}"#,
        r#"{"bogus":1}"#,
    ] {
        let v = call_opts(f.ws, "write_file", args, Some(bad));
        assert_err(&v, "invalid_arguments");
        assert!(
            !f.p("o.txt").exists(),
            "options {bad} rejected but the write happened"
        );
    }
    let msg = assert_err(
        &call_opts(f.ws, "write_file", args, Some(r#"{"bogus":1}"#)),
        "invalid_arguments",
    );
    assert!(msg.contains("bogus"), "{msg}");
}

#[test]
fn options_output_trims_the_envelope() {
    let f = Fixture::new();
    f.write("a.txt", "hello");
    let a = r#"{"path":"a.txt"}"#;
    let v = call_opts(f.ws, "read_file", a, Some(r#"{"output":"text"}"#));
    assert_eq!(v["ok"], json!(true));
    assert!(
        v.get("data").is_none() && v["text"].as_str().unwrap().contains("hello"),
        "{v}"
    );
    let v = call_opts(f.ws, "read_file", a, Some(r#"{"output":"data"}"#));
    assert!(v.get("text").is_none(), "{v}");
    assert_eq!(v["data"]["content"], json!("hello"));
    let v = call_opts(
        f.ws,
        "read_file",
        a,
        Some(r#"{"output":"full","timeout_ms":1000000000}"#),
    );
    assert_eq!(v["data"]["content"], json!("hello"));
    assert!(v["text"].is_string());
    for out in ["text", "data"] {
        let v = call_opts(
            f.ws,
            "read_file",
            r#"{"path":"missing.txt"}"#,
            Some(&format!(r#"{{"output":"{out}"}}"#)),
        );
        assert_err(&v, "path_not_found");
    }
}

#[test]
fn cancelled_token_changes_nothing() {
    let f = Fixture::new();
    f.write("e.txt", "alpha");
    let t = unsafe { ffi::wsfs_cancel_token_new() };
    let t2 = unsafe { ffi::wsfs_cancel_token_new() };
    assert_ne!(t, t2);
    let opts = format!(r#"{{"cancel_token":{t}}}"#);
    let ok = call_opts(f.ws, "read_file", r#"{"path":"e.txt"}"#, Some(&opts));
    assert_eq!(ok["data"]["content"], json!("alpha"));
    unsafe { ffi::wsfs_cancel_token_cancel(t) };
    for tool in TOOLS {
        let args = args_for(
            tool,
            if tool == "list_dir" { "." } else { "e.txt" },
            "alpha",
            "CHANGED",
        );
        assert_err(
            &call_opts(f.ws, tool, &args.to_string(), Some(&opts)),
            "cancelled",
        );
        let args = args_for(tool, "new/n.txt", "alpha", "CHANGED");
        assert_err(
            &call_opts(f.ws, tool, &args.to_string(), Some(&opts)),
            "cancelled",
        );
    }
    assert_eq!(f.read("e.txt"), b"alpha");
    assert!(!f.p("new").exists(), "a cancelled call created something");
    // Another token is unaffected.
    let v = call_opts(
        f.ws,
        "read_file",
        r#"{"path":"e.txt"}"#,
        Some(&format!(r#"{{"cancel_token":{t2}}}"#)),
    );
    assert_ok(&v);
    unsafe {
        ffi::wsfs_cancel_token_free(t);
        ffi::wsfs_cancel_token_free(t2);
        ffi::wsfs_cancel_token_cancel(u64::MAX - 7);
        ffi::wsfs_cancel_token_free(u64::MAX - 7);
        ffi::wsfs_cancel_token_free(t);
    }
}

#[test]
fn close_while_calls_are_in_flight() {
    let f = Fixture::new();
    f.write("a.txt", "hello");
    for i in 0..6 {
        f.write(&format!("ed{i}.txt"), "hello");
    }
    let ws = f.ws;
    let closed = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let invalid_after = Arc::new(AtomicUsize::new(0));
    let oks = Arc::new(AtomicUsize::new(0));
    let threads: Vec<_> = (0..6)
        .map(|i| {
            let (closed, stop, invalid_after, oks) = (
                closed.clone(),
                stop.clone(),
                invalid_after.clone(),
                oks.clone(),
            );
            std::thread::spawn(move || {
                // Each thread edits its own file back and forth (an edit must change text).
                let mut edits = ["hello", "HELLO"];
                while !stop.load(Ordering::SeqCst) {
                    for tool in TOOLS {
                        let path = match tool {
                            "append_file" => format!("app{i}.txt"),
                            "list_dir" => ".".to_owned(),
                            "edit_file" => format!("ed{i}.txt"),
                            _ => "a.txt".to_owned(),
                        };
                        let after = closed.load(Ordering::SeqCst);
                        let args = match tool {
                            "edit_file" => args_for(tool, &path, edits[0], edits[1]),
                            _ => args_for(tool, &path, "hello", "hello"),
                        };
                        let v = if i % 2 == 0 {
                            call(ws, tool, args)
                        } else {
                            call_named(ws, tool, &args.to_string())
                        };
                        if v["ok"] == json!(true) {
                            assert!(
                                !after,
                                "{tool} succeeded after close returned: {}",
                                short(&v)
                            );
                            oks.fetch_add(1, Ordering::SeqCst);
                            if tool == "edit_file" {
                                edits.swap(0, 1);
                            }
                        } else {
                            assert_err(&v, "invalid_workspace");
                            if after {
                                invalid_after.fetch_add(1, Ordering::SeqCst);
                            }
                        }
                    }
                }
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(150));
    assert_ok(&close_ws(ws));
    closed.store(true, Ordering::SeqCst);
    std::thread::sleep(Duration::from_millis(100));
    stop.store(true, Ordering::SeqCst);
    for t in threads {
        t.join().expect("a calling thread panicked");
    }
    assert!(
        oks.load(Ordering::SeqCst) > 0,
        "no call succeeded before close"
    );
    assert!(
        invalid_after.load(Ordering::SeqCst) > 0,
        "no call observed the close"
    );
    assert_err(&close_ws(ws), "invalid_workspace");
    assert_eq!(f.read("a.txt"), b"hello");
}

#[test]
fn open_returns_the_documented_data() {
    let tmp = tempfile::tempdir().unwrap();
    let real = std::fs::canonicalize(tmp.path()).unwrap();
    let root = real.join("x/y/z");
    // A missing root is refused, naming it and the key that would make it; nothing is made.
    let v = open_raw(&json!({"root": root}).to_string());
    assert_err(&v, "path_not_found");
    let text = v["text"].as_str().unwrap();
    assert!(
        text.contains(root.to_str().unwrap()) && text.contains("create_root"),
        "{v}"
    );
    assert!(!real.join("x").exists(), "a refused root was made");
    let v = open_raw(
        &json!({"root": format!("  {}  ", root.display()), "create_root": true}).to_string(),
    );
    let d = assert_ok(&v);
    assert!(root.is_dir(), "root and parents not created");
    assert_eq!(d["root"], json!(root.to_str().unwrap()));
    assert_eq!(d["restrict_to_workspace"], json!(true));
    let l = &d["limits"];
    assert_eq!(
        (
            &l["max_read_bytes"],
            &l["max_write_bytes"],
            &l["max_list_entries"],
            &l["operation_timeout_ms"]
        ),
        (&json!(262144), &json!(1048576), &json!(500), &json!(10000)),
        "{d}"
    );
    assert_ok(&close_ws(d["workspace"].as_u64().unwrap()));
    // Symlinks in the root are resolved once, at open.
    std::os::unix::fs::symlink(&root, real.join("link")).unwrap();
    let v = open_raw(&json!({"root": real.join("link")}).to_string());
    assert_eq!(assert_ok(&v)["root"], json!(root.to_str().unwrap()));
    assert_ok(&close_ws(v["data"]["workspace"].as_u64().unwrap()));
    // Custom limits are echoed.
    let h = open_ws(&root, limits(json!({"max_read_bytes": 7})));
    let d = assert_ok(&call(
        h,
        "write_file",
        json!({"path": "a", "content": "0123456789"}),
    ))
    .clone();
    assert_eq!(d["bytes_written"], json!(10));
    assert_eq!(
        assert_ok(&call(h, "read_file", json!({"path": "a"})))["bytes"],
        json!(7)
    );
    assert_ok(&close_ws(h));
}

#[test]
fn bad_configs_are_errors() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_str().unwrap();
    for cfg in [
        json!({"root": root, "bogus": 1}),
        json!({"root": root, "limits": {"bogus": 1}}),
        json!({"root": root, "limits": {"max_read_bytes": 0}}),
        json!({"root": root, "limits": {"max_write_bytes": 0}}),
        json!({"root": root, "limits": {"max_list_entries": 0}}),
        json!({"root": root, "limits": {"operation_timeout_ms": 0}}),
        json!({"root": root, "limits": {"max_read_bytes": -1}}),
        json!({"root": root, "limits": {"max_read_bytes": "big"}}),
        json!({"root": 5}),
        json!({"root": root, "restrict_to_workspace": "yes"}),
        json!([root]),
    ] {
        eprintln!("config: {cfg}");
        assert_err(&open_raw(&cfg.to_string()), "invalid_arguments");
    }
    for raw in ["", "{", "null", "{\"root\": }"] {
        eprintln!("config: {raw}");
        assert_err(&open_raw(raw), "invalid_arguments");
    }
    for empty in ["", "   "] {
        assert_err_in(
            &open_raw(&json!({"root": empty}).to_string()),
            &["invalid_arguments", "invalid_path"],
        );
    }
    let file = tmp.path().join("file");
    std::fs::write(&file, "x").unwrap();
    assert_err_in(
        &open_raw(&json!({"root": file}).to_string()),
        &["not_a_directory", "invalid_arguments", "invalid_path"],
    );
    let v = open_raw(&json!({"root": "/a\u{0}b"}).to_string());
    assert_err_in(&v, &["invalid_path", "invalid_arguments"]);
}

#[test]
fn opening_the_filesystem_root_warns() {
    let v = open_raw(r#"{"root":"/"}"#);
    let d = assert_ok(&v);
    assert!(
        !v["warnings"].as_array().unwrap().is_empty(),
        "no warning for root /: {v}"
    );
    assert_eq!(d["root"], json!("/"));
    assert_ok(&close_ws(d["workspace"].as_u64().unwrap()));
}

#[test]
fn absolute_root_appears_only_in_open_data_root() {
    // docs/c-abi.md: "the absolute root appears only in wsfs_workspace_open's data.root".
    let f = Fixture::new();
    let root = f.root.to_str().unwrap();
    let v = open_raw(&json!({ "root": root }).to_string());
    assert_ok(&v);
    assert_ok(&close_ws(v["data"]["workspace"].as_u64().unwrap()));
    assert!(
        !v["text"].as_str().unwrap().contains(root),
        "open text contains the absolute root: {v}"
    );
    f.write("a/b.txt", "x");
    for (tool, path) in [
        ("read_file", "a/b.txt"),
        ("list_dir", "a"),
        ("read_file", "a/missing"),
        ("list_dir", "nope"),
    ] {
        let v = f.call(tool, json!({ "path": path }));
        assert!(
            !v.to_string().contains(root),
            "{tool} {path}: absolute root leaked: {v}"
        );
    }
    let v = close_ws(f.ws);
    assert!(
        !v.to_string().contains(root),
        "close leaked the absolute root: {v}"
    );
}
