//! Shared helpers for the black-box tests of the wsfs C ABI.
//!
//! Every call goes through the exported `extern "C"` functions with raw C strings, exactly as a
//! foreign caller would: arguments are `CString`s, every returned pointer is checked for NULL,
//! decoded as UTF-8, parsed as JSON, shape-checked and freed once with `wsfs_string_free`.
#![allow(dead_code, unused_unsafe, clippy::missing_safety_doc)]

use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::ffi::{CStr, CString};
use std::fs;
use std::os::raw::c_char;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};

pub use wsfs::ffi;

mod backend;
mod commit;
mod host;
mod race;

// Not every test binary uses every helper (the same reason as `dead_code` above).
#[allow(unused_imports)]
pub use backend::*;
#[allow(unused_imports)]
pub use commit::*;
#[allow(unused_imports)]
pub use host::*;
#[allow(unused_imports)]
pub use race::*;

pub const TOOLS: [&str; 5] = [
    "read_file",
    "write_file",
    "append_file",
    "list_dir",
    "edit_file",
];

pub type ToolFn = unsafe extern "C" fn(u64, *const c_char) -> *mut c_char;

/// The dedicated exported function of a tool.
pub fn tool_fn(tool: &str) -> ToolFn {
    match tool {
        "read_file" => ffi::wsfs_read_file,
        "write_file" => ffi::wsfs_write_file,
        "append_file" => ffi::wsfs_append_file,
        "list_dir" => ffi::wsfs_list_dir,
        "edit_file" => ffi::wsfs_edit_file,
        other => panic!("test bug: no such tool {other}"),
    }
}

pub fn cs(s: &str) -> CString {
    CString::new(s).expect("test bug: interior NUL in a C string")
}

/// Truncated rendering of a value for assertion messages.
pub fn short(v: &Value) -> String {
    let s = v.to_string();
    if s.len() > 1500 {
        let mut end = 1500;
        while !s.is_char_boundary(end) {
            end -= 1;
        }
        format!("{}...<{} bytes>", &s[..end], s.len())
    } else {
        s
    }
}

/// How many strings wsfs has returned in this process: an overlay fixture's own mount of the
/// view is reused while no call may have changed the session (see `Fixture::host_path`).
pub static WSFS_RESULTS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Takes ownership of a string returned by wsfs: non-NULL, UTF-8, freed exactly once.
pub fn take_string(p: *mut c_char) -> String {
    assert!(!p.is_null(), "wsfs returned NULL (the contract says never)");
    WSFS_RESULTS.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
    let s = unsafe { CStr::from_ptr(p) }.to_str().map(str::to_owned);
    unsafe { ffi::wsfs_string_free(p) };
    s.expect("wsfs returned a string that is not UTF-8")
}

/// Takes ownership of a returned string and parses it as JSON.
pub fn take_json(p: *mut c_char) -> Value {
    let s = take_string(p);
    serde_json::from_str(&s).unwrap_or_else(|e| {
        let head: String = s.chars().take(500).collect();
        panic!("wsfs returned invalid JSON ({e}): {head}")
    })
}

/// Takes ownership of a returned envelope and checks its shape (full output).
pub fn take_envelope(p: *mut c_char) -> Value {
    let v = take_json(p);
    check_envelope(&v, "full");
    v
}

/// Checks the documented envelope shape. `output` is "full", "text" or "data".
pub fn check_envelope(v: &Value, output: &str) {
    let obj = v
        .as_object()
        .unwrap_or_else(|| panic!("envelope is not an object: {}", short(v)));
    let ok = obj
        .get("ok")
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("no bool ok: {}", short(v)));
    if ok {
        assert!(
            !obj.contains_key("error"),
            "success with error: {}",
            short(v)
        );
        assert!(
            obj.get("warnings").map(Value::is_array).unwrap_or(false),
            "warnings not an array: {}",
            short(v)
        );
        for w in obj["warnings"].as_array().unwrap() {
            assert!(w.is_string(), "warning is not a string: {}", short(v));
        }
        match output {
            "full" => {
                assert!(
                    obj.get("data").map(Value::is_object).unwrap_or(false),
                    "data not an object: {}",
                    short(v)
                );
                assert!(
                    obj.get("text").map(Value::is_string).unwrap_or(false),
                    "text not a string: {}",
                    short(v)
                );
            }
            "text" => {
                assert!(
                    !obj.contains_key("data"),
                    "output=text still has data: {}",
                    short(v)
                );
                assert!(
                    obj.get("text").map(Value::is_string).unwrap_or(false),
                    "text not a string: {}",
                    short(v)
                );
            }
            "data" => {
                assert!(
                    !obj.contains_key("text"),
                    "output=data still has text: {}",
                    short(v)
                );
                assert!(
                    obj.get("data").map(Value::is_object).unwrap_or(false),
                    "data not an object: {}",
                    short(v)
                );
            }
            o => panic!("test bug: output {o}"),
        }
    } else {
        assert!(!obj.contains_key("data"), "failure with data: {}", short(v));
        let code = v["error"]["code"]
            .as_str()
            .unwrap_or_else(|| panic!("no error.code: {}", short(v)));
        let msg = v["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("no error.message: {}", short(v)));
        let text = v["text"]
            .as_str()
            .unwrap_or_else(|| panic!("error without text: {}", short(v)));
        assert!(!msg.is_empty(), "empty error message: {}", short(v));
        assert!(
            text.starts_with(&format!("{code}: ")),
            "text is not '<code>: <message>': {}",
            short(v)
        );
    }
}

/// Asserts success and returns `data`.
#[track_caller]
pub fn assert_ok(v: &Value) -> &Value {
    assert_eq!(v["ok"], json!(true), "expected ok, got {}", short(v));
    &v["data"]
}

/// The entry names of a successful `list_dir` result, in its order.
pub fn entry_names(v: &Value) -> Vec<String> {
    assert_ok(v)["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["name"].as_str().unwrap().to_owned())
        .collect()
}

/// Asserts failure with exactly `code`; returns the message.
#[track_caller]
pub fn assert_err(v: &Value, code: &str) -> String {
    assert_eq!(
        v["ok"],
        json!(false),
        "expected error {code}, got {}",
        short(v)
    );
    assert_eq!(
        v["error"]["code"],
        json!(code),
        "wrong error code in {}",
        short(v)
    );
    v["error"]["message"].as_str().unwrap().to_owned()
}

/// Asserts failure with one of `codes`; returns the code.
#[track_caller]
pub fn assert_err_in(v: &Value, codes: &[&str]) -> String {
    assert_eq!(
        v["ok"],
        json!(false),
        "expected one of {codes:?}, got {}",
        short(v)
    );
    let code = v["error"]["code"].as_str().unwrap().to_owned();
    assert!(
        codes.contains(&code.as_str()),
        "code {code} not in {codes:?}: {}",
        short(v)
    );
    code
}

pub fn err_code(v: &Value) -> Option<&str> {
    v["error"]["code"].as_str()
}

// ---------------------------------------------------------------- calls

/// `wsfs_workspace_open` with a raw config string.
pub fn open_raw(config: &str) -> Value {
    let c = cs(config);
    take_envelope(unsafe { ffi::wsfs_workspace_open(c.as_ptr()) })
}

/// Merges `extra` into `base` (objects merge recursively, everything else replaces).
pub fn merge(base: &mut Value, extra: Value) {
    match (base, extra) {
        (Value::Object(b), Value::Object(e)) => {
            for (k, v) in e {
                match b.get_mut(&k) {
                    Some(slot) if slot.is_object() && v.is_object() => merge(slot, v),
                    _ => {
                        b.insert(k, v);
                    }
                }
            }
        }
        (b, e) => *b = e,
    }
}

/// Opens a workspace on `dir`, with `extra_config` merged into `{"root": dir, "create_root":
/// true}` (fixtures may name a root still to be made; the refusal of a missing root is tested
/// in ffi_workspace and wsfs-core's workspace::open_root); returns the handle.
#[track_caller]
pub fn open_ws(dir: &Path, extra_config: Value) -> u64 {
    let mut cfg = json!({ "root": dir.to_str().expect("utf-8 temp dir"), "create_root": true });
    // A behaviour test reopening its fixture's root reopens it on the same backend.
    if let Some(parent) = dir.parent() {
        merge(&mut cfg, backend_config(current_backend(), parent));
    }
    merge(&mut cfg, extra_config);
    let v = open_raw(&cfg.to_string());
    let data = assert_ok(&v);
    let h = data["workspace"]
        .as_u64()
        .unwrap_or_else(|| panic!("no u64 workspace: {}", short(&v)));
    assert_ne!(h, 0, "handle 0 returned");
    h
}

pub fn close_ws(ws: u64) -> Value {
    take_envelope(unsafe { ffi::wsfs_workspace_close(ws) })
}

/// `{"limits": {...}}` config fragment.
pub fn limits(l: Value) -> Value {
    json!({ "limits": l })
}

/// Calls a tool with a raw argument string: through its dedicated function if it has one.
pub fn call_str(ws: u64, tool: &str, args: &str) -> Value {
    if !TOOLS.contains(&tool) {
        return call_named(ws, tool, args);
    }
    let a = cs(args);
    take_envelope(unsafe { tool_fn(tool)(ws, a.as_ptr()) })
}

/// Calls a tool through its dedicated function (the first five tools have one), or by name
/// through `wsfs_call`.
pub fn call(ws: u64, tool: &str, args: Value) -> Value {
    call_str(ws, tool, &args.to_string())
}

/// Calls a tool through its dedicated function with raw argument bytes (no NUL allowed).
pub fn call_bytes(ws: u64, tool: &str, args: &[u8]) -> Value {
    let a = CString::new(args).expect("test bug: NUL in bytes");
    take_envelope(unsafe { tool_fn(tool)(ws, a.as_ptr()) })
}

/// Calls a tool by name through `wsfs_call`.
pub fn call_named(ws: u64, tool: &str, args: &str) -> Value {
    let t = cs(tool);
    let a = cs(args);
    take_envelope(unsafe { ffi::wsfs_call(ws, t.as_ptr(), a.as_ptr()) })
}

/// `wsfs_call_with_options`; the envelope is shape-checked for the requested output.
pub fn call_opts(ws: u64, tool: &str, args: &str, options: Option<&str>) -> Value {
    let t = cs(tool);
    let a = cs(args);
    let o = options.map(cs);
    let p = unsafe {
        ffi::wsfs_call_with_options(
            ws,
            t.as_ptr(),
            a.as_ptr(),
            o.as_ref().map_or(std::ptr::null(), |o| o.as_ptr()),
        )
    };
    let v = take_json(p);
    let output = options
        .and_then(|o| serde_json::from_str::<Value>(o).ok())
        .and_then(|o| o.get("output").and_then(Value::as_str).map(str::to_owned))
        .filter(|o| o == "text" || o == "data")
        .unwrap_or_else(|| "full".to_owned());
    check_envelope(&v, &output);
    v
}

/// `wsfs_call_with_content`: `content` goes as the separate write buffer, with no options.
pub fn call_content(ws: u64, tool: &str, args: &str, content: &[u8]) -> Value {
    let (t, a) = (cs(tool), cs(args));
    take_envelope(unsafe {
        ffi::wsfs_call_with_content(
            ws,
            t.as_ptr(),
            a.as_ptr(),
            std::ptr::null(),
            content.as_ptr().cast(),
            content.len(),
        )
    })
}

/// Default arguments that would succeed against an in-workspace file for each tool.
/// Write/append write `content`; edit replaces `old` with `content`.
pub fn args_for(tool: &str, path: &str, old: &str, content: &str) -> Value {
    match tool {
        "read_file" | "list_dir" => json!({ "path": path }),
        "write_file" | "append_file" => json!({ "path": path, "content": content }),
        "edit_file" => json!({ "path": path, "old_text": old, "new_text": content }),
        t => panic!("test bug: {t}"),
    }
}

// ---------------------------------------------------------------- fixtures

/// A temporary base directory holding the workspace root `base/ws` and an open workspace on it.
pub struct Fixture {
    pub tmp: tempfile::TempDir,
    /// Canonical base directory (parent of the root).
    pub base: PathBuf,
    /// Canonical workspace root.
    pub root: PathBuf,
    pub ws: u64,
    /// The backend the workspace is on (see `backend.rs`).
    pub backend: Backend,
    /// Overlay: the test's own mount of the view the last `host_path` went through.
    /// With the `WSFS_RESULTS` count it was made at (`None`: the fixture changed something).
    pub view: std::cell::RefCell<Option<(std::os::fd::OwnedFd, Option<u64>)>>,
}

impl Fixture {
    pub fn new() -> Self {
        Self::with_config(json!({}))
    }

    pub fn with_config(extra: Value) -> Self {
        Self::in_tempdir(tempfile::tempdir().expect("tempdir"), extra)
    }

    /// On a tmpfs (`/dev/shm`) where there is one, else like `new`: for tests that repeat a
    /// change thousands of times, where a disk's fsyncs would dominate.
    pub fn on_tmpfs() -> Self {
        match tempfile::tempdir_in("/dev/shm") {
            Ok(tmp) => Self::in_tempdir(tmp, json!({})),
            Err(_) => Self::new(),
        }
    }

    fn in_tempdir(tmp: tempfile::TempDir, extra: Value) -> Self {
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("ws");
        fs::create_dir(&root).unwrap();
        let mut config = backend_config(current_backend(), &base);
        merge(&mut config, extra);
        let ws = open_ws(&root, config);
        Fixture {
            tmp,
            base,
            root,
            ws,
            backend: current_backend(),
            view: Default::default(),
        }
    }

    /// A fixture whose workspace keeps its state (commit journals) in `base/state`, beside
    /// the root rather than under `$HOME`.
    pub fn with_state_dir(extra: Value) -> Self {
        let tmp = tempfile::tempdir().expect("tempdir");
        let base = fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("ws");
        fs::create_dir(&root).unwrap();
        let mut config = backend_config(current_backend(), &base);
        merge(
            &mut config,
            json!({ "state_dir": base.join("state").to_str().unwrap() }),
        );
        merge(&mut config, extra);
        let ws = open_ws(&root, config);
        Fixture {
            tmp,
            base,
            root,
            ws,
            backend: current_backend(),
            view: Default::default(),
        }
    }

    /// The files in the state directory of a `with_state_dir` fixture (journals, markers), and
    /// beside it (records of the directories a call is making).
    pub fn state_files(&self) -> Vec<String> {
        if self.backend == Backend::Overlay {
            return self.view_state_files();
        }
        let mut names = vec![];
        let Ok(entries) = fs::read_dir(self.base.join("state")) else {
            return names;
        };
        for entry in entries {
            let entry = entry.unwrap();
            if !entry.file_type().unwrap().is_dir() {
                names.push(entry.file_name().to_string_lossy().into_owned());
                continue;
            }
            for e in fs::read_dir(entry.path()).unwrap() {
                names.push(e.unwrap().file_name().to_string_lossy().into_owned());
            }
        }
        names
    }

    /// Overlay: the journals and records of the view's own calls, in the session's
    /// `view-state` directory and beside it (the session's store is not counted).
    fn view_state_files(&self) -> Vec<String> {
        let session = self.session_dir();
        let mut names: Vec<String> = fs::read_dir(&session)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .filter(|n| n.starts_with("view-state."))
            .collect();
        if let Ok(entries) = fs::read_dir(session.join("view-state")) {
            for e in entries {
                let e = e.unwrap();
                if e.file_type().unwrap().is_dir() {
                    for inner in fs::read_dir(e.path()).unwrap() {
                        names.push(inner.unwrap().file_name().to_string_lossy().into_owned());
                    }
                } else {
                    names.push(e.file_name().to_string_lossy().into_owned());
                }
            }
        }
        names
    }

    /// Absolute path of `rel` inside the root.
    pub fn p(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn call(&self, tool: &str, args: Value) -> Value {
        call(self.ws, tool, args)
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = close_ws(self.ws);
    }
}

/// Whether the directory `path` carries overlayfs's opaque mark (`user.overlay.opaque`).
pub fn is_opaque(path: &Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes()).unwrap();
    let mut buf = [0u8; 4];
    // SAFETY: NUL-terminated strings and a live 4-byte buffer.
    let n = unsafe {
        libc::lgetxattr(
            c.as_ptr(),
            c"user.overlay.opaque".as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    n > 0 && buf[0] == b'y'
}

/// What a tree looks like, without following symlinks: path → (kind, bytes/target, mode, inode).
pub type Snapshot = BTreeMap<PathBuf, (String, Vec<u8>, u32, u64)>;

pub fn snapshot(dir: &Path) -> Snapshot {
    let mut out = BTreeMap::new();
    snap_into(dir, dir, &mut out);
    out
}

fn snap_into(top: &Path, dir: &Path, out: &mut Snapshot) {
    let mut entries: Vec<_> = fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    entries.sort();
    for p in entries {
        let md = fs::symlink_metadata(&p).unwrap();
        let rel = p.strip_prefix(top).unwrap().to_path_buf();
        let mode = md.permissions().mode();
        if md.file_type().is_symlink() {
            let t = fs::read_link(&p).unwrap();
            out.insert(
                rel,
                (
                    "symlink".into(),
                    t.into_os_string().into_encoded_bytes(),
                    mode,
                    md.ino(),
                ),
            );
        } else if md.is_dir() {
            out.insert(rel, ("dir".into(), vec![], mode, md.ino()));
            snap_into(top, &p, out);
        } else if md.is_file() {
            out.insert(rel, ("file".into(), fs::read(&p).unwrap(), mode, md.ino()));
        } else {
            out.insert(rel, ("other".into(), vec![], mode, md.ino()));
        }
    }
}

/// Every name under `dir` (recursively, without following symlinks) that starts with
/// `.wsfs-`: wsfs's temp, staged and backup files.
pub fn wsfs_names(dir: &Path) -> Vec<PathBuf> {
    snapshot(dir)
        .into_keys()
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(".wsfs-"))
        })
        .collect()
}

/// A random-ish token unique to this process and call (no external crates needed).
pub fn token() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let n = N.fetch_add(1, Ordering::Relaxed);
    let mut x =
        (t as u64) ^ ((std::process::id() as u64) << 32) ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15);
    x ^= x >> 33;
    x = x.wrapping_mul(0xff51_afd7_ed55_8ccd);
    x ^= x >> 33;
    format!("{x:016x}")
}

/// The process umask, read without changing it.
pub fn current_umask() -> u32 {
    let status = fs::read_to_string("/proc/self/status").unwrap();
    let line = status
        .lines()
        .find(|l| l.starts_with("Umask:"))
        .expect("Umask in /proc/self/status");
    u32::from_str_radix(line["Umask:".len()..].trim(), 8).unwrap()
}

/// Whether `p` names anything, a dangling symlink included: the last component is not followed.
pub fn exists(p: &Path) -> bool {
    fs::symlink_metadata(p).is_ok()
}

pub fn mkfifo(p: &Path) {
    let c = cs(p.to_str().unwrap());
    let r = unsafe { libc::mkfifo(c.as_ptr(), 0o644) };
    assert_eq!(
        r,
        0,
        "mkfifo {}: {}",
        p.display(),
        std::io::Error::last_os_error()
    );
}

/// Runs `f` on a thread and fails the test if it does not finish within `secs` seconds.
/// (A watchdog, not a timing assertion: it only catches hangs.)
#[track_caller]
pub fn with_watchdog<T: Send + 'static>(
    secs: u64,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> T {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(std::time::Duration::from_secs(secs)) {
        Ok(v) => v,
        Err(std::sync::mpsc::RecvTimeoutError::Timeout) => {
            panic!("{what}: did not return within {secs} s (hang)")
        }
        Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => {
            panic!("{what}: the checked code panicked")
        }
    }
}
