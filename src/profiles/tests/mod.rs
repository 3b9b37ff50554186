//! The profiles' tests: the data (`data.rs`), the engine on its own (`engine.rs`), each profile
//! through the C ABI on a workspace opened with it (one file each), the profile as a workspace
//! option (`workspace.rs`), and the design documents' ported test plans (`plans.rs`, reading
//! `tests/profiles/plans/`), through the C ABI too.

mod agent_base;
mod capability_plan;
mod data;
mod engine;
mod filesystem_tool;
mod miniclaw;
mod plans;
mod workspace;

use super::{lookup, Profile};
use crate::ffi;
use serde_json::{json, Value};
use std::ffi::{c_char, CStr, CString};
use std::path::PathBuf;

/// A workspace opened through the plain-Rust ABI (`api`), as the C ABI opens one.
pub struct Ws {
    pub id: u64,
    /// The configuration it was opened with, for the handles [`Ws::call`] opens per profile.
    config: Value,
    /// Handles on the same root, one per profile called.
    profiled: std::cell::RefCell<Vec<(String, u64)>>,
    /// The workspace root as the library resolved it (symlinks resolved).
    pub root: String,
    /// A directory beside the root (`<base>/outside`, the root being `<base>/ws`).
    pub outside: PathBuf,
    _dir: tempfile::TempDir,
}

impl Ws {
    pub fn open() -> Ws {
        Ws::open_with(json!({}))
    }

    /// `config` is merged over `{"root": <a new temp dir>/ws}`.
    pub fn open_with(config: Value) -> Ws {
        Ws::try_open_with(config).unwrap_or_else(|e| panic!("open: {e}"))
    }

    /// [`Ws::open_with`], with a refused configuration as the error envelope.
    pub fn try_open_with(config: Value) -> Result<Ws, String> {
        let dir = tempfile::tempdir().expect("temp dir");
        let outside = dir.path().join("outside");
        std::fs::create_dir(&outside).expect("outside");
        std::fs::create_dir(dir.path().join("ws")).expect("ws");
        let mut full = json!({"root": dir.path().join("ws")});
        if let (Some(full), Some(extra)) = (full.as_object_mut(), config.as_object()) {
            full.extend(extra.clone());
        }
        // The native handle (for the root, and the cases' own checks) without the tool lists,
        // which name the profile's tools; the profile's handles get them.
        let mut native = full.clone();
        if let Some(policy) = native.get_mut("policy").and_then(Value::as_object_mut) {
            policy.remove("allow_tools");
            policy.remove("deny_tools");
        }
        let opened: Value =
            serde_json::from_str(&crate::api::workspace_open(&native.to_string())).expect("json");
        if opened["ok"] != true {
            return Err(opened.to_string());
        }
        Ok(Ws {
            id: opened["data"]["workspace"].as_u64().expect("handle"),
            config: full,
            profiled: Default::default(),
            root: opened["data"]["root"].as_str().expect("root").to_string(),
            outside: std::fs::canonicalize(outside).expect("outside"),
            _dir: dir,
        })
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        PathBuf::from(&self.root).join(rel)
    }

    pub fn write(&self, rel: &str, content: impl AsRef<[u8]>) {
        let path = self.path(rel);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).expect("mkdir");
        }
        std::fs::write(path, content).expect("write");
    }

    pub fn read(&self, rel: &str) -> Option<String> {
        std::fs::read_to_string(self.path(rel)).ok()
    }

    /// A call under `profile` through the C ABI (`wsfs_call`), on a handle opened on the same
    /// root with `"profile": profile`.
    pub fn call(&self, profile: &str, tool: &str, args: Value) -> Value {
        self.call_json(profile, tool, &args.to_string())
    }

    pub fn call_json(&self, profile: &str, tool: &str, args_json: &str) -> Value {
        let id = self.handle(profile);
        let tool = c_string(tool);
        let args = c_string(args_json);
        // SAFETY: both are NUL-terminated strings that outlive the call.
        let result = unsafe { ffi::wsfs_call(id, tool.as_ptr(), args.as_ptr()) };
        parse(take(result))
    }

    /// `wsfs_workspace_tool_specs`' tools for a handle with `profile`.
    pub fn specs(&self, profile: &str) -> Value {
        let id = self.handle(profile);
        let env = parse(take(ffi::wsfs_workspace_tool_specs(id)));
        assert_eq!(env["ok"], true, "{env}");
        env["data"]["tools"].clone()
    }

    /// What `wsfs_workspace_open` answers (its `data`: the effective limits and policy) for
    /// this configuration under `profile`; the handle is closed again.
    pub fn open_info(&self, profile: &str) -> Value {
        let mut config = self.config.clone();
        config["profile"] = json!(profile);
        let opened = parse(crate::api::workspace_open(&config.to_string()));
        assert_eq!(opened["ok"], true, "{opened}");
        crate::api::workspace_close(opened["data"]["workspace"].as_u64().expect("handle"));
        opened["data"].clone()
    }

    fn handle(&self, profile: &str) -> u64 {
        if let Some((_, id)) = self.profiled.borrow().iter().find(|(p, _)| p == profile) {
            return *id;
        }
        let mut config = self.config.clone();
        config["profile"] = json!(profile);
        let config = c_string(&config.to_string());
        // SAFETY: a NUL-terminated string that outlives the call.
        let opened = parse(take(unsafe { ffi::wsfs_workspace_open(config.as_ptr()) }));
        assert_eq!(opened["ok"], true, "{opened}");
        let id = opened["data"]["workspace"].as_u64().expect("handle");
        self.profiled.borrow_mut().push((profile.to_string(), id));
        id
    }
}

fn c_string(s: &str) -> CString {
    CString::new(s).expect("no NUL in a test string")
}

/// A C ABI result as a string, freed.
fn take(ptr: *mut c_char) -> String {
    assert!(!ptr.is_null(), "the ABI never returns NULL");
    // SAFETY: a NUL-terminated string a wsfs function returned and nobody freed yet.
    let s = unsafe { CStr::from_ptr(ptr) }
        .to_string_lossy()
        .into_owned();
    // SAFETY: returned by a wsfs function, freed exactly once, here.
    unsafe { ffi::wsfs_string_free(ptr) };
    s
}

fn parse(s: String) -> Value {
    serde_json::from_str(&s).unwrap_or_else(|e| panic!("{e}: {s}"))
}

impl Drop for Ws {
    fn drop(&mut self) {
        crate::api::workspace_close(self.id);
        for (_, id) in self.profiled.borrow().iter() {
            take(ffi::wsfs_workspace_close(*id));
        }
    }
}

pub fn profile_named(name: &str) -> &'static Profile {
    match lookup(name) {
        Ok(Some(p)) => p,
        Ok(None) => panic!("{name} is the native profile"),
        Err(e) => panic!("{name}: {e}"),
    }
}
