//! `read_file` line ranges through the C ABI: paging, limits, CRLF, files without a final
//! newline, empty and huge files, binary parts, special files, symlinks, and memory bounded
//! while reading far into a large file.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::io::Write;

const MIB: u64 = 1024 * 1024;

/// `n` lines "line 1\n" .. "line n\n".
fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("line {i}\n")).collect()
}

fn text(v: &Value) -> &str {
    v["text"].as_str().unwrap()
}

crate::backend_tests! {
#[test]
fn a_range_returns_its_lines_and_an_exact_continuation_hint() {
    let f = Fixture::new();
    f.write("a.txt", numbered(10));
    let v = f.call(
        "read_file",
        json!({"path": "a.txt", "start_line": 3, "max_lines": 2}),
    );
    let d = assert_ok(&v);
    assert_eq!(d["content"], json!("line 3\nline 4\n"));
    assert_eq!(d["bytes"], json!(14));
    assert_eq!(d["total_bytes"], json!(numbered(10).len()));
    assert_eq!(d["truncated"], json!(false));
    assert_eq!(d["start_line"], json!(3));
    assert_eq!(d["end_line"], json!(4));
    assert_eq!(d["total_lines"], json!(10));
    assert_eq!(d["next_start_line"], json!(5));
    assert_eq!(d["sha256"], json!(f.sha256("a.txt")));
    assert_eq!(
        text(&v),
        "line 3\nline 4\n[lines 3-4 of 10; continue with start_line=5, max_lines=2]"
    );
    // The last page says so, and has no next line.
    let v = f.call("read_file", json!({"path": "a.txt", "start_line": 9}));
    let d = assert_ok(&v);
    assert_eq!(d["content"], json!("line 9\nline 10\n"));
    assert!(d.get("next_start_line").is_none(), "{d}");
    assert_eq!(text(&v), "line 9\nline 10\n[lines 9-10 of 10; end of file]");
    let v = f.call("read_file", json!({"path": "a.txt", "start_line": 10}));
    assert!(text(&v).ends_with("line 10\n[line 10 of 10; end of file]"));
}

#[test]
fn max_lines_defaults_to_2000_and_is_capped_at_10000() {
    let f = Fixture::with_config(limits(json!({"max_read_bytes": 4 * MIB})));
    f.write("many.txt", numbered(12_000));
    let v = f.call("read_file", json!({"path": "many.txt", "start_line": 1}));
    let d = assert_ok(&v);
    assert_eq!(
        (d["end_line"].clone(), d["next_start_line"].clone()),
        (json!(2000), json!(2001))
    );
    assert!(text(&v).ends_with("line 2000\n[lines 1-2000 of 12000; continue with start_line=2001]"));
    let v = f.call(
        "read_file",
        json!({"path": "many.txt", "max_lines": 10_000}),
    );
    assert_eq!(assert_ok(&v)["end_line"], json!(10_000));
    let v = f.call(
        "read_file",
        json!({"path": "many.txt", "max_lines": 10_001}),
    );
    let msg = assert_err(&v, "invalid_arguments");
    assert!(msg.contains("10000"), "the limit is named: {msg}");
    // line_numbers alone reads a range from line 1.
    let v = f.call(
        "read_file",
        json!({"path": "many.txt", "line_numbers": true}),
    );
    let d = assert_ok(&v);
    assert_eq!(
        (d["start_line"].clone(), d["end_line"].clone()),
        (json!(1), json!(2000))
    );
    assert!(text(&v).starts_with("1| line 1\n2| line 2\n"));
}

#[test]
fn only_a_path_reads_the_whole_file_as_before() {
    let f = Fixture::new();
    f.write("a.txt", numbered(3));
    for args in [
        json!({"path": "a.txt"}),
        json!({"path": "a.txt", "start_line": 0, "max_lines": 0, "line_numbers": false}),
    ] {
        let v = f.call("read_file", args);
        let d = assert_ok(&v).as_object().unwrap().clone();
        let mut keys: Vec<_> = d.keys().cloned().collect();
        keys.sort();
        assert_eq!(
            keys,
            [
                "bytes",
                "content",
                "path",
                "sha256",
                "total_bytes",
                "total_lines",
                "truncated"
            ]
        );
        // Issue 18 gap 5: the whole file's line count, as range reads name it.
        assert_eq!(d["total_lines"], json!(3));
        assert_eq!(text(&v), numbered(3));
    }
}

#[test]
fn past_the_end_is_line_out_of_range_naming_the_line_count() {
    let f = Fixture::new();
    f.write("a.txt", numbered(10));
    f.write("no_newline.txt", "a\nb");
    for (path, start, count) in [
        ("a.txt", 11, "10 lines"),
        ("a.txt", 1_000_000, "10 lines"),
        ("no_newline.txt", 3, "2 lines"),
    ] {
        let v = f.call("read_file", json!({"path": path, "start_line": start}));
        let msg = assert_err(&v, "line_out_of_range");
        assert!(msg.contains(count), "{path} {start}: {msg}");
    }
    f.write("empty.txt", "");
    let v = f.call("read_file", json!({"path": "empty.txt", "start_line": 2}));
    let msg = assert_err(&v, "line_out_of_range");
    assert!(msg.contains("0 lines"), "{msg}");
}

#[test]
fn an_empty_file_says_so() {
    let f = Fixture::new();
    f.write("empty.txt", "");
    let v = f.call("read_file", json!({"path": "empty.txt", "start_line": 1}));
    let d = assert_ok(&v);
    assert_eq!(text(&v), "(empty file)");
    assert_eq!(d["content"], json!(""));
    assert_eq!(
        (d["start_line"].clone(), d["end_line"].clone()),
        (json!(1), json!(0))
    );
    assert_eq!(d["total_lines"], json!(0));
    assert!(d.get("next_start_line").is_none());
    assert_eq!(d["sha256"], json!(f.sha256("empty.txt")));
}

#[test]
fn crlf_is_kept_and_a_last_line_without_newline_is_a_line() {
    let f = Fixture::new();
    f.write("crlf.txt", "one\r\ntwo\r\nthree");
    let v = f.call(
        "read_file",
        json!({"path": "crlf.txt", "start_line": 2, "line_numbers": true}),
    );
    let d = assert_ok(&v);
    assert_eq!(
        d["content"],
        json!("two\r\nthree"),
        "content is the file's bytes"
    );
    assert_eq!(d["total_lines"], json!(3));
    assert_eq!(
        text(&v),
        "2| two\r\n3| three\n[lines 2-3 of 3; end of file]"
    );
    let v = f.call("read_file", json!({"path": "crlf.txt", "max_lines": 1}));
    assert_eq!(
        text(&v),
        "one\r\n[line 1 of 3; continue with start_line=2, max_lines=1]"
    );
}

#[test]
fn max_read_bytes_cuts_at_a_line_boundary_or_cuts_one_long_line() {
    let f = Fixture::with_config(limits(json!({"max_read_bytes": 20})));
    f.write("a.txt", numbered(10));
    let v = f.call("read_file", json!({"path": "a.txt", "start_line": 1}));
    let d = assert_ok(&v);
    assert_eq!(d["content"], json!("line 1\nline 2\n"));
    assert_eq!(d["truncated"], json!(true));
    assert_eq!(d["next_start_line"], json!(3));
    assert_eq!(
        text(&v),
        "line 1\nline 2\n[lines 1-2 of 10; stopped before line 3 to stay within max_read_bytes (20 bytes); continue with start_line=3]"
    );
    // A line longer than the limit is cut at a character boundary, and the hint says so.
    f.write("long.txt", format!("short\n{}\nend\n", "€".repeat(10)));
    let v = f.call("read_file", json!({"path": "long.txt", "start_line": 2}));
    let d = assert_ok(&v);
    assert_eq!(
        d["content"],
        json!("€".repeat(6)),
        "18 of 20 bytes: whole characters"
    );
    assert_eq!(d["truncated"], json!(true));
    assert_eq!(
        (d["end_line"].clone(), d["next_start_line"].clone()),
        (json!(2), json!(3))
    );
    assert!(
        text(&v).contains("line 2 is longer than max_read_bytes (20): only its first 18 bytes are shown; continue with start_line=3]"),
        "{}",
        text(&v)
    );
}

#[test]
fn binary_checks_cover_the_returned_lines_and_the_skipped_ones() {
    let f = Fixture::new();
    f.write("nul_before.txt", b"a\n\0b\nc\nd\n");
    f.write("nul_after.txt", b"a\nb\n\0c\n");
    f.write("bad_utf8_before.txt", b"\xff\xfe\nb\n");
    for (path, start, ok) in [
        ("nul_before.txt", 3, false), // NUL in a skipped line
        ("nul_before.txt", 2, false), // NUL in the returned line
        ("nul_after.txt", 1, true),   // after the range: only counted
        ("bad_utf8_before.txt", 2, true),
        ("bad_utf8_before.txt", 1, false),
    ] {
        let v = f.call(
            "read_file",
            json!({"path": path, "start_line": start, "max_lines": 1}),
        );
        if ok {
            assert_ok(&v);
        } else {
            assert!(
                assert_err(&v, "io_error").contains("binary"),
                "{}",
                short(&v)
            );
        }
    }
}

#[test]
fn sha256_only_for_files_within_max_write_bytes() {
    let f = Fixture::with_config(limits(json!({"max_write_bytes": 50})));
    f.write("small.txt", numbered(5)); // 35 bytes
    f.write("big.txt", numbered(20)); // over 50 bytes
    let d = assert_ok(&f.call("read_file", json!({"path": "small.txt", "start_line": 1}))).clone();
    assert_eq!(d["sha256"], json!(f.sha256("small.txt")));
    let d = assert_ok(&f.call("read_file", json!({"path": "big.txt", "start_line": 1}))).clone();
    assert!(d.get("sha256").is_none(), "{d}");
    assert_eq!(d["total_lines"], json!(20), "still counted");
}

#[test]
fn huge_sparse_files_are_bounded() {
    let f = Fixture::new();
    let ten_gib = 10 * 1024 * MIB;
    let mut file = f.create_file("sparse.txt");
    file.write_all(numbered(100).as_bytes()).unwrap();
    file.set_len(ten_gib).unwrap();
    drop(file);
    let ws = f.ws;
    let v = with_watchdog(30, "range of a 10 GiB sparse file", move || {
        call(
            ws,
            "read_file",
            json!({"path": "sparse.txt", "start_line": 10, "max_lines": 5}),
        )
    });
    let d = assert_ok(&v);
    assert_eq!(
        d["content"],
        json!("line 10\nline 11\nline 12\nline 13\nline 14\n")
    );
    assert!(
        d.get("total_lines").is_none() && d.get("sha256").is_none(),
        "{d}"
    );
    assert_eq!(d["next_start_line"], json!(15));
    assert_eq!(
        text(&v).lines().last().unwrap(),
        format!("[lines 10-14; total not counted: the file is {ten_gib} bytes; continue with start_line=15, max_lines=5]")
    );
    // Past its text the file is NUL bytes: skipping into them is refused as binary at once.
    let v = with_watchdog(30, "skip into the hole", move || {
        call(
            ws,
            "read_file",
            json!({"path": "sparse.txt", "start_line": 1000}),
        )
    });
    assert_err(&v, "io_error");
}

#[test]
fn special_files_symlinks_and_deadlines() {
    let f = Fixture::new();
    f.mkfifo("fifo");
    let ws = f.ws;
    let v = with_watchdog(10, "range read of a FIFO", move || {
        call(ws, "read_file", json!({"path": "fifo", "start_line": 1}))
    });
    assert_err(&v, "not_a_file");
    f.write("real/a.txt", numbered(3));
    f.symlink("real/a.txt", "inside");
    let outside = f.base.join("outside.txt");
    fs::write(&outside, "OUTSIDE\n").unwrap();
    f.symlink("../outside.txt", "escape");
    f.symlink(&outside, "absolute");
    let d = assert_ok(&f.call("read_file", json!({"path": "inside", "start_line": 2}))).clone();
    assert_eq!(
        (d["path"].clone(), d["content"].clone()),
        (json!("inside"), json!("line 2\nline 3\n"))
    );
    for path in ["escape", "absolute"] {
        let v = f.call("read_file", json!({"path": path, "start_line": 1}));
        assert_err(&v, "outside_workspace");
    }
    let v = call_opts(
        f.ws,
        "read_file",
        r#"{"path": "real/a.txt", "start_line": 1}"#,
        Some(r#"{"timeout_ms": 0}"#),
    );
    assert_err(&v, "timeout");
}

#[test]
fn raw_output_modes_carry_the_range() {
    let f = Fixture::new();
    f.write("a.txt", numbered(5));
    let t = cs("read_file");
    let a = cs(r#"{"path": "a.txt", "start_line": 2, "max_lines": 2, "line_numbers": true}"#);
    let raw = |mode: &str| {
        let o = cs(&format!(r#"{{"output": "{mode}"}}"#));
        take_string(unsafe {
            ffi::wsfs_call_with_options(f.ws, t.as_ptr(), a.as_ptr(), o.as_ptr())
        })
    };
    let data_raw = raw("data_raw");
    let (json_part, content) = data_raw.split_once('\n').unwrap();
    let meta: Value = serde_json::from_str(json_part).unwrap();
    assert_eq!(content, "line 2\nline 3\n");
    assert!(meta["data"].get("content").is_none());
    assert_eq!(meta["data"]["next_start_line"], json!(4));
    let text_raw = raw("text_raw");
    let (_, shown) = text_raw.split_once('\n').unwrap();
    assert_eq!(
        shown,
        "2| line 2\n3| line 3\n[lines 2-3 of 5; continue with start_line=4, max_lines=2, line_numbers=true]"
    );
}
}

const MEMORY_ENV: &str = "WSFS_RANGE_MEMORY_CHILD";

/// Child half of `reading_far_into_a_64_mib_file_keeps_memory_flat`.
#[test]
#[ignore = "child process of reading_far_into_a_64_mib_file_keeps_memory_flat"]
fn range_memory_child() {
    let Ok(dir) = std::env::var(MEMORY_ENV) else {
        return;
    };
    let status = |field: &str| -> u64 {
        let s = fs::read_to_string("/proc/self/status").unwrap();
        let line = s.lines().find(|l| l.starts_with(field)).unwrap();
        line.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let ws = open_ws(std::path::Path::new(&dir), json!({}));
    // Warm up (first call's one-time allocations), then measure one far range.
    assert_ok(&call(
        ws,
        "read_file",
        json!({"path": "big.txt", "start_line": 1, "max_lines": 1}),
    ));
    fs::write("/proc/self/clear_refs", "5").unwrap();
    let before = status("VmRSS:");
    let v = call(
        ws,
        "read_file",
        json!({"path": "big.txt", "start_line": 500_000, "max_lines": 101}),
    );
    let peak = status("VmHWM:");
    let d = assert_ok(&v);
    assert_eq!(d["start_line"], json!(500_000));
    assert_eq!(d["end_line"], json!(500_100));
    assert_eq!(
        d["content"].as_str().unwrap().lines().next(),
        Some("line 00500000")
    );
    println!("\nRANGE-RSS-GROWTH-KIB {}", peak.saturating_sub(before));
}

#[test]
fn reading_far_into_a_64_mib_file_keeps_memory_flat() {
    let tmp = tempfile::tempdir().unwrap();
    let mut data = Vec::with_capacity(64 * MIB as usize + 16);
    let mut i = 1u64;
    while data.len() < 64 * MIB as usize {
        data.extend_from_slice(format!("line {i:08}\n").as_bytes());
        i += 1;
    }
    fs::write(tmp.path().join("big.txt"), &data).unwrap();
    drop(data);
    let out = child_test(&crate::test_name!(range_memory_child))
        .arg("--nocapture")
        .env(MEMORY_ENV, tmp.path())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let growth: u64 = stdout
        .lines()
        .find_map(|l| l.strip_prefix("RANGE-RSS-GROWTH-KIB "))
        .unwrap_or_else(|| panic!("no measurement in:\n{stdout}"))
        .trim()
        .parse()
        .unwrap();
    assert!(
        growth < 2048,
        "RSS grew by {growth} KiB reading 101 lines of a 64 MiB file"
    );
}

crate::backend_tests! {
/// A plain read (only `path`) carries the whole file's `sha256` when it read all of it and the
/// file fits in `max_write_bytes`, so a model can pass it to a change tool as `file_hash`; an
/// empty file says so in the text.
#[test]
fn plain_reads_carry_the_hash_of_a_whole_file() {
    let f = Fixture::with_config(limits(
        json!({"max_read_bytes": 100, "max_write_bytes": 200}),
    ));
    f.write("small.txt", "hello\nworld\n");
    let v = f.call("read_file", json!({"path": "small.txt"}));
    let d = assert_ok(&v);
    assert_eq!(d["sha256"], json!(f.sha256("small.txt")));
    assert_eq!(text(&v), "hello\nworld\n");
    assert!(
        d.get("start_line").is_none(),
        "plain reads have no line fields: {d}"
    );

    // Cut by max_read_bytes: the read did not see the whole file.
    f.write("cut.txt", "x".repeat(150));
    let d = assert_ok(&f.call("read_file", json!({"path": "cut.txt"}))).clone();
    assert_eq!(d["truncated"], json!(true));
    assert!(d.get("sha256").is_none(), "{d}");

    // Whole, but bigger than max_write_bytes: no change tool could take it.
    let f = Fixture::with_config(limits(
        json!({"max_read_bytes": 1000, "max_write_bytes": 200}),
    ));
    f.write("big.txt", "y".repeat(300));
    let d = assert_ok(&f.call("read_file", json!({"path": "big.txt"}))).clone();
    assert_eq!(d["truncated"], json!(false));
    assert!(d.get("sha256").is_none(), "{d}");

    f.write("empty.txt", "");
    let v = f.call("read_file", json!({"path": "empty.txt"}));
    assert_eq!(text(&v), "(empty file)");
    assert_eq!(assert_ok(&v)["content"], json!(""));
    assert_eq!(assert_ok(&v)["sha256"], json!(f.sha256("empty.txt")));
}

}
