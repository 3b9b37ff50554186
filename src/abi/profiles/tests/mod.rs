//! The profiles' tests: the data (`data.rs`), the engine on its own (`engine.rs`), each profile
//! against real native results (one file each), and the design documents' ported test plans
//! (`plans.rs`, reading `tests/profiles/plans/`).

mod agent_base;
mod capability_plan;
mod data;
mod engine;
mod filesystem_tool;
mod miniclaw;
mod plans;

use super::{lookup, Context, NativeResult, Profile};
use serde_json::{json, Value};
use std::path::PathBuf;

/// A workspace opened through the plain-Rust ABI (`api`), as the C ABI opens one.
pub struct Ws {
    pub id: u64,
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
        let mut full = json!({"root": dir.path().join("ws")});
        if let (Some(full), Some(extra)) = (full.as_object_mut(), config.as_object()) {
            full.extend(extra.clone());
        }
        let opened: Value =
            serde_json::from_str(&crate::abi::api::workspace_open(&full.to_string()))
                .expect("json");
        if opened["ok"] != true {
            return Err(opened.to_string());
        }
        Ok(Ws {
            id: opened["data"]["workspace"].as_u64().expect("handle"),
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

    /// A native call's envelope.
    pub fn native(&self, tool: &str, args: Value) -> Value {
        serde_json::from_str(&crate::abi::api::call(
            self.id,
            tool,
            &args.to_string(),
            None,
            None,
        ))
        .expect("json")
    }

    /// A call under `profile`, as the ABI edge will make it in phase 2: the engine around
    /// the native call.
    pub fn call(&self, profile: &str, tool: &str, args: Value) -> Value {
        self.call_json(profile, tool, &args.to_string())
    }

    pub fn call_json(&self, profile: &str, tool: &str, args_json: &str) -> Value {
        let profile = profile_named(profile);
        let cx = Context { root: &self.root };
        profile.call(tool, args_json, &cx, |native, args| {
            NativeResult::from_envelope(&crate::abi::api::call(self.id, native, args, None, None))
        })
    }
}

impl Drop for Ws {
    fn drop(&mut self) {
        crate::abi::api::workspace_close(self.id);
    }
}

pub fn profile_named(name: &str) -> &'static Profile {
    match lookup(name) {
        Ok(Some(p)) => p,
        Ok(None) => panic!("{name} is the native profile"),
        Err(e) => panic!("{name}: {e}"),
    }
}
