//! The host functions a tool may import from the module `wsfs`, beside WASI:
//!
//! | import | signature | what it does |
//! | --- | --- | --- |
//! | `model_generate` | `(req_ptr: i32, req_len: i32) -> i32` | sends a JSON request to the host's model gateway |
//! | `http_request` | `(req_ptr: i32, req_len: i32) -> i32` | `{"method", "url", "headers", "body"}` to an allowed host |
//! | `response_len` | `() -> i32` | length of the pending response |
//! | `response_read` | `(buf_ptr: i32, buf_len: i32) -> i32` | copies the pending response, returns the bytes copied |
//!
//! A call returns a status (0 success, else one of [`STATUS_CODES`]) and always leaves a JSON
//! response pending: the result, or `{"error": {"code": "...", "message": "..."}}` with the
//! same stable codes wsfs uses everywhere. Each function checks the tool's capability at call
//! time, whatever was checked at load: without `model_access`, or `network` (and the host's
//! permission), it is `capability_denied` and nothing leaves the process.

pub mod gateway;
pub mod http;
#[cfg(feature = "model-gateway-http")]
pub mod provider;

use super::watch::Watch;
use crate::error::{ErrorCode, WsfsError};
use gateway::ModelGateway;
use std::sync::Arc;

/// The import module name.
pub const MODULE: &str = "wsfs";

// Every function [`MODULE`] provides, with its signature, is listed in
// `super::imports::HOST_FUNCTIONS`, which a module's imports are checked against at load.

/// Statuses the host functions return, by index (0 is success).
pub const STATUS_CODES: &[ErrorCode] = &[
    ErrorCode::CapabilityDenied,
    ErrorCode::GatewayError,
    ErrorCode::InvalidArguments,
    ErrorCode::Timeout,
    ErrorCode::TooLarge,
    ErrorCode::IoError,
];

/// Largest request a tool may pass to a host function.
pub const MAX_REQUEST_BYTES: usize = 1 << 20;

/// The host told the tool to stop (the reason is in the [`Watch`]): the engine traps.
#[derive(Debug)]
pub struct MustStop;

/// What a tool was granted, after the manifest was checked against the host's policy.
#[derive(Debug, Clone, Default)]
pub struct Grants {
    pub model_access: bool,
    /// The hosts `http_request` may reach; `None`: no network.
    pub network: Option<Vec<String>>,
}

/// How often each host function was called, and refused, in one run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct HostCalls {
    pub model: u32,
    pub http: u32,
    pub denied: u32,
}

/// The host functions' state in one run.
pub struct HostImports {
    grants: Grants,
    gateway: Option<Arc<dyn ModelGateway>>,
    watch: Arc<Watch>,
    max_response: usize,
    pending: Vec<u8>,
    pub calls: HostCalls,
    /// The error codes the host functions answered with (each once), which the tool may pass
    /// on as its own failure.
    pub answered: Vec<ErrorCode>,
}

impl HostImports {
    pub fn new(
        grants: Grants,
        gateway: Option<Arc<dyn ModelGateway>>,
        watch: Arc<Watch>,
        max_response: usize,
    ) -> Self {
        HostImports {
            grants,
            gateway,
            watch,
            max_response,
            pending: Vec::new(),
            calls: HostCalls::default(),
            answered: Vec::new(),
        }
    }

    /// `model_generate`: the request must be a JSON object; the response is the gateway's.
    pub fn model_generate(&mut self, request: &[u8]) -> Result<i32, MustStop> {
        self.calls.model += 1;
        let answer = self.model_answer(request);
        self.finish(answer)
    }

    fn model_answer(&mut self, request: &[u8]) -> Result<Vec<u8>, WsfsError> {
        let tool = self.watch.tool();
        if !self.grants.model_access {
            return Err(WsfsError::new(
                ErrorCode::CapabilityDenied,
                format!(
                    "{tool} has no model_access capability; add \"model_access\": true to its \
                     manifest's capabilities"
                ),
            ));
        }
        let request = request_object(request, "model_generate")?;
        let Some(gateway) = &self.gateway else {
            return Err(WsfsError::new(
                ErrorCode::GatewayError,
                "the host has no model gateway set, so tools cannot reach a model here",
            ));
        };
        let watch = self.watch.clone();
        let response = gateway
            .generate_cancellable(&request, self.watch.deadline(), &|| watch.check().is_err())
            .map_err(|f| WsfsError::new(f.code, f.message))?;
        if serde_json::from_str::<serde::de::IgnoredAny>(&response).is_err() {
            return Err(WsfsError::new(
                ErrorCode::GatewayError,
                "the model gateway answered with something that is not JSON",
            ));
        }
        Ok(response.into_bytes())
    }

    /// `http_request`: only with a `network` grant, to its hosts.
    pub fn http_request(&mut self, request: &[u8]) -> Result<i32, MustStop> {
        self.calls.http += 1;
        let answer = self.http_answer(request);
        self.finish(answer)
    }

    fn http_answer(&mut self, request: &[u8]) -> Result<Vec<u8>, WsfsError> {
        let Some(hosts) = &self.grants.network else {
            return Err(WsfsError::new(
                ErrorCode::CapabilityDenied,
                format!(
                    "{} has no network capability, and tools get none unless the host allows \
                     direct network; nothing was sent. Use model_generate for model calls",
                    self.watch.tool()
                ),
            ));
        };
        let request = request_object(request, "http_request")?;
        let parsed: http::HttpRequest = serde_json::from_str(&request).map_err(|e| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "http_request: {e}; expected {{\"method\"?, \"url\", \"headers\"?, \"body\"?}}"
                ),
            )
        })?;
        let response = http::send(&parsed, hosts, self.watch.deadline(), self.max_response)?;
        serde_json::to_vec(&response).map_err(|e| WsfsError::new(ErrorCode::IoError, e.to_string()))
    }

    /// Leaves the answer pending and returns its status, or stops the tool when it must stop
    /// (a deadline that passed while the host worked is the tool's timeout, not the call's
    /// error).
    fn finish(&mut self, answer: Result<Vec<u8>, WsfsError>) -> Result<i32, MustStop> {
        if self.watch.check().is_err() {
            return Err(MustStop);
        }
        let answer = answer.and_then(|bytes| match bytes.len() > self.max_response {
            true => Err(WsfsError::new(
                ErrorCode::TooLarge,
                format!("the response is over {} bytes", self.max_response),
            )),
            false => Ok(bytes),
        });
        match answer {
            Ok(bytes) => {
                self.pending = bytes;
                Ok(0)
            }
            Err(e) => {
                if e.code == ErrorCode::CapabilityDenied {
                    self.calls.denied += 1;
                }
                if !self.answered.contains(&e.code) {
                    self.answered.push(e.code);
                }
                let status = STATUS_CODES
                    .iter()
                    .position(|c| *c == e.code)
                    .or_else(|| STATUS_CODES.iter().position(|c| *c == ErrorCode::IoError))
                    .map_or(1, |i| i as i32 + 1);
                let body =
                    serde_json::json!({"error": {"code": e.code.as_str(), "message": e.message}});
                self.pending = body.to_string().into_bytes();
                Ok(status)
            }
        }
    }

    /// `response_len`.
    pub fn response_len(&self) -> i32 {
        i32::try_from(self.pending.len()).unwrap_or(i32::MAX)
    }

    /// `response_read`: the pending response, as much as fits in `into`.
    pub fn response_read(&self, into: &mut [u8]) -> i32 {
        let n = into.len().min(self.pending.len());
        into[..n].copy_from_slice(&self.pending[..n]);
        i32::try_from(n).unwrap_or(i32::MAX)
    }
}

/// The request as text, if it is one JSON object.
fn request_object(request: &[u8], function: &str) -> Result<String, WsfsError> {
    let invalid = |why: &str| {
        WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("{function}: the request {why}"),
        )
    };
    if request.len() > MAX_REQUEST_BYTES {
        return Err(invalid(&format!("is over {MAX_REQUEST_BYTES} bytes")));
    }
    let text = std::str::from_utf8(request).map_err(|_| invalid("is not UTF-8"))?;
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(text.to_string()),
        Ok(_) => Err(invalid("must be a JSON object")),
        Err(e) => Err(invalid(&format!("is not valid JSON ({e})"))),
    }
}
