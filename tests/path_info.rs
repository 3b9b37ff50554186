//! `get_path_info` through the C ABI: files, directories, symlinks inside and outside,
//! missing paths, special files, limits, and no absolute host path in any result.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::{MetadataExt, PermissionsExt};

fn info(f: &Fixture, path: &str) -> Value {
    let v = f.call("get_path_info", json!({ "path": path }));
    if v["ok"] == json!(true) {
        let root = f.root.to_str().unwrap();
        let base = f.base.to_str().unwrap();
        let all = v.to_string();
        assert!(
            !all.contains(root) && !all.contains(base),
            "absolute host path in {all}"
        );
    }
    v
}

/// `date -u` formatting of a Unix time, an oracle independent of the library.
fn utc(seconds: i64) -> String {
    let out = std::process::Command::new("date")
        .args(["-u", "-d", &format!("@{seconds}"), "+%Y-%m-%dT%H:%M:%SZ"])
        .output()
        .unwrap();
    String::from_utf8(out.stdout).unwrap().trim().to_string()
}

fn is_root() -> bool {
    unsafe { libc::geteuid() == 0 }
}

crate::backend_tests! {
#[test]
fn a_text_file_is_described_in_full() {
    let f = Fixture::new();
    f.write("src/main.rs", "fn main() {\r\n}\r\nlast");
    f.set_mode("src/main.rs", 0o640);
    let v = info(&f, "src/main.rs");
    let d = assert_ok(&v);
    let meta = f.stat("src/main.rs");
    assert_eq!(d["path"], json!("src/main.rs"));
    assert_eq!(d["exists"], json!(true));
    assert_eq!(d["type"], json!("file"));
    assert_eq!(d["size"], json!(meta.len()));
    assert_eq!(d["modified"], json!(utc(meta.mtime())));
    assert_eq!(d["mode"], json!("0640"));
    assert_eq!(
        (d["readable"].clone(), d["writable"].clone()),
        (json!(true), json!(true))
    );
    assert_eq!(d["line_count"], json!(3));
    assert_eq!(d["sha256"], json!(f.sha256("src/main.rs")));
    assert!(d.get("symlink_target").is_none());
    let t = v["text"].as_str().unwrap();
    assert!(
        t.starts_with("src/main.rs: file, 20 bytes, 3 lines\n"),
        "{t}"
    );
    assert!(
        t.contains(&format!("sha256 {}", d["sha256"].as_str().unwrap())),
        "{t}"
    );
}

#[test]
fn directories_and_the_root() {
    let f = Fixture::new();
    f.mkdir("dir");
    for path in ["dir", "dir/", ".", "dir/.."] {
        let v = info(&f, path);
        let d = assert_ok(&v);
        assert_eq!(d["type"], json!("dir"), "{path}");
        assert!(
            d.get("line_count").is_none() && d.get("sha256").is_none(),
            "{path}"
        );
    }
    assert_eq!(assert_ok(&info(&f, "."))["path"], json!("."));
    let mode = f.stat(".").permissions().mode() & 0o7777;
    assert_eq!(
        assert_ok(&info(&f, "."))["mode"],
        json!(format!("{mode:04o}"))
    );
}

#[test]
fn symlinks_are_described_not_followed() {
    let f = Fixture::new();
    f.write("real/target.txt", "inside\n");
    let outside = f.base.join("outside.txt");
    fs::write(&outside, "OUTSIDE OUTSIDE OUTSIDE\n").unwrap();
    f.symlink("real/target.txt", "link");
    f.symlink("link", "chain");
    f.symlink("real", "dirlink");
    f.symlink("real/missing.txt", "dangling");
    f.symlink("../outside.txt", "escape");
    f.symlink(&outside, "absolute");
    f.symlink(f.p("real/target.txt"), "absolute_inside");
    f.mkdir("sub");
    f.symlink("../real/target.txt", "sub/up");
    for (path, target) in [
        ("link", Some("real/target.txt")),
        ("chain", Some("real/target.txt")),
        ("dirlink", Some("real")),
        ("dangling", Some("real/missing.txt")),
        ("sub/up", Some("real/target.txt")),
        ("escape", None),
        ("absolute", None),
        // An absolute target inside the workspace is followed (issue 18 gap 2).
        ("absolute_inside", Some("real/target.txt")),
    ] {
        let v = info(&f, path);
        let d = assert_ok(&v);
        let own = f.lstat(path);
        assert_eq!(d["type"], json!("symlink"), "{path}");
        assert_eq!(d["size"], json!(own.len()), "{path}: the link's own size");
        assert_eq!(d["mode"], json!("0777"), "{path}");
        assert_eq!(
            d.get("symlink_target").and_then(Value::as_str),
            target,
            "{path}"
        );
        assert!(
            d.get("sha256").is_none() && d.get("line_count").is_none(),
            "{path}"
        );
    }
    let t = assert_ok(&info(&f, "escape")).clone();
    assert!(t.get("symlink_target").is_none());
    // A symlinked directory on the way is followed (inside the workspace), the last name not.
    let d = assert_ok(&info(&f, "dirlink/target.txt")).clone();
    assert_eq!(
        (d["type"].clone(), d["line_count"].clone()),
        (json!("file"), json!(1))
    );
    // Through an escaping directory link: refused, not described.
    f.symlink("..", "up");
    assert_err(&info(&f, "up/outside.txt"), "outside_workspace");
}

#[test]
fn a_missing_path_is_not_an_error() {
    let f = Fixture::new();
    f.write("src/main.rs", "x\n");
    for path in [
        "nope.txt",
        "no/such/dir.txt",
        "src/main.rs/below",
        "src/mian.rs",
    ] {
        let v = info(&f, path);
        let d = assert_ok(&v);
        assert_eq!(d, &json!({"path": path, "exists": false}), "{path}");
    }
    let t = info(&f, "src/mian.rs")["text"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(t, "src/mian.rs does not exist; did you mean src/main.rs?");
    assert_err(&info(&f, "../outside.txt"), "outside_workspace");
    assert_err(&info(&f, "/etc/passwd"), "outside_workspace");
    let abs = format!("{}/src/main.rs", f.root.display());
    assert_eq!(assert_ok(&info(&f, &abs))["path"], json!("src/main.rs"));
}

#[test]
fn special_files_are_never_opened() {
    let f = Fixture::new();
    f.mkfifo("fifo");
    let _l = std::os::unix::net::UnixListener::bind(f.disk_path("sock")).unwrap();
    let ws = f.ws;
    for path in ["fifo", "sock"] {
        let v = with_watchdog(10, "get_path_info on a special file", move || {
            call(ws, "get_path_info", json!({ "path": path }))
        });
        let d = assert_ok(&v);
        assert_eq!(d["type"], json!("other"), "{path}");
        assert!(d.get("sha256").is_none() && d.get("line_count").is_none());
    }
}

#[test]
fn line_count_and_sha256_follow_the_limits() {
    let f = Fixture::with_config(limits(json!({"max_read_bytes": 16, "max_write_bytes": 32})));
    f.write("small.txt", "a\nb\n");
    f.write("mid.txt", "0123456789\n0123456789\n"); // 22 bytes: over the read limit
    f.write("big.txt", "x".repeat(40)); // over both
    f.write("bin.dat", b"\x00\x01\x02");
    f.write("latin1.txt", b"caf\xe9\n");
    let d = |p| assert_ok(&info(&f, p)).clone();
    let small = d("small.txt");
    assert_eq!(
        (small["line_count"].clone(), small["sha256"].clone()),
        (json!(2), json!(f.sha256("small.txt")))
    );
    let mid = d("mid.txt");
    assert!(mid.get("line_count").is_none());
    assert_eq!(mid["sha256"], json!(f.sha256("mid.txt")));
    let big = d("big.txt");
    assert!(big.get("line_count").is_none() && big.get("sha256").is_none());
    for bin in ["bin.dat", "latin1.txt"] {
        let v = info(&f, bin);
        assert!(assert_ok(&v).get("line_count").is_none(), "{bin}");
        assert!(
            v["text"].as_str().unwrap().contains("binary or not UTF-8"),
            "{bin}"
        );
    }
}

#[test]
fn readable_and_writable_are_the_access_checks() {
    let f = Fixture::new();
    f.write("locked.txt", "x\n");
    f.write("readonly.txt", "x\n");
    f.set_mode("locked.txt", 0o000);
    f.set_mode("readonly.txt", 0o444);
    let locked = assert_ok(&info(&f, "locked.txt")).clone();
    let readonly = assert_ok(&info(&f, "readonly.txt")).clone();
    // Root may read and write regardless of the mode bits; everyone else may not.
    let root = json!(is_root());
    assert_eq!(
        (locked["readable"].clone(), locked["writable"].clone()),
        (root.clone(), root.clone())
    );
    assert_eq!(
        (readonly["readable"].clone(), readonly["writable"].clone()),
        (json!(true), root)
    );
    assert_eq!(locked["mode"], json!("0000"));
}

#[test]
fn times_before_the_epoch_are_written_too() {
    let f = Fixture::new();
    f.write("old.txt", "x\n");
    let c = cs(f.p("old.txt").to_str().unwrap());
    let times = [libc::timespec {
        tv_sec: -86_400 * 365,
        tv_nsec: 0,
    }; 2];
    assert_eq!(
        unsafe { libc::utimensat(libc::AT_FDCWD, c.as_ptr(), times.as_ptr(), 0) },
        0
    );
    let d = assert_ok(&info(&f, "old.txt")).clone();
    assert_eq!(d["modified"], json!(utc(-86_400 * 365)));
    assert_eq!(d["modified"], json!("1969-01-01T00:00:00Z"));
}

/// Finding 16.2: `get_path_info` resolved without the policy, so a denied file's size, line
/// count and SHA-256 (short secrets can be brute-forced from it) were shown, and a missing
/// denied path said `exists: false`. Every spelling of a denied path is `policy_denied`,
/// whether it exists or not, and nothing of it appears in a message.
#[test]
fn denied_paths_are_refused_whether_or_not_they_exist() {
    let f = Fixture::with_config(json!({"policy": {"deny_read": [".env", "secrets/"]}}));
    f.write(".env", "TOKEN=abc\n");
    f.write("app/.env", "TOKEN=def\n");
    f.write("secrets/key.txt", "k\n");
    f.mkdir("secrets/sub");
    fs::write(
        f.disk_path("secrets")
            .join(std::ffi::OsStr::from_bytes(b"caf\xe9.txt")),
        "x",
    )
    .unwrap();
    f.mkdir("sub");
    f.symlink(".env", "env-link");
    f.symlink("secrets", "sec-link");
    f.symlink("../secrets/key.txt", "sub/key-link");
    let abs = f.p(".env").to_str().unwrap().to_owned();
    let hash = f.sha256(".env");
    for path in [
        ".env",
        "./.env",
        "sub/../.env",
        abs.as_str(),
        "app/.env",
        "secrets",
        "secrets/",
        "secrets/key.txt",
        "secrets/sub",
        "sec-link/key.txt",
        "secrets/caf\\xe9.txt",
        // Missing: the same answer, so the rules are no oracle for what exists.
        "sub/.env",
        "secrets/nope.txt",
        "secrets/kez.txt",
        "secrets/no/such/dir.txt",
        "secrets/sub/no/x",
        "sec-link/no/x",
        ".env/below",
        "secrets/nope/../key.txt",
    ] {
        let v = f.call("get_path_info", json!({ "path": path }));
        let msg = assert_err(&v, "policy_denied");
        assert!(msg.contains("deny_read rule"), "{path}: {msg}");
        let all = v.to_string();
        for leak in [&hash[..], "key.txt", "sub/", "10 bytes"] {
            assert!(
                !all.contains(leak) || path.contains(leak),
                "{path}: {leak} in {all}"
            );
        }
    }
    // A symlink to a denied file is an allowed name: the link is described, never what it
    // leads to (no target, no hash), and its text does not name the target.
    for link in ["env-link", "sub/key-link"] {
        let v = f.call("get_path_info", json!({ "path": link }));
        let d = assert_ok(&v);
        assert_eq!(d["type"], json!("symlink"), "{link}");
        assert!(d.get("symlink_target").is_none(), "{link}: {v}");
        assert!(d.get("sha256").is_none() && d.get("line_count").is_none());
        let text = v["text"].as_str().unwrap();
        assert!(
            !text.contains(".env") && !text.contains("key.txt"),
            "{text}"
        );
    }
    // The hint after a missing path never names a denied one, for any tool.
    let v = f.call("get_path_info", json!({"path": "sub/.envv"}));
    assert_eq!(assert_ok(&v)["exists"], json!(false));
    let v = call_named(f.ws, "delete_file", r#"{"path": "secrets/kez.txt"}"#);
    let msg = assert_err(&v, "path_not_found");
    assert!(!msg.contains("key.txt"), "{msg}");
    let v = call_named(f.ws, "delete_file", r#"{"path": "secrets/sup/x.txt"}"#);
    let msg = assert_err(&v, "path_not_found");
    assert!(!msg.contains("sub"), "{msg}");
    // Allowed neighbours are described as before.
    f.write("ok.txt", "fine\n");
    assert_eq!(
        assert_ok(&f.call("get_path_info", json!({"path": "ok.txt"})))["line_count"],
        1
    );
    assert_eq!(
        f.call("get_path_info", json!({"path": "no/such/x"}))["data"],
        json!({"path": "no/such/x", "exists": false})
    );
}

}
