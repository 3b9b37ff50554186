//! The developer tools through the C ABI (issue 21): listed by `wsfs_tool_specs`, dispatched
//! like the file tools, off unless the policy turns exec on, their policy switches decoded
//! strictly, the deny rules programs could not honour refused at open, paths resolved as tool
//! paths, and the exec wall clock (not `operation_timeout_ms`) bounding a program.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::process::Command;

const DEV_TOOLS: &[&str] = &[
    "workspace_info",
    "git_status",
    "git_diff",
    "git_commit",
    "run_tests",
    "run_lint",
    "typecheck",
    "safe_shell",
    "shell",
];

fn exec_on(extra: Value) -> Value {
    let mut policy = json!({"exec_enabled": true});
    merge(&mut policy, extra);
    json!({ "policy": policy })
}

fn named(f: &Fixture, tool: &str, args: Value) -> Value {
    call_named(f.ws, tool, &args.to_string())
}

fn specs() -> Value {
    take_json(unsafe { wsfs::ffi::wsfs_tool_specs() })
}

fn git(dir: &std::path::Path, args: &[&str]) {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
}

fn repo(f: &Fixture) {
    git(&f.root, &["init", "-q", "-b", "main"]);
    git(&f.root, &["config", "user.email", "t@example.com"]);
    git(&f.root, &["config", "user.name", "t"]);
    f.write("a.txt", "one\n");
    git(&f.root, &["add", "a.txt"]);
    git(&f.root, &["commit", "-q", "-m", "first"]);
}

#[test]
fn specs_list_the_developer_tools_after_the_file_tools() {
    let specs = specs();
    let names: Vec<&str> = specs
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let at = names.iter().position(|n| *n == "workspace_info").unwrap();
    assert_eq!(&names[at..], DEV_TOOLS, "{names:?}");
    for spec in specs.as_array().unwrap() {
        if spec["name"] == "workspace_info" || spec["name"] == "git_status" {
            assert_eq!(spec["annotations"]["readOnlyHint"], true);
        }
        if spec["name"] == "shell" {
            assert_eq!(spec["annotations"]["readOnlyHint"], false);
        }
    }
}

#[test]
fn off_by_default_with_exec_disabled_before_the_arguments_are_read() {
    let f = Fixture::new();
    for tool in DEV_TOOLS {
        // Arguments that would not even parse: the switch is checked first.
        let msg = assert_err(&named(&f, tool, json!({"nonsense": 1})), "exec_disabled");
        assert!(msg.contains("exec_enabled"), "{tool}: {msg}");
    }
    // The file tools are untouched.
    f.write("x.txt", "x");
    assert_ok(&f.call("read_file", json!({"path": "x.txt"})));
}

#[test]
fn shell_needs_shell_enabled_as_well() {
    let f = Fixture::with_config(exec_on(json!({})));
    let msg = assert_err(
        &named(&f, "shell", json!({"command": "true"})),
        "exec_disabled",
    );
    assert!(msg.contains("shell_enabled"), "{msg}");
    let f = Fixture::with_config(exec_on(json!({"shell_enabled": true})));
    let v = named(&f, "shell", json!({"command": "echo hi; exit 3"}));
    let data = assert_ok(&v);
    assert_eq!(data["stdout"], "hi\n");
    assert_eq!(data["exit_code"], 3);
    assert!(data["sandbox"]["sandbox"]
        .as_str()
        .unwrap()
        .starts_with("landlock-v"));
    // shell_enabled alone does nothing.
    let f = Fixture::with_config(json!({"policy": {"shell_enabled": true}}));
    assert_err(
        &named(&f, "shell", json!({"command": "true"})),
        "exec_disabled",
    );
}

#[test]
fn the_switches_are_decoded_strictly() {
    let root = tempfile::tempdir().unwrap();
    let open = |policy: Value| {
        open_raw(&json!({"root": root.path().to_str().unwrap(), "policy": policy}).to_string())
    };
    for (policy, needle) in [
        (json!({"exec_enable": true}), "exec_enable"),
        (json!({"exec_enabled": "yes"}), "expected a boolean"),
        (json!({"exec_timeout_sec": 0}), "exec_timeout_sec"),
        (json!({"exec_timeout_sec": 100000000}), "exec_timeout_sec"),
        (
            json!({"exec_read_paths": ["relative/dir"]}),
            "exec_read_paths",
        ),
        (json!({"exec_env_allow": ["A=B"]}), "exec_env_allow"),
        (json!({"exec_network": 1}), "expected a boolean"),
    ] {
        let msg = assert_err(&open(policy.clone()), "invalid_arguments");
        assert!(msg.contains(needle), "{policy}: {msg}");
    }
    let v = open(json!({
        "exec_enabled": true, "shell_enabled": true, "exec_require_sandbox": false,
        "exec_network": false, "exec_read_paths": ["/opt"], "exec_env_allow": ["GOFLAGS", "CARGO_*"],
        "exec_timeout_sec": 120
    }));
    let data = assert_ok(&v);
    let policy = &data["policy"];
    assert_eq!(policy["exec_timeout_sec"], 120, "{data}");
    assert_eq!(policy["exec_env_allow"], json!(["GOFLAGS", "CARGO_*"]));
    close_ws(data["workspace"].as_u64().unwrap());
}

/// `"auto"` is the one word `exec_read_paths` takes besides absolute paths; what it grants is
/// tested on a fake toolchain in crates/devtools/src/toolchain_tests.rs.
#[test]
fn exec_read_paths_takes_auto_and_no_other_word() {
    let root = tempfile::tempdir().unwrap();
    let open = |paths: Value| {
        let policy = json!({"exec_enabled": true, "exec_read_paths": paths});
        open_raw(&json!({"root": root.path().to_str().unwrap(), "policy": policy}).to_string())
    };
    for word in ["Auto", "automatic", "auto/"] {
        let msg = assert_err(&open(json!([word])), "invalid_arguments");
        assert!(msg.contains("\"auto\""), "{word}: {msg}");
    }
    for paths in [json!(["auto"]), json!(["/opt", "auto"])] {
        let v = open(paths.clone());
        let data = assert_ok(&v);
        assert_eq!(data["policy"]["exec_read_paths"], paths, "{data}");
        let ws = data["workspace"].as_u64().unwrap();
        let info = call_named(ws, "workspace_info", "{}");
        assert!(
            assert_ok(&info)["unreadable_toolchains"].is_array(),
            "{info}"
        );
        close_ws(ws);
    }
}

#[test]
fn deny_rules_programs_could_not_honour_are_refused_at_open() {
    let root = tempfile::tempdir().unwrap();
    let open = |policy: Value| {
        open_raw(&json!({"root": root.path().to_str().unwrap(), "policy": policy}).to_string())
    };
    let msg = assert_err(
        &open(json!({"exec_enabled": true, "deny_read": [".env"]})),
        "invalid_arguments",
    );
    assert!(msg.contains("deny_read") && msg.contains(".env"), "{msg}");
    let msg = assert_err(
        &open(json!({"exec_enabled": true, "deny_write": [".git/**", "*.lock"]})),
        "invalid_arguments",
    );
    assert!(msg.contains("*.lock"), "{msg}");
    let log = root.path().join("audit.jsonl");
    let msg = assert_err(
        &open(json!({"exec_enabled": true, "audit_log": log.to_str().unwrap()})),
        "invalid_arguments",
    );
    assert!(msg.contains("audit log inside"), "{msg}");
    // The same rules without exec are fine, and so is exec with the default .git/**.
    for policy in [
        json!({"deny_read": [".env"]}),
        json!({"exec_enabled": true}),
        json!({"exec_enabled": true, "deny_write": [".git/**"]}),
    ] {
        let v = open(policy);
        close_ws(assert_ok(&v)["workspace"].as_u64().unwrap());
    }
}

#[test]
fn git_tools_through_the_registry() {
    let f = Fixture::with_config(exec_on(json!({})));
    repo(&f);
    f.write("a.txt", "one\ntwo\n");
    f.write("new.txt", "n\n");
    let v = named(&f, "git_status", json!({}));
    let st = assert_ok(&v);
    assert_eq!(st["branch"], "main");
    assert_eq!(st["unstaged"][0]["path"], "a.txt", "{st}");
    assert_eq!(st["untracked"][0], "new.txt", "{st}");
    assert!(v["text"].as_str().unwrap().contains("On branch main"));

    let v = named(&f, "git_diff", json!({"pathspec": ["a.txt"]}));
    let d = assert_ok(&v);
    assert_eq!(d["files_changed"][0]["path"], "a.txt");
    assert_eq!(d["files_changed"][0]["additions"], 1);
    // A pathspec is a tool path: outside the workspace is refused like anywhere else.
    assert_err(
        &named(&f, "git_diff", json!({"pathspec": ["../x"]})),
        "outside_workspace",
    );

    assert_err(
        &named(
            &f,
            "git_commit",
            json!({"message": "m", "paths": ["a.txt"]}),
        ),
        "confirmation_required",
    );
    // Staging goes through the write policy: .git/** stays write-denied.
    assert_err(
        &named(
            &f,
            "git_commit",
            json!({"message": "m", "paths": [".git/config"], "confirmed": true}),
        ),
        "policy_denied",
    );
    let v = named(
        &f,
        "git_commit",
        json!({"message": "second", "paths": ["a.txt", "new.txt"], "confirmed": true}),
    );
    let c = assert_ok(&v);
    assert_eq!(c["files_committed"], json!(["a.txt", "new.txt"]));
    assert_err(
        &named(
            &f,
            "git_commit",
            json!({"message": "again", "confirmed": true}),
        ),
        "nothing_to_commit",
    );
}

#[test]
fn cwd_is_a_tool_path() {
    let f = Fixture::with_config(exec_on(json!({"shell_enabled": true})));
    fs::create_dir_all(f.p("sub/inner")).unwrap();
    f.write("file.txt", "x");
    std::os::unix::fs::symlink(&f.base, f.p("out")).unwrap();
    let v = named(&f, "shell", json!({"command": "pwd", "cwd": "sub/./inner"}));
    assert_eq!(
        assert_ok(&v)["stdout"].as_str().unwrap().trim(),
        f.p("sub/inner").to_str().unwrap()
    );
    let v = named(&f, "safe_shell", json!({"command": "pwd", "cwd": "sub"}));
    assert_eq!(
        assert_ok(&v)["stdout"].as_str().unwrap().trim(),
        f.p("sub").to_str().unwrap()
    );
    assert_err(
        &named(&f, "shell", json!({"command": "pwd", "cwd": "../"})),
        "outside_workspace",
    );
    assert_err_in(
        &named(&f, "shell", json!({"command": "pwd", "cwd": "out"})),
        &["outside_workspace", "symlink_escape"],
    );
    assert_err(
        &named(&f, "shell", json!({"command": "pwd", "cwd": "missing"})),
        "path_not_found",
    );
    assert_err(
        &named(&f, "shell", json!({"command": "pwd", "cwd": "file.txt"})),
        "not_a_directory",
    );
}

#[test]
fn safe_shell_blocks_through_the_registry() {
    let f = Fixture::with_config(exec_on(json!({})));
    let v = named(&f, "safe_shell", json!({"command": "rm -rf /"}));
    let data = assert_ok(&v);
    assert_eq!(data["blocked"], true, "{data}");
    assert!(!data["suggested_safe_alternative"]
        .as_str()
        .unwrap()
        .is_empty());
    assert_eq!(data["reason_code"], "DENYLIST_MATCH", "{data}");
    let text = v["text"].as_str().unwrap();
    assert!(text.starts_with("blocked:"), "{text}");
    assert!(
        text.contains("(DENYLIST_MATCH: matched deny rule"),
        "{text}"
    );
    let v = named(&f, "safe_shell", json!({"command": "frobnicate --all"}));
    assert_eq!(assert_ok(&v)["reason_code"], "NOT_IN_ALLOWLIST", "{v}");
    let v = named(&f, "safe_shell", json!({"command": "echo ok"}));
    assert_eq!(assert_ok(&v)["stdout"], "ok\n");
}

/// A read-only workspace (`writes_enabled: false`) runs programs on a read-only view: they read
/// it, and the kernel refuses every change (content, names, metadata); only git_commit, which
/// could do nothing but fail, is `writes_disabled` (issue 30, item 8).
#[test]
fn read_only_workspace_runs_programs_on_a_read_only_view() {
    let f = Fixture::with_config(exec_on(
        json!({"writes_enabled": false, "shell_enabled": true}),
    ));
    repo(&f);
    fs::write(f.root.join("README.md"), "read me\n").unwrap();
    let v = named(&f, "safe_shell", json!({"command": "cat README.md"}));
    assert_eq!(assert_ok(&v)["stdout"], "read me\n", "{v}");
    for command in [
        "echo x > planted.txt",
        "chmod 777 README.md",
        "touch -d 2001-01-01 README.md",
        "rm README.md",
        "mkdir newdir",
    ] {
        let v = named(&f, "shell", json!({ "command": command }));
        let r = assert_ok(&v);
        assert_ne!(r["exit_code"], 0, "{command}: {v}");
        assert!(
            r["stderr"]
                .as_str()
                .unwrap()
                .contains("Read-only file system"),
            "{command}: {v}"
        );
    }
    assert!(!f.root.join("planted.txt").exists());
    assert!(!f.root.join("newdir").exists());
    assert_eq!(
        fs::read_to_string(f.root.join("README.md")).unwrap(),
        "read me\n"
    );
    let msg = assert_err(
        &named(&f, "git_commit", json!({"message": "x", "confirmed": true})),
        "writes_disabled",
    );
    // The list of what works names the program tools too.
    for tool in ["git_status", "safe_shell", "run_tests"] {
        assert!(msg.contains(tool), "{tool}: {msg}");
    }
    assert_ok(&named(&f, "git_status", json!({})));
    assert_ok(&named(&f, "git_diff", json!({})));
    // run_lint runs (its program's outcome is the lint's business, not a refusal).
    let v = named(&f, "run_lint", json!({"command": "echo ok"}));
    assert_ok(&v);
}

#[test]
fn the_exec_wall_clock_bounds_programs_not_operation_timeout_ms() {
    let f = Fixture::with_config({
        let mut c = exec_on(json!({"shell_enabled": true, "exec_timeout_sec": 2}));
        merge(&mut c, limits(json!({"operation_timeout_ms": 300})));
        c
    });
    // Longer than operation_timeout_ms, shorter than exec_timeout_sec: it finishes.
    let v = named(&f, "shell", json!({"command": "sleep 0.8; echo done"}));
    assert_eq!(assert_ok(&v)["stdout"], "done\n");
    // Past exec_timeout_sec: killed, with timeout.
    let t = std::time::Instant::now();
    let msg = assert_err(
        &named(&f, "shell", json!({"command": "echo started; sleep 30"})),
        "timeout",
    );
    assert!(t.elapsed() < std::time::Duration::from_secs(10));
    assert!(msg.contains("started"), "shows the output so far: {msg}");
    // A per-call timeout shortens it.
    let t = std::time::Instant::now();
    let v = call_opts(
        f.ws,
        "shell",
        &json!({"command": "sleep 30"}).to_string(),
        Some(r#"{"timeout_ms": 500}"#),
    );
    assert_err(&v, "timeout");
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn workspace_info_through_the_registry() {
    let f = Fixture::with_config(exec_on(json!({})));
    repo(&f);
    // A `.py` file at the root, listed through the workspace, makes it a Python project.
    f.write("tool.py", "print(1)\n");
    let v = named(&f, "workspace_info", json!({}));
    let data = assert_ok(&v);
    assert_eq!(data["git_repo_root"], ".");
    assert_eq!(data["project"], json!(["python"]), "{data}");
    assert_eq!(data["tools"]["git"]["available"], true, "{data}");
    assert!(v["text"].as_str().unwrap().contains("git repository at ."));
    // The second call is the cache's (same answer; the lib test counts no process started).
    let again = named(&f, "workspace_info", json!({}));
    assert_eq!(assert_ok(&again), data);
}

/// The issue's confinement list through the tools themselves (the runner's own tests, with an
/// unconfined control each, are in crates/exec/src/confinement_tests.rs): refused or killed, nothing
/// outside changed, the result says why.
#[test]
fn confinement_through_the_tools() {
    let f = Fixture::with_config(exec_on(
        json!({"shell_enabled": true, "exec_timeout_sec": 3}),
    ));
    let outside = f.base.join("outside");
    fs::create_dir(&outside).unwrap();
    fs::write(outside.join("secret.txt"), "TOP SECRET\n").unwrap();
    let run = |cmd: &str| {
        let v = named(&f, "shell", json!({ "command": cmd }));
        assert_ok(&v).clone()
    };
    // Writing outside.
    let target = outside.join("planted.txt");
    let r = run(&format!("echo x > {} && echo wrote", target.display()));
    assert_ne!(r["exit_code"], 0, "{r}");
    // Landlock (EACCES) or the read-only mounts (EROFS), whichever the kernel checks first.
    let said = r["stderr"].as_str().unwrap();
    assert!(
        said.contains("ermission denied") || said.contains("Read-only file system"),
        "{r}"
    );
    assert!(!target.exists());
    // Reading a secret outside exec_read_paths.
    let r = run(&format!("cat {}", outside.join("secret.txt").display()));
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!r["stdout"].as_str().unwrap().contains("TOP SECRET"), "{r}");
    // Connecting to a local TCP port it did not open.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let r = run(&format!(
        "exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    ));
    assert_ne!(r["exit_code"], 0, "{r}");
    assert!(!r["stdout"].as_str().unwrap().contains("connected"), "{r}");
    // Sleeping past its limit: killed with everything it started, the code says why.
    let t = std::time::Instant::now();
    let msg = assert_err(
        &named(&f, "shell", json!({"command": "sleep 60 & sleep 60"})),
        "timeout",
    );
    assert!(msg.contains("killed"), "{msg}");
    assert!(t.elapsed() < std::time::Duration::from_secs(15));
    // LD_PRELOAD: safe_shell judges the assignment and blocks it.
    let v = named(
        &f,
        "safe_shell",
        json!({"command": "LD_PRELOAD=/tmp/x.so ls"}),
    );
    let b = assert_ok(&v);
    assert_eq!(b["blocked"], true, "{b}");
    // core.fsmonitor set in the repository's config: git_status does not run it.
    repo(&f);
    // (A marker inside the workspace: the sandbox would let it be written there.)
    let inside_marker = f.p("fsmonitor-ran");
    git(
        &f.root,
        &[
            "config",
            "core.fsmonitor",
            &format!("touch {}; false", inside_marker.display()),
        ],
    );
    assert_ok(&named(&f, "git_status", json!({})));
    assert!(!inside_marker.exists(), "fsmonitor ran");
}

#[test]
fn run_tests_names_no_host_path_outside_the_workspace() {
    let f = Fixture::with_config(exec_on(json!({})));
    f.write("pyproject.toml", "[project]\nname = \"p\"\n");
    // A stand-in for pytest that says where its report goes, as pytest does.
    f.write(
        "pytest",
        "#!/bin/sh\nfor a in \"$@\"; do case $a in --junitxml=*) \
         echo \"- generated xml file: ${a#--junitxml=} -\";; esac; done\n\
         echo \"tmp $TMPDIR home $HOME\"\necho '1 passed'\n",
    );
    fs::set_permissions(
        f.p("pytest"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let v = named(&f, "run_tests", json!({"command": "./pytest"}));
    let data = assert_ok(&v);
    let command = data["command"].as_str().unwrap();
    assert!(command.contains("$TMPDIR/junit.xml"), "{command}");
    assert!(
        data["raw_output"]
            .as_str()
            .unwrap()
            .contains("generated xml file: $TMPDIR/junit.xml"),
        "{data}"
    );
    let whole = v.to_string();
    for host in ["exec-tmp", "exec-home", "wsfs-exec-"] {
        assert!(!whole.contains(host), "{host} in {whole}");
    }
}

/// A host's own safe_shell rules: `echo` only, with one deny rule.
const ECHO_ONLY: &str = r#"
version = 1
default_suggestion = "Only echo runs here."

[[deny]]
id = "no-secrets"
programs = ["echo"]
args = 'secret'
reason = "echoing secrets"
suggest = "Say it without the secret"
match = ["echo secret"]
not_match = ["echo hello"]

[[allow]]
id = "say"
programs = ["echo"]
deny_options = []
match = ["echo hello", "echo a && echo b"]
not_match = ["ls"]
"#;

/// `policy.safe_shell_rules`: safe_shell judges by the host's file (checked against its own
/// examples when the workspace opens) instead of the shipped rules (issue 31, item 4).
#[test]
fn safe_shell_judges_by_the_hosts_rules_file() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    fs::write(&rules, ECHO_ONLY).unwrap();
    let f = Fixture::with_config(exec_on(json!({"safe_shell_rules": rules})));
    let v = named(&f, "safe_shell", json!({"command": "echo hello"}));
    assert_eq!(assert_ok(&v)["stdout"], "hello\n", "{v}");
    // ls runs under the shipped rules, not under these.
    let v = named(&f, "safe_shell", json!({"command": "ls"}));
    let data = assert_ok(&v);
    assert_eq!(data["reason_code"], "NOT_IN_ALLOWLIST", "{data}");
    assert_eq!(data["suggested_safe_alternative"], "Only echo runs here.");
    let v = named(&f, "safe_shell", json!({"command": "echo secret"}));
    let data = assert_ok(&v);
    assert_eq!(data["reason_code"], "DENYLIST_MATCH", "{data}");
    assert_eq!(data["reason"], "echoing secrets");
    // Read once, at open: a later change of the file changes nothing.
    fs::write(&rules, ECHO_ONLY.replace("\"echo\"]", "\"echo\", \"ls\"]")).unwrap();
    let v = named(&f, "safe_shell", json!({"command": "ls"}));
    assert_eq!(assert_ok(&v)["blocked"], true, "{v}");
    // Without the key, the shipped rules.
    let shipped = Fixture::with_config(exec_on(json!({})));
    let v = named(&shipped, "safe_shell", json!({"command": "ls"}));
    assert_eq!(assert_ok(&v)["blocked"], false, "{v}");
}

#[test]
fn a_bad_rules_file_refuses_the_open_and_says_which_rule_and_example() {
    let dir = tempfile::tempdir().unwrap();
    let open = |rules: &str| {
        let mut config = exec_on(json!({"safe_shell_rules": rules}));
        config["root"] = json!(dir.path().join("ws"));
        config["create_root"] = json!(true);
        open_raw(&config.to_string())
    };
    let write = |name: &str, text: &str| {
        let path = dir.path().join(name);
        fs::write(&path, text).unwrap();
        path.to_str().unwrap().to_string()
    };
    // An example the rule does not honour.
    let wrong = write(
        "wrong.toml",
        &ECHO_ONLY
            .replace("not_match = [\"ls\"]", "match = [\"ls\"]")
            .replace("match = [\"echo hello\", \"echo a && echo b\"]\n", ""),
    );
    let m = assert_err(&open(&wrong), "invalid_arguments");
    assert!(
        m.contains("policy.safe_shell_rules") && m.contains("wrong.toml"),
        "{m}"
    );
    assert!(m.contains("allow rule 'say' should allow \"ls\""), "{m}");
    // Not TOML, an unknown key, a missing file, a relative path.
    let m = assert_err(
        &open(&write("syntax.toml", "version = ")),
        "invalid_arguments",
    );
    assert!(m.contains("syntax.toml"), "{m}");
    let m = assert_err(
        &open(&write("key.toml", &format!("{ECHO_ONLY}\nbogus = 1\n"))),
        "invalid_arguments",
    );
    assert!(m.contains("bogus"), "{m}");
    let missing = dir.path().join("missing.toml");
    let m = assert_err(&open(missing.to_str().unwrap()), "invalid_arguments");
    assert!(m.contains("cannot be read"), "{m}");
    let m = assert_err(&open("rules.toml"), "invalid_arguments");
    assert!(m.contains("not an absolute path"), "{m}");
    assert!(
        !dir.path().join("ws").exists(),
        "a refused open creates nothing"
    );
}
