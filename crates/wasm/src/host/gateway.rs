//! The model gateway: how a tool reaches a model, only ever through the host.
//!
//! The host implements [`ModelGateway`] over its own provider configuration (a local endpoint
//! such as Ollama, or an online provider); the C ABI, Go and Python wrap their callbacks in it
//! (phase 2). A tool sees only the JSON it sends and the JSON it gets back.

use crate::error::ErrorCode;
use std::time::Instant;

/// Why the gateway gave no response. `code` is what the tool (and then the model) reads:
/// `gateway_error` for a failure, `timeout` for a response that did not come in time,
/// `invalid_arguments` for a request the gateway refuses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GatewayFailure {
    pub code: ErrorCode,
    pub message: String,
}

impl GatewayFailure {
    pub fn new(code: ErrorCode, message: impl Into<String>) -> Self {
        GatewayFailure {
            code,
            message: message.into(),
        }
    }
}

/// The host's model gateway. `generate` gets the tool's request (a JSON object) and must answer
/// with a JSON value before `deadline`, or fail.
pub trait ModelGateway: Send + Sync {
    fn generate(&self, request_json: &str, deadline: Instant) -> Result<String, GatewayFailure>;

    /// `generate` for a call that may be cancelled: `cancelled` says when the caller gave up
    /// (the call's cancel token), and a gateway that can stop waiting then overrides this. The
    /// default waits for `generate`.
    fn generate_cancellable(
        &self,
        request_json: &str,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> Result<String, GatewayFailure> {
        let _ = cancelled;
        self.generate(request_json, deadline)
    }
}

impl<F> ModelGateway for F
where
    F: Fn(&str, Instant) -> Result<String, GatewayFailure> + Send + Sync,
{
    fn generate(&self, request_json: &str, deadline: Instant) -> Result<String, GatewayFailure> {
        self(request_json, deadline)
    }
}
