//! The host's approval of the calls that need confirming (those whose tool has a
//! `confirmation`, such as `git_commit`). Without a handler the model's `confirmed: true` is
//! the gate, a soft one; with a handler set (`wsfs_set_approval_handler`) the handler decides
//! each such call, whatever `confirmed` says, and a handler that fails or does not answer
//! before the call's deadline denies it.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use serde_json::{json, Value};
use std::sync::{Arc, RwLock};
use std::time::Instant;

/// A handler's answer to one request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Approve,
    /// Denied, with the host's reason (shown to the model).
    Deny(String),
    /// The handler could not decide (its own error); the call is denied.
    Failed(String),
}

/// The host's approval handler. `decide` gets the request, a JSON object
/// `{"tool", "arguments", "why"}`, and must answer before `deadline`. It may be called from
/// several threads at once.
pub trait ApprovalHandler: Send + Sync {
    fn decide(&self, request_json: &str, deadline: Instant) -> Verdict;
}

impl<F> ApprovalHandler for F
where
    F: Fn(&str, Instant) -> Verdict + Send + Sync,
{
    fn decide(&self, request_json: &str, deadline: Instant) -> Verdict {
        self(request_json, deadline)
    }
}

/// Where an open workspace keeps its handler: set, replaced or removed while calls run (a
/// call holds the handler it started with).
#[derive(Default)]
pub struct ApprovalSlot(RwLock<Option<Arc<dyn ApprovalHandler>>>);

impl ApprovalSlot {
    pub fn set(&self, handler: Option<Arc<dyn ApprovalHandler>>) {
        *self.0.write().unwrap_or_else(|p| p.into_inner()) = handler;
    }

    pub fn get(&self) -> Option<Arc<dyn ApprovalHandler>> {
        self.0.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// Asks `handler` about a call of `tool` (`why` says why it needs approval) and returns the
/// arguments to run it with: once approved, `args_json` with `confirmed: true` when the tool
/// takes a confirmation (`confirms`), else as they are. Arguments that are not a JSON object
/// are returned as they are, unasked: the tool refuses them anyway.
pub fn ask(
    handler: &dyn ApprovalHandler,
    tool: &str,
    why: &str,
    args_json: &str,
    confirms: bool,
    ctl: &CallControl,
) -> Result<String> {
    let Ok(Value::Object(mut arguments)) = serde_json::from_str::<Value>(args_json) else {
        return Ok(args_json.to_string());
    };
    let request = json!({"tool": tool, "arguments": arguments, "why": why}).to_string();
    let verdict = handler.decide(&request, ctl.deadline());
    let late = Instant::now() >= ctl.deadline();
    let answer = match (&verdict, late) {
        (_, true) => "late",
        (Verdict::Approve, _) => "approved",
        (Verdict::Deny(_), _) => "denied",
        (Verdict::Failed(_), _) => "failed",
    };
    log::info!(target: "wsfs", "approval: tool={tool} answer={answer}");
    let denied = |message: String| Err(WsfsError::new(ErrorCode::ApprovalDenied, message));
    let next = "Nothing ran. Do not call it again as it is: tell the user what you meant to do, \
                or go on without it";
    if late {
        return denied(format!(
            "the host's approval handler did not answer within the call's deadline, which \
             denies this {tool} call. {next}"
        ));
    }
    match verdict {
        Verdict::Approve => {
            ctl.check()?;
            if !confirms {
                return Ok(args_json.to_string());
            }
            arguments.insert("confirmed".into(), Value::Bool(true));
            Ok(Value::Object(arguments).to_string())
        }
        Verdict::Deny(reason) => {
            let reason = match reason.trim() {
                "" => "no reason given".to_string(),
                r => r.chars().take(1000).collect(),
            };
            denied(format!(
                "the host did not approve this {tool} call ({reason}). {next}"
            ))
        }
        Verdict::Failed(error) => denied(format!(
            "the host's approval handler failed ({}), which denies this {tool} call. {next}",
            error.chars().take(1000).collect::<String>()
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn ctl(ms: u64) -> CallControl {
        CallControl::new(Duration::from_millis(ms), None)
    }

    #[test]
    fn an_approved_call_runs_confirmed_and_the_handler_sees_tool_arguments_and_why() {
        let seen = std::sync::Mutex::new(String::new());
        let handler = |request: &str, _: Instant| {
            *seen.lock().unwrap() = request.to_string();
            Verdict::Approve
        };
        let args = ask(
            &handler,
            "git_commit",
            "history",
            r#"{"message":"m"}"#,
            true,
            &ctl(10_000),
        );
        let args: Value = serde_json::from_str(&args.unwrap()).unwrap();
        assert_eq!(args, json!({"message": "m", "confirmed": true}));
        let request: Value = serde_json::from_str(&seen.lock().unwrap()).unwrap();
        assert_eq!(
            request,
            json!({"tool": "git_commit", "arguments": {"message": "m"}, "why": "history"})
        );
        // A tool that takes no confirmation runs with its arguments as they were.
        let plain = ask(
            &handler,
            "shell",
            "any command",
            r#"{"command":"ls"}"#,
            false,
            &ctl(10_000),
        );
        assert_eq!(plain.unwrap(), r#"{"command":"ls"}"#);
    }

    #[test]
    fn deny_failure_and_a_late_answer_are_approval_denied() {
        let deny = |_: &str, _: Instant| Verdict::Deny("not today".into());
        let e = ask(&deny, "git_commit", "h", "{}", true, &ctl(10_000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        assert!(e.message.contains("not today"), "{}", e.message);
        let failed = |_: &str, _: Instant| Verdict::Failed("no user".into());
        let e = ask(&failed, "git_commit", "h", "{}", true, &ctl(10_000)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        assert!(e.message.contains("failed (no user)"), "{}", e.message);
        // Approving after the deadline still denies.
        let late = |_: &str, deadline: Instant| {
            while Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(1));
            }
            Verdict::Approve
        };
        let e = ask(&late, "git_commit", "h", "{}", true, &ctl(20)).unwrap_err();
        assert_eq!(e.code, ErrorCode::ApprovalDenied);
        assert!(e.message.contains("deadline"), "{}", e.message);
    }

    #[test]
    fn arguments_that_are_no_object_are_left_to_the_tool() {
        let never = |_: &str, _: Instant| -> Verdict { panic!("asked") };
        assert_eq!(
            ask(&never, "t", "w", "[1]", true, &ctl(1000)).unwrap(),
            "[1]"
        );
    }
}
