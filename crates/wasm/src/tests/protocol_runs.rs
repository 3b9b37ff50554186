// The protocol end to end: arguments on stdin, the result on stdout, the exit status.

use super::wat::Fixture;
use super::*;
use serde_json::json;

/// Prints `{"got": <stdin>}`.
fn echo() -> String {
    let mut f = Fixture::new();
    let open = f.text("{\"got\":");
    let close = f.text("}");
    f.wat(&format!(
        "(local $n i32) (local.set $n (call $read_all (i32.const 0)))
         (call $print {open}) (call $print (i32.const 65536) (local.get $n)) (call $print {close})"
    ))
}

const TEXT_SCHEMA: &str = r#","input_schema":{"type":"object","additionalProperties":false,
    "required":["text"],"properties":{"text":{"type":"string","description":"Some text"}}}"#;

fn echo_tool() -> LoadedTool {
    // The schema replaces write_tool's open one (a later duplicate key would be refused).
    let tmp = tempfile::tempdir().unwrap();
    let wat = echo();
    let dir = tmp.path().join("echo");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("module.wat"), &wat).unwrap();
    let manifest = format!(
        r#"{{"name":"echo","version":"1.0.0","description":"Echoes its arguments.",
             "module_sha256":"{}"{TEXT_SCHEMA}}}"#,
        sha256_hex(wat.as_bytes())
    );
    std::fs::write(dir.join(MANIFEST_FILE), manifest).unwrap();
    load_tool(&dir, engine().as_ref(), &WasmCeiling::default()).unwrap()
}

#[test]
fn arguments_arrive_on_stdin_and_the_result_leaves_on_stdout() {
    let echo = echo_tool();
    let out = run_plain(&echo, r#"{"text":"héllo"}"#).unwrap();
    assert_eq!(out.data, json!({"got": {"text": "héllo"}}));
    assert!(out.fuel_used > 0);
    // A tool call gives the tool the same arguments.
    let call = r#"{"tool_call":{"name":"echo","arguments":{"text":"x"}}}"#;
    assert_eq!(
        run_plain(&echo, call).unwrap().data,
        json!({"got": {"text": "x"}})
    );
}

#[test]
fn malformed_arguments_never_reach_the_tool() {
    let echo = echo_tool();
    for input in [
        "{",
        r#"{"text":1}"#,
        r#"{"tool_call":{"name":"echo"}}"#,
        r#"{"tool_call":{"name":"other","arguments":{"text":"x"}}}"#,
        r#"{"text":"x","more":1}"#,
    ] {
        let result = run_plain(&echo, input);
        assert_eq!(code(&result), ErrorCode::InvalidArguments, "{input}");
        assert!(err_message(&result).contains("expected {\"text\": string}"));
        assert!(result
            .err()
            .is_some_and(|e| e.message.starts_with("invalid arguments for echo")));
    }
}

#[test]
fn exit_statuses() {
    let mut f = Fixture::new();
    let own = f.text(r#"{"error":{"code":"path_not_found","message":"input.txt is missing"}}"#);
    let says_why = f.wat(&format!(
        "(call $print {own}) (call $proc_exit (i32.const 1))"
    ));
    let result = run_plain(&tool(&says_why, ""), "{}");
    assert_eq!(code(&result), ErrorCode::PathNotFound);
    assert_eq!(err_message(&result), "fixture: input.txt is missing");

    let mut f = Fixture::new();
    let (why, len) = f.place("panicked: bad state");
    let silent = f.wat(&format!(
        "(i32.store (i32.const 0) (i32.const {why})) (i32.store (i32.const 4) (i32.const {len}))
         (drop (call $fd_write (i32.const 2) (i32.const 0) (i32.const 1) (i32.const 8)))
         (call $proc_exit (i32.const 101))"
    ));
    let result = run_plain(&tool(&silent, ""), "{}");
    assert_eq!(code(&result), ErrorCode::ToolTrap);
    let message = err_message(&result);
    assert!(
        message.contains("exit status 101") && message.contains("panicked: bad state"),
        "{message}"
    );

    let mut f = Fixture::new();
    let ok = f.text("{\"done\":1}");
    let exits_zero = f.wat(&format!(
        "(call $print {ok}) (call $proc_exit (i32.const 0))"
    ));
    assert_eq!(
        run_plain(&tool(&exits_zero, ""), "{}").unwrap().data["done"],
        1
    );

    let mut f = Fixture::new();
    let text = f.text("not json");
    let garbled = f.wat(&format!("(call $print {text})"));
    let result = run_plain(&tool(&garbled, ""), "{}");
    assert_eq!(code(&result), ErrorCode::ToolTrap);
    assert!(err_message(&result).contains("not one JSON value"));
}

#[test]
fn the_environment_holds_only_allowed_variables() {
    // Prints the environment as {"env": "NAME=value"} (one variable expected).
    let wat = r#"(module
      (import "wasi_snapshot_preview1" "environ_sizes_get" (func $sizes (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "environ_get" (func $get (param i32 i32) (result i32)))
      (import "wasi_snapshot_preview1" "fd_write" (func $fd_write (param i32 i32 i32 i32) (result i32)))
      (memory (export "memory") 1)
      (data (i32.const 900) "{\"env\":\"")
      (data (i32.const 910) "\"}")
      (func (export "_start")
        (drop (call $sizes (i32.const 0) (i32.const 4)))
        (drop (call $get (i32.const 16) (i32.const 1000)))
        (i32.store (i32.const 100) (i32.const 900)) (i32.store (i32.const 104) (i32.const 8))
        (i32.store (i32.const 108) (i32.const 1000))
        ;; every variable but the last NUL: NULs between several would not be JSON
        (i32.store (i32.const 112) (i32.sub (i32.load (i32.const 4)) (i32.const 1)))
        (i32.store (i32.const 116) (i32.const 910)) (i32.store (i32.const 120) (i32.const 2))
        (drop (call $fd_write (i32.const 1) (i32.const 100) (i32.const 3) (i32.const 200)))))"#;
    // The host allows PATH and HOME; the manifest asks for PATH only, so HOME stays hidden.
    let path = std::env::var("PATH").expect("tests run with a PATH");
    let host = WasmCeiling {
        allowed_env: vec!["PATH".into(), "HOME".into()],
        ..WasmCeiling::default()
    };
    let loaded = tool_with(wat, r#","capabilities":{"env":["PATH"]}"#, &host).unwrap();
    let out = runner::run(
        &loaded,
        "{}",
        RunContext {
            ctl: &ctl(),
            host: &host,
            workspace: None,
            gateway: None,
        },
    )
    .unwrap();
    assert_eq!(out.data["env"], format!("PATH={path}"));
}
