//! Every tool against every way out of the workspace: `..`, absolute paths, sibling prefixes,
//! symlinks (leaf, directory, dangling, loops, absolute/relative), magic links and literal `~`.
//! Each refusal must carry the documented code, leak nothing and change nothing outside.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

struct Esc {
    f: Fixture,
    outside: PathBuf,
    evil: PathBuf,
    /// Random part of the secret content; must never appear in any result.
    secret_tok: String,
    /// Random part of the canary file name; must never appear in any listing.
    canary_tok: String,
    /// Keeps an fd on the outside directory open for the `/proc/self/fd/N` cases.
    outside_fd: fs::File,
    before: Snapshot,
    before_root: Snapshot,
    failures: Vec<String>,
}

const OLD: &str = "OUTSIDE-SECRET-";

impl Esc {
    fn new() -> Self {
        let f = Fixture::new();
        let outside = f.base.join("outside");
        let evil = f.base.join("ws-evil");
        let secret_tok = token();
        let canary_tok = token();
        for d in [&outside, &evil] {
            fs::create_dir_all(d.join("sub")).unwrap();
            fs::write(d.join("secret.txt"), format!("{OLD}{secret_tok}\n")).unwrap();
            fs::write(
                d.join(format!("canary-{canary_tok}.txt")),
                format!("{OLD}{secret_tok}\n"),
            )
            .unwrap();
        }
        f.mkdir("a/b");
        f.write("inside.txt", "INSIDE\n");
        let o = outside.to_str().unwrap().to_owned();
        let links: Vec<(&str, String)> = vec![
            ("lnk_out_abs", o.clone()),
            ("lnk_out_rel", "../outside".into()),
            ("lnk_evil", evil.to_str().unwrap().into()),
            ("lnk_procroot", "/proc/self/root".into()),
            ("lnk_cwd", "/proc/self/cwd".into()),
            ("a/lnk_up", "../..".into()),
            ("leaf_abs", format!("{o}/secret.txt")),
            ("leaf_rel", "../outside/secret.txt".into()),
            ("a/b/leaf_deep", "../../../outside/secret.txt".into()),
            ("dangle_abs", format!("{o}/created-abs.txt")),
            ("dangle_rel", "../outside/created-rel.txt".into()),
            ("loop1", "loop2".into()),
            ("loop2", "loop1".into()),
            ("selfloop", "selfloop".into()),
        ];
        for (name, target) in links {
            f.symlink(target, name);
        }
        let outside_fd = fs::File::open(&outside).unwrap();
        f.symlink(
            format!("/proc/self/fd/{}", outside_fd.as_raw_fd()),
            "lnk_fd",
        );
        let mut e = Esc {
            f,
            outside,
            evil,
            secret_tok,
            canary_tok,
            outside_fd,
            before: Snapshot::new(),
            before_root: Snapshot::new(),
            failures: vec![],
        };
        e.before = e.outside_state();
        e.before_root = snapshot(&e.f.root);
        e
    }

    fn outside_state(&self) -> Snapshot {
        let mut s = Snapshot::new();
        for (name, d) in [("outside", &self.outside), ("ws-evil", &self.evil)] {
            for (k, v) in snapshot(d) {
                s.insert(Path::new(name).join(k), v);
            }
        }
        // Top-level names of the base directory (nothing may appear next to the root).
        for e in fs::read_dir(&self.f.base).unwrap() {
            s.insert(
                PathBuf::from(e.unwrap().file_name()),
                ("top".into(), vec![], 0, 0),
            );
        }
        s
    }

    fn args(&self, tool: &str, path: &str) -> Value {
        args_for(tool, path, OLD, "PWNED")
    }

    /// Runs `tool` on `path` and records a failure unless it is refused with one of `codes`,
    /// leaks nothing and changes nothing outside.
    fn refused(&mut self, tool: &str, path: &str, codes: &[&str]) {
        let v = self.f.call(tool, self.args(tool, path));
        let s = v.to_string();
        let code = err_code(&v).unwrap_or("<ok>").to_owned();
        if v["ok"] != json!(false) || !codes.contains(&code.as_str()) {
            self.failures.push(format!(
                "{tool} {path:?}: expected {codes:?}, got {}",
                short(&v)
            ));
        }
        if s.contains(&self.secret_tok) {
            self.failures.push(format!(
                "{tool} {path:?}: LEAKED the outside secret: {}",
                short(&v)
            ));
        }
        if s.contains(&self.canary_tok) {
            self.failures.push(format!(
                "{tool} {path:?}: LISTED the outside directory: {}",
                short(&v)
            ));
        }
        let after = self.outside_state();
        if after != self.before {
            self.failures.push(format!(
                "{tool} {path:?}: CHANGED outside: {:?}",
                diff(&self.before, &after)
            ));
            self.before = after;
        }
    }

    fn finish(self, tool: &str) {
        let root_after = snapshot(&self.f.root);
        let mut failures = self.failures;
        if root_after != self.before_root {
            failures.push(format!(
                "{tool}: refused calls changed the workspace: {:?}",
                diff(&self.before_root, &root_after)
            ));
        }
        drop(self.outside_fd);
        assert!(
            failures.is_empty(),
            "{} escape failures for {tool}:\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
}

fn diff(a: &Snapshot, b: &Snapshot) -> Vec<String> {
    let mut out = vec![];
    for (k, v) in a {
        match b.get(k) {
            None => out.push(format!("removed {}", k.display())),
            Some(w) if w != v => out.push(format!("changed {}", k.display())),
            _ => {}
        }
    }
    for k in b.keys().filter(|k| !a.contains_key(*k)) {
        out.push(format!("created {}", k.display()));
    }
    out
}

/// All escape paths for a tool: `leaf` is the name inside the outside directory
/// (empty for `list_dir`, which targets the directory itself).
fn escape_paths(e: &Esc, leaf: &str) -> Vec<String> {
    let o = e.outside.to_str().unwrap();
    let j = |p: &str| {
        if leaf.is_empty() {
            p.to_owned()
        } else {
            format!("{p}/{leaf}")
        }
    };
    let mut v = vec![
        j("../outside"),
        j("a/../../outside"),
        j("./../outside"),
        j("a/b/../../../outside"),
        j("a/../a/b/../../../outside"),
        j(".."),
        j(o),
        j(e.evil.to_str().unwrap()),
        j(&format!("{}/../outside", e.f.root.display())),
        j(&format!("/proc/self/root{o}")),
        j(&format!("/proc/self/fd/{}", e.outside_fd.as_raw_fd())),
        j("lnk_out_abs"),
        j("lnk_out_rel"),
        j("lnk_evil"),
        j(&format!("lnk_procroot{o}")),
        j("lnk_fd"),
        j("a/lnk_up/outside"),
        j("lnk_out_abs/sub/.."),
        j("lnk_out_rel/sub"),
    ];
    if leaf.is_empty() {
        v.extend(
            [
                "../outside/",
                "lnk_out_abs/",
                "lnk_out_rel/.",
                "lnk_fd/",
                "/",
                "/etc",
                "/proc/self/cwd",
                "lnk_cwd",
                "lnk_cwd/",
            ]
            .map(String::from),
        );
        v.push(format!("{o}/"));
    } else {
        v.extend(
            [
                "leaf_abs",
                "leaf_rel",
                "a/b/leaf_deep",
                "lnk_cwd/Cargo.toml",
                "/proc/self/cwd/Cargo.toml",
            ]
            .map(String::from),
        );
    }
    v
}

fn run_escapes(tool: &str) {
    let mut e = Esc::new();
    // Names passed in arguments use their own token: only the secret's must never come back.
    let name_tok = token();
    let cwd_probe = std::env::current_dir()
        .unwrap()
        .join(format!("wsfs-escape-probe-{name_tok}"));
    let leaves: Vec<String> = match tool {
        "list_dir" => vec![String::new(), "sub".into()],
        "read_file" | "edit_file" => vec!["secret.txt".into()],
        _ => vec![
            "secret.txt".into(),
            format!("new-{name_tok}.txt"),
            format!("newdir-{name_tok}/f.txt"),
        ],
    };
    for leaf in &leaves {
        for p in escape_paths(&e, leaf) {
            let p = if p.starts_with("lnk_cwd/") || p.starts_with("/proc/self/cwd/") {
                // Never aim a write at a real file of the repository.
                if tool == "read_file" {
                    p
                } else {
                    p.replace(
                        "Cargo.toml",
                        cwd_probe.file_name().unwrap().to_str().unwrap(),
                    )
                }
            } else {
                p
            };
            e.refused(tool, &p, &["outside_workspace"]);
        }
    }
    if tool == "read_file" {
        // Only ever read real system files, never aim a write at them.
        e.refused(tool, "/etc/hostname", &["outside_workspace"]);
        e.refused(tool, "/proc/self/root/etc/hostname", &["outside_workspace"]);
    }
    if tool != "list_dir" {
        for p in ["dangle_abs", "dangle_rel"] {
            e.refused(tool, p, &["outside_workspace"]);
        }
    }
    for p in ["loop1", "loop2", "selfloop", "selfloop/x", "loop1/x"] {
        e.refused(tool, p, &["invalid_path"]);
    }
    let created_probe = cwd_probe.exists();
    let _ = fs::remove_file(&cwd_probe);
    assert!(
        !created_probe,
        "{tool} created {} through /proc/self/cwd",
        cwd_probe.display()
    );
    e.finish(tool);
}

#[test]
fn escapes_read_file() {
    run_escapes("read_file");
}

#[test]
fn escapes_write_file() {
    run_escapes("write_file");
}

#[test]
fn escapes_append_file() {
    run_escapes("append_file");
}

#[test]
fn escapes_list_dir() {
    run_escapes("list_dir");
}

#[test]
fn escapes_edit_file() {
    run_escapes("edit_file");
}

crate::backend_tests! {
#[test]
fn absolute_paths_inside_the_root_are_accepted() {
    let f = Fixture::new();
    f.write("inside.txt", "INSIDE\n");
    f.mkdir("d");
    let root = f.root.to_str().unwrap().to_owned();
    let v = f.call("read_file", json!({"path": format!("{root}/inside.txt")}));
    assert_eq!(assert_ok(&v)["content"], json!("INSIDE\n"));
    assert_eq!(v["data"]["path"], json!("inside.txt"));
    assert!(
        !v["text"].as_str().unwrap().contains(&root),
        "absolute root leaked into text: {v}"
    );
    let v = f.call(
        "write_file",
        json!({"path": format!("{root}/d/abs.txt"), "content": "A"}),
    );
    assert_eq!(assert_ok(&v)["path"], json!("d/abs.txt"));
    assert!(!v.to_string().contains(&root), "absolute root leaked: {v}");
    assert_eq!(f.read("d/abs.txt"), b"A");
    let v = f.call(
        "append_file",
        json!({"path": format!("{root}/d/abs.txt"), "content": "B"}),
    );
    assert_eq!(assert_ok(&v)["size"], json!(2));
    let v = f.call(
        "edit_file",
        json!({"path": format!("{root}/d/abs.txt"), "old_text": "AB", "new_text": "C"}),
    );
    assert_eq!(assert_ok(&v)["replaced"], json!(1));
    assert_eq!(f.read("d/abs.txt"), b"C");
    let v = f.call("list_dir", json!({"path": format!("{root}/d")}));
    assert_eq!(assert_ok(&v)["path"], json!("d"));
    assert_eq!(v["data"]["entries"][0]["name"], json!("abs.txt"));
    let v = f.call("list_dir", json!({"path": root}));
    assert_eq!(assert_ok(&v)["total"], json!(2));
    assert!(!v.to_string().contains(&root), "absolute root leaked: {v}");
}

/// A path that climbs above the root through a directory that does not exist is
/// `outside_workspace` for every tool, as for the writers (which create the directory and
/// then meet the root): the kernel cannot resolve the `..` after a missing name, so the names
/// after the deepest directory that opens are counted as directories. A `..` that stays inside
/// is still `path_not_found` (issue 18, gap 4).
#[test]
fn climbing_out_through_a_missing_directory_is_outside_workspace() {
    let f = Fixture::new();
    fs::create_dir_all(f.p("a")).unwrap();
    let tools = [
        "read_file",
        "list_dir",
        "get_path_info",
        "write_file",
        "append_file",
        "edit_file",
        "create_directory",
        "delete_file",
    ];
    for tool in tools {
        for p in [
            "nosuchdir/../../x",
            "nosuchdir/../..",
            "a/nosuch/../../../x",
            "a/nosuch/x/../../../..",
        ] {
            let args = match tool {
                "create_directory" | "get_path_info" | "delete_file" => json!({ "path": p }),
                t => args_for(t, p, "a", "b"),
            };
            let v = f.call(tool, args);
            assert_err(&v, "outside_workspace");
        }
    }
    for tool in ["read_file", "list_dir", "get_path_info"] {
        for p in ["nosuchdir/../x", "a/nosuch/../../x", "nosuchdir/y/../../x"] {
            let v = f.call(tool, json!({ "path": p }));
            if tool == "get_path_info" {
                assert_eq!(assert_ok(&v)["exists"], json!(false), "{tool} {p}");
            } else {
                assert_err(&v, "path_not_found");
            }
        }
    }
}

#[test]
fn dot_dot_that_stays_inside_works() {
    let f = Fixture::new();
    f.write("inside.txt", "INSIDE\n");
    f.mkdir("a/b");
    for p in [
        "a/../inside.txt",
        "./inside.txt",
        "a/b/../../inside.txt",
        "a//b/..//../inside.txt",
    ] {
        let v = f.call("read_file", json!({ "path": p }));
        assert_eq!(assert_ok(&v)["content"], json!("INSIDE\n"), "{p}");
    }
    assert_ok(&f.call(
        "write_file",
        json!({"path": "a/b/../c.txt", "content": "C"}),
    ));
    assert_eq!(f.read("a/c.txt"), b"C");
}

#[test]
fn relative_symlinks_inside_the_workspace_work() {
    let f = Fixture::new();
    f.write("real/target.txt", "TARGET\n");
    f.mkdir("a");
    f.symlink("real/target.txt", "rl");
    f.symlink("real", "rdl");
    f.symlink("../real", "a/up");
    f.symlink("../real/target.txt", "a/upfile");
    for p in [
        "rl",
        "rdl/target.txt",
        "a/up/target.txt",
        "a/upfile",
        "rdl/../real/target.txt",
    ] {
        let v = f.call("read_file", json!({ "path": p }));
        assert_eq!(assert_ok(&v)["content"], json!("TARGET\n"), "{p}");
    }
    for p in ["rdl", "rdl/", "a/up"] {
        let v = f.call("list_dir", json!({ "path": p }));
        let names: Vec<&Value> = assert_ok(&v)["entries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| &e["name"])
            .collect();
        assert_eq!(names, vec![&json!("target.txt")], "{p}: {v}");
    }
    let is_link = |p: &str, t: &str| {
        let md = f.lstat(p);
        assert!(md.file_type().is_symlink(), "{p} is no longer a symlink");
        assert_eq!(f.read_link(p), PathBuf::from(t));
    };
    assert_ok(&f.call("write_file", json!({"path": "rl", "content": "NEW1"})));
    is_link("rl", "real/target.txt");
    assert_eq!(f.read("real/target.txt"), b"NEW1");
    assert_ok(&f.call("append_file", json!({"path": "rl", "content": "+"})));
    is_link("rl", "real/target.txt");
    assert_eq!(f.read("real/target.txt"), b"NEW1+");
    assert_ok(&f.call(
        "edit_file",
        json!({"path": "a/upfile", "old_text": "NEW1", "new_text": "NEW2"}),
    ));
    is_link("a/upfile", "../real/target.txt");
    assert_eq!(f.read("real/target.txt"), b"NEW2+");
    assert_ok(&f.call("write_file", json!({"path": "rdl/new.txt", "content": "N"})));
    is_link("rdl", "real");
    assert_eq!(f.read("real/new.txt"), b"N");
    let names: Vec<String> = f.names("real");
    assert_eq!(names.len(), 2, "temp files left behind: {names:?}");
}

#[test]
fn tilde_and_home_are_literal_names() {
    let f = Fixture::new();
    let tok = token();
    let home = std::env::var("HOME").unwrap_or_else(|_| "/root".into());
    for dir in ["~", "$HOME", "${HOME}", "~root"] {
        let rel = format!("{dir}/probe-{tok}.txt");
        assert_ok(&f.call("write_file", json!({"path": rel, "content": "T"})));
        assert_eq!(
            f.read(&rel),
            b"T",
            "{rel} not created literally inside the root"
        );
        assert_ok(&f.call("append_file", json!({"path": rel, "content": "U"})));
        assert_ok(&f.call(
            "edit_file",
            json!({"path": rel, "old_text": "TU", "new_text": "V"}),
        ));
        assert_eq!(
            assert_ok(&f.call("read_file", json!({"path": rel})))["content"],
            json!("V")
        );
        let v = f.call("list_dir", json!({ "path": dir }));
        assert_eq!(
            assert_ok(&v)["entries"][0]["name"],
            json!(format!("probe-{tok}.txt"))
        );
    }
    assert!(
        !Path::new(&home).join(format!("probe-{tok}.txt")).exists(),
        "wrote into $HOME"
    );
    assert!(
        !Path::new("/root").join(format!("probe-{tok}.txt")).exists(),
        "wrote into ~root"
    );
}

}
