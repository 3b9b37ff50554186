//! FIFOs, sockets, huge and sparse files, UTF-8 truncation, binary files, huge directories,
//! entry types, size limits, deep nesting under a low fd limit and type mismatches.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;

const MIB: u64 = 1024 * 1024;

crate::backend_tests! {
#[test]
fn fifo_is_refused_at_once_by_every_tool() {
    let f = Fixture::new();
    f.mkdir("sub");
    f.mkfifo("fifo");
    f.mkfifo("sub/fifo2");
    let ws = f.ws;
    for tool in ["read_file", "write_file", "append_file", "edit_file"] {
        for p in ["fifo", "sub/fifo2"] {
            let v = with_watchdog(10, &format!("{tool} on a FIFO"), move || {
                call(ws, tool, args_for(tool, p, "x", "y"))
            });
            assert_err(&v, "not_a_file");
        }
    }
    let v = with_watchdog(10, "list_dir on a FIFO", move || {
        call(ws, "list_dir", json!({"path": "fifo"}))
    });
    assert_err(&v, "not_a_directory");
    for p in ["fifo", "sub/fifo2"] {
        let md = f.lstat(p);
        assert!(
            std::os::unix::fs::FileTypeExt::is_fifo(&md.file_type()),
            "{p} was replaced"
        );
    }
    let names: Vec<_> = f.snapshot("").into_keys().collect();
    assert_eq!(names.len(), 3, "temp files left: {names:?}");
}

/// Special files are refused before anything opens them: a writer waiting in `open` for a
/// FIFO's first reader is not let in by any tool (opening the FIFO, even without blocking,
/// would count as that reader and wake it).
#[test]
fn a_waiting_fifo_writer_is_not_woken() {
    use std::sync::mpsc;
    use std::time::{Duration, Instant};
    let f = Fixture::new();
    f.mkfifo("fifo");
    let path = f.disk_path("fifo");
    let (tid_tx, tid_rx) = mpsc::channel();
    let (opened_tx, opened_rx) = mpsc::channel();
    let writer = std::thread::spawn(move || {
        tid_tx.send(unsafe { libc::gettid() }).unwrap();
        // Blocks until a reader opens the FIFO.
        let opened = fs::OpenOptions::new().write(true).open(&path);
        opened_tx.send(()).ok();
        opened
    });
    // Wait until the writer is blocked in openat (syscall 257 on x86-64, 56 on aarch64).
    let tid = tid_rx.recv().unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let sc = fs::read_to_string(format!("/proc/self/task/{tid}/syscall")).unwrap_or_default();
        if sc.starts_with("257 ") || sc.starts_with("56 ") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "the writer never blocked in open: {sc}"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    for tool in ["read_file", "write_file", "append_file", "edit_file"] {
        assert_err(
            &call(f.ws, tool, args_for(tool, "fifo", "x", "y")),
            "not_a_file",
        );
    }
    let range = json!({"path": "fifo", "start_line": 1});
    assert_err(&call(f.ws, "read_file", range), "not_a_file");
    assert!(
        opened_rx.recv_timeout(Duration::from_millis(200)).is_err(),
        "a tool opened the FIFO: its waiting writer was let in"
    );
    // Let the writer in, so its thread ends.
    let _reader = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(f.disk_path("fifo"))
        .unwrap();
    opened_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    writer.join().unwrap().unwrap();
}

#[test]
fn socket_is_not_a_file() {
    let f = Fixture::new();
    let _l = std::os::unix::net::UnixListener::bind(f.disk_path("sock")).unwrap();
    let ws = f.ws;
    let mut failures = vec![];
    for tool in ["read_file", "write_file", "append_file", "edit_file"] {
        let v = with_watchdog(10, &format!("{tool} on a socket"), move || {
            call(ws, tool, args_for(tool, "sock", "x", "y"))
        });
        if v["error"]["code"] != json!("not_a_file") {
            failures.push(format!(
                "{tool} \"sock\": expected not_a_file, got {}",
                short(&v)
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    let md = f.lstat("sock");
    assert!(
        std::os::unix::fs::FileTypeExt::is_socket(&md.file_type()),
        "socket replaced"
    );
    let d = assert_ok(&f.call("list_dir", json!({}))).clone();
    assert_eq!(d["entries"][0]["type"], json!("other"), "{d}");
}

#[test]
fn large_file_read_is_truncated() {
    let f = Fixture::new();
    let size = 64 * MIB as usize;
    let mut data = Vec::with_capacity(size);
    let mut i = 0u64;
    while data.len() < size {
        data.extend_from_slice(format!("line {i:08}\n").as_bytes());
        i += 1;
    }
    data.truncate(size);
    let mut file = f.create_file("big.txt");
    file.set_len(size as u64).unwrap();
    file.write_all(&data).unwrap();
    drop(file);
    let v = f.call("read_file", json!({"path": "big.txt"}));
    let d = assert_ok(&v);
    assert_eq!(d["truncated"], json!(true));
    // Cut back to the end of the last whole line within the limit (14-byte lines).
    let kept = 262144 / 14 * 14;
    assert_eq!(d["bytes"], json!(kept));
    assert_eq!(d["total_bytes"], json!(size));
    assert_eq!(d["path"], json!("big.txt"));
    assert_eq!(d["content"].as_str().unwrap().as_bytes(), &data[..kept]);
    let lines = kept / 14;
    let notice = format!(
        "[truncated: showing lines 1-{lines} ({kept} of {size} bytes); max_read_bytes is 262144; continue with start_line={}]",
        lines + 1
    );
    assert!(
        v["text"].as_str().unwrap().contains(&notice),
        "no notice in text"
    );
}

#[test]
fn sparse_10_gib_file_is_bounded() {
    let f = Fixture::new();
    let ten_gib = 10 * 1024 * MIB;
    // Text at the start, then a hole.
    let head = "sparse text\n".repeat(30_000);
    let mut file = f.create_file("sparse.txt");
    file.write_all(head.as_bytes()).unwrap();
    file.set_len(ten_gib).unwrap();
    drop(file);
    let ws = f.ws;
    let v = with_watchdog(30, "read 10 GiB sparse", move || {
        call(ws, "read_file", json!({"path": "sparse.txt"}))
    });
    let d = assert_ok(&v);
    assert_eq!(d["truncated"], json!(true));
    assert_eq!(d["total_bytes"], json!(ten_gib));
    // Cut back to the end of the last whole line within the limit (12-byte lines).
    let kept = 262144 / 12 * 12;
    assert_eq!(d["bytes"], json!(kept));
    assert_eq!(d["content"].as_str().unwrap(), &head[..kept]);
    // Only a hole (NUL bytes): an error or bounded data, quickly.
    f.create_file("hole.txt")
        .set_len(ten_gib)
        .unwrap();
    let v = with_watchdog(30, "read 10 GiB hole", move || {
        call(ws, "read_file", json!({"path": "hole.txt"}))
    });
    if v["ok"] == json!(true) {
        assert!(
            v["data"]["bytes"].as_u64().unwrap() <= 262144,
            "{}",
            short(&v)
        );
        assert_eq!(v["data"]["truncated"], json!(true));
    } else {
        assert_err(&v, "io_error");
    }
    // An edit of a 10 GiB file must be refused by size, not attempted.
    let v = with_watchdog(30, "edit 10 GiB", move || {
        call(
            ws,
            "edit_file",
            json!({"path": "sparse.txt", "old_text": "sparse", "new_text": "x"}),
        )
    });
    assert_err(&v, "too_large");
}

#[test]
fn truncation_respects_utf8_boundaries() {
    let f = Fixture::with_config(limits(json!({"max_read_bytes": 10})));
    // (content, expected kept bytes)
    let cases = [
        ("aaaaaaaaa€", "aaaaaaaaa"),  // 9 + 3 bytes: € starts at 9
        ("aaaaaaaa€b", "aaaaaaaa"),   // € spans 8..11
        ("aaaaaaa€bc", "aaaaaaa€"),   // € ends exactly at 10
        ("aaaaaaaaa😀", "aaaaaaaaa"), // 4-byte char across the limit
        ("aaaaaaaé€x", "aaaaaaaé"),   // é ends at 9, € across
        ("ééééééé", "ééééé"),         // 14 bytes, limit 10 (even)
        ("0123456789", "0123456789"), // exactly the limit: not truncated
    ];
    for (i, (content, kept)) in cases.iter().enumerate() {
        let name = format!("u{i}.txt");
        f.write(&name, content);
        let v = f.call("read_file", json!({ "path": name }));
        let d = assert_ok(&v);
        assert_eq!(d["content"], json!(kept), "{content:?}");
        assert_eq!(d["bytes"], json!(kept.len()), "{content:?}");
        assert_eq!(d["total_bytes"], json!(content.len()), "{content:?}");
        let truncated = kept.len() < content.len();
        assert_eq!(d["truncated"], json!(truncated), "{content:?}");
        let notice = format!(
            "[truncated: line 1 is longer than max_read_bytes (10): only its first {} of {} bytes are shown; continue with start_line=2]",
            kept.len(),
            content.len()
        );
        assert_eq!(
            v["text"].as_str().unwrap().contains(&notice),
            truncated,
            "{content:?}: {}",
            v["text"]
        );
    }
}

#[test]
fn binary_and_non_utf8_files_are_io_errors() {
    let f = Fixture::new();
    f.write("nul.bin", b"text\0more");
    f.write("latin1.txt", b"caf\xe9\n");
    f.write("cut.txt", b"ok \xe2\x82");
    for p in ["nul.bin", "latin1.txt", "cut.txt"] {
        let msg = assert_err(&f.call("read_file", json!({ "path": p })), "io_error");
        assert!(
            msg.contains("binary") || msg.contains("UTF-8"),
            "{p}: {msg}"
        );
    }
}

#[test]
fn huge_directory_is_listed_bounded_and_sorted() {
    let f = Fixture::new();
    f.mkdir("big");
    let n = 100_000;
    let mut names: Vec<String> = (0..n).map(|i| format!("e{i}")).collect();
    for name in &names {
        f.create_file(&format!("big/{name}"));
    }
    names.sort();
    let v = f.call("list_dir", json!({"path": "big"}));
    let d = assert_ok(&v);
    assert_eq!(d["total"], json!(n));
    assert_eq!(d["truncated"], json!(true));
    let entries = d["entries"].as_array().unwrap();
    assert_eq!(entries.len(), 500);
    let got: Vec<&str> = entries
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    let want: Vec<&str> = names.iter().take(500).map(String::as_str).collect();
    assert_eq!(got, want, "not the first 500 names in byte order");
    assert!(v["text"].as_str().unwrap().contains(&format!(
        "[truncated: showing the first 500 of {n} entries]"
    )));
    assert!(entries
        .iter()
        .all(|e| e["type"] == json!("file") && e["size"] == json!(0)));
}

#[test]
fn list_reports_types_sizes_and_byte_order() {
    let f = Fixture::new();
    f.write("b.txt", "12345");
    f.write("B.txt", "1");
    f.write("ä.txt", "");
    f.mkdir("adir");
    f.symlink("b.txt", "link");
    f.symlink("/nonexistent/far/away", "dangling");
    f.mkfifo("pipe");
    let v = f.call("list_dir", json!({"path": "."}));
    let d = assert_ok(&v);
    assert_eq!(d["total"], json!(7));
    assert_eq!(d["truncated"], json!(false));
    let got: Vec<(String, String)> = d["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["name"].as_str().unwrap().to_owned(),
                e["type"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    let want: Vec<(String, String)> = [
        ("B.txt", "file"),
        ("adir", "dir"),
        ("b.txt", "file"),
        ("dangling", "symlink"),
        ("link", "symlink"),
        ("pipe", "other"),
        ("ä.txt", "file"),
    ]
    .iter()
    .map(|(a, b)| (a.to_string(), b.to_string()))
    .collect();
    assert_eq!(got, want);
    let size = |name: &str| {
        d["entries"]
            .as_array()
            .unwrap()
            .iter()
            .find(|e| e["name"] == json!(name))
            .unwrap()["size"]
            .clone()
    };
    assert_eq!(size("b.txt"), json!(5));
    assert_eq!(
        size("link"),
        json!(5),
        "symlink size must be lstat size (target length)"
    );
    assert_eq!(size("dangling"), json!("/nonexistent/far/away".len()));
    assert_eq!(size("ä.txt"), json!(0));
    // Default path is ".".
    assert_eq!(assert_ok(&f.call("list_dir", json!({})))["total"], json!(7));
}

#[test]
fn write_limits_are_enforced_before_touching_disk() {
    let f = Fixture::with_config(limits(json!({"max_write_bytes": 100})));
    f.write("keep.txt", "original");
    for tool in ["write_file", "append_file"] {
        let v = f.call(
            tool,
            json!({"path": "keep.txt", "content": "x".repeat(101)}),
        );
        assert_err(&v, "too_large");
        let v = f.call(
            tool,
            json!({"path": "new/n.txt", "content": "x".repeat(101)}),
        );
        assert_err(&v, "too_large");
    }
    assert_eq!(f.read("keep.txt"), b"original");
    assert!(!f.target_exists("new"), "parent created by a refused write");
    let v = f.call(
        "write_file",
        json!({"path": "keep.txt", "content": "y".repeat(100)}),
    );
    assert_eq!(assert_ok(&v)["bytes_written"], json!(100));
    // multi-byte: 34 × 3 bytes = 102 bytes > 100
    let v = f.call(
        "write_file",
        json!({"path": "keep.txt", "content": "€".repeat(34)}),
    );
    assert_err(&v, "too_large");
    assert_eq!(f.read("keep.txt"), "y".repeat(100).as_bytes());
    assert_eq!(f.snapshot("").len(), 1, "temp files left");
}

#[test]
fn edit_result_and_source_must_fit() {
    let f = Fixture::with_config(limits(json!({"max_write_bytes": 100})));
    let body = format!("{}X{}", "a".repeat(45), "b".repeat(44)); // 90 bytes
    f.write("e.txt", &body);
    let v = f.call(
        "edit_file",
        json!({"path": "e.txt", "old_text": "X", "new_text": "Y".repeat(12)}),
    );
    assert_err(&v, "too_large");
    assert_eq!(f.read("e.txt"), body.as_bytes());
    let v = f.call(
        "edit_file",
        json!({"path": "e.txt", "old_text": "X", "new_text": "Y".repeat(11)}),
    );
    assert_eq!(assert_ok(&v)["replaced"], json!(1));
    assert_eq!(f.read("e.txt").len(), 100);
    f.write("big.txt", "z".repeat(150) + "Q");
    let v = f.call(
        "edit_file",
        json!({"path": "big.txt", "old_text": "Q", "new_text": ""}),
    );
    assert_err(&v, "too_large");
    assert_eq!(f.read("big.txt").len(), 151);
    // replace_all growth over the limit
    f.write("many.txt", "ab".repeat(40));
    let v = f.call(
        "edit_file",
        json!({"path": "many.txt", "old_text": "a", "new_text": "aa", "replace_all": true}),
    );
    assert_err(&v, "too_large");
    assert_eq!(f.read("many.txt"), "ab".repeat(40).as_bytes());
    assert_eq!(f.snapshot("").len(), 3, "temp files left");
}

#[test]
fn type_mismatches() {
    let f = Fixture::new();
    f.mkdir("dir/sub");
    f.write("file.txt", "x");
    f.write("two.txt", "x x");
    let mut cases: Vec<(&str, String, &str)> = vec![];
    for tool in ["read_file", "write_file", "append_file", "edit_file"] {
        for p in ["dir", "dir/sub", "dir/", "."] {
            cases.push((tool, p.into(), "not_a_file"));
        }
        cases.push((tool, "file.txt/x".into(), "not_a_directory"));
    }
    cases.push(("list_dir", "file.txt".into(), "not_a_directory"));
    cases.push(("list_dir", "file.txt/".into(), "not_a_directory"));
    cases.push(("write_file", "file.txt/a/b.txt".into(), "not_a_directory"));
    for tool in ["read_file", "edit_file", "list_dir"] {
        cases.push((tool, "missing.txt".into(), "path_not_found"));
        cases.push((tool, "missing/x.txt".into(), "path_not_found"));
    }
    let mut failures = vec![];
    for (tool, path, code) in &cases {
        let v = f.call(tool, args_for(tool, path, "x", "y"));
        if v["ok"] != json!(false) || v["error"]["code"] != json!(code) {
            failures.push(format!(
                "{tool} {path:?}: expected {code}, got {}",
                short(&v)
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} type mismatch failures:\n{}",
        failures.len(),
        failures.join("\n")
    );
    let v = f.call(
        "edit_file",
        json!({"path": "file.txt", "old_text": "q", "new_text": "y"}),
    );
    assert_err(&v, "edit_not_found");
    let v = f.call(
        "edit_file",
        json!({"path": "two.txt", "old_text": "x", "new_text": "y"}),
    );
    let msg = assert_err(&v, "ambiguous_edit");
    assert!(
        msg.contains('2'),
        "ambiguous_edit must give the count: {msg}"
    );
    assert_eq!(f.read("file.txt"), b"x");
    assert_eq!(f.read("two.txt"), b"x x");
    assert!(f.is_dir("dir/sub"));
    assert_eq!(f.snapshot("").len(), 4, "something was created");
}
}

const DEEP_ENV: &str = "WSFS_DEEP_CHILD";

const DEPTH: usize = 1500;

/// Child half of `deep_nesting_under_low_fd_limit`: runs only when re-invoked with the env var.
#[test]
#[ignore = "child process of deep_nesting_under_low_fd_limit"]
fn deep_nesting_child() {
    let Ok(dir) = std::env::var(DEEP_ENV) else {
        return;
    };
    limit_open_files(64);
    let ws = open_ws(std::path::Path::new(&dir), json!({}));
    let deep = "d/".repeat(DEPTH);
    let file = format!("{deep}bottom.txt");
    let r: Vec<(&str, Value)> = vec![
        ("write_file", json!({"path": file, "content": "deep\n"})),
        ("append_file", json!({"path": file, "content": "er\n"})),
        (
            "edit_file",
            json!({"path": file, "old_text": "er", "new_text": "est"}),
        ),
        ("read_file", json!({"path": file})),
        ("list_dir", json!({"path": deep})),
        (
            "write_file",
            json!({"path": file, "content": "deep\nest\n"}),
        ),
    ];
    for (tool, args) in r {
        let v = call(ws, tool, args);
        let d = assert_ok(&v);
        if tool == "read_file" {
            assert_eq!(d["content"], json!("deep\nest\n"));
        }
        if tool == "list_dir" {
            assert_eq!(d["entries"][0]["name"], json!("bottom.txt"));
        }
    }
    assert_ok(&close_ws(ws));
}

#[test]
fn deep_nesting_under_low_fd_limit() {
    let tmp = tempfile::tempdir().unwrap();
    run_child_test(&crate::test_name!(deep_nesting_child), DEEP_ENV, tmp.path());
    let path = tmp.path().join("d/".repeat(DEPTH)).join("bottom.txt");
    assert_eq!(fs::read(&path).unwrap(), b"deep\nest\n");
}
