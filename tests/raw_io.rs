//! The fast paths of the C ABI: `text_raw`/`data_raw` outputs, which keep large strings out of
//! the JSON, and `wsfs_call_with_content`, which takes write content as a separate buffer.

use crate::common::*;
use serde_json::{json, Value};
use std::ptr;
use wsfs::ffi;

/// Calls with options and returns the raw string (raw modes are not pure JSON).
fn call_raw_string(ws: u64, tool: &str, args: &str, options: &str) -> String {
    let (t, a, o) = (cs(tool), cs(args), cs(options));
    take_string(unsafe { ffi::wsfs_call_with_options(ws, t.as_ptr(), a.as_ptr(), o.as_ptr()) })
}

/// Splits a raw-mode result at its first newline into the JSON and the raw part.
fn split(result: &str) -> (Value, Option<&str>) {
    match result.split_once('\n') {
        Some((json, raw)) => (serde_json::from_str(json).expect("JSON part"), Some(raw)),
        None => (serde_json::from_str(result).expect("JSON"), None),
    }
}

fn call_with_content(ws: u64, tool: &str, args: &str, content: Option<&[u8]>) -> Value {
    let (t, a) = (cs(tool), cs(args));
    let (ptr, len) = content.map_or((ptr::null(), 0), |c| (c.as_ptr().cast(), c.len()));
    take_envelope(unsafe {
        ffi::wsfs_call_with_content(ws, t.as_ptr(), a.as_ptr(), ptr::null(), ptr, len)
    })
}

#[test]
fn text_raw_puts_the_unescaped_text_after_the_json() {
    let fx = Fixture::new();
    let content = "line \"one\"\r\n\ttab and ünïcode\nno final newline";
    fx.write("a.txt", content);
    let result = call_raw_string(
        fx.ws,
        "read_file",
        r#"{"path":"a.txt"}"#,
        r#"{"output":"text_raw"}"#,
    );
    let (json, raw) = split(&result);
    assert_eq!(json, json!({"ok": true, "warnings": []}));
    assert_eq!(raw, Some(content));
    // Failures stay plain JSON envelopes, with no raw part.
    let result = call_raw_string(
        fx.ws,
        "read_file",
        r#"{"path":"../x"}"#,
        r#"{"output":"text_raw"}"#,
    );
    let (json, raw) = split(&result);
    assert_eq!(json["error"]["code"], "outside_workspace");
    assert!(json["text"]
        .as_str()
        .unwrap()
        .starts_with("outside_workspace: "));
    assert_eq!(raw, None);
}

#[test]
fn data_raw_moves_only_read_contents_out_of_the_json() {
    let fx = Fixture::with_config(json!({"limits": {"max_read_bytes": 8}}));
    fx.write("a.txt", "0123456789abcdef");
    let result = call_raw_string(
        fx.ws,
        "read_file",
        r#"{"path":"a.txt"}"#,
        r#"{"output":"data_raw"}"#,
    );
    let (json, raw) = split(&result);
    assert_eq!(
        json["data"],
        json!({"path": "a.txt", "bytes": 8, "total_bytes": 16, "truncated": true, "next_start_line": 2})
    );
    assert!(json.get("text").is_none());
    assert_eq!(raw, Some("01234567"));
    // list_dir has no raw part in data_raw: the same as "data".
    let result = call_raw_string(fx.ws, "list_dir", "{}", r#"{"output":"data_raw"}"#);
    let (json, raw) = split(&result);
    assert_eq!(json["data"]["entries"][0]["name"], "a.txt");
    assert_eq!(raw, None);
}

#[test]
fn text_raw_lists_keep_their_newlines_raw() {
    let fx = Fixture::new();
    fx.write("a.txt", "x");
    fx.write("b/c.txt", "y");
    let result = call_raw_string(fx.ws, "list_dir", "{}", r#"{"output":"text_raw"}"#);
    let (_, raw) = split(&result);
    assert_eq!(raw, Some(". (2 entries)\na.txt  1 byte\nb/"));
}

#[test]
fn content_buffer_writes_and_appends_exact_bytes() {
    let fx = Fixture::new();
    let content = "a \"quoted\" line\r\nwith a NUL \0 and ünïcode";
    let v = call_with_content(
        fx.ws,
        "write_file",
        r#"{"path":"d/f.txt"}"#,
        Some(content.as_bytes()),
    );
    assert_eq!(assert_ok(&v)["bytes_written"], content.len());
    assert_eq!(fx.read("d/f.txt"), content.as_bytes());
    let v = call_with_content(
        fx.ws,
        "append_file",
        r#"{"path":"d/f.txt"}"#,
        Some(b"+tail"),
    );
    assert_eq!(assert_ok(&v)["bytes_appended"], 5);
    assert_eq!(fx.read("d/f.txt"), format!("{content}+tail").as_bytes());
    // An empty buffer is empty content, not a missing one.
    let v = call_with_content(fx.ws, "write_file", r#"{"path":"empty"}"#, Some(b""));
    assert_ok(&v);
    assert_eq!(fx.read("empty"), b"");
}

#[test]
fn content_buffer_errors() {
    let fx = Fixture::with_config(json!({"limits": {"max_write_bytes": 4}}));
    let both = call_with_content(
        fx.ws,
        "write_file",
        r#"{"path":"f","content":"x"}"#,
        Some(b"y"),
    );
    assert_err(&both, "invalid_arguments");
    let neither = call_with_content(fx.ws, "write_file", r#"{"path":"f"}"#, None);
    assert_err(&neither, "invalid_arguments");
    let not_utf8 = call_with_content(fx.ws, "write_file", r#"{"path":"f"}"#, Some(&[0xff, 0xfe]));
    assert_err(&not_utf8, "invalid_arguments");
    let too_big = call_with_content(fx.ws, "append_file", r#"{"path":"f"}"#, Some(b"12345"));
    assert_err(&too_big, "too_large");
    let wrong_tool = call_with_content(fx.ws, "read_file", r#"{"path":"f"}"#, Some(b"x"));
    assert_err(&wrong_tool, "invalid_arguments");
    assert!(!fx.p("f").exists(), "a refused call created the file");
}

#[test]
fn truncated_text_raw_equals_the_full_text() {
    let fx = Fixture::with_config(json!({"limits": {"max_read_bytes": 10}}));
    let cases = [
        // The cut ends in a newline: the notice follows directly.
        (
            "nl.txt",
            "012345678\nabc",
            "012345678\n[truncated: showing line 1 (10 of 13 bytes); max_read_bytes is 10; continue with start_line=2]",
        ),
        // The cut falls inside line 3: it moves back to the end of line 2.
        (
            "back.txt",
            "0123\n567\n9abcdef",
            "0123\n567\n[truncated: showing lines 1-2 (9 of 16 bytes); max_read_bytes is 10; continue with start_line=3]",
        ),
        (
            "plain.txt",
            "0123456789abcdef",
            "0123456789\n[truncated: line 1 is longer than max_read_bytes (10): only its first 10 of 16 bytes are shown; continue with start_line=2]",
        ),
    ];
    for (name, content, expected) in cases {
        fx.write(name, content);
        let args = json!({"path": name}).to_string();
        let full = call_opts(fx.ws, "read_file", &args, None);
        assert_eq!(full["text"], expected, "{name}");
        let result = call_raw_string(fx.ws, "read_file", &args, r#"{"output":"text_raw"}"#);
        assert_eq!(split(&result).1, Some(expected), "{name}");
    }
}

/// `wsfs_call_sized` returns what `wsfs_call_with_content` returns, with its length: for a read
/// built in place around the content, a copied one, a write with a buffer, and a failure.
#[test]
fn call_sized_gives_the_result_and_its_length() {
    let fx = Fixture::new();
    fx.write("a.txt", "x".repeat(5000));
    fx.write("big.txt", "é".repeat(200_000));
    let cases: [(&str, &str, &str, Option<&[u8]>); 5] = [
        (
            "read_file",
            r#"{"path":"a.txt"}"#,
            r#"{"output":"data_raw"}"#,
            None,
        ),
        (
            "read_file",
            r#"{"path":"big.txt"}"#,
            r#"{"output":"text_raw"}"#,
            None,
        ),
        (
            "read_file",
            r#"{"path":"a.txt"}"#,
            r#"{"output":"full"}"#,
            None,
        ),
        ("write_file", r#"{"path":"w.txt"}"#, "{}", Some(b"hello")),
        (
            "read_file",
            r#"{"path":"../x"}"#,
            r#"{"output":"data_raw"}"#,
            None,
        ),
    ];
    for (tool, args, options, content) in cases {
        let (t, a, o) = (cs(tool), cs(args), cs(options));
        let (ptr, len) = content.map_or((ptr::null(), 0), |c| (c.as_ptr().cast(), c.len()));
        let mut n = usize::MAX;
        let sized = unsafe {
            ffi::wsfs_call_sized(fx.ws, t.as_ptr(), a.as_ptr(), o.as_ptr(), ptr, len, &mut n)
        };
        let result = take_string(sized);
        assert_eq!(n, result.len(), "{tool} {args} {options}");
        if tool == "write_file" {
            assert!(result.contains(r#""created":true"#), "{result}");
            continue; // a second write would overwrite: nothing to compare with
        }
        let plain = take_string(unsafe {
            ffi::wsfs_call_with_content(fx.ws, t.as_ptr(), a.as_ptr(), o.as_ptr(), ptr, len)
        });
        assert_eq!(
            without_duration(&result),
            without_duration(&plain),
            "{tool} {args} {options}"
        );
    }
    // A NULL length pointer is allowed.
    let (t, a) = (cs("list_dir"), cs("{}"));
    let r = unsafe {
        ffi::wsfs_call_sized(
            fx.ws,
            t.as_ptr(),
            a.as_ptr(),
            ptr::null(),
            ptr::null(),
            0,
            ptr::null_mut(),
        )
    };
    assert!(take_string(r).starts_with(r#"{"ok":true"#));
}

/// `result` with its metrics' `duration_us` value taken out: two runs of a call give the same
/// result but for how long each took.
fn without_duration(result: &str) -> String {
    const KEY: &str = "\"duration_us\":";
    match result.find(KEY) {
        None => result.to_string(),
        Some(at) => {
            let value = at + KEY.len();
            let digits = result[value..]
                .bytes()
                .take_while(u8::is_ascii_digit)
                .count();
            format!("{}{}", &result[..value], &result[value + digits..])
        }
    }
}
