//! When a running tool must stop, and why: the call's deadline and cancel token
//! ([`CallControl`]), the tool's own timeout, and the host functions' reasons (too much
//! output). The engine asks between fuel slices; host functions ask before they work and
//! record a reason before they trap, so the runner reports the cause, not the trap.

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug)]
pub struct Watch {
    tool: String,
    ctl: CallControl,
    /// The tool's own deadline (`limits.timeout_ms` from its start), when it comes before the
    /// call's.
    deadline: Instant,
    timeout_ms: u64,
    /// The first reason the tool was stopped; later ones are consequences.
    stopped: Mutex<Option<WsfsError>>,
}

impl Watch {
    pub fn new(tool: &str, ctl: &CallControl, timeout_ms: u64) -> Watch {
        let own = Instant::now() + Duration::from_millis(timeout_ms);
        Watch {
            tool: tool.to_string(),
            ctl: ctl.clone(),
            deadline: own.min(ctl.deadline()),
            timeout_ms,
            stopped: Mutex::new(None),
        }
    }

    pub fn tool(&self) -> &str {
        &self.tool
    }

    /// When the tool must have finished.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    /// Errors (and records why) when the tool must stop: the call was cancelled, or the call's
    /// deadline or the tool's timeout passed.
    pub fn check(&self) -> Result<()> {
        if let Some(reason) = self.reason() {
            return Err(reason);
        }
        let tool = &self.tool;
        let reason = match self.ctl.check() {
            Err(e) if e.code == ErrorCode::Cancelled => WsfsError::new(
                ErrorCode::Cancelled,
                format!("{tool} was cancelled and stopped"),
            ),
            Err(e) => WsfsError::new(
                e.code,
                format!(
                    "{tool} was stopped: the call took longer than its deadline ({})",
                    e.message
                ),
            ),
            Ok(()) if Instant::now() >= self.deadline => WsfsError::new(
                ErrorCode::Timeout,
                format!(
                    "{tool} ran longer than its limit of {} ms and was stopped; give it less \
                     work, or raise limits.timeout_ms in its manifest (within the host's limit)",
                    self.timeout_ms
                ),
            ),
            Ok(()) => return Ok(()),
        };
        Err(self.stop(reason))
    }

    /// Records `reason` as why the tool stopped, unless one is recorded already; returns the
    /// recorded one.
    pub fn stop(&self, reason: WsfsError) -> WsfsError {
        let mut stopped = self.stopped.lock().unwrap_or_else(|p| p.into_inner());
        stopped.get_or_insert(reason).clone()
    }

    /// Why the tool was stopped, if it was.
    pub fn reason(&self) -> Option<WsfsError> {
        self.stopped
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::control::{token_cancel, token_flag, token_free, token_new};

    #[test]
    fn the_first_reason_is_kept() {
        let token = token_new();
        let ctl = CallControl::new(Duration::from_secs(60), token_flag(token));
        let watch = Watch::new("t", &ctl, 60_000);
        assert!(watch.check().is_ok());
        token_cancel(token);
        assert_eq!(watch.check().unwrap_err().code, ErrorCode::Cancelled);
        let later = watch.stop(WsfsError::new(ErrorCode::TooLarge, "x"));
        assert_eq!(later.code, ErrorCode::Cancelled);
        token_free(token);
    }

    #[test]
    fn the_tools_own_timeout_names_its_limit() {
        let ctl = CallControl::new(Duration::from_secs(60), None);
        let watch = Watch::new("slow", &ctl, 0);
        let e = watch.check().unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        assert!(e.message.contains("limits.timeout_ms"), "{}", e.message);
        let call = Watch::new("t", &CallControl::new(Duration::ZERO, None), 60_000);
        assert!(call.check().unwrap_err().message.contains("deadline"));
    }
}
