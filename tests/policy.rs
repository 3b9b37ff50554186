//! The workspace policy through the C ABI: read-only workspaces, deny_read / deny_write rules
//! matched on the resolved path (symlinks, `..`, absolute forms), the `.git/**` default, and
//! invalid policies refused at open.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;

fn policy(p: Value) -> Value {
    json!({ "policy": p })
}

/// `wsfs_call` by name (tools added after the first five have no dedicated function).
fn named(f: &Fixture, tool: &str, args: Value) -> Value {
    call_named(f.ws, tool, &args.to_string())
}

#[track_caller]
fn denied(v: &Value, rule: &str) {
    let msg = assert_err(v, "policy_denied");
    assert!(msg.contains(&format!("'{rule}'")), "names the rule: {msg}");
}

crate::backend_tests! {
#[test]
fn deny_read_refuses_every_reading_tool_on_the_resolved_path() {
    let f = Fixture::with_config(policy(
        json!({"deny_read": [".env", "**/*.pem", "secrets/**"]}),
    ));
    f.write(".env", "TOKEN=1\n");
    f.write("app/.env", "TOKEN=2\n");
    f.write("keys/a/server.pem", "KEY\n");
    f.write("secrets/db/pass.txt", "hunter2\n");
    f.write("ok.txt", "fine\n");
    f.mkdir("sub");
    let abs = f.p(".env").to_str().unwrap().to_owned();
    for path in [".env", "./.env", "sub/../.env", &abs, "app/.env"] {
        denied(&f.call("read_file", json!({"path": path})), ".env");
        denied(
            &f.call(
                "edit_file",
                json!({"path": path, "old_text": "T", "new_text": "X"}),
            ),
            ".env",
        );
    }
    denied(
        &f.call("read_file", json!({"path": "keys/a/server.pem"})),
        "**/*.pem",
    );
    denied(
        &f.call("read_file", json!({"path": "secrets/db/pass.txt"})),
        "secrets/**",
    );
    denied(
        &f.call("list_dir", json!({"path": "secrets/db"})),
        "secrets/**",
    );
    // A denied name that does not exist is refused the same way: no existence oracle.
    denied(&f.call("read_file", json!({"path": "sub/.env"})), ".env");
    // Everything else still works, and files are untouched.
    assert_ok(&f.call("read_file", json!({"path": "ok.txt"})));
    assert_eq!(f.read(".env"), b"TOKEN=1\n");
    // deny_read is not deny_write: a write-only tool may replace the file it cannot read.
    assert_ok(&f.call(
        "append_file",
        json!({"path": ".env", "content": "MORE=1\n"}),
    ));
    assert_eq!(f.read(".env"), b"TOKEN=1\nMORE=1\n");
}

#[test]
fn symlinks_to_denied_files_are_denied() {
    let f = Fixture::with_config(policy(json!({"deny_read": [".env", "private"]})));
    f.write(".env", "TOKEN=1\n");
    f.write("private/notes/x.txt", "secret\n");
    f.write("public/y.txt", "open\n");
    f.symlink(".env", "harmless.txt");
    f.symlink("../.env", "public/env-link");
    f.symlink("private/notes", "notes");
    let msg = assert_err(
        &f.call("read_file", json!({"path": "harmless.txt"})),
        "policy_denied",
    );
    assert!(msg.contains("resolves to .env"), "{msg}");
    denied(
        &f.call("read_file", json!({"path": "public/env-link"})),
        ".env",
    );
    // A directory named by a rule without a slash denies everything under it, at any depth,
    // also when reached through a symlinked directory.
    denied(
        &f.call("read_file", json!({"path": "notes/x.txt"})),
        "private",
    );
    denied(&f.call("list_dir", json!({"path": "notes"})), "private");
    denied(
        &f.call("read_file", json!({"path": "private/notes/x.txt"})),
        "private",
    );
    assert_ok(&f.call("read_file", json!({"path": "public/y.txt"})));
}

#[test]
fn listings_leave_denied_entries_out_and_count_them() {
    let f = Fixture::with_config(policy(json!({"deny_read": [".env", "*.pem", "secrets/"]})));
    for name in [".env", "a.pem", "b.txt", "c.txt"] {
        f.write(name, "x");
    }
    f.write("secrets/k", "x");
    f.mkdir("secrets-not");
    f.write("sub/d.pem", "x");
    let v = f.call("list_dir", json!({"path": "."}));
    let data = assert_ok(&v);
    let names: Vec<&str> = data["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["b.txt", "c.txt", "secrets-not", "sub"]);
    assert_eq!(data["total"], 4);
    assert_eq!(data["denied"], 3);
    assert!(
        v["text"]
            .as_str()
            .unwrap()
            .ends_with("[3 entries not shown: denied by the workspace policy]"),
        "{}",
        v["text"]
    );
    let sub = f.call("list_dir", json!({"path": "sub"}));
    assert_eq!(assert_ok(&sub)["denied"], 1);
    assert_eq!(assert_ok(&sub)["total"], 0);
    // Without rules nothing is hidden and the count is 0.
    let plain = Fixture::new();
    plain.write(".env", "x");
    let data = assert_ok(&plain.call("list_dir", json!({})))["denied"].clone();
    assert_eq!(data, 0);
}

#[test]
fn walks_leave_denied_paths_out_and_count_them() {
    let f = Fixture::with_config(policy(json!({"deny_read": [".env", "*.pem", "secrets/"]})));
    for name in [
        "app/.env",
        "app/key.pem",
        "app/main.rs",
        "secrets/token",
        "secrets/deep/x",
    ] {
        f.write(name, "needle\n");
    }
    f.write("notes.txt", "needle\n");
    // A symlink inside a walk is never followed, but a walk started through a symlinked
    // directory matches the rules on the resolved path.
    f.symlink("secrets", "alias");

    let tree = named(
        &f,
        "list_dir",
        json!({"path": ".", "depth": 5, "include_hidden": true}),
    );
    let data = assert_ok(&tree);
    let text = tree["text"].as_str().unwrap();
    for hidden in [".env", "key.pem", "token", "deep"] {
        assert!(!text.contains(hidden), "{hidden} listed: {text}");
    }
    assert!(text.contains("main.rs"), "{text}");
    assert_eq!(data["denied"], 3, "{text}");

    let found = named(
        &f,
        "find_files",
        json!({"pattern": "**", "include_hidden": true}),
    );
    let data = assert_ok(&found);
    let files: Vec<&str> = data["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(files, ["alias", "app/main.rs", "notes.txt"]);
    assert_eq!(data["denied"], 3);
    assert!(
        found["text"]
            .as_str()
            .unwrap()
            .contains("3 entries not shown: denied"),
        "{}",
        found["text"]
    );

    let hits = named(
        &f,
        "search_text",
        json!({"query": "needle", "include_hidden": true}),
    );
    let data = assert_ok(&hits);
    let in_files: Vec<&str> = data["matches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["file"].as_str().unwrap())
        .collect();
    assert_eq!(in_files, ["app/main.rs", "notes.txt"]);
    assert_eq!(data["denied"], 3);
    assert!(
        hits["text"]
            .as_str()
            .unwrap()
            .contains("3 entries not searched: denied"),
        "{}",
        hits["text"]
    );

    // Starting a walk inside a denied directory, directly or through a symlink, is refused.
    for start in ["secrets", "alias", "secrets/deep"] {
        denied(
            &named(&f, "search_text", json!({"query": "needle", "path": start})),
            "secrets/",
        );
        denied(
            &named(&f, "find_files", json!({"pattern": "*", "path": start})),
            "secrets/",
        );
    }
    // Without rules every walk counts 0.
    let plain = Fixture::new();
    plain.write(".env", "needle\n");
    let all = named(
        &plain,
        "search_text",
        json!({"query": "needle", "include_hidden": true}),
    );
    assert_eq!(assert_ok(&all)["denied"], 0);
    assert_eq!(assert_ok(&all)["matches"].as_array().unwrap().len(), 1);
}

#[test]
fn deny_write_refuses_every_changing_tool_and_leaves_reading() {
    let f = Fixture::with_config(policy(json!({"deny_write": ["config/**", "*.lock"]})));
    f.write("config/app.toml", "a = 1\n");
    f.write("Cargo.lock", "lock\n");
    f.mkdir("sub");
    let before = f.snapshot("");
    for path in [
        "config/app.toml",
        "config/new.toml",
        "sub/../config/app.toml",
        "Cargo.lock",
    ] {
        let rule = if path.ends_with("lock") {
            "*.lock"
        } else {
            "config/**"
        };
        for mode in ["overwrite", "create", "append"] {
            denied(
                &f.call(
                    "write_file",
                    json!({"path": path, "content": "z", "mode": mode}),
                ),
                rule,
            );
        }
        denied(
            &f.call("append_file", json!({"path": path, "content": "z"})),
            rule,
        );
        denied(
            &f.call(
                "edit_file",
                json!({"path": path, "old_text": "a", "new_text": "b"}),
            ),
            rule,
        );
    }
    denied(
        &named(&f, "create_directory", json!({"path": "config/sub"})),
        "config/**",
    );
    // A missing directory before '..' is created to resolve the path, then removed again.
    denied(
        &f.call(
            "write_file",
            json!({"path": "x/../config/new.toml", "content": "z"}),
        ),
        "config/**",
    );
    assert_eq!(f.snapshot(""), before, "a denied call changed something");
    assert_eq!(
        assert_ok(&f.call("read_file", json!({"path": "config/app.toml"})))["content"],
        "a = 1\n"
    );
}

#[test]
fn a_denied_write_creates_no_parent_directories() {
    let f = Fixture::with_config(policy(json!({"deny_write": ["secrets/**", "out/"]})));
    let before = f.snapshot("");
    // A directory created and removed again would still change the root's mtime.
    let mtime = || f.stat(".").modified().unwrap();
    let root_mtime = mtime();
    denied(
        &f.call(
            "write_file",
            json!({"path": "secrets/a/b/c.txt", "content": "x"}),
        ),
        "secrets/**",
    );
    denied(
        &f.call(
            "append_file",
            json!({"path": "x/out/y/z.txt", "content": "x"}),
        ),
        "out/",
    );
    denied(
        &named(&f, "create_directory", json!({"path": "secrets/a/b"})),
        "secrets/**",
    );
    assert_eq!(
        f.snapshot(""),
        before,
        "directories were created and left"
    );
    assert_eq!(
        mtime(),
        root_mtime,
        "directories were created, then removed"
    );
    // The same paths with the rule's directory existing: refused before anything is made.
    f.mkdir("secrets");
    denied(
        &f.call(
            "write_file",
            json!({"path": "secrets/a/b/c.txt", "content": "x"}),
        ),
        "secrets/**",
    );
    assert_eq!(f.names("secrets").len(), 0);
}

#[test]
fn git_history_is_read_only_by_default() {
    let f = Fixture::new();
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write(".git/config", "[core]\n");
    let before = f.snapshot("");
    denied(
        &f.call("write_file", json!({"path": ".git/HEAD", "content": "x"})),
        ".git/**",
    );
    denied(
        &f.call(
            "edit_file",
            json!({"path": ".git/config", "old_text": "core", "new_text": "x"}),
        ),
        ".git/**",
    );
    denied(
        &f.call(
            "append_file",
            json!({"path": ".git/hooks/pre-commit", "content": "rm -rf ~"}),
        ),
        ".git/**",
    );
    denied(
        &named(&f, "create_directory", json!({"path": ".git/hooks"})),
        ".git/**",
    );
    assert_eq!(f.snapshot(""), before);
    // The same files by other spellings: `..` through a real directory, and a symlinked
    // directory on the way (the resolver then asks the kernel where it is).
    f.mkdir("sub");
    f.symlink(".git", "repo");
    f.mkdir(".git/hooks");
    f.symlink("../.git/hooks", "sub/hooks");
    let before = f.snapshot("");
    for path in [
        "sub/../.git/HEAD",
        "./sub/./../.git/config",
        "repo/HEAD",
        "sub/hooks/x",
    ] {
        denied(
            &f.call("append_file", json!({"path": path, "content": "x"})),
            ".git/**",
        );
    }
    assert_eq!(f.snapshot(""), before);
    assert_ok(&f.call("read_file", json!({"path": ".git/HEAD"})));
    assert_ok(&f.call("list_dir", json!({"path": ".git"})));
    // The rule is anchored at the root, as in gitignore; an explicit list replaces it.
    assert_ok(&f.call(
        "write_file",
        json!({"path": "vendor/.git/x", "content": "x"}),
    ));
    let open = Fixture::with_config(policy(json!({"deny_write": []})));
    assert_ok(&open.call("write_file", json!({"path": ".git/HEAD", "content": "x"})));
}

#[test]
fn read_only_workspaces_refuse_every_changing_tool_from_the_registry() {
    // The program tools: not read-only, yet they run in a read-only workspace, whose view
    // the kernel then mounts read-only for their programs.
    let run_on_a_read_only_view = ["run_tests", "run_lint", "typecheck", "safe_shell", "shell"];
    let f = Fixture::with_config(policy(json!({"writes_enabled": false})));
    f.write("a.txt", "hello\n");
    let before = f.snapshot("");
    let specs = take_json(unsafe { ffi::wsfs_tool_specs() });
    let mut refused = Vec::new();
    for spec in specs.as_array().unwrap() {
        let name = spec["name"].as_str().unwrap();
        let read_only = spec["annotations"]["readOnlyHint"].as_bool().unwrap();
        // Arguments that would succeed, or no arguments at all: refused before parsing.
        for args in [
            json!({"path": "a.txt", "content": "x", "old_text": "hello", "new_text": "bye"}),
            json!({}),
        ] {
            let v = named(&f, name, args);
            if read_only {
                assert_ne!(err_code(&v), Some("writes_disabled"), "{name}: {v}");
            } else if run_on_a_read_only_view.contains(&name) {
                // They run on a read-only view (devtools.rs tests that); here exec is off.
                assert_err(&v, "exec_disabled");
            } else {
                let msg = assert_err(&v, "writes_disabled");
                assert!(msg.contains("read_file"), "names what still works: {msg}");
            }
        }
        if !read_only {
            refused.push(name.to_owned());
        }
    }
    assert!(
        refused.len() >= 4 && refused.contains(&"create_directory".to_string()),
        "{refused:?}"
    );
    // Through the content buffer too.
    let v = call_content(f.ws, "write_file", r#"{"path":"b.txt"}"#, b"x");
    assert_err(&v, "writes_disabled");
    assert_eq!(f.snapshot(""), before);
    assert_eq!(
        assert_ok(&f.call("read_file", json!({"path": "a.txt"})))["content"],
        "hello\n"
    );
}

#[test]
fn unrestricted_mode_matches_unanchored_rules_outside_the_root() {
    if current_backend() == Backend::Overlay {
        eprintln!("not on the Overlay backend: an overlay session confines to its root (restrict_to_workspace: false is refused, tested in overlay_view)");
        return;
    }
    let f = Fixture::with_config(json!({
        "restrict_to_workspace": false,
        "policy": {"deny_read": [".env"]},
    }));
    let outside = f.base.join("other");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join(".env"), "TOKEN=3\n").unwrap();
    fs::write(outside.join("fine.txt"), "ok\n").unwrap();
    let msg = assert_err(
        &f.call("read_file", json!({"path": outside.join(".env")})),
        "policy_denied",
    );
    assert!(
        msg.contains(outside.join(".env").to_str().unwrap()),
        "{msg}"
    );
    assert_ok(&f.call("read_file", json!({"path": outside.join("fine.txt")})));
}
}

#[test]
fn the_open_data_reports_the_effective_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let v = open_raw(&json!({"root": tmp.path(), "policy": {"deny_read": ["*.key"]}}).to_string());
    let data = assert_ok(&v);
    assert_eq!(
        data["policy"],
        json!({"writes_enabled": true, "deny_read": ["*.key"], "deny_write": [".git/**"], "audit_log": null,
               "audit_arguments": false, "exec_enabled": false, "shell_enabled": false, "exec_require_sandbox": true,
               "exec_network": false, "exec_read_paths": [], "exec_env_allow": [],
               "deny_tools": [], "exec_timeout_sec": 60, "safe_shell_rules": null})
    );
    close_ws(data["workspace"].as_u64().unwrap());
}

#[test]
fn invalid_policies_are_refused_at_open() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().to_str().unwrap();
    for (p, hint) in [
        (json!({"deny_read": ["{a,b"]}), "deny_read[0]"),
        (json!({"deny_write": ["ok", ""]}), "deny_write[1]"),
        (json!({"deny_read": "x"}), "expected a sequence"),
        (json!({"writes": false}), "writes"),
        (json!([]), "policy must be a JSON object"),
        (json!(null), "policy must be a JSON object"),
    ] {
        let v = open_raw(&json!({"root": root, "policy": p}).to_string());
        let msg = assert_err(&v, "invalid_arguments");
        assert!(msg.contains(hint), "{p}: {msg}");
    }
}

crate::backend_tests! {
#[test]
fn suggestions_after_path_not_found_never_name_denied_paths() {
    let f = Fixture::with_config(policy(json!({"deny_read": [".env.local", "*.pem"]})));
    f.write(".env.local", "SECRET=1");
    f.write("server.pem", "key");
    f.write("server.pam", "allowed");
    let v = f.call("read_file", json!({"path": ".env.locl"}));
    let msg = assert_err(&v, "path_not_found");
    assert!(
        !msg.contains(".env.local"),
        "a denied name is suggested: {msg}"
    );
    let v = f.call("read_file", json!({"path": "server.pom"}));
    let msg = assert_err(&v, "path_not_found");
    assert!(
        msg.contains("server.pam"),
        "allowed names are still suggested: {msg}"
    );
    assert!(
        !msg.contains("server.pem"),
        "a denied name is suggested: {msg}"
    );
    // Without the rule the same typo is answered with the name.
    let plain = Fixture::new();
    plain.write(".env.local", "SECRET=1");
    let msg = assert_err(
        &plain.call("read_file", json!({"path": ".env.locl"})),
        "path_not_found",
    );
    assert!(msg.contains(".env.local"), "{msg}");
}

#[test]
fn move_and_delete_obey_the_policy_on_both_ends_and_inside_directories() {
    let f = Fixture::with_config(policy(json!({
        "deny_read": [".env"],
        "deny_write": [".git/**", "locked/keep.txt"]
    })));
    f.write(".env", "SECRET=1");
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write("locked/keep.txt", "k");
    f.write("locked/free.txt", "f");
    f.write("a.txt", "a");
    f.symlink(".env", "env-link");

    // A read-denied file cannot be renamed into a readable name.
    denied(
        &named(&f, "move_file", json!({"src": ".env", "dst": "public.txt"})),
        ".env",
    );
    assert_eq!(f.read_string(".env"), "SECRET=1");
    // Nothing may be moved into a write-denied place, parents included.
    denied(
        &named(
            &f,
            "move_file",
            json!({"src": "a.txt", "dst": ".git/hooks/x"}),
        ),
        ".git/**",
    );
    assert!(
        !f.target_exists(".git/hooks"),
        "a refused move left the parents it created"
    );
    // A directory holding a write-denied entry does not move, and nothing in it moves.
    denied(
        &named(&f, "move_file", json!({"src": ".git", "dst": "git-old"})),
        ".git/**",
    );
    denied(
        &named(&f, "move_file", json!({"src": "locked", "dst": "unlocked"})),
        "locked/keep.txt",
    );
    assert!(f.target_exists(".git/HEAD") && f.target_exists("locked/keep.txt"));
    assert!(!f.target_exists("git-old") && !f.target_exists("unlocked"));
    // A symlink to a denied file is itself an allowed entry: moving the link is fine.
    let v = named(&f, "move_file", json!({"src": "env-link", "dst": "link2"}));
    assert_ok(&v);

    // Deleting a write-denied file is refused; a read-denied one may be deleted.
    denied(
        &named(&f, "delete_file", json!({"path": ".git/HEAD"})),
        ".git/**",
    );
    // A recursive deletion keeps the denied entries (and the directories holding them).
    let v = named(
        &f,
        "delete_file",
        json!({"path": "locked", "recursive": true}),
    );
    let data = assert_ok(&v);
    assert_eq!(data["deleted"], false, "{v}");
    assert_eq!(data["stopped"], "not_removed");
    assert_eq!(data["entries_removed"], 1);
    assert!(f.target_exists("locked/keep.txt") && !f.target_exists("locked/free.txt"));
    let v = named(
        &f,
        "delete_file",
        json!({"path": ".git", "recursive": true}),
    );
    assert_err(&v, "permission_denied");
    assert!(f.target_exists(".git/HEAD"));
    assert_ok(&named(&f, "delete_file", json!({"path": ".env"})));
    assert!(!f.target_exists(".env"));
}

/// Directories made on the way to a path are checked against `deny_write` as they are made,
/// by the path they get: a `..` after a missing directory cannot plant one inside a denied
/// area (a `.git/index.lock` directory breaks every `git add`), whichever tool creates it.
#[test]
fn directories_made_on_the_way_are_checked_as_they_are_made() {
    let f = Fixture::with_config(policy(json!({"deny_write": [".git/**", "locked/**"]})));
    f.write(".git/HEAD", "ref: refs/heads/main\n");
    f.write("src.txt", "s");
    f.mkdir("locked");
    f.mkdir("pub");
    let before = f.snapshot("");
    let v = named(
        &f,
        "create_directory",
        json!({"path": ".git/index.lock/.."}),
    );
    denied(&v, ".git/**");
    let msg = assert_err(&v, "policy_denied");
    assert!(
        msg.contains(".git/index.lock") && !msg.contains(f.root.to_str().unwrap()),
        "names the directory it would create, workspace-relative: {msg}"
    );
    for path in [
        ".git/index.lock/../../pub/f.txt",
        "locked/x/../../pub/f.txt",
    ] {
        let rule = if path.starts_with(".git") {
            ".git/**"
        } else {
            "locked/**"
        };
        for mode in ["overwrite", "create", "append"] {
            let args = json!({"path": path, "content": "z", "mode": mode});
            denied(&f.call("write_file", args), rule);
        }
        denied(
            &f.call("append_file", json!({"path": path, "content": "z"})),
            rule,
        );
        denied(
            &named(&f, "move_file", json!({"src": "src.txt", "dst": path})),
            rule,
        );
        let patch = format!("*** Begin Patch\n*** Add File: {path}\n+new\n*** End Patch\n");
        denied(&named(&f, "apply_patch", json!({"patch": patch})), rule);
        let dir = path.replace("/f.txt", "/d");
        denied(&named(&f, "create_directory", json!({"path": dir})), rule);
    }
    // Allowed directories made before the refused one are removed again.
    denied(
        &f.call(
            "write_file",
            json!({"path": "pub/new/../../locked/x/f.txt", "content": "z"}),
        ),
        "locked/**",
    );
    assert_eq!(
        f.snapshot(""),
        before,
        "a directory was left in a denied area"
    );
    // Through an allowed missing directory the call succeeds, and what it made is allowed.
    let v = f.call(
        "write_file",
        json!({"path": "pub/new/../f.txt", "content": "ok"}),
    );
    assert_ok(&v);
    assert_eq!(f.read("pub/f.txt"), b"ok");
    // A `!` rule re-allows a path named directly, but the denied directory it would need
    // made on the way is still refused.
    let g = Fixture::with_config(policy(
        json!({"deny_write": ["secrets/**", "!secrets/keep/x.txt"]}),
    ));
    g.mkdir("secrets");
    denied(
        &g.call(
            "write_file",
            json!({"path": "secrets/keep/x.txt", "content": "x"}),
        ),
        "secrets/**",
    );
    assert!(!g.target_exists("secrets/keep"));
    g.mkdir("secrets/keep");
    assert_ok(&g.call(
        "write_file",
        json!({"path": "secrets/keep/x.txt", "content": "x"}),
    ));
}

/// A directory move carries everything inside it, nested `.git` directories and wsfs's own
/// temp names included, so its check walk looks at every entry; a recursive deletion, which
/// removes every entry, does too.
#[test]
fn a_directory_move_checks_inside_nested_git_directories() {
    let f = Fixture::with_config(policy(json!({
        "deny_read": ["vendor/lib/.git/**"],
        "deny_write": ["**/.git/**", "tmps/**"]
    })));
    f.write("vendor/lib/.git/config", "[remote]\ntoken = s3cret\n");
    f.write("vendor/lib/src.rs", "fn main() {}\n");
    f.write("nested/repo/.git/HEAD", "ref: refs/heads/main\n");
    f.write("nested/repo/README", "read me\n");
    // A crash leftover, which listings hide but a move carries along.
    f.write("tmps/.wsfs-0123456789abcdef.tmp", "left by a crash");
    let before = f.snapshot("");
    denied(
        &named(
            &f,
            "move_file",
            json!({"src": "vendor/lib", "dst": "pub/lib"}),
        ),
        "vendor/lib/.git/**",
    );
    denied(
        &named(
            &f,
            "move_file",
            json!({"src": "nested", "dst": "other/nested"}),
        ),
        "**/.git/**",
    );
    denied(
        &named(&f, "move_file", json!({"src": "tmps", "dst": "tmps2"})),
        "tmps/**",
    );
    assert_eq!(
        f.snapshot(""),
        before,
        "a refused move changed something"
    );
    denied(
        &f.call("read_file", json!({"path": "vendor/lib/.git/config"})),
        "vendor/lib/.git/**",
    );
    // The recursive deletion keeps what the rules protect, inside `.git` too.
    let v = named(
        &f,
        "delete_file",
        json!({"path": "nested", "recursive": true}),
    );
    assert_eq!(assert_ok(&v)["stopped"], "not_removed", "{v}");
    assert_eq!(f.read("nested/repo/.git/HEAD"), b"ref: refs/heads/main\n");
    assert!(!f.target_exists("nested/repo/README"));
}
}

/// The audit log inside a nested `.git` is never carried away by a directory move (after
/// which its configured path could be written with forged lines), nor deleted.
#[test]
fn an_audit_log_in_a_nested_git_directory_is_never_moved() {
    let tmp = tempfile::tempdir().unwrap();
    let root = fs::canonicalize(tmp.path()).unwrap().join("ws");
    fs::create_dir(&root).unwrap();
    let log = root.join("proj/.git/wsfs-audit.jsonl");
    let ws = open_ws(&root, policy(json!({"audit_log": log.to_str().unwrap()})));
    let f = |tool: &str, args: Value| call_named(ws, tool, &args.to_string());
    assert_ok(&f(
        "write_file",
        json!({"path": "proj/src/a.rs", "content": "a"}),
    ));
    let v = f("move_file", json!({"src": "proj", "dst": "moved"}));
    let msg = assert_err(&v, "policy_denied");
    assert!(msg.contains("audit log"), "{msg}");
    assert!(log.is_file() && !root.join("moved").exists());
    let v = f("delete_file", json!({"path": "proj", "recursive": true}));
    assert_eq!(assert_ok(&v)["stopped"], "not_removed", "{v}");
    assert!(log.is_file());
    let lines = fs::read_to_string(&log).unwrap().lines().count();
    assert!(lines >= 3, "the log lost lines: {lines}");
    assert_ok(&close_ws(ws));
}

crate::backend_tests! {
/// On a case-insensitive file system (or casefolded directory) `.ENV` opens the file `.env`,
/// so rules match letter case loosely: no spelling gets around a rule. A `!` exception only
/// re-allows what the rules also deny by their exact case, so it cannot open more than it
/// did. (A real case-insensitive mount is tested in `a_case_insensitive_mount_is_covered`.)
#[test]
fn rules_match_letter_case_loosely() {
    let f = Fixture::with_config(policy(json!({
        "deny_read": [".env", "secrets/", "*.pem", "!public.pem", "token*", "!Token-public"],
    })));
    f.write(".env", "TOKEN=1\n");
    f.write("secrets/k.txt", "k\n");
    f.write("app/key.PEM", "k\n");
    f.write("PUBLIC.PEM", "public\n");
    f.write("token-public", "still secret\n");
    f.mkdir("sub");
    for (path, rule) in [
        (".ENV", ".env"),
        ("./.Env", ".env"),
        ("sub/../app/.eNv", ".env"),
        ("SECRETS/k.txt", "secrets/"),
        ("Secrets/k.txt", "secrets/"),
        ("app/key.PEM", "*.pem"),
        ("APP/KEY.pem", "*.pem"),
        ("token-public", "token*"),
    ] {
        denied(&f.call("read_file", json!({ "path": path })), rule);
        denied(&named(&f, "get_path_info", json!({ "path": path })), rule);
    }
    assert_ok(&f.call("read_file", json!({"path": "PUBLIC.PEM"})));
    // The default `.git/**` too.
    denied(
        &f.call("write_file", json!({"path": ".GIT/HEAD", "content": "x"})),
        ".git/**",
    );
    assert!(!f.target_exists(".GIT"));
    // Listings and walks hide every spelling (on a case-sensitive file system, .ENV is a
    // second file).
    if !f.target_exists(".ENV") {
        f.write(".ENV", "TOKEN=2\n");
        let v = f.call("list_dir", json!({}));
        let data = assert_ok(&v);
        let text = v["text"].as_str().unwrap();
        assert!(!text.to_lowercase().contains(".env"), "{text}");
        assert_eq!(data["denied"], 4, "{text}"); // .env .ENV secrets token-public
    }
}
}

/// An exFAT image mounted through FUSE (`exfatprogs`, `exfat-fuse`) on a loop device: a real
/// case-insensitive file system. Unmounted and detached when dropped.
struct CaseInsensitiveMount {
    dir: tempfile::TempDir,
    device: String,
}

impl CaseInsensitiveMount {
    /// `Err` says why there is none here (not root, tools missing, no loop device or FUSE).
    fn new() -> Result<Self, String> {
        use std::process::Command;
        if unsafe { libc::geteuid() } != 0 {
            return Err("needs root (loop devices and mounts)".into());
        }
        let run = |cmd: &mut Command| -> Result<String, String> {
            let out = cmd.output().map_err(|e| format!("{cmd:?}: {e}"))?;
            match out.status.success() {
                true => Ok(String::from_utf8_lossy(&out.stdout).trim().to_string()),
                false => Err(format!(
                    "{cmd:?}: {}",
                    String::from_utf8_lossy(&out.stderr).trim()
                )),
            }
        };
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let image = dir.path().join("image");
        fs::File::create(&image)
            .and_then(|f| f.set_len(8 << 20))
            .map_err(|e| e.to_string())?;
        run(Command::new("mkfs.exfat").arg(&image))?;
        let device = run(Command::new("losetup").args(["-f", "--show"]).arg(&image))?;
        let mount = CaseInsensitiveMount { dir, device };
        fs::create_dir(mount.root()).map_err(|e| e.to_string())?;
        run(Command::new("mount.exfat-fuse")
            .arg(&mount.device)
            .arg(mount.root()))?;
        fs::write(mount.root().join("probe"), "x").map_err(|e| e.to_string())?;
        if !mount.root().join("PROBE").exists() {
            return Err("the exFAT mount is not case-insensitive".into());
        }
        fs::remove_file(mount.root().join("probe")).map_err(|e| e.to_string())?;
        Ok(mount)
    }

    fn root(&self) -> std::path::PathBuf {
        self.dir.path().join("mnt")
    }
}

impl Drop for CaseInsensitiveMount {
    fn drop(&mut self) {
        // Lazily: a descriptor still open on it (a failed test's workspace) must not keep
        // the mount, and its FUSE daemon, past the test.
        let _ = std::process::Command::new("umount")
            .arg("-l")
            .arg(self.root())
            .status();
        let _ = std::process::Command::new("losetup")
            .args(["-d", &self.device])
            .status();
    }
}

/// The case-insensitive note of issue 16: on a case-insensitive file system `.ENV` opens the
/// file `.env`; before rules matched case loosely, `read_file .ENV` returned it.
#[test]
fn a_case_insensitive_mount_is_covered() {
    let mount = match CaseInsensitiveMount::new() {
        Ok(mount) => mount,
        Err(why) => {
            eprintln!("SKIPPED: no case-insensitive file system to test on ({why})");
            return;
        }
    };
    let root = mount.root();
    fs::write(root.join(".env"), "TOKEN=1\n").unwrap();
    fs::create_dir(root.join("Secrets")).unwrap();
    fs::write(root.join("Secrets/key.txt"), "k\n").unwrap();
    fs::write(root.join("notes.txt"), "TOKEN in notes\n").unwrap();
    // Closed before the mount goes, even when an assertion fails.
    struct Closing(u64);
    impl Drop for Closing {
        fn drop(&mut self) {
            close_ws(self.0);
        }
    }
    let ws = Closing(open_ws(
        &root,
        json!({"policy": {"deny_read": [".env", "secrets/"]}}),
    ));
    let c = |tool: &str, args: Value| call_named(ws.0, tool, &args.to_string());
    for (path, rule) in [
        (".ENV", ".env"),
        (".Env", ".env"),
        ("SECRETS/KEY.TXT", "secrets/"),
        ("secrets/key.txt", "secrets/"),
    ] {
        for tool in ["read_file", "get_path_info"] {
            let v = c(tool, json!({ "path": path }));
            let msg = assert_err(&v, "policy_denied");
            assert!(msg.contains(&format!("'{rule}'")), "{tool} {path}: {msg}");
            assert!(!v.to_string().contains("TOKEN=1"), "{v}");
        }
    }
    let v = c("list_dir", json!({}));
    let data = assert_ok(&v);
    assert_eq!(
        data["entries"],
        json!([{"name": "notes.txt", "type": "file", "size": 15}]),
        "{v}"
    );
    assert_eq!(data["denied"], 2);
    let v = c(
        "search_text",
        json!({"query": "TOKEN", "include_hidden": true}),
    );
    assert_eq!(assert_ok(&v)["matches"].as_array().unwrap().len(), 1, "{v}");
}

/// `wsfs_workspace_tool_specs`' tool names.
fn offered(ws: u64) -> Vec<String> {
    let v = take_envelope(wsfs::ffi::wsfs_workspace_tool_specs(ws));
    assert_ok(&v)["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_string())
        .collect()
}

/// Issue 18 gap 6: `deny_tools` takes tools away (not offered, refused with `policy_denied`
/// before they run, the refusal in the audit log); `allow_tools` keeps only those named.
#[test]
fn deny_tools_and_allow_tools_take_tools_away() {
    let tmp = tempfile::tempdir().unwrap();
    let log = tmp.path().join("audit.jsonl");
    let f = Fixture::with_config(policy(
        json!({"deny_tools": ["delete_file", "move_file"], "audit_log": log}),
    ));
    f.write("a.txt", "a");
    let v = named(&f, "delete_file", json!({"path": "a.txt"}));
    let msg = assert_err(&v, "policy_denied");
    assert!(
        msg.contains("delete_file") && msg.contains("deny_tools"),
        "{msg}"
    );
    assert_eq!(f.read("a.txt"), b"a");
    assert_err(
        &named(&f, "move_file", json!({"src": "a.txt", "dst": "b.txt"})),
        "policy_denied",
    );
    assert_ok(&f.call("read_file", json!({"path": "a.txt"})));
    let names = offered(f.ws);
    assert!(
        !names.iter().any(|n| n == "delete_file" || n == "move_file"),
        "{names:?}"
    );
    assert!(names.iter().any(|n| n == "write_file"), "{names:?}");
    let lines = fs::read_to_string(&log).unwrap();
    let first: Value = serde_json::from_str(lines.lines().next().unwrap()).unwrap();
    assert_eq!(first["tool"], "delete_file");
    assert_eq!(first["outcome"], "policy_denied");

    let f = Fixture::with_config(policy(json!({"allow_tools": ["read_file", "list_dir"]})));
    assert_eq!(offered(f.ws), ["read_file", "list_dir"]);
    assert_err(
        &f.call("write_file", json!({"path": "n.txt", "content": "x"})),
        "policy_denied",
    );
    assert!(!f.p("n.txt").exists());
    assert_ok(&f.call("list_dir", json!({})));
}

#[test]
fn tool_lists_naming_no_tool_fail_the_open() {
    let tmp = tempfile::tempdir().unwrap();
    for (p, field) in [
        (json!({"deny_tools": ["delete_files"]}), "deny_tools"),
        (json!({"allow_tools": ["read_file", "rm"]}), "allow_tools"),
    ] {
        let config = json!({"root": tmp.path().join("ws"), "create_root": true, "policy": p});
        let v = open_raw(&config.to_string());
        let msg = assert_err(&v, "invalid_arguments");
        assert!(msg.contains(field) && msg.contains("delete_file"), "{msg}");
    }
    // Under a profile, its names.
    let config = json!({"root": tmp.path().join("ws"), "create_root": true, "profile": "capability-plan",
                        "policy": {"deny_tools": ["delete_file"]}});
    let msg = assert_err(&open_raw(&config.to_string()), "invalid_arguments");
    assert!(msg.contains("file_delete"), "{msg}");
}
