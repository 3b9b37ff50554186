//! The host's approval handler through the C ABI (issue 31, item 9): with one set, it decides
//! each call that needs confirming (`git_commit`), whatever `confirmed` says, and the calls
//! only a host is asked about (a recursive `delete_file`, every `shell` command); without one,
//! `confirmed: true` is the gate and those run as before.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::ffi::{c_char, c_void, CStr};
use std::process::Command;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use wsfs::ffi;

fn git(dir: &std::path::Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("HOME", dir)
        .output()
        .expect("git runs");
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn repo() -> Fixture {
    let f = Fixture::with_config(json!({"policy": {"exec_enabled": true}}));
    git(&f.root, &["init", "-q", "-b", "main"]);
    git(&f.root, &["config", "user.email", "t@example.com"]);
    git(&f.root, &["config", "user.name", "t"]);
    f.write("a.txt", "one\n");
    git(&f.root, &["add", "a.txt"]);
    git(&f.root, &["commit", "-q", "-m", "first"]);
    f
}

fn commits(f: &Fixture) -> usize {
    git(&f.root, &["rev-list", "--count", "HEAD"])
        .trim()
        .parse()
        .unwrap()
}

/// The token `handler` cancels when it is asked about a commit with the message "cancel".
static CANCEL_TOKEN: AtomicU64 = AtomicU64::new(0);

/// The requests the handler got, in order.
type Seen = Mutex<Vec<Value>>;

/// The handler the tests set: answers by the commit message it is asked about.
unsafe extern "C" fn handler(
    userdata: *mut c_void,
    request: *const c_char,
    timeout_ms: u64,
    response: *mut ffi::wsfs_approval_response,
) -> i32 {
    let seen = unsafe { &*(userdata as *const Seen) };
    let request = unsafe { CStr::from_ptr(request) }.to_str().unwrap();
    let request: Value = serde_json::from_str(request).unwrap();
    // What the handler decides by: a commit's message, a delete's path, a command line.
    let arguments = &request["arguments"];
    let message = ["message", "path", "command"]
        .iter()
        .find_map(|key| arguments[key].as_str())
        .unwrap_or("")
        .to_string();
    seen.lock().unwrap().push(request);
    let respond = |reason: &str| {
        let reason = cs(reason);
        assert_eq!(
            unsafe { ffi::wsfs_approval_respond(response, reason.as_ptr()) },
            0
        );
    };
    match message.as_str() {
        "deny" => {
            respond("the user said no");
            ffi::WSFS_APPROVAL_DENY
        }
        "error" => {
            respond("no user at the terminal");
            ffi::WSFS_APPROVAL_ERROR
        }
        "status" => 7,
        "cancel" => {
            // The host cancels the call while its handler decides; the answer comes after.
            ffi::wsfs_cancel_token_cancel(CANCEL_TOKEN.load(Ordering::SeqCst));
            ffi::WSFS_APPROVAL_APPROVE
        }
        "slow" => {
            // Approves, but only after the call's deadline has passed.
            std::thread::sleep(std::time::Duration::from_millis(timeout_ms + 20));
            ffi::WSFS_APPROVAL_APPROVE
        }
        _ => ffi::WSFS_APPROVAL_APPROVE,
    }
}

fn set(ws: u64, seen: &Seen) -> Value {
    let userdata = seen as *const Seen as *mut c_void;
    take_envelope(unsafe { ffi::wsfs_set_approval_handler(ws, Some(handler), userdata) })
}

fn commit(f: &Fixture, args: Value) -> Value {
    f.write("a.txt", format!("{}\n", args["message"]));
    call_named(f.ws, "git_commit", &args.to_string())
}

#[test]
fn an_approving_handler_runs_the_call_whatever_confirmed_says() {
    let f = repo();
    let seen = Seen::default();
    let data = set(f.ws, &seen);
    assert_eq!(assert_ok(&data)["approval_handler"], true, "{data}");
    assert_eq!(
        assert_ok(&data)["tools"],
        json!(["delete_file", "git_commit"])
    );
    let args = json!({"message": "approved", "paths": ["a.txt"]});
    assert_ok(&commit(&f, args.clone()));
    assert_eq!(commits(&f), 2);
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 1);
    assert_eq!(seen[0]["tool"], "git_commit");
    assert_eq!(seen[0]["arguments"], args, "the model's own arguments");
    assert!(seen[0]["why"].as_str().unwrap().contains("history"));
}

#[test]
fn a_denial_a_failing_handler_and_a_late_answer_are_approval_denied() {
    let f = repo();
    let seen = Seen::default();
    set(f.ws, &seen);
    let denied = |message: &str| {
        commit(
            &f,
            json!({"message": message, "paths": ["a.txt"], "confirmed": true}),
        )
    };
    let text = assert_err(&denied("deny"), "approval_denied");
    assert!(text.contains("the user said no"), "{text}");
    let text = assert_err(&denied("error"), "approval_denied");
    assert!(text.contains("no user at the terminal"), "{text}");
    let text = assert_err(&denied("status"), "approval_denied");
    assert!(text.contains("unknown status 7"), "{text}");
    // A deadline of its own for the call, which the handler overruns.
    let args = json!({"message": "slow", "paths": ["a.txt"], "confirmed": true});
    let v = call_opts(
        f.ws,
        "git_commit",
        &args.to_string(),
        Some(r#"{"timeout_ms": 200}"#),
    );
    let text = assert_err(&v, "approval_denied");
    assert!(text.contains("deadline"), "{text}");
    assert_eq!(commits(&f), 1, "nothing was committed");
    assert_eq!(seen.lock().unwrap().len(), 4);
}

#[test]
fn a_call_cancelled_while_its_handler_decides_is_cancelled_once_it_answers() {
    let f = repo();
    let seen = Seen::default();
    set(f.ws, &seen);
    let token = ffi::wsfs_cancel_token_new();
    CANCEL_TOKEN.store(token, Ordering::SeqCst);
    f.write("a.txt", "cancel\n");
    let args = json!({"message": "cancel", "paths": ["a.txt"]});
    let options = format!(r#"{{"cancel_token": {token}}}"#);
    let v = call_opts(f.ws, "git_commit", &args.to_string(), Some(&options));
    assert_err(&v, "cancelled");
    assert_eq!(seen.lock().unwrap().len(), 1, "the handler was asked");
    assert_eq!(commits(&f), 1, "nothing was committed");
    ffi::wsfs_cancel_token_free(token);
}

#[test]
fn without_a_handler_confirmed_is_the_gate_and_other_tools_never_ask() {
    let f = repo();
    let seen = Seen::default();
    set(f.ws, &seen);
    assert_ok(&call_named(f.ws, "git_status", "{}"));
    assert_eq!(
        seen.lock().unwrap().len(),
        0,
        "git_status needs no approval"
    );
    let v =
        take_envelope(unsafe { ffi::wsfs_set_approval_handler(f.ws, None, std::ptr::null_mut()) });
    assert_eq!(assert_ok(&v)["approval_handler"], false);
    assert_err(
        &commit(&f, json!({"message": "deny", "paths": ["a.txt"]})),
        "confirmation_required",
    );
    let args = json!({"message": "deny", "paths": ["a.txt"], "confirmed": true});
    assert_ok(&commit(&f, args));
    assert_eq!(commits(&f), 2);
    assert_eq!(
        seen.lock().unwrap().len(),
        0,
        "a removed handler is not called"
    );
}

#[test]
fn setting_a_handler_says_which_tools_ask_it() {
    let seen = Seen::default();
    let f = Fixture::new();
    let v = set(f.ws, &seen);
    assert_eq!(assert_ok(&v)["tools"], json!(["delete_file"]), "{v}");
    assert!(v["warnings"].as_array().unwrap().is_empty(), "{v}");
    let f = Fixture::with_config(json!({"policy": {"writes_enabled": false}}));
    let v = set(f.ws, &seen);
    assert_eq!(assert_ok(&v)["tools"], json!([]));
    let warning = v["warnings"][0].as_str().unwrap_or_default();
    assert!(warning.contains("exec_enabled"), "{v}");
    assert_err(&set(u64::MAX, &seen), "invalid_workspace");
    let reason = cs("x");
    let null = std::ptr::null_mut();
    assert_eq!(
        unsafe { ffi::wsfs_approval_respond(null, reason.as_ptr()) },
        -1
    );
}

#[test]
fn the_capability_plans_git_commit_asks_the_handler_too() {
    let f = Fixture::with_config(json!({
        "profile": "capability-plan",
        "policy": {"exec_enabled": true},
    }));
    git(&f.root, &["init", "-q", "-b", "main"]);
    f.write("a.txt", "one\n");
    let seen = Seen::default();
    set(f.ws, &seen);
    let args = json!({"message": "deny", "paths": ["a.txt"], "confirmed": true});
    let (tool, args) = (cs("git_commit"), cs(&args.to_string()));
    // The profile's own envelope, not the native one call_named checks.
    let v = take_json(unsafe { ffi::wsfs_call(f.ws, tool.as_ptr(), args.as_ptr()) });
    assert_eq!(v["ok"], false, "{v}");
    assert_eq!(v["error_code"], "APPROVAL_DENIED", "{v}");
    assert!(v["message"].as_str().unwrap().contains("the user said no"));
    assert_eq!(seen.lock().unwrap().len(), 1);
}

#[test]
fn a_recursive_delete_asks_the_handler_and_a_plain_one_does_not() {
    let f = Fixture::new();
    f.write("keep/a.txt", "a");
    f.write("go/b.txt", "b");
    f.write("c.txt", "c");
    let seen = Seen::default();
    set(f.ws, &seen);
    // Named "deny", the handler refuses; the tree stays whole.
    f.write("deny/d.txt", "d");
    let v = call(
        f.ws,
        "delete_file",
        json!({"path": "deny", "recursive": true}),
    );
    let text = assert_err(&v, "approval_denied");
    assert!(text.contains("the user said no"), "{text}");
    assert!(f.exists("deny/d.txt"));
    // Approved, it runs as the model asked, with no confirmation added to its arguments.
    assert_ok(&call(
        f.ws,
        "delete_file",
        json!({"path": "go", "recursive": true}),
    ));
    assert!(!f.exists("go"));
    assert_ok(&call(f.ws, "delete_file", json!({"path": "c.txt"})));
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 2, "a plain delete is not asked about: {seen:?}");
    assert_eq!(
        seen[1]["arguments"],
        json!({"path": "go", "recursive": true})
    );
    assert!(seen[1]["why"]
        .as_str()
        .unwrap()
        .contains("whole directory tree"));
}

#[test]
fn the_raw_shell_asks_the_handler_for_every_command() {
    let f = Fixture::with_config(json!({
        "policy": {"exec_enabled": true, "shell_enabled": true, "exec_require_sandbox": false}
    }));
    let seen = Seen::default();
    let v = set(f.ws, &seen);
    assert_eq!(
        assert_ok(&v)["tools"],
        json!(["delete_file", "git_commit", "shell"]),
        "{v}"
    );
    let v = call(f.ws, "shell", json!({"command": "deny"}));
    assert_err(&v, "approval_denied");
    let v = call(f.ws, "shell", json!({"command": "echo made > out.txt"}));
    assert_ok(&v);
    assert_eq!(f.read("out.txt"), b"made\n");
    assert_eq!(seen.lock().unwrap().len(), 2);
}
