//! Profiles: the tools as a host designed before wsfs expects them (names, arguments and
//! defaults, result fields, error codes, the envelope), as data, applied at the ABI edge.
//!
//! A profile is one JSON file in `data/` (the format: `format.rs` and `README.md`), compiled
//! in with `include_str!` and checked against the native tool specs (`compile.rs`). The engine
//! is generic: `request.rs` turns a public call into the native call, `response.rs` turns the
//! native result into the public envelope, `specs.rs` derives the public schemas. `wsfs`, the
//! default, is the native surface itself: [`lookup`] answers `None` for it, so the native path
//! never reaches the engine and pays nothing for profiles.
//!
//! A workspace chooses its profile when it is opened (`"profile": "<name>"`); `dispatch`
//! runs every call on it through [`Profile::call`], and `wsfs_workspace_tool_specs` lists
//! [`Profile::tool_specs_offered`].

mod compile;
mod format;
mod model;
mod request;
mod response;
mod rewrite;
mod specs;
mod template;
mod transforms;

#[cfg(test)]
#[allow(unsafe_code)] // the tests call the C ABI itself (each `unsafe` has its SAFETY note)
mod tests;

pub use model::Profile;
pub use response::NativeResult;
pub use transforms::Context;

use crate::error::{ErrorCode, WsfsError};
use format::ProfileData;
use serde_json::{json, Value};
use std::sync::LazyLock;

/// Every profile's file, by the name a workspace chooses it with.
const FILES: &[(&str, &str)] = &[
    ("wsfs", include_str!("data/wsfs.json")),
    ("miniclaw", include_str!("data/miniclaw.json")),
    ("filesystem-tool", include_str!("data/filesystem-tool.json")),
    ("agent-base", include_str!("data/agent-base.json")),
    ("capability-plan", include_str!("data/capability-plan.json")),
];

/// The profile a workspace gets without choosing one.
pub const DEFAULT: &str = "wsfs";

enum Entry {
    Native,
    Compiled(Box<Profile>),
    /// A data file that does not compile: the unit tests fail on it, and a workspace that
    /// chooses it is refused with the reason.
    Broken(String),
}

static PROFILES: LazyLock<Vec<(&'static str, Entry)>> = LazyLock::new(|| {
    let native = crate::specs::tool_specs();
    FILES
        .iter()
        .map(|(name, text)| (*name, load(name, text, native)))
        .collect()
});

fn load(name: &str, text: &str, native_specs: &Value) -> Entry {
    let data: ProfileData = match serde_json::from_str(text) {
        Ok(data) => data,
        Err(e) => return Entry::Broken(format!("profile {name}: {e}")),
    };
    if data.name != name {
        return Entry::Broken(format!("profile {name}: its file names it {}", data.name));
    }
    if data.native {
        return Entry::Native;
    }
    match compile::compile(data, native_specs) {
        Ok(p) => Entry::Compiled(Box::new(p)),
        Err(e) => Entry::Broken(e),
    }
}

/// The profile named `name`: `None` for the native one (`wsfs`), which uses no engine.
pub fn lookup(name: &str) -> Result<Option<&'static Profile>, WsfsError> {
    match PROFILES.iter().find(|(n, _)| *n == name).map(|(_, e)| e) {
        Some(Entry::Native) => Ok(None),
        Some(Entry::Compiled(p)) => Ok(Some(p)),
        Some(Entry::Broken(reason)) => Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("profile {name} cannot be used: {reason} (a bug; please report it)"),
        )),
        None => Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!(
                "unknown profile '{}'; the profiles are {}",
                name.chars().take(64).collect::<String>(),
                names().join(", ")
            ),
        )),
    }
}

/// Every profile's name, the default first.
pub fn names() -> Vec<&'static str> {
    FILES.iter().map(|(n, _)| *n).collect()
}

impl Profile {
    /// One call: `tool` and its JSON arguments as the host's model sent them, `native` running
    /// a native tool (name, arguments JSON) and returning its result. Returns the profile's
    /// envelope, and the code of a refusal at the edge (`None` when the native tool ran: its
    /// own audit line was written): the code the envelope carries, with which dispatch writes
    /// the refused call's audit line.
    pub fn call(
        &self,
        tool: &str,
        args_json: &str,
        cx: &Context<'_>,
        native: impl FnOnce(&str, &str) -> NativeResult,
    ) -> (Value, Option<String>) {
        match self.prepare(tool, args_json) {
            Ok(call) => {
                let args = serde_json::to_string(&call.native_args).unwrap_or_default();
                let result = native(&call.op.native, &args);
                (self.finish(&call, result, cx), None)
            }
            Err(refused) => {
                let answer = self.refused(&refused);
                (answer.envelope, Some(answer.code))
            }
        }
    }

    /// `config_json` (a JSON object) with the profile's `defaults` filled in where it has no
    /// value, at any depth.
    pub fn with_defaults(&self, config_json: &str) -> Result<String, WsfsError> {
        let mut config: Value = serde_json::from_str(config_json).map_err(|e| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("invalid workspace config: {e}"),
            )
        })?;
        if let Value::Object(config) = &mut config {
            fill(config, &self.defaults);
        }
        Ok(config.to_string())
    }

    /// The public tools' names, in order.
    pub fn tool_names(&self) -> Vec<&str> {
        self.tools.iter().map(|t| t.name.as_str()).collect()
    }

    /// `[{name, description, parameters, annotations}]`, as `wsfs_tool_specs()` lists the
    /// native tools.
    #[cfg(test)]
    pub fn tool_specs(&self) -> Value {
        self.tool_specs_offered(|_| true)
    }

    /// [`Profile::tool_specs`], without the tools none of whose native tools `offered` keeps
    /// (a tool with operations stays while one of them can run).
    pub fn tool_specs_offered(&self, offered: impl Fn(&str) -> bool) -> Value {
        Value::Array(
            self.tools
                .iter()
                .filter(|t| t.ops.iter().any(|(_, op)| offered(&op.native)))
                .map(|t| {
                    json!({
                        "name": t.name,
                        "description": t.description,
                        "parameters": t.parameters,
                        "annotations": t.annotations,
                    })
                })
                .collect(),
        )
    }
}

/// Copies into `into` every key of `defaults` it lacks; objects present in both are filled
/// the same way, and any other value `into` has is kept.
fn fill(into: &mut serde_json::Map<String, Value>, defaults: &serde_json::Map<String, Value>) {
    for (key, default) in defaults {
        match (into.get_mut(key), default) {
            (None, _) => {
                into.insert(key.clone(), default.clone());
            }
            (Some(Value::Object(have)), Value::Object(default)) => fill(have, default),
            (Some(_), _) => {}
        }
    }
}
