//! The async face (cargo feature `tokio`): each call runs on tokio's blocking pool with a cancel
//! token of its own, which is cancelled when the call's future is dropped (a `select!` that
//! chose another branch, `tokio::time::timeout` running out), so the blocking call stops at
//! its next check with `cancelled` and changes nothing more.

use super::{CallOptions, CancelToken, Error, ErrorCode, Outcome, Result, Workspace};
use serde_json::Value;
use std::sync::Arc;

/// A [`Workspace`] for async code: cheap to clone, `Send + Sync`.
#[derive(Debug, Clone)]
pub struct AsyncWorkspace {
    inner: Arc<Workspace>,
}

/// Cancels the call's token when the future holding it is dropped before the call returned.
struct CancelOnDrop(Option<Arc<CancelToken>>);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        if let Some(token) = self.0.take() {
            token.cancel();
        }
    }
}

impl AsyncWorkspace {
    pub fn new(workspace: Workspace) -> AsyncWorkspace {
        AsyncWorkspace {
            inner: Arc::new(workspace),
        }
    }

    /// The blocking workspace, for the calls with no async form here.
    pub fn workspace(&self) -> &Arc<Workspace> {
        &self.inner
    }

    /// [`Workspace::call`] on the blocking pool.
    pub async fn call(&self, tool: String, args: Value) -> Result<Outcome<Value>> {
        self.run(move |ws, options| ws.call(&tool, &args, options))
            .await
    }

    /// [`Workspace::dispatch`] on the blocking pool: a model's whole tool call, the envelope.
    pub async fn dispatch(&self, call_json: String) -> Result<String> {
        self.run(move |ws, options| Ok(ws.dispatch(&call_json, options)))
            .await
    }

    /// Runs `call` on the blocking pool with a cancel token of its own.
    pub(super) async fn run<T: Send + 'static>(
        &self,
        call: impl FnOnce(&Workspace, CallOptions<'_>) -> Result<T> + Send + 'static,
    ) -> Result<T> {
        let token = Arc::new(CancelToken::new());
        let mut armed = CancelOnDrop(Some(token.clone()));
        let ws = self.inner.clone();
        let joined = ::tokio::task::spawn_blocking(move || {
            let options = CallOptions {
                timeout: None,
                cancel: Some(&token),
            };
            call(&ws, options)
        })
        .await;
        armed.0 = None; // it returned: nothing to cancel
        joined.unwrap_or_else(|e| {
            Err(Error::new(
                ErrorCode::IoError,
                format!("the call's blocking task failed ({e}); nothing is known to have changed"),
            ))
        })
    }
}
