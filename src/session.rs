//! The host's session operations (overlay mode) behind `wsfs_session_*`: each parses its
//! options strictly, runs on the workspace and returns the usual envelope.

#[cfg(feature = "overlay")]
use crate::control::CallControl;
#[cfg(feature = "overlay")]
use crate::error::{ErrorCode, WsfsError};
#[cfg(feature = "overlay")]
use crate::overlay::{CheckpointOptions, CommitOptions, DiffOptions, RewindOptions};
#[cfg(feature = "overlay")]
use crate::workspace::Workspace;
use crate::{envelope, handles};
#[cfg(feature = "overlay")]
use serde::de::DeserializeOwned;
#[cfg(feature = "overlay")]
use serde_json::{json, Value};
#[cfg(feature = "overlay")]
use std::time::Duration;

/// `n` with its noun, singular or plural.
#[cfg(feature = "overlay")]
fn count(n: usize, one: &str, many: &str) -> String {
    wsfs_core::render::count(n as u64, one, many)
}

/// A session operation's name, as the C functions and the envelopes name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SessionOp {
    Diff,
    Commit,
    Checkpoint,
    Rewind,
    Checkpoints,
    Discard,
    Refresh,
}

/// Without overlay mode no workspace has a session: `feature_not_built` for a live one.
#[cfg(not(feature = "overlay"))]
pub fn session(id: u64, _op: SessionOp, _options_json: Option<&str>) -> String {
    match handles::get(id) {
        Ok(_) => envelope::failure(&crate::error::feature_not_built(
            "overlay",
            "a session operation",
        )),
        Err(e) => envelope::failure(&e),
    }
}

/// Runs `op` on workspace `id` with `options_json` (`None` or empty: `{}`).
#[cfg(feature = "overlay")]
pub fn session(id: u64, op: SessionOp, options_json: Option<&str>) -> String {
    let opened = match handles::get(id) {
        Ok(opened) => opened,
        Err(e) => return envelope::failure(&e),
    };
    match run(
        &opened.ws,
        op,
        options_json.filter(|s| !s.trim().is_empty()),
    ) {
        Ok((data, text)) => envelope::success_value(&data, text, &[]),
        Err(e) => envelope::failure(&e),
    }
}

#[cfg(feature = "overlay")]
fn options<T: DeserializeOwned + Default>(raw: Option<&str>, what: &str) -> Result<T, WsfsError> {
    match raw {
        None => Ok(T::default()),
        Some(raw) => crate::json::parse_object(raw).map_err(|e| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("invalid options for session {what}: {e}"),
            )
        }),
    }
}

#[cfg(feature = "overlay")]
fn to_value(v: impl serde::Serialize) -> Result<Value, WsfsError> {
    serde_json::to_value(v).map_err(|e| WsfsError::new(ErrorCode::IoError, e.to_string()))
}

#[cfg(feature = "overlay")]
fn run(ws: &Workspace, op: SessionOp, raw: Option<&str>) -> Result<(Value, String), WsfsError> {
    match op {
        SessionOp::Diff => {
            let r = ws.session_diff(&options::<DiffOptions>(raw, "diff")?)?;
            let ignored = match r.ignored {
                0 => String::new(),
                n => format!(
                    " ({} of .gitignore'd paths and caches are left out; \
                     include_ignored: true shows them)",
                    count(n, "ignored change", "ignored changes")
                ),
            };
            let text = match r.changes.len() {
                0 => format!("the session has no changes{ignored}"),
                n => format!(
                    "{}{ignored}\n{}",
                    count(n, "changed path", "changed paths"),
                    r.unified
                ),
            };
            Ok((to_value(&r)?, text))
        }
        SessionOp::Commit => {
            let opts = options::<CommitOptions>(raw, "commit")?;
            let ms = ws.limits().operation_timeout_ms.max(60_000);
            let ctl = CallControl::new(Duration::from_millis(ms), None);
            let r = ws.session_commit(&opts, &ctl)?;
            let text = match r.committed {
                true if r.ignored > 0 => format!(
                    "committed {} to the workspace; {} stay in the session \
                     (include_ignored: true commits them)",
                    count(r.files.len(), "path", "paths"),
                    count(r.ignored, "ignored change", "ignored changes")
                ),
                true => format!(
                    "committed {} to the workspace",
                    count(r.files.len(), "path", "paths")
                ),
                false => format!(
                    "nothing was committed: {} ({}); diff again, then commit with \
                     merge: true or force: true, or leave those paths out",
                    count(r.conflicts.len(), "conflict", "conflicts"),
                    r.conflicts
                        .iter()
                        .map(|c| c.path.as_str())
                        .collect::<Vec<_>>()
                        .join(", ")
                ),
            };
            Ok((to_value(&r)?, text))
        }
        SessionOp::Checkpoint => {
            let r = ws.session_checkpoint(&options::<CheckpointOptions>(raw, "checkpoint")?)?;
            let text = format!("checkpoint {}", r.id);
            Ok((to_value(&r)?, text))
        }
        SessionOp::Rewind => {
            let Some(raw) = raw else {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    "session rewind needs {\"id\": \"<checkpoint id>\"}; list them with checkpoints",
                ));
            };
            let opts: RewindOptions = crate::json::parse_object(raw).map_err(|e| {
                WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("invalid options for session rewind: {e}"),
                )
            })?;
            ws.session_rewind(&opts)?;
            Ok((
                json!({"id": opts.id, "rewound": true}),
                format!("the session is back at checkpoint {}", opts.id),
            ))
        }
        SessionOp::Checkpoints => {
            no_options(raw, "checkpoints")?;
            let list = ws.session_checkpoints()?;
            let text = count(list.len(), "checkpoint", "checkpoints");
            Ok((json!({"checkpoints": to_value(&list)?}), text))
        }
        SessionOp::Discard => {
            no_options(raw, "discard")?;
            ws.session_discard()?;
            Ok((
                json!({"discarded": true}),
                "the session's changes are discarded; the workspace shows the base".to_string(),
            ))
        }
        SessionOp::Refresh => {
            no_options(raw, "refresh")?;
            ws.session_refresh()?;
            Ok((
                json!({"refreshed": true}),
                "the session's view shows the base as it is now".to_string(),
            ))
        }
    }
}

#[cfg(feature = "overlay")]
fn no_options(raw: Option<&str>, what: &str) -> Result<(), WsfsError> {
    let _: Empty = options(raw, what)?;
    Ok(())
}

#[cfg(feature = "overlay")]
#[derive(Default, serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Empty {}
