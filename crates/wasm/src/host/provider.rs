//! The configured model gateway (`model_gateway` in the workspace configuration, cargo feature
//! `model-gateway-http`): the library itself calls an OpenAI-compatible, Anthropic or Ollama
//! endpoint for a tool's `model_generate`, for hosts that set no gateway callback. See
//! docs/model-gateway.md.
//!
//! The tool sends what the Go adapter takes, `{"prompt", "system"?, "max_output_tokens"?}`, and
//! gets `{"text", "finish_reason", "model"}`. One non-streaming request per attempt, bounded by
//! the earlier of the tool's deadline and `timeout_ms` (ureq's whole-exchange timeout, so a
//! slow provider is cut off, not waited for); 429, 5xx and failed connections are retried
//! with backoff (`Retry-After` honored when it fits in the time left). The API key is read
//! from the environment at open and never leaves this module but in the request's header:
//! errors and logs name the provider, its URL and the status, never the key.

use super::gateway::{GatewayFailure, ModelGateway};
use crate::config::ModelGatewayConfig;
use crate::error::{ErrorCode, Result, WsfsError};
use serde::Deserialize;
use serde_json::{json, Value};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// Most bytes of a provider's answer.
const MAX_ANSWER_BYTES: u64 = 4 << 20;
/// The first wait before a retry; each next one doubles, up to [`MAX_BACKOFF`].
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// Anthropic needs `max_tokens`; this is it when the tool gives no `max_output_tokens`.
const ANTHROPIC_DEFAULT_MAX_TOKENS: u64 = 1024;
const ANTHROPIC_VERSION: &str = "2023-06-01";

/// The API key, kept out of every `Debug` and message.
struct Secret(String);

impl std::fmt::Debug for Secret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("[redacted]")
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Provider {
    OpenAiCompatible,
    Anthropic,
    Ollama,
}

impl Provider {
    fn name(self) -> &'static str {
        match self {
            Provider::OpenAiCompatible => "openai-compatible",
            Provider::Anthropic => "anthropic",
            Provider::Ollama => "ollama",
        }
    }
}

/// The tool's request.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ToolRequest {
    prompt: String,
    #[serde(default)]
    system: Option<String>,
    #[serde(default)]
    max_output_tokens: Option<u64>,
}

/// The gateway a workspace's `model_gateway` configures. Each attempt runs on a thread of its
/// own while the calling thread watches for the caller giving up: a cancelled call returns at
/// once, and the attempt ends by its own timeout (the deadline) without anyone waiting for it.
#[derive(Debug)]
pub struct ConfiguredGateway(Arc<Client>);

/// The provider, its endpoint, key and limits, and the HTTP client.
#[derive(Debug)]
struct Client {
    provider: Provider,
    /// The endpoint requests go to (base URL + the provider's path).
    endpoint: String,
    model: String,
    key: Option<Secret>,
    timeout: Duration,
    max_retries: u32,
    agent: AgentBox,
}

/// ureq's agent has no `Debug`; this keeps [`ConfiguredGateway`]'s.
struct AgentBox(ureq::Agent);

impl std::fmt::Debug for AgentBox {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Agent")
    }
}

/// Why one attempt failed, and whether another may succeed.
struct Attempt {
    failure: GatewayFailure,
    retry: bool,
    retry_after: Option<Duration>,
}

impl ConfiguredGateway {
    /// The gateway `config` (already validated) describes; its key is read from the
    /// environment now, so a variable that is not set fails the open, naming the variable.
    pub fn from_config(config: &ModelGatewayConfig) -> Result<ConfiguredGateway> {
        Client::from_config(config).map(|client| ConfiguredGateway(Arc::new(client)))
    }
}

impl Client {
    fn from_config(config: &ModelGatewayConfig) -> Result<Client> {
        let provider = match config.provider.as_str() {
            "anthropic" => Provider::Anthropic,
            "ollama" => Provider::Ollama,
            _ => Provider::OpenAiCompatible,
        };
        let base = config.base_url().ok_or_else(|| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                "model_gateway.base_url is needed",
            )
        })?;
        let base = base.trim_end_matches('/');
        let endpoint = match provider {
            Provider::Anthropic => format!("{base}/v1/messages"),
            _ => format!("{base}/chat/completions"),
        };
        let key = match &config.api_key_env {
            None => None,
            Some(name) => match std::env::var(name) {
                Ok(key) if !key.trim().is_empty() => Some(Secret(key.trim().to_string())),
                _ => {
                    return Err(WsfsError::new(
                        ErrorCode::InvalidArguments,
                        format!(
                            "model_gateway.api_key_env names {name}, which is not set (or empty) \
                             in this process's environment: export it, or leave api_key_env out \
                             for a provider that needs no key"
                        ),
                    ))
                }
            },
        };
        // Validated: plain http is only ever to a loopback host.
        let loopback = base.starts_with("http://");
        let mut agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            // A redirect could carry the key elsewhere: a 3xx is the provider's error.
            .max_redirects(0)
            .user_agent("wsfs-model-gateway");
        if loopback {
            // A proxy from the environment is for the network, not for this machine.
            agent = agent.proxy(None);
        }
        Ok(Client {
            provider,
            endpoint,
            model: config.model.clone(),
            key,
            timeout: Duration::from_millis(config.timeout_ms),
            max_retries: config.max_retries,
            agent: AgentBox(agent.build().new_agent()),
        })
    }

    fn body(&self, req: &ToolRequest) -> Value {
        match self.provider {
            Provider::Anthropic => {
                let mut body = json!({
                    "model": self.model,
                    "max_tokens": req.max_output_tokens.unwrap_or(ANTHROPIC_DEFAULT_MAX_TOKENS),
                    "messages": [{"role": "user", "content": req.prompt}],
                });
                if let Some(system) = &req.system {
                    body["system"] = json!(system);
                }
                body
            }
            _ => {
                let mut messages = Vec::new();
                if let Some(system) = &req.system {
                    messages.push(json!({"role": "system", "content": system}));
                }
                messages.push(json!({"role": "user", "content": req.prompt}));
                let mut body = json!({"model": self.model, "messages": messages, "stream": false});
                if let Some(max) = req.max_output_tokens {
                    body["max_tokens"] = json!(max);
                }
                body
            }
        }
    }

    /// Who answered, for messages: the provider and its endpoint (never the key).
    fn who(&self) -> String {
        format!("{} at {}", self.provider.name(), self.endpoint)
    }

    /// `message` with the key, should a provider have echoed it, taken out.
    fn redact(&self, message: String) -> String {
        match &self.key {
            Some(Secret(key)) if message.contains(key.as_str()) => {
                message.replace(key.as_str(), "[redacted]")
            }
            _ => message,
        }
    }

    fn failure(&self, code: ErrorCode, message: String) -> GatewayFailure {
        GatewayFailure::new(code, self.redact(message))
    }

    fn attempt(&self, body: &str, left: Duration) -> std::result::Result<Value, Attempt> {
        let mut request = self
            .agent
            .0
            .post(&self.endpoint)
            .config()
            .timeout_global(Some(left))
            .build()
            .header("content-type", "application/json");
        match (&self.key, self.provider) {
            (Some(Secret(key)), Provider::Anthropic) => {
                request = request.header("x-api-key", key.as_str());
            }
            (Some(Secret(key)), _) => {
                request = request.header("authorization", &format!("Bearer {key}"));
            }
            (None, _) => {}
        }
        if self.provider == Provider::Anthropic {
            request = request.header("anthropic-version", ANTHROPIC_VERSION);
        }
        let mut response = request.send(body).map_err(|e| self.transport_failure(e))?;
        let status = response.status().as_u16();
        let retry_after = response
            .headers()
            .get("retry-after")
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.trim().parse::<u64>().ok())
            .map(Duration::from_secs);
        let text = response
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES)
            .read_to_string()
            .map_err(|e| self.transport_failure(e))?;
        if !(200..300).contains(&status) {
            let retry = status == 429 || status >= 500;
            let detail = provider_error_text(&text);
            return Err(Attempt {
                failure: self.failure(
                    ErrorCode::GatewayError,
                    format!("{} answered HTTP {status}{detail}", self.who()),
                ),
                retry,
                retry_after,
            });
        }
        let value: Value = serde_json::from_str(&text).map_err(|e| Attempt {
            failure: self.failure(
                ErrorCode::GatewayError,
                format!(
                    "{} answered HTTP {status} with a body that is not JSON ({e})",
                    self.who()
                ),
            ),
            retry: false,
            retry_after: None,
        })?;
        self.answer(&value).map_err(|failure| Attempt {
            failure,
            retry: false,
            retry_after: None,
        })
    }

    fn transport_failure(&self, e: ureq::Error) -> Attempt {
        let (code, retry, what) = match &e {
            ureq::Error::Timeout(_) => (ErrorCode::Timeout, false, "did not answer in time"),
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::TimedOut => {
                (ErrorCode::Timeout, false, "did not answer in time")
            }
            ureq::Error::Io(io) if io.kind() == std::io::ErrorKind::WouldBlock => {
                (ErrorCode::Timeout, false, "did not answer in time")
            }
            ureq::Error::ConnectionFailed | ureq::Error::HostNotFound => {
                (ErrorCode::GatewayError, true, "could not be reached")
            }
            ureq::Error::Io(_) => (ErrorCode::GatewayError, true, "failed"),
            ureq::Error::BodyExceedsLimit(_) => (
                ErrorCode::GatewayError,
                false,
                "answered with more than 4 MiB",
            ),
            _ => (ErrorCode::GatewayError, false, "failed"),
        };
        Attempt {
            failure: self.failure(code, format!("{} {what} ({e})", self.who())),
            retry,
            retry_after: None,
        }
    }

    /// The tool's answer from the provider's JSON.
    fn answer(&self, value: &Value) -> std::result::Result<Value, GatewayFailure> {
        let shape = |expected: &str| {
            self.failure(
                ErrorCode::GatewayError,
                format!(
                    "{} answered JSON of an unexpected shape: expected {expected}",
                    self.who()
                ),
            )
        };
        let model = value
            .get("model")
            .and_then(Value::as_str)
            .unwrap_or(&self.model)
            .to_string();
        let (text, reason) = match self.provider {
            Provider::Anthropic => {
                let blocks = value
                    .get("content")
                    .and_then(Value::as_array)
                    .ok_or_else(|| shape("{\"content\": [{\"type\": \"text\", \"text\"}]}"))?;
                let text: String = blocks
                    .iter()
                    .filter(|b| b.get("type").and_then(Value::as_str) == Some("text"))
                    .filter_map(|b| b.get("text").and_then(Value::as_str))
                    .collect();
                let reason = match value.get("stop_reason").and_then(Value::as_str) {
                    Some("end_turn" | "stop_sequence") => "stop",
                    Some("max_tokens") => "length",
                    Some("tool_use") => "tool-calls",
                    Some("refusal") => "content-filter",
                    Some(_) => "other",
                    None => "unknown",
                };
                (text, reason)
            }
            _ => {
                let choice = value
                    .get("choices")
                    .and_then(|c| c.get(0))
                    .ok_or_else(|| shape("{\"choices\": [{\"message\": {\"content\"}}]}"))?;
                let text = choice
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_str)
                    .ok_or_else(|| shape("choices[0].message.content, a string"))?;
                let reason = match choice.get("finish_reason").and_then(Value::as_str) {
                    Some("stop") => "stop",
                    Some("length") => "length",
                    Some("tool_calls" | "function_call") => "tool-calls",
                    Some("content_filter") => "content-filter",
                    Some(_) => "other",
                    None => "unknown",
                };
                (text.to_string(), reason)
            }
        };
        Ok(json!({"text": text, "finish_reason": reason, "model": model}))
    }
}

/// ": <the provider's own message>" from an error body, briefly, or nothing.
fn provider_error_text(body: &str) -> String {
    let value: Option<Value> = serde_json::from_str(body).ok();
    let message = value.as_ref().and_then(|v| {
        let error = v.get("error")?;
        error
            .get("message")
            .and_then(Value::as_str)
            .or_else(|| error.as_str())
            .map(str::to_string)
    });
    match message {
        Some(m) if !m.trim().is_empty() => {
            let m: String = m.chars().take(300).collect();
            format!(": {m}")
        }
        _ => String::new(),
    }
}

/// The wait before retry number `retry` (0 first).
fn backoff(retry: u32) -> Duration {
    FIRST_BACKOFF
        .saturating_mul(1u32 << retry.min(16))
        .min(MAX_BACKOFF)
}

/// How often a waiting call looks whether its caller gave up.
const CANCEL_POLL: Duration = Duration::from_millis(20);

/// Waits up to `wait`, returning early (true) when `cancelled` says so.
fn wait_unless_cancelled(wait: Duration, cancelled: &dyn Fn() -> bool) -> bool {
    let until = Instant::now() + wait;
    loop {
        if cancelled() {
            return true;
        }
        let left = until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return false;
        }
        std::thread::sleep(left.min(CANCEL_POLL));
    }
}

impl ConfiguredGateway {
    /// One attempt on a thread of its own; `None` when the caller gave up first.
    fn attempt_watched(
        &self,
        body: &Arc<str>,
        left: Duration,
        cancelled: &dyn Fn() -> bool,
    ) -> Option<std::result::Result<Value, Attempt>> {
        let (tx, rx) = mpsc::channel();
        let (client, sent) = (self.0.clone(), body.clone());
        let spawned = std::thread::Builder::new()
            .name("wsfs-model-gateway".into())
            .spawn(move || {
                // The receiver is gone when the caller gave up: nothing to tell.
                let _ = tx.send(client.attempt(&sent, left));
            });
        if spawned.is_err() {
            // No thread to spare: the attempt runs here, bounded by the deadline all the same.
            return Some(self.0.attempt(body.as_ref(), left));
        }
        loop {
            match rx.recv_timeout(CANCEL_POLL) {
                Ok(outcome) => return Some(outcome),
                Err(mpsc::RecvTimeoutError::Timeout) if cancelled() => return None,
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => {
                    return Some(Err(Attempt {
                        failure: self.0.failure(
                            ErrorCode::GatewayError,
                            format!("{} failed (the request's thread ended)", self.0.who()),
                        ),
                        retry: false,
                        retry_after: None,
                    }))
                }
            }
        }
    }
}

impl ModelGateway for ConfiguredGateway {
    fn generate(
        &self,
        request_json: &str,
        deadline: Instant,
    ) -> std::result::Result<String, GatewayFailure> {
        self.generate_cancellable(request_json, deadline, &|| false)
    }

    fn generate_cancellable(
        &self,
        request_json: &str,
        deadline: Instant,
        cancelled: &dyn Fn() -> bool,
    ) -> std::result::Result<String, GatewayFailure> {
        let client = &self.0;
        let request: ToolRequest = serde_json::from_str(request_json).map_err(|e| {
            GatewayFailure::new(
                ErrorCode::InvalidArguments,
                format!(
                    "model_generate: {e}; the configured gateway takes {{\"prompt\": string, \
                     \"system\"?: string, \"max_output_tokens\"?: integer}}"
                ),
            )
        })?;
        let body: Arc<str> = client.body(&request).to_string().into();
        let started = Instant::now();
        let deadline = deadline.min(started + client.timeout);
        let gave_up = || {
            client.failure(
                ErrorCode::Cancelled,
                format!("the call was cancelled while {} worked", client.who()),
            )
        };
        let mut attempts = 0u32;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(client.failure(
                    ErrorCode::Timeout,
                    format!("{} did not answer in time", client.who()),
                ));
            }
            attempts += 1;
            let failed = match self.attempt_watched(&body, left, cancelled) {
                None => return Err(gave_up()),
                // Even a provider that echoes the key does not pass it to the tool.
                Some(Ok(answer)) => return Ok(client.redact(answer.to_string())),
                Some(Err(failed)) => failed,
            };
            log::debug!(
                target: "wsfs",
                "model gateway attempt failed: provider={} attempt={attempts} code={}",
                client.provider.name(),
                failed.failure.code.as_str()
            );
            if !failed.retry || attempts > client.max_retries {
                let mut failure = failed.failure;
                if attempts > 1 {
                    failure
                        .message
                        .push_str(&format!(" (after {attempts} attempts)"));
                }
                return Err(failure);
            }
            let wait = failed.retry_after.unwrap_or_else(|| backoff(attempts - 1));
            if Instant::now() + wait >= deadline {
                let mut failure = failed.failure;
                let tried = match attempts {
                    1 => String::new(),
                    n => format!("after {n} attempts; "),
                };
                failure.message.push_str(&format!(
                    " ({tried}the next attempt, in {} ms, would be past the deadline)",
                    wait.as_millis()
                ));
                return Err(failure);
            }
            if wait_unless_cancelled(wait, cancelled) {
                return Err(gave_up());
            }
        }
    }
}

#[cfg(test)]
#[path = "provider_tests.rs"]
mod tests;
