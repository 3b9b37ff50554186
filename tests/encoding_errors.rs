//! `read_file`'s `encoding_errors` (issue 18, gap 1): "strict" (the default) refuses a file
//! that is not UTF-8; "replace" decodes it with U+FFFD and says so; a NUL byte is binary
//! either way.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::json;

/// `wsfs_call_with_options` with a raw output mode: the whole result as a string.
fn call_opts_raw(ws: u64, tool: &str, args: &str, options: &str) -> String {
    let (t, a, o) = (cs(tool), cs(args), cs(options));
    // SAFETY: three NUL-terminated strings that outlive the call; the result is freed once.
    let p = unsafe { wsfs::ffi::wsfs_call_with_options(ws, t.as_ptr(), a.as_ptr(), o.as_ptr()) };
    take_string(p)
}

#[test]
fn a_latin1_file_is_refused_strictly_and_read_with_replace() {
    let f = Fixture::new();
    std::fs::write(f.p("latin1.txt"), b"caf\xe9\n").unwrap();
    let v = f.call("read_file", json!({"path": "latin1.txt"}));
    assert_err(&v, "io_error");
    let v = f.call(
        "read_file",
        json!({"path": "latin1.txt", "encoding_errors": "strict"}),
    );
    assert_err(&v, "io_error");
    let v = f.call(
        "read_file",
        json!({"path": "latin1.txt", "encoding_errors": "replace"}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["content"], "caf\u{fffd}\n");
    assert_eq!(data["encoding_errors"], true);
    assert_eq!(data["total_bytes"], 5);
    assert_eq!(v["text"], "caf\u{fffd}\n");
    // A range read too.
    let v = f.call(
        "read_file",
        json!({"path": "latin1.txt", "encoding_errors": "replace", "start_line": 1}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["content"], "caf\u{fffd}\n");
    assert_eq!(data["encoding_errors"], true);
    // The raw output modes carry the flag in the JSON head and the text after it.
    let args = json!({"path": "latin1.txt", "encoding_errors": "replace"}).to_string();
    let raw = call_opts_raw(f.ws, "read_file", &args, r#"{"output":"data_raw"}"#);
    let (head, content) = raw.split_once('\n').expect("raw part");
    let head: serde_json::Value = serde_json::from_str(head).unwrap();
    assert_eq!(head["data"]["encoding_errors"], true, "{head}");
    assert_eq!(content, "caf\u{fffd}\n");
}

#[test]
fn valid_text_and_binary_files_are_as_before() {
    let f = Fixture::with_config(json!({"limits": {"max_read_bytes": 4}}));
    std::fs::write(f.p("ok.txt"), "é\n").unwrap();
    let v = f.call(
        "read_file",
        json!({"path": "ok.txt", "encoding_errors": "replace"}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["content"], "é\n");
    assert!(data.get("encoding_errors").is_none(), "{data}");
    // A read cut at the byte limit inside a character drops it, as a strict read does.
    std::fs::write(f.p("cut.txt"), "abcé").unwrap();
    for mode in ["strict", "replace"] {
        let v = f.call(
            "read_file",
            json!({"path": "cut.txt", "encoding_errors": mode}),
        );
        let data = assert_ok(&v);
        assert_eq!(data["content"], "abc", "{mode}");
        assert!(data.get("encoding_errors").is_none(), "{mode}: {data}");
    }
    // ...and with an invalid byte before the cut.
    std::fs::write(f.p("both.txt"), b"a\xffb\xc3\xa9").unwrap();
    let v = f.call(
        "read_file",
        json!({"path": "both.txt", "encoding_errors": "replace"}),
    );
    assert_eq!(assert_ok(&v)["content"], "a\u{fffd}b");
    std::fs::write(f.p("bin.dat"), b"ab\0cd").unwrap();
    let v = f.call(
        "read_file",
        json!({"path": "bin.dat", "encoding_errors": "replace"}),
    );
    assert_err(&v, "io_error");
    let v = f.call(
        "read_file",
        json!({"path": "ok.txt", "encoding_errors": "lossy"}),
    );
    assert_err(&v, "invalid_arguments");
}

#[test]
fn the_hash_is_the_files_not_the_decoded_texts() {
    use sha2::{Digest, Sha256};
    let f = Fixture::new();
    let bytes = b"caf\xe9\n";
    std::fs::write(f.p("latin1.txt"), bytes).unwrap();
    let want: String = Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect();
    for args in [
        json!({"path": "latin1.txt", "encoding_errors": "replace"}),
        json!({"path": "latin1.txt", "encoding_errors": "replace", "start_line": 1}),
    ] {
        let v = f.call("read_file", args);
        assert_eq!(assert_ok(&v)["sha256"], want.as_str(), "{v}");
    }
}
