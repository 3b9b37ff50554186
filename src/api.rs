//! The C ABI's operations as plain Rust: JSON strings in, envelope JSON out. `ffi` only converts
//! pointers and catches panics around these.

use crate::approval::ApprovalHandler;
use crate::config::Config;
use crate::dispatch::{self, CallOptions, Request};
use crate::envelope::{self, Envelope};
use crate::error::{ErrorCode, WsfsError};
use crate::handles::{self, Opened};
use crate::profiles;
use crate::tools::ToolSet;
#[cfg(feature = "wasm")]
use crate::wasm::host::gateway::ModelGateway;
use crate::workspace::Workspace;
use serde_json::json;
use std::sync::Arc;

/// Bumped when a function's signature or the envelope changes incompatibly (the header's
/// `WSFS_ABI_VERSION`, defined in `ffi`).
pub const ABI_VERSION: u32 = crate::ffi::WSFS_ABI_VERSION;

pub fn version() -> String {
    json!({"version": env!("CARGO_PKG_VERSION"), "abi": ABI_VERSION}).to_string()
}

pub fn tool_specs() -> String {
    crate::specs::tool_specs().to_string()
}

pub fn tool_instructions() -> String {
    crate::tools::fields::INSTRUCTIONS.to_string()
}

pub fn workspace_open(config_json: &str) -> String {
    crate::logging::init();
    // The profile is checked first: an unknown name opens (and creates) nothing.
    let config = match Config::from_json(config_json).and_then(|config| {
        let profile = profiles::lookup(&config.profile)?;
        // The host's text is checked as written (errors point into it); the profile's
        // defaults then fill what it leaves out.
        let config = match profile.filter(|p| !p.defaults.is_empty()) {
            Some(p) => Config::from_json(&p.with_defaults(config_json)?)?,
            None => config,
        };
        let checked = ToolSet::check(&config)?;
        // Under `wsfs` the Wasm tools' names are known once they are loaded (below).
        if profile.is_some() || config.wasm_tools.is_empty() {
            check_tool_names(&config.policy, profile, &[])?;
        }
        Ok((config, profile, checked))
    }) {
        Ok(config) => config,
        Err(e) => return envelope::failure(&e),
    };
    let (config, profile, checked) = config;
    let (ws, mut warnings) = match Workspace::open(&config) {
        Ok(opened) => opened,
        Err(e) => return envelope::failure(&e),
    };
    let ws = Arc::new(ws);
    // The config's Wasm tools are loaded before the handle exists.
    let tools = match ToolSet::open(&ws, &config, checked) {
        Ok(tools) => tools,
        Err(e) => return envelope::failure(&e),
    };
    let wasm_names: Vec<&str> = tools.loaded().map(|t| t.name()).collect();
    if profile.is_none() && !config.wasm_tools.is_empty() {
        if let Err(e) = check_tool_names(&config.policy, None, &wasm_names) {
            return envelope::failure(&e);
        }
    }
    if let (Some(profile), false) = (profile, wasm_names.is_empty()) {
        warnings.push(format!(
            "the Wasm tools ({}) are offered only under the native profile \"wsfs\"; this \
             workspace's profile ({}) neither lists nor runs them",
            wasm_names.join(", "),
            profile.name
        ));
    }
    let root = ws.root().display().to_string();
    let data = json!({
        "root": root,
        "restrict_to_workspace": ws.restricts_to_workspace(),
        "limits": ws.limits(),
        "policy": ws.policy(),
        "profile": profile.map_or(profiles::DEFAULT, |p| &p.name),
        "wasm_tools": wasm_names,
    });
    let id = handles::insert(Opened { ws, tools, profile });
    let mut data = data;
    data["workspace"] = json!(id);
    log::info!(target: "wsfs", "workspace opened: workspace={id} root={root}");
    envelope::success_value(&data, format!("workspace {id} opened"), &warnings)
}

/// Sets (or with `None` removes) the approval handler of workspace `id`: with one set, it
/// decides each call that needs confirming instead of the model's `confirmed: true`.
pub fn set_approval_handler(id: u64, handler: Option<Arc<dyn ApprovalHandler>>) -> String {
    let opened = match handles::get(id) {
        Ok(opened) => opened,
        Err(e) => return envelope::failure(&e),
    };
    let set = handler.is_some();
    opened.tools.approval.set(handler);
    let policy = opened.ws.policy();
    let asking: Vec<&str> = (opened.tools.all())
        .filter(|t| t.asks_approval() && t.switch().is_on(policy))
        .filter(|t| t.runs_read_only() || policy.writes_enabled)
        .map(|t| t.name())
        .collect();
    let mut warnings = Vec::new();
    if set && asking.is_empty() {
        warnings.push(
            "no tool of this workspace needs approval now (git_commit does, with \
             policy.exec_enabled; shell with shell_enabled; a recursive delete_file while \
             writes are enabled), so nothing calls the handler"
                .to_string(),
        );
    }
    let text = match set {
        true => format!("approval handler set on workspace {id}"),
        false => format!("approval handler removed from workspace {id}"),
    };
    let data = json!({"workspace": id, "approval_handler": set, "tools": asking});
    envelope::success_value(&data, text, &warnings)
}

/// Sets (or with `None` removes) the model gateway of workspace `id`'s Wasm tools.
#[cfg(feature = "wasm")]
pub fn set_model_gateway(id: u64, gateway: Option<Arc<dyn ModelGateway>>) -> String {
    match handles::get(id) {
        Ok(opened) => {
            let set = gateway.is_some();
            let mut warnings = Vec::new();
            match opened.tools.wasm() {
                Some(tools) => tools.set_gateway(gateway),
                None if set => warnings.push(
                    "this workspace loaded no Wasm tools (wasm_tools), so nothing calls the gateway"
                        .into(),
                ),
                None => {}
            }
            let text = match set {
                true => format!("model gateway set on workspace {id}"),
                false => format!("model gateway removed from workspace {id}"),
            };
            envelope::success_value(&json!({"workspace": id, "gateway": set}), text, &warnings)
        }
        Err(e) => envelope::failure(&e),
    }
}

/// Without Wasm tools there is no gateway to set: `feature_not_built` for a live workspace.
#[cfg(not(feature = "wasm"))]
pub fn set_model_gateway<T>(id: u64, _gateway: Option<T>) -> String {
    match handles::get(id) {
        Ok(_) => envelope::failure(&crate::error::feature_not_built("wasm", "a model gateway")),
        Err(e) => envelope::failure(&e),
    }
}

/// The tools workspace `id` offers, as it offers them: under its profile's names and schemas
/// (the native ones for `wsfs`, followed by its Wasm tools in load order; a profile other than
/// `wsfs` offers no Wasm tools), without those its policy refuses whatever the arguments: every
/// changing tool when writes are disabled, the tools that run programs while their switch
/// (`exec_enabled`, `shell_enabled`) is off, and those `allow_tools` / `deny_tools` leave out.
/// `data: {profile, tools: [{name, description, parameters, annotations}]}`.
pub fn workspace_tool_specs(id: u64) -> String {
    let opened = match handles::get(id) {
        Ok(opened) => opened,
        Err(e) => return envelope::failure(&e),
    };
    let policy = &opened.ws.policy;
    // A profile whose document has the changing tools answer writes_disabled offers them.
    let writes_refused = opened.profile.is_some_and(|p| p.offer_refused_writes);
    let runs = |t: &dyn crate::tools::contract::ToolRunner, refused_writes_too: bool| {
        (t.runs_read_only() || policy.writes_enabled || refused_writes_too)
            && t.switch().refusal(t.name(), opened.ws.policy()).is_none()
    };
    let offered =
        |native: &str| crate::tools::find(native).is_some_and(|t| runs(t, writes_refused));
    let mut tools = match opened.profile {
        None => crate::specs::workspace_tool_specs(&opened.tools, !policy.writes_enabled, |t| {
            runs(t, false)
        }),
        Some(profile) => profile.tool_specs_offered(offered),
    };
    if let Some(list) = tools.as_array_mut() {
        list.retain(|t| policy.tool_allowed(t["name"].as_str().unwrap_or_default()));
    }
    let count = tools.as_array().map_or(0, Vec::len);
    let name = opened.profile_name();
    envelope::success_value(
        &json!({"profile": name, "tools": tools}),
        format!("workspace {id} offers {count} tools (profile {name})"),
        &[],
    )
}

/// `policy.allow_tools` and `deny_tools` name tools as the workspace offers them: the
/// profile's names (the native ones and the Wasm tools' for `wsfs`). A name it does not offer
/// is a mistake that would leave a tool allowed, so it fails the open.
fn check_tool_names(
    policy: &crate::guard::policy::PolicyConfig,
    profile: Option<&profiles::Profile>,
    wasm_names: &[&str],
) -> Result<(), WsfsError> {
    let names: Vec<&str> = match profile {
        Some(p) => p.tool_names(),
        None => crate::tools::REGISTRY
            .iter()
            .map(|t| t.name)
            .chain(wasm_names.iter().copied())
            .collect(),
    };
    let lists = [
        (
            "allow_tools",
            policy.allow_tools.as_deref().unwrap_or_default(),
        ),
        ("deny_tools", policy.deny_tools.as_slice()),
    ];
    for (field, list) in lists {
        if let Some(unknown) = list.iter().find(|t| !names.contains(&t.as_str())) {
            let shown: String = unknown.chars().take(64).collect();
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "invalid workspace config: policy.{field}: this workspace (profile {}) has \
                     no tool '{shown}'; its tools are {}",
                    profile.map_or(profiles::DEFAULT, |p| &p.name),
                    names.join(", ")
                ),
            ));
        }
    }
    Ok(())
}

pub fn workspace_close(id: u64) -> String {
    match handles::remove(id) {
        Ok(_) => envelope::success_value(
            &json!({"workspace": id}),
            format!("workspace {id} closed"),
            &[],
        ),
        Err(e) => envelope::failure(&e),
    }
}

/// Runs a tool by name. `options_json` is `wsfs_call_with_options`' options (None for none);
/// `content` is `wsfs_call_with_content`'s separate content buffer.
pub fn call(
    id: u64,
    tool: &str,
    args_json: &str,
    options_json: Option<&str>,
    content: Option<&[u8]>,
) -> String {
    call_envelope(id, tool, args_json, options_json, content).into_string()
}

/// [`call`], with the result as the C ABI hands it out (bytes without NUL, see
/// `envelope::Envelope`).
pub fn call_envelope(
    id: u64,
    tool: &str,
    args_json: &str,
    options_json: Option<&str>,
    content: Option<&[u8]>,
) -> Envelope {
    crate::logging::init();
    let req = Request {
        tool,
        args_json,
        content,
        offered: true,
    };
    match CallOptions::from_json(options_json) {
        Ok(options) => dispatch::call(id, &req, &options),
        Err(e) => envelope::failure_envelope(&e, None),
    }
}

/// Runs a tool call as a model API gives it (`crate::tool_call`): parses it, then runs the
/// named tool exactly as [`call`] would, under the workspace's profile names. A malformed call
/// is `invalid_arguments` naming what is wrong, and runs nothing.
pub fn dispatch(id: u64, call_json: &str, options_json: Option<&str>) -> String {
    dispatch_envelope(id, call_json, options_json).into_string()
}

/// [`dispatch`], with the result as the C ABI hands it out.
pub fn dispatch_envelope(id: u64, call_json: &str, options_json: Option<&str>) -> Envelope {
    crate::logging::init();
    match crate::tool_call::parse(call_json) {
        Ok(call) => call_envelope(id, &call.name, &call.arguments, options_json, None),
        Err(e) => envelope::failure_envelope(&e, None),
    }
}

/// The envelope for a bad pointer or non-UTF-8 input, named by the parameter.
pub fn bad_input(param: &str, problem: &str) -> String {
    envelope::failure(&WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("{param} {problem}"),
    ))
}

/// The envelope for a panic caught at the boundary.
pub fn internal_error() -> String {
    envelope::failure(&WsfsError::new(
        ErrorCode::IoError,
        "internal error in wsfs (a bug; please report it); nothing is known to have changed",
    ))
}
