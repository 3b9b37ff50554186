//! `restrict_to_workspace: false` (findings 8 and 9): system locations are refused whatever
//! the root, a root inside a protected location keeps only its own contents, and the open
//! warning says what is and is not protected. These tests only read and list system paths.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::Path;

fn unrestricted(root: &Path) -> (u64, Value) {
    let v = open_raw(&json!({"root": root, "restrict_to_workspace": false}).to_string());
    let ws = assert_ok(&v)["workspace"].as_u64().unwrap();
    (ws, v)
}

#[track_caller]
fn denied(ws: u64, tool: &str, path: &str) {
    let v = call(ws, tool, json!({ "path": path }));
    let message = assert_err(&v, "permission_denied");
    assert!(
        message.contains("protected system location"),
        "{tool} {path}: {message}"
    );
}

/// Root `/` used to unlock everything, `/etc/hostname` and `/proc/self/status` included.
#[test]
fn a_root_of_slash_unlocks_no_system_location() {
    let (ws, _) = unrestricted(Path::new("/"));
    for path in [
        "/etc/hostname",
        "etc/hostname",
        "/proc/self/status",
        "/sys/kernel",
        "/usr/bin",
        "/var/log",
        "/var",
        "/run",
        "/srv",
        "/root",
        "/var/tmpx",
    ] {
        let tool = if path.ends_with("status") || path.ends_with("hostname") {
            "read_file"
        } else {
            "list_dir"
        };
        denied(ws, tool, path);
    }
    assert_ok(&close_ws(ws));
}

/// Root `/etc` used to allow `/etc` itself.
#[test]
fn a_protected_root_unlocks_nothing_and_says_so() {
    let (ws, v) = unrestricted(Path::new("/etc"));
    let warnings = v["warnings"].to_string();
    assert!(
        warnings.contains("every call on it is refused"),
        "{warnings}"
    );
    denied(ws, "list_dir", ".");
    denied(ws, "read_file", "hostname");
    denied(ws, "read_file", "/etc/hostname");
    assert_ok(&close_ws(ws));
}

#[test]
fn the_open_warning_says_what_is_and_is_not_protected() {
    let f = Fixture::new();
    let (ws, v) = unrestricted(&f.root);
    let warnings = v["warnings"].to_string();
    for part in [
        "/etc",
        "/var (except /var/tmp)",
        "/run",
        "/srv",
        "home directory",
    ] {
        assert!(warnings.contains(part), "no {part:?} in {warnings}");
    }
    assert!(!warnings.contains(f.root.to_str().unwrap()), "{warnings}");
    assert_ok(&close_ws(ws));
    // Restricted mode has nothing to warn about.
    let v = open_raw(&json!({ "root": f.root }).to_string());
    assert_eq!(v["warnings"], json!([]));
    assert_ok(&close_ws(v["data"]["workspace"].as_u64().unwrap()));
}

#[test]
fn var_tmp_and_other_places_stay_open() {
    let f = Fixture::new();
    let (ws, _) = unrestricted(&f.root);
    let scratch = tempfile::tempdir_in("/var/tmp").unwrap();
    let file = scratch.path().join("x.txt");
    let file = file.to_str().unwrap();
    assert_ok(&call(
        ws,
        "write_file",
        json!({"path": file, "content": "scratch"}),
    ));
    assert_eq!(
        assert_ok(&call(ws, "read_file", json!({ "path": file })))["content"],
        json!("scratch")
    );
    fs::write(f.base.join("sibling.txt"), "next door").unwrap();
    assert_ok(&call(ws, "read_file", json!({"path": "../sibling.txt"})));
    denied(ws, "list_dir", "/var/log");
    assert_ok(&close_ws(ws));
}

/// CI runs as root with workspaces under `/root`: a root strictly inside a protected location
/// keeps its own contents, and nothing else of that location.
#[test]
fn a_root_inside_a_protected_location_keeps_its_own_contents() {
    let home = Path::new("/root");
    let tmp = match tempfile::tempdir_in(home) {
        Ok(tmp) => tmp,
        Err(e) => {
            eprintln!("SKIPPED: cannot create a directory under /root ({e})");
            return;
        }
    };
    let root = tmp.path().join("ws");
    fs::create_dir(&root).unwrap();
    fs::write(tmp.path().join("outside.txt"), "private").unwrap();
    let (ws, _) = unrestricted(&root);
    assert_ok(&call(
        ws,
        "write_file",
        json!({"path": "a/b.txt", "content": "ok"}),
    ));
    assert_ok(&call(ws, "read_file", json!({"path": "a/b.txt"})));
    assert_ok(&call(ws, "list_dir", json!({"path": "."})));
    let inside = root.join("a/b.txt");
    assert_ok(&call(ws, "read_file", json!({ "path": inside })));
    denied(ws, "read_file", "../outside.txt");
    denied(
        ws,
        "read_file",
        tmp.path().join("outside.txt").to_str().unwrap(),
    );
    assert_ok(&close_ws(ws));
}

/// Finding 9: the message used to read "/etc/passwd// ends with '/'".
#[test]
fn a_trailing_slash_is_shown_once() {
    let f = Fixture::new();
    let (ws, _) = unrestricted(&f.root);
    for (path, shown) in [
        ("/etc/passwd/", "/etc/passwd/ "),
        ("a.txt/", "a.txt/ "),
        ("/etc//passwd//", "/etc/passwd/ "),
    ] {
        let message = assert_err(
            &call(ws, "read_file", json!({ "path": path })),
            "not_a_file",
        );
        assert!(message.starts_with(shown), "{path}: {message}");
        assert!(!message.contains("//"), "{path}: {message}");
    }
    assert_ok(&close_ws(ws));
    let message = assert_err(
        &f.call("read_file", json!({"path": "a.txt/"})),
        "not_a_file",
    );
    assert!(message.starts_with("a.txt/ ends with '/'"), "{message}");
}

/// The names directly under `/` that are protected locations (all of them are top-level).
const PROTECTED_NAMES: [&str; 16] = [
    "etc", "root", "proc", "sys", "dev", "boot", "bin", "sbin", "lib", "lib32", "lib64", "libx32",
    "usr", "var", "run", "srv",
];

fn names_of(tree: &Value) -> Vec<String> {
    let mut out = Vec::new();
    for child in tree["children"].as_array().into_iter().flatten() {
        out.push(child["name"].as_str().unwrap().to_owned());
    }
    out
}

/// Finding 16.1: a walk from `/` (however it is spelled) listed `/etc` and `/proc`. Walks and
/// listings now skip every protected location as a direct call refuses it, and count them in
/// `protected`. The tests run as root, so the process could read all of it.
#[test]
fn listings_of_the_host_root_skip_and_count_protected_locations() {
    let f = Fixture::new();
    let (ws, _) = unrestricted(&f.root);
    let present = fs::read_dir("/")
        .unwrap()
        .filter(|e| {
            let name = e.as_ref().unwrap().file_name();
            PROTECTED_NAMES.contains(&name.to_str().unwrap_or(""))
        })
        .count() as u64;
    assert!(present > 0, "no protected location under / to test with");
    let up = "../".repeat(f.root.components().count() - 1);
    for start in ["/", "//", "/tmp/..", up.trim_end_matches('/')] {
        let v = call(ws, "list_dir", json!({ "path": start }));
        let data = assert_ok(&v);
        let shown: Vec<&str> = data["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["name"].as_str().unwrap())
            .collect();
        for name in PROTECTED_NAMES {
            assert!(!shown.contains(&name), "{start}: {name} listed: {shown:?}");
        }
        assert_eq!(data["protected"], json!(present), "{start}: {v}");
        let text = v["text"].as_str().unwrap();
        assert!(
            text.contains("protected system location"),
            "{start}: {text}"
        );

        let v = call(ws, "list_dir", json!({ "path": start, "depth": 2 }));
        let data = assert_ok(&v);
        let top = names_of(&data["tree"]);
        for name in PROTECTED_NAMES {
            assert!(
                !top.iter().any(|t| t == name),
                "{start}: {name} in the tree"
            );
        }
        let text = v["text"].as_str().unwrap();
        for inside in ["shadow", "passwd", "hostname", "self", "cpuinfo"] {
            assert!(!text.contains(inside), "{start}: {inside} listed: {text}");
        }
        assert_eq!(data["protected"], json!(present), "{start}");
        assert!(
            text.contains("protected system location"),
            "{start}: {text}"
        );
    }
    // A restricted workspace has nothing protected, and says nothing about it.
    let v = f.call("list_dir", json!({}));
    assert!(assert_ok(&v).get("protected").is_none(), "{v}");
    assert_ok(&close_ws(ws));
}

/// The paths of a walk's results without the start's spelling (`/tmp/../home/u/notes.txt`
/// is `home/u/notes.txt`).
fn tails(values: &Value, key: Option<&str>) -> Vec<String> {
    let mut out = Vec::new();
    for v in values.as_array().unwrap() {
        let path = match key {
            Some(key) => v[key].as_str().unwrap(),
            None => v.as_str().unwrap(),
        };
        let tail = ["home/u/notes.txt", "tmp/ws/a.txt", "var/tmp/scratch.txt"]
            .into_iter()
            .find(|t| path.ends_with(t))
            .unwrap_or(path);
        let prefix = &path[..path.len() - tail.len()];
        assert!(
            prefix
                .split('/')
                .all(|c| ["", ".", "..", "tmp", "ws"].contains(&c)),
            "{path}"
        );
        out.push(tail.to_string());
    }
    out
}

/// Child half of `walks_from_a_private_slash_skip_protected_locations`: in its own mount
/// namespace, chrooted into a small tree laid out like a system (with the real `/proc`
/// mounted in it), so a walk from `/` is small and fully known.
#[test]
#[ignore = "child process of walks_from_a_private_slash_skip_protected_locations"]
fn private_slash_child() {
    use std::ffi::CString;
    let Ok(fake) = std::env::var("WSFS_FAKE_ROOT") else {
        return;
    };
    let c = |p: &str| CString::new(p).unwrap();
    let proc_dir = c(&format!("{fake}/proc"));
    let (slash, proc_src, fake_c) = (c("/"), c("/proc"), c(&fake));
    // SAFETY: plain system calls on NUL-terminated strings that outlive them.
    let failed = unsafe {
        if libc::unshare(libc::CLONE_NEWNS) != 0 {
            Some("unshare(CLONE_NEWNS)")
        } else if libc::mount(
            std::ptr::null(),
            slash.as_ptr(),
            std::ptr::null(),
            libc::MS_REC | libc::MS_PRIVATE,
            std::ptr::null(),
        ) != 0
        {
            Some("mount --make-rprivate /")
        } else if libc::mount(
            proc_src.as_ptr(),
            proc_dir.as_ptr(),
            std::ptr::null(),
            libc::MS_BIND | libc::MS_REC,
            std::ptr::null(),
        ) != 0
        {
            Some("mount --bind /proc")
        } else if libc::chroot(fake_c.as_ptr()) != 0 || libc::chdir(slash.as_ptr()) != 0 {
            Some("chroot")
        } else {
            None
        }
    };
    if let Some(what) = failed {
        let e = std::io::Error::last_os_error();
        fs::write(format!("{fake}.skipped"), format!("{what}: {e}")).unwrap();
        return;
    }
    let (ws, _) = unrestricted(Path::new("/tmp/ws"));
    let protected = 7; // bin etc proc root srv usr var
    for start in ["/", "//", "/tmp/..", "../.."] {
        let v = call(
            ws,
            "search_text",
            json!({"query": "root:", "path": start, "glob": "shadow"}),
        );
        let data = assert_ok(&v);
        assert_eq!(data["matches"], json!([]), "{start}: {v}");
        assert_eq!(data["protected"], json!(protected), "{start}: {v}");
        let text = v["text"].as_str().unwrap();
        assert!(text.contains("protected system location"), "{text}");

        let v = call(ws, "search_text", json!({"query": "root", "path": start}));
        let files = tails(&assert_ok(&v)["matches"], Some("file"));
        assert_eq!(files, ["home/u/notes.txt"], "{start}: {v}");

        let v = call(
            ws,
            "search_text",
            json!({"query": "x", "path": start, "glob": "/root/**", "include_hidden": true}),
        );
        assert_eq!(assert_ok(&v)["matches"], json!([]), "{start}: {v}");

        let v = call(
            ws,
            "find_files",
            json!({"pattern": "**", "path": start, "include_hidden": true}),
        );
        let data = assert_ok(&v);
        let files = tails(&data["files"], None);
        assert_eq!(files, ["home/u/notes.txt", "tmp/ws/a.txt"], "{start}: {v}");
        assert_eq!(data["protected"], json!(protected), "{start}: {v}");
        assert!(v["text"]
            .as_str()
            .unwrap()
            .contains("protected system location"));

        let v = call(ws, "list_dir", json!({"path": start, "depth": 4}));
        let data = assert_ok(&v);
        assert_eq!(names_of(&data["tree"]), ["home", "tmp"], "{start}: {v}");
        assert_eq!(data["protected"], json!(protected), "{start}: {v}");
    }
    // Below a protected location's open part, and in a workspace strictly inside one, the
    // walks see everything a direct call may read.
    let v = call(
        ws,
        "find_files",
        json!({"pattern": "*", "path": "/var/tmp"}),
    );
    assert_eq!(
        assert_ok(&v)["files"],
        json!(["/var/tmp/scratch.txt"]),
        "{v}"
    );
    assert_ok(&close_ws(ws));
    let (ci, _) = unrestricted(Path::new("/root/ci/ws"));
    let v = call(ci, "find_files", json!({"pattern": "*"}));
    assert_eq!(assert_ok(&v)["files"], json!(["inside.txt"]), "{v}");
    let v = call(ci, "find_files", json!({"pattern": "**", "path": "/"}));
    assert_eq!(
        assert_ok(&v)["files"],
        json!(["/home/u/notes.txt", "/tmp/ws/a.txt"]),
        "{v}"
    );
    assert_ok(&close_ws(ci));
}

#[test]
fn walks_from_a_private_slash_skip_protected_locations() {
    let tmp = tempfile::tempdir().unwrap();
    let fake = fs::canonicalize(tmp.path()).unwrap().join("slash");
    for (path, content) in [
        ("etc/shadow", "root:$6$salt$hash:19000:0:99999:7:::\n"),
        ("root/.secret", "root: x\n"),
        ("root/ci/ws/inside.txt", "root: ci\n"),
        ("usr/share/doc", "root: x\n"),
        ("var/log/syslog", "root: x\n"),
        ("var/tmp/scratch.txt", "scratch\n"),
        ("srv/site/index.html", "root: x\n"),
        ("home/u/notes.txt", "root: not a secret\n"),
        ("tmp/ws/a.txt", "a\n"),
    ] {
        let p = fake.join(path);
        fs::create_dir_all(p.parent().unwrap()).unwrap();
        fs::write(p, content).unwrap();
    }
    fs::create_dir(fake.join("proc")).unwrap();
    std::os::unix::fs::symlink("usr/bin", fake.join("bin")).unwrap();
    let out = child_test(&crate::test_name!(private_slash_child))
        .env("WSFS_FAKE_ROOT", &fake)
        .output()
        .unwrap();
    if let Ok(why) = fs::read_to_string(fake.with_extension("skipped")) {
        eprintln!(
            "SKIPPED: cannot make a private / to walk ({why}); needs root and mount namespaces"
        );
        return;
    }
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}
