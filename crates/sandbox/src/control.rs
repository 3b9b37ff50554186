//! Per-call deadlines and cancel tokens: the cooperative checks every tool makes between steps.

use crate::error::{ErrorCode, Result, WsfsError};
use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::LazyLock;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// What a running call checks before each step: its deadline and, optionally, a cancel flag.
#[derive(Debug, Clone)]
pub struct CallControl {
    started: Instant,
    deadline: Instant,
    timeout: Duration,
    cancel: Option<Arc<AtomicBool>>,
}

impl CallControl {
    pub fn new(timeout: Duration, cancel: Option<Arc<AtomicBool>>) -> Self {
        let started = Instant::now();
        CallControl {
            started,
            deadline: started + timeout,
            timeout,
            cancel,
        }
    }

    /// Errors with `cancelled` or `timeout` when the call must stop. Called only before a
    /// commit point, so a stopped call has changed nothing.
    pub fn check(&self) -> Result<()> {
        if let Some(flag) = &self.cancel {
            if flag.load(Ordering::Acquire) {
                return Err(WsfsError::new(
                    ErrorCode::Cancelled,
                    "the call was cancelled before it changed anything",
                ));
            }
        }
        if Instant::now() >= self.deadline {
            return Err(WsfsError::new(
                ErrorCode::Timeout,
                format!(
                    "the call took longer than {} ms and was stopped before it changed anything",
                    self.timeout.as_millis()
                ),
            ));
        }
        Ok(())
    }

    /// The call's cancel flag, if it has a token (the exec tools hand it to the programs'
    /// supervisor, which kills them when it is set).
    pub fn cancel_flag(&self) -> Option<Arc<AtomicBool>> {
        self.cancel.clone()
    }

    /// When the call must stop.
    pub fn deadline(&self) -> Instant {
        self.deadline
    }

    pub fn elapsed(&self) -> Duration {
        self.started.elapsed()
    }
}

static TOKENS: LazyLock<Mutex<HashMap<u64, Arc<AtomicBool>>>> = LazyLock::new(Default::default);
static NEXT_TOKEN: AtomicU64 = AtomicU64::new(1);

fn tokens() -> std::sync::MutexGuard<'static, HashMap<u64, Arc<AtomicBool>>> {
    // A poisoned map only means another thread panicked mid-insert; the map itself is intact.
    TOKENS.lock().unwrap_or_else(|p| p.into_inner())
}

/// Creates a cancel token; ids start at 1 and are never reused.
pub fn token_new() -> u64 {
    let id = NEXT_TOKEN.fetch_add(1, Ordering::Relaxed);
    tokens().insert(id, Arc::new(AtomicBool::new(false)));
    id
}

pub fn token_cancel(id: u64) {
    if let Some(flag) = tokens().get(&id) {
        flag.store(true, Ordering::Release);
    }
}

pub fn token_free(id: u64) {
    tokens().remove(&id);
}

pub fn token_flag(id: u64) -> Option<Arc<AtomicBool>> {
    tokens().get(&id).cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cancel_token_stops_checks() {
        let id = token_new();
        let ctl = CallControl::new(Duration::from_secs(60), token_flag(id));
        assert!(ctl.check().is_ok());
        token_cancel(id);
        assert_eq!(ctl.check().unwrap_err().code, ErrorCode::Cancelled);
        token_free(id);
        assert!(token_flag(id).is_none());
        token_cancel(id); // unknown tokens are ignored
    }

    #[test]
    fn deadline_expires() {
        let ctl = CallControl::new(Duration::ZERO, None);
        assert_eq!(ctl.check().unwrap_err().code, ErrorCode::Timeout);
    }
}
