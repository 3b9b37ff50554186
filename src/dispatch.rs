//! One tool call: the registry entry, the deadline, the tool itself, the envelope and its
//! trace event.

use crate::approval;
use crate::control::{token_flag, CallControl};
use crate::envelope::{self, Envelope};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::audit::{self, Finished, Notes};
use crate::guard::policy::{Policy, PolicyConfig};
use crate::handles;
use crate::profiles::{Context, NativeResult, Profile};
use crate::tools::contract::{Call, Metrics, Output, Switch, ToolRunner, Warning};
use crate::tools::hints;
use crate::tools::{self, write, ToolSet};
use crate::workspace::Workspace;
use serde::Deserialize;
use std::time::{Duration, SystemTime};

/// Options of `wsfs_call_with_options`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallOptions {
    pub timeout_ms: Option<u64>,
    pub cancel_token: Option<u64>,
    #[serde(default)]
    pub output: Output,
    /// Whether the envelope carries the call's `metrics`: by default in every mode but the two
    /// raw ones, whose head would otherwise be longer than the room the tool kept in front of
    /// the raw part (with `true` there, the raw part is copied once behind it).
    pub metrics: Option<bool>,
}

impl CallOptions {
    /// Whether a success envelope carries `metrics` (a failure's does unless told `false`).
    fn success_metrics(&self) -> bool {
        self.metrics
            .unwrap_or(!matches!(self.output, Output::TextRaw | Output::DataRaw))
    }

    pub fn from_json(json: Option<&str>) -> Result<CallOptions> {
        match json.map(str::trim) {
            None | Some("") | Some("null") => Ok(CallOptions::default()),
            Some(json) => crate::json::parse_object(json).map_err(|e| {
                WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("invalid call options: {e}"),
                )
            }),
        }
    }
}

/// One call's inputs: the tool, its JSON arguments and, for `write_file`/`append_file`, the
/// content as a separate buffer instead of a JSON string.
pub struct Request<'a> {
    pub tool: &'a str,
    pub args_json: &'a str,
    pub content: Option<&'a [u8]>,
    /// `tool` is the name the workspace offers it under, so the policy's `allow_tools` /
    /// `deny_tools` apply to it (false for the native call a profile's tool makes: the
    /// profile's name was checked at the edge).
    pub offered: bool,
}

pub use crate::tools::contract::ToolResult;

/// A tool call that ran: its result, and the figures a host's middleware records of it.
pub struct Ran {
    pub result: Result<ToolResult>,
    pub metrics: Metrics,
}

/// Runs a request on workspace `id` and returns the envelope. Never panics on bad input.
pub fn call(id: u64, req: &Request<'_>, options: &CallOptions) -> Envelope {
    let ran = handles::get(id).and_then(|opened| {
        if let Some(profile) = opened.profile {
            return Ok(Err(profiled(
                &opened.ws,
                &opened.tools,
                profile,
                req,
                options,
            )));
        }
        let ctl = control(&opened.ws, &opened.tools, options, req.tool)?;
        Ok(Ok(run(
            &opened.ws,
            &opened.tools,
            req,
            &ctl,
            options.output,
        )))
    });
    let ran = match ran {
        Ok(Ok(ran)) => ran,
        Ok(Err(profiled)) => return profiled,
        Err(e) => return envelope::failure_envelope(&e, None),
    };
    match ran.result {
        Ok((data, warnings)) => {
            let metrics = options.success_metrics().then_some(&ran.metrics);
            envelope::success(data, &warnings, options.output, metrics)
        }
        Err(e) => {
            let metrics = (options.metrics != Some(false)).then_some(&ran.metrics);
            envelope::failure_envelope(&e, metrics)
        }
    }
}

/// A call on a workspace with a profile: the profile turns the public call into a native one
/// (or refuses it), the native tool runs as any call does (deadline, policy, audit, trace),
/// and the profile turns its result into the profile's envelope. The output modes are the
/// native envelope's; a profile has its own envelope, so it takes only `full`.
fn profiled(
    ws: &Workspace,
    tools: &ToolSet,
    profile: &Profile,
    req: &Request<'_>,
    options: &CallOptions,
) -> Envelope {
    if options.output != Output::Full {
        return envelope::failure_envelope(
            &WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "output modes other than \"full\" are the native envelope's; this workspace's \
                 profile ({}) returns its own envelope",
                    profile.name
                ),
            ),
            None,
        );
    }
    let started = SystemTime::now();
    if !ws.policy.tool_allowed(req.tool) {
        let e = Policy::tool_denied(req.tool);
        let refused = profile.refuse(req.tool, e.code.as_str(), &e.message);
        audit_edge_refusal(ws, req, started, &refused.code, &refused.envelope);
        return Envelope::from(refused.envelope.to_string());
    }
    let root = ws.root().to_string_lossy();
    let cx = Context {
        root: &root,
        limits: ws.limits(),
    };
    let mut metrics = None;
    let (mut result, refused) = profile.call(req.tool, req.args_json, &cx, |native, args_json| {
        let native_req = Request {
            tool: native,
            args_json,
            content: req.content,
            offered: false,
        };
        let ran = control(ws, tools, options, native).and_then(|ctl| {
            let ran = run(ws, tools, &native_req, &ctl, Output::Full);
            metrics = Some(ran.metrics);
            ran.result
        });
        match ran {
            Ok((output, warnings)) => NativeResult::from_output(output.as_ref(), &warnings),
            Err(e) => NativeResult::Failure {
                code: e.code.as_str().to_string(),
                message: e.message,
            },
        }
    });
    if let Some(code) = refused {
        audit_edge_refusal(ws, req, started, &code, &result);
    }
    // A profile's envelope is its document's shape: the metrics join it only when asked
    // (a host reads and removes them before the model sees the result), named as offered.
    if let (Some(true), Some(mut metrics), Some(object)) =
        (options.metrics, metrics, result.as_object_mut())
    {
        metrics.tool = req.tool.chars().take(64).collect();
        if let Ok(value) = serde_json::to_value(&metrics) {
            object.insert("metrics".to_string(), value);
        }
    }
    Envelope::from(result.to_string())
}

/// The audit line of a call the profile refused at the edge (an unknown tool, arguments its
/// schema refuses, its own refusals such as `path_traversal_attempt`, a tool `allow_tools` /
/// `deny_tools` leave out): no native tool ran, so `run` wrote none. The line names the
/// profile's tool, the code the profile answered with, and the `path` argument as given.
/// Nothing was read or changed, so a log that cannot be written is only traced.
fn audit_edge_refusal(
    ws: &Workspace,
    req: &Request<'_>,
    started: SystemTime,
    code: &str,
    answer: &serde_json::Value,
) {
    let Some(log) = &ws.policy.audit else {
        return;
    };
    let args: Option<serde_json::Value> = serde_json::from_str(req.args_json).ok();
    let path = args.as_ref().and_then(|a| a.get("path")?.as_str());
    let paths: Vec<String> = path
        .map(|p| match ws.parse_path(p) {
            Ok(parsed) => parsed.display,
            Err(_) => p.chars().take(256).collect(),
        })
        .into_iter()
        .collect();
    let notes = Notes {
        paths,
        changes: Vec::new(),
    };
    let arguments = ws
        .policy()
        .audit_arguments
        .then(|| audit::redacted_arguments(req.args_json, req.content));
    let tool: String = req.tool.chars().take(64).collect();
    let code: String = code.chars().take(64).collect();
    let finished = Finished {
        tool: &tool,
        started,
        duration: started.elapsed().unwrap_or_default(),
        outcome: &code,
        bytes_in: (req.args_json.len() + req.content.map_or(0, <[u8]>::len)) as u64,
        bytes_out: answer.to_string().len() as u64,
        arguments: arguments.as_ref(),
    };
    if let Err(e) = audit::record(log, &finished, &notes) {
        log::error!(target: "wsfs", "audit log write failed: tool={tool} error={e}");
    }
}

/// The call's deadline: `operation_timeout_ms` for the file tools; for the tools that run
/// programs, the policy's `exec_timeout_sec` instead (a test suite routinely takes longer than
/// a file operation). A per-call `timeout_ms` only shortens either.
fn control(
    ws: &Workspace,
    tools: &ToolSet,
    options: &CallOptions,
    tool: &str,
) -> Result<CallControl> {
    let runs_programs = tools.find(tool).is_some_and(|t| t.switch() != Switch::None);
    let configured = if runs_programs {
        ws.policy().exec_timeout_sec.saturating_mul(1000)
    } else {
        ws.limits.operation_timeout_ms
    };
    let timeout_ms = options.timeout_ms.map_or(configured, |t| t.min(configured));
    let cancel = match options.cancel_token {
        None | Some(0) => None,
        Some(token) => Some(token_flag(token).ok_or_else(|| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("cancel_token {token} is unknown or freed"),
            )
        })?),
    };
    Ok(CallControl::new(Duration::from_millis(timeout_ms), cancel))
}

/// Runs a tool on an open workspace without the handle registry or the envelope: the core
/// that the C ABI wraps (used directly by Rust callers and the core benchmarks).
pub fn run_tool(
    ws: &Workspace,
    tool: &str,
    args_json: &str,
    ctl: &CallControl,
) -> Result<ToolResult> {
    let req = Request {
        tool,
        args_json,
        content: None,
        offered: true,
    };
    run(ws, &ToolSet::default(), &req, ctl, Output::Full).result
}

/// In overlay mode, no session operation remounts the view while the call runs; a call
/// that met a stale view before changing anything runs again on a fresh one, up to
/// STALE_VIEW_RERUNS times (a base that keeps changing under the call).
#[cfg(feature = "overlay")]
fn run(
    ws: &Workspace,
    tools: &ToolSet,
    req: &Request<'_>,
    ctl: &CallControl,
    output: Output,
) -> Ran {
    use crate::workspace::overlay::take_met_stale_view;
    let mut view = ws.call_guard();
    let mut ran = run_guarded(ws, tools, req, ctl, output);
    let mut reruns = 0;
    while take_met_stale_view() && ran.result.is_err() && reruns < STALE_VIEW_RERUNS {
        reruns += 1;
        drop(view);
        view = ws.call_guard();
        ran = run_guarded(ws, tools, req, ctl, output);
    }
    drop(view);
    ran
}

#[cfg(not(feature = "overlay"))]
use run_guarded as run;

/// How many times a call that met a stale overlay view runs again on a fresh one.
#[cfg(feature = "overlay")]
const STALE_VIEW_RERUNS: u32 = 16;

fn run_guarded(
    ws: &Workspace,
    tools: &ToolSet,
    req: &Request<'_>,
    ctl: &CallControl,
    output: Output,
) -> Ran {
    #[cfg(feature = "tracing")]
    let span = crate::spans::enter(req.tool);
    let started = ws.policy.audit.as_ref().map(|_| SystemTime::now());
    let framing = envelope::Framing(output);
    let mut call = Call::new(ws, ctl, req.content, &framing);
    let mut result = run_entry(&mut call, tools, req).map_err(|mut e| {
        if let (ErrorCode::PathNotFound, Some((anchor, rel))) = (e.code, &call.first_path) {
            let names = hints::similar_paths(ws, *anchor, rel, ctl);
            e.message.push_str(&hints::did_you_mean(&names));
        }
        e
    });
    if let (Some(started), Some(notes)) = (started, call.audit.take()) {
        result = audited(ws, req, started, ctl, &notes, result);
    }
    let metrics = metrics(
        req.tool,
        std::mem::take(&mut call.logged_paths),
        &result,
        ctl,
    );
    let outcome = match &result {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    };
    log::info!(
        target: "wsfs",
        "tool call: tool={} path={} outcome={outcome} duration_us={}",
        metrics.tool,
        metrics.path,
        metrics.duration_us
    );
    #[cfg(feature = "tracing")]
    crate::spans::record(&span, &metrics, outcome);
    Ran { result, metrics }
}

/// The figures of a call that ran: the tool (as named, at most 64 characters), the paths
/// it named, its duration, and what its result adds (`ToolOutput::add_metrics`).
fn metrics(tool: &str, path: String, result: &Result<ToolResult>, ctl: &CallControl) -> Metrics {
    let mut metrics = Metrics {
        tool: tool.chars().take(64).collect(),
        path,
        duration_us: u64::try_from(ctl.elapsed().as_micros()).unwrap_or(u64::MAX),
        ..Metrics::default()
    };
    if let Ok((output, _)) = result {
        output.add_metrics(&mut metrics);
    }
    metrics
}

fn run_entry(call: &mut Call<'_>, tools: &ToolSet, req: &Request<'_>) -> Result<ToolResult> {
    let entry = tools
        .find(req.tool)
        .ok_or_else(|| unknown_tool(tools, req.tool))?;
    if req.offered && !call.ws.policy.tool_allowed(entry.name()) {
        note_path_argument(call, req.args_json);
        return Err(Policy::tool_denied(entry.name()));
    }
    check_args_size(call.ws, req.tool, req.args_json.len())?;
    // Read-only mode, then the exec switches, decided once for every tool from its entry,
    // before anything runs.
    if !entry.runs_read_only() && !call.ws.policy.writes_enabled {
        note_path_argument(call, req.args_json);
        return Err(writes_disabled(entry.name(), call.ws.policy()));
    }
    if let Some(refused) = entry.switch().refusal(entry.name(), call.ws.policy()) {
        note_path_argument(call, req.args_json);
        return Err(refused);
    }
    if let Some(content) = req.content {
        if !entry.content_buffer() {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "{} takes no content buffer; only {} do",
                    req.tool,
                    content_tools().join(" and ")
                ),
            ));
        }
        (call.ws.limits).check_write(content.len() as u64, "content", write::SPLIT_HINT)?;
    }
    call.ctl.check()?;
    // With the host's approval handler set, it decides the calls that need confirming, and
    // those it alone is asked about (a recursive delete, the raw shell).
    let Some(handler) = tools.approval.get() else {
        return entry.run(call, req.args_json);
    };
    let (why, confirms) = match entry.confirmation() {
        Some(why) => (Some(why), true),
        None => (entry.host_approval(req.args_json), false),
    };
    match why {
        Some(why) => {
            let approved = approval::ask(
                &*handler,
                entry.name(),
                why,
                req.args_json,
                confirms,
                call.ctl,
            )?;
            entry.run(call, &approved)
        }
        None => entry.run(call, req.args_json),
    }
}

/// For the trace and the audit log of a refused call: its `path` argument, if it has one.
fn note_path_argument(call: &mut Call<'_>, args_json: &str) {
    let args: Option<serde_json::Value> = serde_json::from_str(args_json).ok();
    if let Some(path) = args.as_ref().and_then(|a| a.get("path")?.as_str()) {
        let _ = call.path(path);
    }
}

fn writes_disabled(tool: &str, policy: &PolicyConfig) -> WsfsError {
    let readers: Vec<&str> = tools::REGISTRY
        .iter()
        .filter(|t| t.runs_read_only() && t.switch.is_on(policy))
        .map(|t| t.name)
        .collect();
    WsfsError::new(
        ErrorCode::WritesDisabled,
        format!(
            "{tool} is disabled: the host opened this workspace read-only (policy.writes_enabled \
             is false), so no tool may change anything. Only the reading tools work ({}); do \
             not retry, and tell the user if the task needs changes",
            readers.join(", ")
        ),
    )
}

/// Writes the call's audit line and settles the result when that fails: a change that was
/// made is still reported (with a warning: it cannot be undone, and the model must not retry
/// it); a result that changed nothing is withheld (`io_error`), so nothing is read unlogged; an
/// error keeps its code and says the log failed too.
fn audited(
    ws: &Workspace,
    req: &Request<'_>,
    started: SystemTime,
    ctl: &CallControl,
    notes: &Notes,
    result: Result<ToolResult>,
) -> Result<ToolResult> {
    let Some(log) = &ws.policy.audit else {
        return result;
    };
    let (outcome, bytes_out) = match &result {
        Ok((output, _)) => ("ok", output.text().len()),
        Err(e) => (e.code.as_str(), e.code.as_str().len() + 2 + e.message.len()),
    };
    let tool: String = req.tool.chars().take(64).collect();
    let arguments = ws
        .policy()
        .audit_arguments
        .then(|| audit::redacted_arguments(req.args_json, req.content));
    let finished = Finished {
        tool: &tool,
        started,
        duration: ctl.elapsed(),
        outcome,
        bytes_in: (req.args_json.len() + req.content.map_or(0, <[u8]>::len)) as u64,
        bytes_out: bytes_out as u64,
        arguments: arguments.as_ref(),
    };
    let Err(e) = audit::record(log, &finished, notes) else {
        return result;
    };
    log::error!(target: "wsfs", "audit log write failed: tool={tool} error={e}");
    match result {
        Ok((output, mut warnings)) if !notes.changes.is_empty() => {
            warnings.push(Warning::new(format!(
                "{}; the change was made (do not repeat it) but is missing from the log",
                audit::failure_note(&e)
            )));
            Ok((output, warnings))
        }
        Ok(_) => Err(audit::withheld(&e)),
        Err(err) => Err(WsfsError::new(
            err.code,
            format!("{} ({}, too)", err.message, audit::failure_note(&e)),
        )),
    }
}

fn content_tools() -> Vec<&'static str> {
    tools::REGISTRY
        .iter()
        .filter(|t| t.content_buffer)
        .map(|t| t.name)
        .collect()
}

fn unknown_tool(tools: &ToolSet, tool: &str) -> WsfsError {
    let shown: String = tool.chars().take(64).collect();
    let names: Vec<&str> = tools.all().map(|t| t.name()).collect();
    WsfsError::new(
        ErrorCode::UnknownTool,
        format!(
            "there is no tool named '{shown}'; the tools are {}",
            names.join(", ")
        ),
    )
}

/// Refuses argument JSON too large to hold any valid call before parsing it: content may be
/// escaped to 6 bytes per byte, plus room for a maximal path.
fn check_args_size(ws: &Workspace, tool: &str, len: usize) -> Result<()> {
    let max = (ws.limits.max_write_bytes as usize)
        .saturating_mul(6)
        .saturating_add(1 << 20)
        .max(16 << 20);
    if len > max {
        return Err(WsfsError::new(
            ErrorCode::TooLarge,
            format!(
                "the {tool} arguments are {len} bytes of JSON; the limit is {max} (content is limited to max_write_bytes = {})",
                ws.limits.max_write_bytes
            ),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_refuse_unknown_fields() {
        let o = CallOptions::from_json(Some(r#"{"timeout_ms":5,"output":"text"}"#)).unwrap();
        assert_eq!(o.timeout_ms, Some(5));
        assert_eq!(o.output, Output::Text);
        assert!(CallOptions::from_json(None).unwrap().timeout_ms.is_none());
        assert!(CallOptions::from_json(Some("null")).is_ok());
        let e = CallOptions::from_json(Some(r#"{"timeout":5}"#)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(CallOptions::from_json(Some(r#"{"output":"xml"}"#)).is_err());
    }

    #[test]
    fn argument_errors_name_the_tool_and_the_expected_shape() {
        let tmp = tempfile::tempdir().unwrap();
        let config =
            crate::config::Config::from_json(&format!(r#"{{"root":"{}"}}"#, tmp.path().display()))
                .unwrap();
        let ws = Workspace::open(&config).unwrap().0;
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let args = r#"{"path":"a","old-text":"x","new_text":"y"}"#;
        let e = run_tool(&ws, "edit_file", args, &ctl).err().unwrap();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(
            e.message.contains("old-text") && e.message.contains("\"old_text\": string"),
            "{}",
            e.message
        );
        assert!(
            e.message.contains("\"replace_all\"?: boolean"),
            "{}",
            e.message
        );
        assert!(unknown_tool(&ToolSet::default(), "rm")
            .message
            .contains("read_file"));
    }
}
