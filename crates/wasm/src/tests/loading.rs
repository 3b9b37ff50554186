// Loading tool folders: the manifest, the host's ceiling, the module's hash and interface.

use super::wat::Fixture;
use super::*;
use crate::policy::FsCapability;
use crate::registry::WasmRegistry;

fn noop() -> String {
    let mut f = Fixture::new();
    let ok = f.text("{}");
    f.wat(&format!("(call $print {ok})"))
}

fn load_code(wat: &str, fields: &str, host: &WasmCeiling) -> (ErrorCode, String) {
    let e = tool_with(wat, fields, host).err().expect("the load fails");
    (e.code, e.message)
}

#[test]
fn a_module_that_does_not_match_its_hash_is_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_tool(tmp.path(), "hashed", &noop(), "");
    load_tool(&dir, engine().as_ref(), &WasmCeiling::default()).expect("it loads as written");
    // One byte more (a comment) after the manifest was written: not the module it names.
    let mut changed = std::fs::read_to_string(dir.join("module.wat")).unwrap();
    changed.push_str(";; x");
    std::fs::write(dir.join("module.wat"), changed).unwrap();
    let e = load_tool(&dir, engine().as_ref(), &WasmCeiling::default())
        .err()
        .unwrap();
    assert_eq!(e.code, ErrorCode::ModuleMismatch, "{}", e.message);
    assert!(e.message.contains("module_sha256"), "{}", e.message);
    // A binary module swapped in beside a manifest for the text one: refused too.
    std::fs::remove_file(dir.join("module.wat")).unwrap();
    std::fs::write(dir.join("module.wasm"), ::wat::parse_str(noop()).unwrap()).unwrap();
    let e = load_tool(&dir, engine().as_ref(), &WasmCeiling::default())
        .err()
        .unwrap();
    assert_eq!(e.code, ErrorCode::ModuleMismatch, "{}", e.message);
}

#[test]
fn a_manifest_asking_for_more_than_the_host_allows_is_refused_at_load() {
    let strict = WasmCeiling {
        filesystem: FsCapability::Read,
        allow_model_access: false,
        max_memory_mb: 16,
        ..WasmCeiling::default()
    };
    let cases = [
        r#","capabilities":{"filesystem":"write"}"#,
        r#","capabilities":{"model_access":true}"#,
        r#","capabilities":{"network":{"allowed_hosts":["127.0.0.1"]}}"#,
        r#","capabilities":{"env":["PATH"]}"#,
        r#","limits":{"memory_mb":17}"#,
    ];
    for fields in cases {
        let (code, message) = load_code(&noop(), fields, &strict);
        assert_eq!(code, ErrorCode::CapabilityDenied, "{fields}: {message}");
        assert!(message.contains("not loaded"), "{message}");
    }
    tool_with(&noop(), r#","capabilities":{"filesystem":"read"}"#, &strict).unwrap();
}

#[test]
fn modules_must_be_wasi_commands_the_host_can_link() {
    let host = WasmCeiling::default();
    let cases = [
        (
            r#"(module (import "env" "system" (func)) (memory (export "memory") 1)
               (func (export "_start")))"#,
            "env::system",
        ),
        (
            r#"(module (import "wsfs" "spawn" (func)) (memory (export "memory") 1)
               (func (export "_start")))"#,
            "wsfs::spawn",
        ),
        (r#"(module (memory (export "memory") 1))"#, "_start"),
        (r#"(module (func (export "_start")))"#, "memory"),
        // A start section would run outside the fuel slices.
        (
            r#"(module (memory (export "memory") 1) (func $s) (start $s)
               (func (export "_start")))"#,
            "not valid",
        ),
        ("(module (func (export \"_start\") (i32.add)))", "not valid"),
    ];
    for (wat, named) in cases {
        let (code, message) = load_code(wat, "", &host);
        assert_eq!(code, ErrorCode::ManifestInvalid, "{wat}: {message}");
        assert!(message.contains(named), "{wat}: {message}");
    }
}

#[test]
fn a_registry_loads_folders_and_refuses_taken_names() {
    let tmp = tempfile::tempdir().unwrap();
    let folder = tmp.path().join("tools");
    write_tool(&folder, "beta", &noop(), "");
    write_tool(&folder, "alpha", &noop(), "");
    std::fs::create_dir_all(folder.join("notes")).unwrap();
    let mut registry = WasmRegistry::new(engine(), WasmCeiling::default());
    assert_eq!(registry.load_folder(&folder).unwrap(), 2);
    assert_eq!(engine().name(), ENGINE);
    let names: Vec<&str> = registry.tools().iter().map(|t| t.name()).collect();
    assert_eq!(names, ["alpha", "beta"]);
    assert!(registry.get("alpha").is_some_and(|t| t.read_only()));
    // The same name again, and a built-in tool's name.
    let again = write_tool(&tmp.path().join("more"), "alpha", &noop(), "");
    let e = registry.load_tool(&again).err().unwrap();
    assert!(e.message.contains("taken by the tool in"), "{}", e.message);
    let builtin = write_tool(&tmp.path().join("more"), "read_file", &noop(), "");
    let e = registry.load_tool(&builtin).err().unwrap();
    assert_eq!(e.code, ErrorCode::ManifestInvalid);
    assert!(e.message.contains("built-in"), "{}", e.message);
}

#[test]
fn a_folder_needs_exactly_one_module() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = write_tool(tmp.path(), "two", &noop(), "");
    std::fs::write(dir.join("module.wasm"), b"\0asm").unwrap();
    let e = load_tool(&dir, engine().as_ref(), &WasmCeiling::default())
        .err()
        .unwrap();
    assert!(e.message.contains("keep one"), "{}", e.message);
    std::fs::remove_file(dir.join("module.wasm")).unwrap();
    std::fs::remove_file(dir.join("module.wat")).unwrap();
    let e = load_tool(&dir, engine().as_ref(), &WasmCeiling::default())
        .err()
        .unwrap();
    assert!(e.message.contains("no module.wasm"), "{}", e.message);
}

/// A command importing `import` (one import declaration) and doing nothing.
fn importing(import: &str) -> String {
    format!(r#"(module {import} (memory (export "memory") 1) (func (export "_start")))"#)
}

/// Issue 30 item 11: an import the host does not provide, or provides with another signature,
/// loaded before and failed every call with `tool_trap` and the engine's debug text.
#[test]
fn imports_the_host_does_not_provide_as_declared_are_refused_at_load() {
    let host = WasmCeiling::default();
    let cases = [
        // A WASI function the host does not provide.
        (
            r#"(import "wasi_snapshot_preview1" "sock_open" (func (param i32 i32 i32) (result i32)))"#,
            &["wasi_snapshot_preview1::sock_open", "does not provide"][..],
        ),
        // A WASI function with another signature.
        (
            r#"(import "wasi_snapshot_preview1" "fd_write" (func (param i32)))"#,
            &[
                "wasi_snapshot_preview1::fd_write",
                "(i32, i32, i32, i32) -> i32",
                "(i32) -> ()",
            ],
        ),
        (
            r#"(import "wasi_snapshot_preview1" "proc_exit" (func (param i32) (result i32)))"#,
            &["wasi_snapshot_preview1::proc_exit", "(i32) -> ()", "(i32) -> i32"],
        ),
        (
            r#"(import "wasi_snapshot_preview1" "clock_time_get" (func (param i32 i32 i32) (result i32)))"#,
            &["clock_time_get", "(i32, i64, i32) -> i32", "(i32, i32, i32) -> i32"],
        ),
        // A host function with another signature.
        (
            r#"(import "wsfs" "response_len" (func (param i32) (result i32)))"#,
            &["wsfs::response_len", "() -> i32", "(i32) -> i32"],
        ),
        // Not a function, under a provided module or an unknown one.
        (
            r#"(import "wasi_snapshot_preview1" "memory" (memory 1))"#,
            &["wasi_snapshot_preview1::memory", "memory"],
        ),
        (r#"(import "env" "memory" (memory 1))"#, &["env::memory"]),
        (r#"(import "env" "table" (table 1 funcref))"#, &["env::table"]),
        (r#"(import "env" "counter" (global i32))"#, &["env::counter"]),
        // A function from an unknown module.
        (
            r#"(import "wasi_unstable" "fd_write" (func (param i32 i32 i32 i32) (result i32)))"#,
            &["wasi_unstable::fd_write", "does not provide"],
        ),
    ];
    for (import, named) in cases {
        let wat = importing(import);
        let (code, message) = load_code(&wat, "", &host);
        assert_eq!(code, ErrorCode::ManifestInvalid, "{import}: {message}");
        for words in named {
            assert!(message.contains(words), "{import}: {words:?} not in {message}");
        }
    }
}

/// The signature table the load-time check uses is what the engine links: a module importing
/// every provided function, each with the table's signature, loads, instantiates and runs.
#[test]
fn a_module_importing_every_provided_function_runs() {
    use crate::imports::{ProvidedFunction, HOST_FUNCTIONS, WASI_FUNCTIONS, WASI_MODULE};
    let declare = |module: &str, f: &ProvidedFunction| {
        let list = |types: &[crate::imports::ValueType]| {
            types
                .iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(" ")
        };
        format!(
            r#"(import "{module}" "{name}" (func ${name} (param {}) (result {})))"#,
            list(f.params),
            list(f.results),
            name = f.name,
        )
    };
    let imports: Vec<String> = WASI_FUNCTIONS
        .iter()
        .map(|f| declare(WASI_MODULE, f))
        .chain(HOST_FUNCTIONS.iter().map(|f| declare("wsfs", f)))
        .collect();
    assert_eq!(imports.len(), 46 + 4, "every WASI preview 1 and wsfs function");
    // `_start` prints `{}` through the imported fd_write: one iovec at 0 for the 2 bytes at 16.
    let wat = format!(
        r#"(module {}
             (memory (export "memory") 1)
             (data (i32.const 0) "\10\00\00\00\02\00\00\00")
             (data (i32.const 16) "{{}}")
             (func (export "_start")
               (drop (call $fd_write (i32.const 1) (i32.const 0) (i32.const 1) (i32.const 8)))))"#,
        imports.join("\n")
    );
    let output = run_plain(&tool(&wat, ""), "{}").expect("the module runs");
    assert_eq!(output.data, serde_json::json!({}));
}

/// A syntax error in `module.wat` is `manifest_invalid` naming the file, line and column (what
/// `wsfs tool build` shows an author).
#[test]
fn a_wat_syntax_error_names_its_line_and_column() {
    let (code, message) = load_code("(module\n  (func $f\n    (i32.bogus)))\n", "", &WasmCeiling::default());
    assert_eq!(code, ErrorCode::ManifestInvalid, "{message}");
    assert!(message.contains("not valid WebAssembly text"), "{message}");
    assert!(message.contains("module.wat:3:6"), "{message}");
}
