//! The example tools written in Rust (tools/rust/echo, ask_model, inventory): built here for
//! wasm32-wasip1 with the toolchain that runs the tests (into target/, never into the source
//! tree), assembled into tool folders with their `module_sha256` computed, and run through the
//! C ABI on every engine this build has: the cases of each tool's tests.json, the model gateway
//! as the host's C callback, and the workspace in host mode with its policy.
//!
//! Without the wasm32-wasip1 target (`rustup target add wasm32-wasip1`) the tests say SKIPPED
//! and pass; `WSFS_REQUIRE_WASM_TARGET=1` (make test) makes that a failure instead.
#![allow(unused_unsafe)]

use crate::common::*;
use serde_json::{json, Value};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

const TARGET: &str = "wasm32-wasip1";
const EXAMPLES: [&str; 3] = ["echo", "ask_model", "inventory"];

/// The engines this build of the library has.
fn engines() -> Vec<&'static str> {
    let mut engines = vec!["wasmi"];
    if cfg!(feature = "wasmtime") {
        engines.push("wasmtime");
    }
    engines
}

fn sources() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tools/rust")
}

/// Why the examples cannot be built here, when the target's standard library is missing.
fn missing_target() -> Option<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = Command::new(&rustc)
        .args(["--print", "sysroot"])
        .output()
        .ok()?;
    let sysroot = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let lib = Path::new(&sysroot)
        .join("lib/rustlib")
        .join(TARGET)
        .join("lib");
    match lib.is_dir() {
        true => None,
        false => Some(format!(
            "the {TARGET} target is not installed for {rustc} ({} is missing); add it with \
             `rustup target add {TARGET}`",
            lib.display()
        )),
    }
}

/// The built examples: a folder holding one tool folder per example (manifest.json with the
/// module's hash, module.wasm, tests.json), or why they could not be built.
fn built() -> Result<&'static Path, String> {
    static BUILT: OnceLock<Result<PathBuf, String>> = OnceLock::new();
    BUILT
        .get_or_init(|| {
            if let Some(why) = missing_target() {
                return Err(why);
            }
            let target_dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("wasm-tools");
            let folders = target_dir.join("tools");
            let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
            for name in EXAMPLES {
                let src = sources().join(name);
                let out = Command::new(&cargo)
                    .args([
                        "build",
                        "--release",
                        "--locked",
                        "--offline",
                        "--target",
                        TARGET,
                    ])
                    .arg("--manifest-path")
                    .arg(src.join("Cargo.toml"))
                    .arg("--target-dir")
                    .arg(&target_dir)
                    .output()
                    .map_err(|e| format!("{cargo}: {e}"))?;
                if !out.status.success() {
                    panic!(
                        "building tools/rust/{name} failed:\n{}",
                        String::from_utf8_lossy(&out.stderr)
                    );
                }
                let module = fs::read(
                    target_dir
                        .join(TARGET)
                        .join("release")
                        .join(format!("{name}.wasm")),
                )
                .unwrap();
                let dir = folders.join(name);
                fs::create_dir_all(&dir).unwrap();
                fs::write(dir.join("module.wasm"), &module).unwrap();
                let mut manifest: Value =
                    serde_json::from_str(&fs::read_to_string(src.join("manifest.json")).unwrap())
                        .unwrap();
                manifest["module_sha256"] = json!(sha256_hex(&module));
                fs::write(dir.join("manifest.json"), manifest.to_string()).unwrap();
                fs::copy(src.join("tests.json"), dir.join("tests.json")).unwrap();
            }
            Ok(folders)
        })
        .as_deref()
        .map_err(Clone::clone)
}

fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// The built examples, or None after saying SKIPPED (a failure under
/// `WSFS_REQUIRE_WASM_TARGET=1`).
fn examples() -> Option<&'static Path> {
    match built() {
        Ok(dir) => Some(dir),
        Err(why) => {
            assert!(
                std::env::var_os("WSFS_REQUIRE_WASM_TARGET").is_none(),
                "WSFS_REQUIRE_WASM_TARGET is set, but {why}"
            );
            eprintln!("SKIPPED: the Rust example tools were not built: {why}");
            None
        }
    }
}

fn open(dir: &Path, engine: &str, extra: Value) -> Fixture {
    let mut config = json!({"wasm_tools": [dir], "wasm_policy": {"engine": engine}});
    merge(&mut config, extra);
    Fixture::with_config(config)
}

/// Each case of the tool's tests.json: `expect` (the data) or `expect_error` (the code).
fn run_cases(dir: &Path, engine: &str) {
    let name = dir.file_name().unwrap().to_str().unwrap();
    let cases: Vec<Value> =
        serde_json::from_str(&fs::read_to_string(dir.join("tests.json")).unwrap()).unwrap();
    assert!(!cases.is_empty());
    for case in cases {
        let f = open(dir, engine, json!({}));
        let v = call_named(f.ws, name, &case["args"].to_string());
        let what = format!("{name} on {engine}: {}", case["name"]);
        match case.get("expect_error").and_then(Value::as_str) {
            Some(code) => {
                assert_eq!(v["ok"], false, "{what}: {v}");
                assert_eq!(v["error"]["code"], code, "{what}: {v}");
            }
            None => {
                assert_eq!(v["ok"], true, "{what}: {v}");
                if let Some(expect) = case.get("expect") {
                    assert_eq!(&v["data"], expect, "{what}");
                }
            }
        }
    }
}

#[test]
fn the_rust_echo_runs_its_cases_on_every_engine() {
    let Some(examples) = examples() else { return };
    for engine in engines() {
        run_cases(&examples.join("echo"), engine);
        let f = open(&examples.join("echo"), engine, json!({}));
        let v = call_named(f.ws, "echo", r#"{"message":"a \"quoted\" line\n"}"#);
        assert_eq!(
            assert_ok(&v),
            &json!({"received": {"message": "a \"quoted\" line\n"}}),
            "{engine}"
        );
    }
}

/// The C gateway: answers `{"text": "answer to <prompt>"}`, or fails for the prompt "fail".
unsafe extern "C" fn gateway(
    _userdata: *mut std::ffi::c_void,
    request: *const std::ffi::c_char,
    _timeout_ms: u64,
    response: *mut ffi::wsfs_gateway_response,
) -> i32 {
    let request = unsafe { std::ffi::CStr::from_ptr(request) }
        .to_str()
        .unwrap();
    let prompt = serde_json::from_str::<Value>(request).unwrap()["prompt"]
        .as_str()
        .unwrap()
        .to_string();
    let (status, text) = match prompt.as_str() {
        "fail" => (ffi::WSFS_GATEWAY_ERROR, "provider said no".to_string()),
        _ => (
            ffi::WSFS_GATEWAY_OK,
            json!({"text": format!("answer to {prompt}")}).to_string(),
        ),
    };
    let text = cs(&text);
    assert_eq!(
        unsafe { ffi::wsfs_gateway_respond(response, text.as_ptr()) },
        0
    );
    status
}

#[test]
fn the_rust_ask_model_reaches_the_hosts_gateway_only() {
    let Some(examples) = examples() else { return };
    let dir = examples.join("ask_model");
    for engine in engines() {
        run_cases(&dir, engine);
        let f = open(&dir, engine, json!({}));
        let ask =
            |prompt: &str| call_named(f.ws, "ask_model", &json!({ "prompt": prompt }).to_string());
        let v = take_envelope(ffi::wsfs_set_model_gateway(
            f.ws,
            Some(gateway),
            std::ptr::null_mut(),
        ));
        assert_eq!(assert_ok(&v)["gateway"], true);
        assert_eq!(
            assert_ok(&ask("hi")),
            &json!({"text": "answer to hi"}),
            "{engine}"
        );
        let message = assert_err(&ask("fail"), "gateway_error");
        assert!(message.contains("provider said no"), "{engine}: {message}");
        // A host that lets no tool reach a model refuses to load it.
        let v = open_raw(
            &json!({"root": f.root, "wasm_tools": [dir],
                    "wasm_policy": {"engine": engine, "allow_model_access": false}})
            .to_string(),
        );
        assert_err(&v, "capability_denied");
    }
}

#[test]
fn the_rust_inventory_reads_and_writes_through_the_workspace() {
    let Some(examples) = examples() else { return };
    let dir = examples.join("inventory");
    for engine in engines() {
        run_cases(&dir, engine);
        let f = open(&dir, engine, json!({}));
        f.write("b.txt", "b");
        fs::create_dir(f.p("a")).unwrap();
        let v = call_named(f.ws, "inventory", "{}");
        // Two entries once ended in fuel_exhausted on wasmi at any fuel: a slice ran out while
        // wasmi lazily translated a function on its first call, which it cannot resume
        // (crates/wasm/src/wasmi_engine.rs, `config`).
        assert_eq!(
            assert_ok(&v),
            &json!({"written": "INVENTORY.txt", "entries": 2}),
            "{engine}"
        );
        assert_eq!(f.read("INVENTORY.txt"), b"a\nb.txt\n", "{engine}");
        let v = call_named(f.ws, "inventory", "{}");
        assert_eq!(assert_ok(&v)["entries"], 3, "{engine}");
        assert_eq!(
            f.read("INVENTORY.txt"),
            b"INVENTORY.txt\na\nb.txt\n",
            "{engine}"
        );
        // Three entries.
        let three = open(&dir, engine, json!({}));
        for name in ["x", "y", "z"] {
            three.write(name, name);
        }
        let v = call_named(three.ws, "inventory", "{}");
        assert_eq!(assert_ok(&v)["entries"], 3, "{engine}");
        assert_eq!(three.read("INVENTORY.txt"), b"x\ny\nz\n", "{engine}");
        // A larger listing: 30 entries, also more than 100M fuel's worth on wasmi before.
        let thirty = open(&dir, engine, json!({}));
        let mut names: Vec<String> = (0..30).map(|i| format!("f{i:02}")).collect();
        for name in &names {
            thirty.write(name, name);
        }
        let v = call_named(thirty.ws, "inventory", "{}");
        assert_eq!(assert_ok(&v)["entries"], 30, "{engine}");
        names.sort();
        let listing: String = names.iter().map(|n| format!("{n}\n")).collect();
        assert_eq!(thirty.read("INVENTORY.txt"), listing.as_bytes(), "{engine}");
        // The workspace's policy applies: a write it denies fails the call, file unchanged.
        let denied = open(
            &dir,
            engine,
            json!({"policy": {"deny_write": ["INVENTORY.txt"]}}),
        );
        denied.write("INVENTORY.txt", "kept");
        let v = call_named(denied.ws, "inventory", "{}");
        assert_eq!(v["ok"], false, "{engine}: {v}");
        assert_eq!(denied.read("INVENTORY.txt"), b"kept", "{engine}");
        // A read-only workspace refuses a write tool before it runs.
        let read_only = open(&dir, engine, json!({"policy": {"writes_enabled": false}}));
        assert_err(
            &call_named(read_only.ws, "inventory", "{}"),
            "writes_disabled",
        );
        assert!(!read_only.p("INVENTORY.txt").exists());
    }
}

/// The inventory tool in overlay mode (issue 22's example that reads and writes the
/// workspace): its writes land in the session, the base is untouched until the host commits.
#[test]
fn the_rust_inventory_works_on_an_overlay_session() {
    let Some(examples) = examples() else { return };
    let dir = examples.join("inventory");
    for engine in engines() {
        let tmp = tempfile::tempdir().unwrap();
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("ws");
        fs::create_dir_all(root.join("a")).unwrap();
        fs::write(root.join("b.txt"), "b").unwrap();
        let ws = open_ws(
            &root,
            json!({"mode": "overlay", "state_dir": base.join("state"), "wasm_tools": [&dir],
                   "wasm_policy": {"engine": engine}}),
        );
        let v = call_named(ws, "inventory", "{}");
        assert_eq!(
            assert_ok(&v),
            &json!({"written": "INVENTORY.txt", "entries": 2}),
            "{engine}"
        );
        let read = call(ws, "read_file", json!({"path": "INVENTORY.txt"}));
        assert_eq!(assert_ok(&read)["content"], json!("a\nb.txt\n"), "{engine}");
        assert!(
            !root.join("INVENTORY.txt").exists(),
            "{engine}: the base changed"
        );
        // SAFETY: NULL options; the result is freed by take_envelope.
        let diff = take_envelope(unsafe { ffi::wsfs_session_diff(ws, std::ptr::null()) });
        assert_eq!(
            assert_ok(&diff)["changes"][0]["path"],
            json!("INVENTORY.txt")
        );
        // SAFETY: as above.
        let commit = take_envelope(unsafe { ffi::wsfs_session_commit(ws, std::ptr::null()) });
        assert_eq!(assert_ok(&commit)["committed"], json!(true), "{engine}");
        assert_eq!(
            fs::read_to_string(root.join("INVENTORY.txt")).unwrap(),
            "a\nb.txt\n"
        );
        close_ws(ws);
    }
}
