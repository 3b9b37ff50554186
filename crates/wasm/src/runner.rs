//! One call of a Wasm tool: the input protocol, the capabilities checked again against the
//! host's policy, a fresh instance under the tool's limits, and the outcome as a result or a
//! stable error code.

use super::engine::Ended;
use super::fs::run_files::RunFiles;
use super::fs::{FsAccess, GuestFs};
use super::guest::{GuestSetup, GuestState};
use super::host::gateway::ModelGateway;
use super::host::{Grants, HostCalls};
use super::policy::{FsCapability, WasmCeiling, MIB};
use super::protocol;
use super::registry::LoadedTool;
use super::watch::Watch;
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use serde_json::Value;
use std::sync::Arc;

/// What a call brings besides its input.
pub struct RunContext<'a> {
    pub ctl: &'a CallControl,
    pub host: &'a WasmCeiling,
    /// The workspace as the tool may use it, for a tool with a filesystem capability (its
    /// access must not exceed the manifest's).
    pub workspace: Option<Arc<dyn GuestFs>>,
    pub gateway: Option<Arc<dyn ModelGateway>>,
}

/// A tool's result.
#[derive(Debug)]
pub struct WasmOutput {
    pub data: Value,
    pub fuel_used: u64,
    pub host_calls: HostCalls,
}

/// Runs `tool` on `input` (its arguments, or a `tool_call`).
pub fn run(tool: &LoadedTool, input: &str, cx: RunContext<'_>) -> Result<WasmOutput> {
    let manifest = &tool.manifest;
    let name = tool.name();
    let stdin = protocol::tool_input(name, input, &manifest.input_schema)?;
    // The host's policy may have changed since the tool was loaded: checked again per call.
    let limits = manifest.limits_under(cx.host)?;
    let watch = Arc::new(Watch::new(name, cx.ctl, limits.timeout_ms));
    watch.check()?;
    let session = workspace_session(tool, cx.workspace, &watch, limits.memory_bytes)?;
    let caps = &manifest.capabilities;
    let grants = Grants {
        model_access: caps.model_access && cx.host.allow_model_access,
        network: match cx.host.allow_direct_network {
            true => caps.network.as_ref().map(|n| n.allowed_hosts.clone()),
            false => None,
        },
    };
    let env = caps
        .env
        .iter()
        .filter(|var| cx.host.allowed_env.contains(var))
        .filter_map(|var| Some((var.clone(), std::env::var(var).ok()?)))
        .collect();
    let (state, captures) = GuestState::new(GuestSetup {
        stdin,
        env,
        workspace: session.clone(),
        grants,
        gateway: cx.gateway,
        watch: watch.clone(),
        limits,
    })?;
    let report = tool.module().run(state, limits.fuel);
    let clean = report.ended == Ended::Exited(0) && watch.reason().is_none();
    if let (false, Some(session)) = (clean, &session) {
        // Files the tool still has open are discarded, not committed, when it did not finish.
        session.discard_open_writes();
    }
    let memory_denied = report.state.memory.denied;
    let host_calls = report.state.host.calls;
    let answered = report.state.host.answered.clone();
    // Dropping the state closes the tool's files (committing those a clean exit left open).
    drop(report.state);
    let stdout = take(&captures.stdout);
    let stderr = take(&captures.stderr);
    let refused = session.as_ref().map(|s| s.refusals()).unwrap_or_default();
    let with_refusals = |mut e: WsfsError| {
        if !refused.is_empty() {
            e.message.push_str(&format!(
                "; the workspace refused it: {}",
                refused.join("; ")
            ));
        }
        e
    };
    if let Some(reason) = watch.reason() {
        return Err(with_refusals(reason));
    }
    let status = match report.ended {
        Ended::Exited(status) if status == 0 || memory_denied.is_none() => status,
        Ended::OutOfFuel => {
            return Err(with_refusals(WsfsError::new(
                ErrorCode::FuelExhausted,
                format!(
                    "{name} used its whole fuel budget ({} units) and was stopped; give it less \
                     work, or raise limits.fuel in its manifest (the host allows at most {})",
                    limits.fuel, cx.host.max_fuel
                ),
            )))
        }
        _ if memory_denied.is_some() => {
            let asked = memory_denied.unwrap_or(0) as u64;
            return Err(with_refusals(WsfsError::new(
                ErrorCode::MemoryLimit,
                format!(
                    "{name} needed more memory than its limit of {} MiB (it asked for {} MiB) \
                     and failed; give it less data, or raise limits.memory_mb (the host allows \
                     at most {} MiB){}",
                    limits.memory_bytes / MIB,
                    asked.div_ceil(MIB),
                    cx.host.max_memory_mb,
                    protocol::stderr_tail(&stderr)
                ),
            )));
        }
        Ended::Trapped(what) => {
            return Err(with_refusals(WsfsError::new(
                ErrorCode::ToolTrap,
                format!("{name} crashed: {what}{}", protocol::stderr_tail(&stderr)),
            )))
        }
        Ended::Stopped | Ended::Exited(_) => {
            return Err(with_refusals(WsfsError::new(
                ErrorCode::ToolTrap,
                format!(
                    "{name} was stopped by the host{}",
                    protocol::stderr_tail(&stderr)
                ),
            )))
        }
    };
    if let Some(failed) = session.as_ref().and_then(|s| s.failed_commit()) {
        return Err(WsfsError::new(
            failed.code,
            format!(
                "{name} wrote a file that could not be saved: {}",
                failed.message
            ),
        ));
    }
    let data =
        protocol::tool_result(name, status, &stdout, &stderr, &answered).map_err(with_refusals)?;
    Ok(WasmOutput {
        data,
        fuel_used: report.fuel_used,
        host_calls,
    })
}

fn take(captured: &super::stdio::Captured) -> Vec<u8> {
    std::mem::take(&mut *captured.lock().unwrap_or_else(|p| p.into_inner()))
}

/// The tool's `/workspace`, when its manifest asks for one and the caller gave it.
fn workspace_session(
    tool: &LoadedTool,
    workspace: Option<Arc<dyn GuestFs>>,
    watch: &Arc<Watch>,
    buffer_budget: u64,
) -> Result<Option<Arc<RunFiles>>> {
    let wanted = tool.manifest.capabilities.filesystem;
    if wanted == FsCapability::None {
        return Ok(None);
    }
    let Some(fs) = workspace else {
        return Err(WsfsError::new(
            ErrorCode::CapabilityDenied,
            format!(
                "{} needs the workspace, but the host gave it none",
                tool.name()
            ),
        ));
    };
    if fs.access() == FsAccess::Write && wanted != FsCapability::Write {
        return Err(WsfsError::new(
            ErrorCode::CapabilityDenied,
            format!(
                "{} may only read the workspace, but was given write access; the host must \
                 give it read access",
                tool.name()
            ),
        ));
    }
    // Written files wait in host memory until they are committed: together they may hold no
    // more than the tool's own memory limit.
    Ok(Some(RunFiles::new(fs, watch.clone(), buffer_budget)))
}
