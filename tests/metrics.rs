//! The envelope's `metrics`: what a host's middleware records of a call (the figures of the
//! Agent Base design's spans) without parsing text, in every output mode that can carry it.

use crate::common::*;
use serde_json::{json, Value};
use wsfs::ffi;

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

/// The metrics without the duration (checked apart: it is whatever the call took).
fn figures(v: &Value) -> Value {
    let mut m = v
        .get("metrics")
        .unwrap_or_else(|| panic!("no metrics: {}", short(v)))
        .clone();
    let duration = m
        .as_object_mut()
        .and_then(|o| o.remove("duration_us"))
        .unwrap_or_else(|| panic!("no duration_us: {}", short(v)));
    assert!(duration.is_u64(), "duration_us: {duration}");
    m
}

fn raw(ws: u64, tool: &str, args: &str, options: &str) -> String {
    let (t, a, o) = (cs(tool), cs(args), cs(options));
    take_string(unsafe { ffi::wsfs_call_with_options(ws, t.as_ptr(), a.as_ptr(), o.as_ptr()) })
}

#[test]
fn reads_report_lines_bytes_and_truncation() {
    let f = Fixture::with_config(json!({"limits": {"max_read_bytes": 20}}));
    f.write("a.txt", numbered(3));
    let v = f.call("read_file", json!({"path": "a.txt"}));
    assert_eq!(
        figures(&v),
        json!({"tool": "read_file", "path": "a.txt", "start_line": 1, "lines_read": 2,
               "bytes_read": 14, "truncated": true})
    );
    f.write("b.txt", numbered(2));
    let v = f.call("read_file", json!({"path": "b.txt"}));
    assert_eq!(
        figures(&v),
        json!({"tool": "read_file", "path": "b.txt", "start_line": 1, "lines_read": 2,
               "bytes_read": 14, "truncated": false})
    );
    f.write("c.txt", numbered(9));
    let v = f.call(
        "read_file",
        json!({"path": "c.txt", "start_line": 4, "max_lines": 2}),
    );
    assert_eq!(
        figures(&v),
        json!({"tool": "read_file", "path": "c.txt", "start_line": 4, "lines_read": 2,
               "bytes_read": 14, "truncated": false})
    );
}

#[test]
fn each_tool_reports_its_own_figures_and_never_contents() {
    let f = Fixture::new();
    f.write("src/a.txt", "needle one\nhay\nneedle two\n");
    f.write("src/b.txt", "hay\n");
    let v = f.call("search_text", json!({"query": "needle", "path": "src"}));
    assert_ok(&v);
    assert_eq!(
        figures(&v),
        json!({"tool": "search_text", "path": "src", "matches": 2, "files_searched": 2, "truncated": false})
    );
    let v = f.call("find_files", json!({"pattern": "**/*.txt"}));
    assert_ok(&v);
    assert_eq!(
        figures(&v),
        json!({"tool": "find_files", "path": ".", "matches": 2, "files_searched": 2, "truncated": false})
    );
    let v = f.call("list_dir", json!({"path": "src"}));
    assert_ok(&v);
    assert_eq!(
        figures(&v),
        json!({"tool": "list_dir", "path": "src", "entries": 2, "truncated": false})
    );
    let v = f.call(
        "write_file",
        json!({"path": "w.txt", "content": "secret words"}),
    );
    assert_eq!(
        figures(&v),
        json!({"tool": "write_file", "path": "w.txt", "bytes_written": 12})
    );
    assert!(
        !v["metrics"].to_string().contains("secret"),
        "{}",
        v["metrics"]
    );
    let v = f.call(
        "edit_file",
        json!({"path": "w.txt", "old_text": "secret", "new_text": "open"}),
    );
    assert_eq!(
        figures(&v),
        json!({"tool": "edit_file", "path": "w.txt", "matches": 1, "bytes_written": 10})
    );
    let v = f.call("move_file", json!({"src": "w.txt", "dst": "m.txt"}));
    assert_eq!(
        figures(&v),
        json!({"tool": "move_file", "path": "w.txt -> m.txt"})
    );
}

#[test]
fn failures_carry_the_tool_and_path_of_the_call() {
    let f = Fixture::new();
    let v = f.call("read_file", json!({"path": "missing.txt"}));
    assert_err(&v, "path_not_found");
    assert_eq!(
        figures(&v),
        json!({"tool": "read_file", "path": "missing.txt"})
    );
    let v = f.call("no_such_tool", json!({}));
    assert_err(&v, "unknown_tool");
    assert_eq!(figures(&v), json!({"tool": "no_such_tool"}));
}

#[test]
fn raw_modes_carry_metrics_only_when_asked() {
    let f = Fixture::new();
    f.write("a.txt", numbered(2));
    let args = r#"{"path":"a.txt"}"#;
    for output in ["text_raw", "data_raw"] {
        let plain = raw(
            f.ws,
            "read_file",
            args,
            &format!(r#"{{"output":"{output}"}}"#),
        );
        let (head, content) = plain.split_once('\n').unwrap();
        assert!(!head.contains("metrics"), "{output}: {head}");
        assert_eq!(content, numbered(2));
        let asked = raw(
            f.ws,
            "read_file",
            args,
            &format!(r#"{{"output":"{output}","metrics":true}}"#),
        );
        let (head, content) = asked.split_once('\n').unwrap();
        let head: Value = serde_json::from_str(head).unwrap();
        assert_eq!(figures(&head)["lines_read"], json!(2), "{output}");
        assert_eq!(content, numbered(2), "{output}");
    }
    // And full, text and data carry them unless told not to.
    for output in ["full", "text", "data"] {
        let v = call_opts(
            f.ws,
            "read_file",
            args,
            Some(&format!(r#"{{"output":"{output}"}}"#)),
        );
        assert_eq!(figures(&v)["bytes_read"], json!(14), "{output}");
        let v = call_opts(
            f.ws,
            "read_file",
            args,
            Some(&format!(r#"{{"output":"{output}","metrics":false}}"#)),
        );
        assert!(v.get("metrics").is_none(), "{output}: {}", short(&v));
    }
}

#[test]
fn a_profile_envelope_carries_metrics_only_when_asked() {
    let f = Fixture::with_config(json!({"profile": "capability-plan"}));
    f.write("a.txt", numbered(3));
    let args = r#"{"path":"a.txt"}"#;
    let call = |options: &str| -> Value {
        serde_json::from_str(&raw(f.ws, "file_read", args, options)).unwrap()
    };
    let plain = call("{}");
    assert_eq!(plain["ok"], json!(true), "{}", short(&plain));
    assert!(plain.get("metrics").is_none(), "{}", short(&plain));
    let asked = call(r#"{"metrics":true}"#);
    assert_eq!(
        figures(&asked),
        json!({"tool": "file_read", "path": "a.txt", "start_line": 1, "lines_read": 3,
               "bytes_read": 21, "truncated": false})
    );
    // Everything else is the profile's envelope, as without the option.
    let mut rest = asked.clone();
    rest.as_object_mut().unwrap().remove("metrics");
    assert_eq!(rest, plain);
}
