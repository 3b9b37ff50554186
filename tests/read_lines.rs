//! Issue 18 gap 5: a plain `read_file` that saw the whole file reports its line count as
//! `total_lines` (as range reads name it), in every output mode; a cut read does not.

use crate::common::*;
use serde_json::{json, Value};

/// `read_file` in output mode `output`: the envelope's JSON (for `data_raw`, the head before
/// the raw content, which must parse with the padding it may hold) and the raw content.
fn read_with(ws: u64, path: &str, output: &str) -> (Value, Option<String>) {
    let (t, a, o) = (
        cs("read_file"),
        cs(&json!({ "path": path }).to_string()),
        cs(&format!(r#"{{"output":"{output}"}}"#)),
    );
    // SAFETY: valid C strings.
    let s = take_string(unsafe {
        wsfs::ffi::wsfs_call_with_options(ws, t.as_ptr(), a.as_ptr(), o.as_ptr())
    });
    match output {
        "data_raw" => {
            let (head, raw) = s.split_once('\n').expect("a data_raw result has a head");
            (
                serde_json::from_str(head).expect("the head is JSON"),
                Some(raw.to_string()),
            )
        }
        _ => (serde_json::from_str(&s).expect("JSON"), None),
    }
}

#[test]
fn a_whole_read_reports_its_line_count() {
    let f = Fixture::with_config(json!({"limits": {"max_read_bytes": 1000}}));
    let cases: [(&str, String, Option<u64>); 6] = [
        ("empty.txt", String::new(), Some(0)),
        ("one.txt", "no newline".into(), Some(1)),
        ("two.txt", "a\nb".into(), Some(2)),
        ("nine.txt", "x\n".repeat(9), Some(9)),
        ("crlf.txt", "a\r\nb\r\n".into(), Some(2)),
        ("big.txt", "line\n".repeat(300), None), // cut at max_read_bytes
    ];
    for (name, content, lines) in cases {
        f.write(name, &content);
        let v = f.call("read_file", json!({ "path": name }));
        let data = assert_ok(&v);
        assert_eq!(
            data.get("total_lines").and_then(Value::as_u64),
            lines,
            "{name}: {v}"
        );
        for output in ["data", "data_raw"] {
            let (v, raw) = read_with(f.ws, name, output);
            if let Some(raw) = raw {
                match lines {
                    Some(_) => assert_eq!(raw, content, "{name}"),
                    None => assert!(content.starts_with(&raw), "{name}: raw content {raw:?}"),
                }
            }
            assert_eq!(
                v["data"].get("total_lines").and_then(Value::as_u64),
                lines,
                "{name} {output}: {v}"
            );
        }
    }
    // A range read keeps its own total_lines, once.
    f.write("r.txt", "1\n2\n3\n");
    let v = f.call("read_file", json!({"path": "r.txt", "start_line": 2}));
    assert_eq!(assert_ok(&v)["total_lines"], json!(3), "{v}");
    // encoding_errors "replace" counts the decoded text's lines.
    f.write("latin1.txt", b"caf\xe9\nna\xefve\n");
    let v = f.call(
        "read_file",
        json!({"path": "latin1.txt", "encoding_errors": "replace"}),
    );
    assert_eq!(assert_ok(&v)["total_lines"], json!(2), "{v}");
}
