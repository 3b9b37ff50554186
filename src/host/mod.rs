//! A typed Rust API over a workspace, for a Rust host (docs/rust-api.md): the operations of the
//! Go package's typed API, with typed inputs, results and errors. Every call goes through the
//! one entry the C ABI's `wsfs_call_with_options` uses, so the policy, the audit log, the
//! approval handler, deadlines, cancel tokens and profiles apply exactly as there.
//!
//! [`Workspace`] is `Send + Sync`: share it in an `Arc` and call it from any thread. With the
//! cargo feature `tokio`, [`AsyncWorkspace`] runs the same calls on tokio's blocking pool and
//! cancels a call whose future is dropped.

#[cfg(feature = "tokio")]
mod tokio;
mod tools;

#[cfg(feature = "tokio")]
pub use self::tokio::AsyncWorkspace;
pub use self::tools::*;
pub use crate::error::ErrorCode;

use crate::api;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A failed call: the envelope's stable code and its message (written for the model).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub code: ErrorCode,
    pub message: String,
}

impl Error {
    fn new(code: ErrorCode, message: impl Into<String>) -> Error {
        Error {
            code,
            message: message.into(),
        }
    }
}

/// `<code>: <message>`, as the envelope's `text`.
impl std::fmt::Display for Error {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.code.as_str(), self.message)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;

/// A successful call: its typed `data`, the `text` a model should read, and the warnings.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome<T> {
    pub data: T,
    pub text: String,
    pub warnings: Vec<String>,
}

/// One tool as a workspace offers it: `parameters` is its arguments' JSON Schema.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ToolSpec {
    pub name: String,
    pub description: String,
    pub parameters: Value,
}

/// A cancel token (`wsfs_cancel_token_*`): [`CancelToken::cancel`] stops every call using it
/// at its next check with `cancelled`. Freed when dropped.
#[derive(Debug)]
pub struct CancelToken(u64);

impl CancelToken {
    pub fn new() -> CancelToken {
        CancelToken(crate::token_new())
    }

    /// Cancels the calls using this token, now and later; callable from any thread.
    pub fn cancel(&self) {
        crate::token_cancel(self.0);
    }
}

impl Default for CancelToken {
    fn default() -> CancelToken {
        CancelToken::new()
    }
}

impl Drop for CancelToken {
    fn drop(&mut self) {
        crate::token_free(self.0);
    }
}

/// One call's options: a deadline tighter than the workspace's, and a cancel token.
#[derive(Debug, Default, Clone, Copy)]
pub struct CallOptions<'a> {
    pub timeout: Option<Duration>,
    pub cancel: Option<&'a CancelToken>,
}

impl CallOptions<'_> {
    /// The C ABI's options object: the full envelope, with no metrics (a typed call has no use
    /// for them).
    fn to_json(self) -> String {
        let mut options = serde_json::json!({"output": "full", "metrics": false});
        if let Some(timeout) = self.timeout {
            options["timeout_ms"] = (timeout.as_millis().min(u64::MAX as u128) as u64).into();
        }
        if let Some(token) = self.cancel {
            options["cancel_token"] = token.0.into();
        }
        options.to_string()
    }
}

/// An open workspace; closed when dropped (calls in flight finish first).
#[derive(Debug)]
pub struct Workspace {
    id: u64,
    root: PathBuf,
    profile: String,
    warnings: Vec<String>,
}

/// What `wsfs_workspace_open` answers with.
#[derive(Deserialize)]
struct Opened {
    workspace: u64,
    root: PathBuf,
    profile: String,
}

impl Workspace {
    /// Opens a workspace on `root` with the library's defaults.
    pub fn open(root: impl AsRef<Path>) -> Result<Workspace> {
        Workspace::open_config(&serde_json::json!({"root": root.as_ref()}))
    }

    /// Opens a workspace from the configuration `wsfs_workspace_open` takes (`root`, `limits`,
    /// `policy`, `profile`, `wasm_tools`, ...; docs/configuration.md).
    pub fn open_config(config: &Value) -> Result<Workspace> {
        let (opened, _, warnings): (Opened, _, _) =
            envelope(&api::workspace_open(&config.to_string()))?;
        Ok(Workspace {
            id: opened.workspace,
            root: opened.root,
            profile: opened.profile,
            warnings,
        })
    }

    /// The C ABI's handle, for the functions this API does not wrap (sessions, a gateway).
    pub fn handle(&self) -> u64 {
        self.id
    }

    /// The absolute root, symlinks resolved.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The profile the workspace serves (`wsfs` for the native tools).
    pub fn profile(&self) -> &str {
        &self.profile
    }

    /// The warnings of the open (a Wasm tool a profile does not offer, say).
    pub fn warnings(&self) -> &[String] {
        &self.warnings
    }

    /// The tools this workspace offers, as it offers them (`wsfs_workspace_tool_specs`): its
    /// profile's names, the Wasm tools it loaded, without those its policy refuses.
    pub fn tool_specs(&self) -> Result<Vec<ToolSpec>> {
        #[derive(Deserialize)]
        struct Specs {
            tools: Vec<ToolSpec>,
        }
        let (specs, _, _): (Specs, _, _) = envelope(&api::workspace_tool_specs(self.id))?;
        Ok(specs.tools)
    }

    /// Runs any tool by name with JSON arguments and returns its envelope as the library made
    /// it (on a profile's workspace, the profile's tool names and envelope).
    pub fn call_raw(&self, tool: &str, args_json: &str, options: CallOptions<'_>) -> String {
        api::call(self.id, tool, args_json, Some(&options.to_json()), None)
    }

    /// Runs a model's whole tool call (`wsfs_dispatch`, docs/dispatch.md) and returns its
    /// envelope as the library made it.
    pub fn dispatch(&self, call_json: &str, options: CallOptions<'_>) -> String {
        api::dispatch(self.id, call_json, Some(&options.to_json()))
    }

    /// Runs any native tool by name and returns its envelope's `data` untyped: for the tools
    /// without a typed method here (the developer tools, Wasm tools).
    pub fn call(
        &self,
        tool: &str,
        args: &Value,
        options: CallOptions<'_>,
    ) -> Result<Outcome<Value>> {
        self.run(tool, args, options)
    }

    /// A typed call: refused on a profile's workspace, whose results are the profile's.
    fn run<T: DeserializeOwned>(
        &self,
        tool: &str,
        input: &impl Serialize,
        options: CallOptions<'_>,
    ) -> Result<Outcome<T>> {
        if self.profile != crate::profiles::DEFAULT {
            return Err(Error::new(
                ErrorCode::InvalidArguments,
                format!(
                    "the typed methods return the native results; this workspace serves the \
                     {:?} profile: use call_raw or dispatch",
                    self.profile
                ),
            ));
        }
        let args = serde_json::to_string(input)
            .map_err(|e| Error::new(ErrorCode::InvalidArguments, e.to_string()))?;
        let (data, text, warnings) = envelope(&self.call_raw(tool, &args, options))?;
        Ok(Outcome {
            data,
            text,
            warnings,
        })
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        api::workspace_close(self.id);
    }
}

/// The fields of a native envelope.
#[derive(Deserialize)]
struct Native<T> {
    ok: bool,
    data: Option<T>,
    #[serde(default)]
    text: String,
    #[serde(default)]
    warnings: Vec<String>,
    error: Option<Failure>,
}

#[derive(Deserialize)]
struct Failure {
    code: String,
    message: String,
}

/// A native envelope as its data, text and warnings, or its error.
fn envelope<T: DeserializeOwned>(json: &str) -> Result<(T, String, Vec<String>)> {
    let broken = |why: String| {
        Error::new(
            ErrorCode::IoError,
            format!("the library's envelope did not decode ({why}; a bug, please report it)"),
        )
    };
    let native: Native<T> = serde_json::from_str(json).map_err(|e| broken(e.to_string()))?;
    match (native.ok, native.data, native.error) {
        (true, Some(data), _) => Ok((data, native.text, native.warnings)),
        (false, _, Some(e)) => Err(Error::new(
            ErrorCode::from_wire(&e.code).ok_or_else(|| broken(format!("code {}", e.code)))?,
            e.message,
        )),
        _ => Err(broken("neither data nor error".into())),
    }
}

#[cfg(test)]
mod tests;
