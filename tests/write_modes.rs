//! `write_file`'s `mode`: overwrite (the default), create (never replaces, decided by the
//! kernel even against a racing creator) and append, through JSON and the content buffer.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::sync::{Arc, Barrier};

/// Writes through JSON and through the content buffer, which must agree.
fn both_ways(f: &Fixture, path: &str, mode: &str, content: &str) -> [Value; 2] {
    let json_way = f.call(
        "write_file",
        json!({"path": path, "content": content, "mode": mode}),
    );
    let args = json!({"path": format!("{path}.buf"), "mode": mode}).to_string();
    let buffer_way = call_content(f.ws, "write_file", &args, content.as_bytes());
    [json_way, buffer_way]
}

crate::backend_tests! {
#[test]
fn overwrite_is_the_default_and_reports_what_existed() {
    let f = Fixture::new();
    let v = f.call("write_file", json!({"path": "a.txt", "content": "one"}));
    assert_eq!(
        assert_ok(&v),
        &json!({"path": "a.txt", "bytes_written": 3, "created": true, "existed_before": false, "mode": "overwrite"})
    );
    let [replaced, created] = both_ways(&f, "a.txt", "overwrite", "two");
    assert_eq!(assert_ok(&replaced)["existed_before"], true);
    assert_eq!(assert_ok(&created)["existed_before"], false);
    for v in both_ways(&f, "a.txt", "overwrite", "three") {
        let data = assert_ok(&v);
        assert_eq!(
            (&data["created"], &data["existed_before"]),
            (&json!(false), &json!(true))
        );
        assert_eq!(v["warnings"], json!(["file exists, overwriting"]));
    }
    assert_eq!(f.read("a.txt"), b"three");
    assert_eq!(f.read("a.txt.buf"), b"three");
}

#[test]
fn create_never_replaces_anything() {
    let f = Fixture::new();
    for v in both_ways(&f, "new/n.txt", "create", "first") {
        let data = assert_ok(&v);
        assert_eq!(
            (&data["created"], &data["existed_before"]),
            (&json!(true), &json!(false))
        );
        assert_eq!(v["warnings"], json!([]), "{v}");
        assert_eq!(data["mode"], "create", "{v}");
    }
    for v in both_ways(&f, "new/n.txt", "create", "second") {
        let msg = assert_err(&v, "file_exists");
        assert!(msg.contains("overwrite"), "says how to replace it: {msg}");
    }
    assert_eq!(f.read("new/n.txt"), b"first");
    assert_eq!(f.read("new/n.txt.buf"), b"first");
    // Something else than a file in the way.
    f.mkdir("dir");
    assert_err(
        &f.call(
            "write_file",
            json!({"path": "dir", "content": "x", "mode": "create"}),
        ),
        "not_a_file",
    );
    // A dangling symlink is followed (as by every write): its target is created.
    f.symlink("target.txt", "link");
    assert_ok(&f.call(
        "write_file",
        json!({"path": "link", "content": "t", "mode": "create"}),
    ));
    assert_eq!(f.read("target.txt"), b"t");
    assert_err(
        &f.call(
            "write_file",
            json!({"path": "link", "content": "u", "mode": "create"}),
        ),
        "file_exists",
    );
    // A refused create leaves no temp file and no directory behind.
    let names = f.names("new");
    assert_eq!(names.len(), 2, "{names:?}");
}

#[test]
fn append_mode_is_append_file() {
    let f = Fixture::new();
    for v in both_ways(&f, "log.txt", "append", "a\n") {
        let data = assert_ok(&v);
        assert_eq!(
            (&data["created"], &data["existed_before"]),
            (&json!(true), &json!(false))
        );
        assert_eq!(data["bytes_written"], 2);
        assert_eq!(data["mode"], "append");
    }
    for v in both_ways(&f, "log.txt", "append", "b\n") {
        let data = assert_ok(&v);
        assert_eq!(
            (&data["created"], &data["existed_before"]),
            (&json!(false), &json!(true))
        );
        assert_eq!(
            v["text"],
            format!("appended 2 bytes to {}", data["path"].as_str().unwrap())
        );
    }
    assert_eq!(f.read("log.txt"), b"a\nb\n");
    assert_eq!(f.read("log.txt.buf"), b"a\nb\n");
    // The same refusals as append_file: a hard-linked file is not appended in place.
    f.hard_link("log.txt", "twin.txt");
    assert_err(
        &f.call(
            "write_file",
            json!({"path": "log.txt", "content": "c", "mode": "append"}),
        ),
        "permission_denied",
    );
}

#[test]
fn an_unknown_mode_is_invalid_arguments() {
    let f = Fixture::new();
    for mode in [json!("replace"), json!(1), json!(null), json!("Create")] {
        let v = f.call(
            "write_file",
            json!({"path": "a", "content": "x", "mode": mode}),
        );
        let msg = assert_err(&v, "invalid_arguments");
        assert!(msg.contains("mode") || msg.contains("variant"), "{msg}");
    }
    assert!(!f.target_exists("a"));
}

/// Many threads create the same name at once, round after round: exactly one wins each round,
/// every other gets `file_exists`, and the file holds the winner's content, whole.
#[test]
fn create_races_have_exactly_one_winner() {
    const THREADS: usize = 12;
    const ROUNDS: usize = 150;
    let f = Fixture::new();
    let ws = f.ws;
    let barrier = Arc::new(Barrier::new(THREADS));
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let barrier = barrier.clone();
            std::thread::spawn(move || {
                let mut wins = Vec::new();
                for round in 0..ROUNDS {
                    // Content of a few pages, unique to the thread, so a mix would show.
                    let content = format!("{t:02}-{round}\n").repeat(1500);
                    let args = json!({"path": format!("r/{round}.txt"), "mode": "create"});
                    barrier.wait();
                    let v = call_content(ws, "write_file", &args.to_string(), content.as_bytes());
                    match err_code(&v) {
                        None => wins.push((round, content)),
                        Some("file_exists") => {}
                        Some(other) => panic!("round {round}: {other}: {v}"),
                    }
                }
                wins
            })
        })
        .collect();
    let mut winners = vec![Vec::new(); ROUNDS];
    for h in handles {
        for (round, content) in h.join().unwrap() {
            winners[round].push(content);
        }
    }
    for (round, won) in winners.iter().enumerate() {
        assert_eq!(won.len(), 1, "round {round}: {} winners", won.len());
        assert_eq!(
            f.read(&format!("r/{round}.txt")),
            won[0].as_bytes(),
            "round {round}"
        );
    }
    assert_eq!(
        f.names("r").len(),
        ROUNDS,
        "a temp file was left"
    );
}

/// Every mode, killed after making the parents and before the commit: the next open removes
/// them, and the record with them.
#[test]
fn parents_left_by_a_killed_write_are_removed_at_the_next_open() {
    let f = Fixture::with_state_dir(json!({}));
    let before = f.snapshot("");
    for mode in ["overwrite", "create", "append"] {
        wsfs::testing::abandon_next_new_dirs(&f.root, true);
        let path = format!("{mode}/a/b/f.txt");
        let v = f.call(
            "write_file",
            json!({"path": path, "content": "x", "mode": mode}),
        );
        assert_err(&v, "io_error");
        assert!(f.is_dir(&format!("{mode}/a/b")));
    }
    wsfs::testing::abandon_next_new_dirs(&f.root, true);
    let v = f.call(
        "append_file",
        json!({"path": "app/x/y.log", "content": "x"}),
    );
    assert_err(&v, "io_error");
    assert_eq!(f.state_files().len(), 4, "{:?}", f.state_files());
    let again = open_ws(&f.root, json!({"state_dir": f.base.join("state")}));
    assert_eq!(f.snapshot(""), before, "parents left behind");
    assert!(f.state_files().is_empty(), "{:?}", f.state_files());
    assert_ok(&close_ws(again));
}

/// Outside the root too, the parents a killed call made are removed at the next open (the
/// record names them from `/`).
#[test]
fn parents_a_killed_call_made_outside_the_root_are_removed_at_the_next_open() {
    let f = Fixture::new();
    if f.skip_on(Backend::Overlay, "an overlay session confines to its root (restrict_to_workspace: false is refused, tested in overlay_view)") {
        return;
    }
    let config = json!({"restrict_to_workspace": false, "state_dir": f.base.join("state")});
    let ws = open_ws(&f.root, config.clone());
    fs::create_dir(f.base.join("out")).unwrap();
    let target = f.base.join("out/a/b/f.txt");
    wsfs::testing::abandon_next_new_dirs(&f.root, true);
    let v = call(ws, "write_file", json!({"path": target, "content": "x"}));
    assert_err(&v, "io_error");
    assert!(f.base.join("out/a/b").is_dir());
    assert_ok(&close_ws(ws));
    let again = open_ws(&f.root, config);
    assert_eq!(fs::read_dir(f.base.join("out")).unwrap().count(), 0);
    assert_ok(&close_ws(again));
}

}
