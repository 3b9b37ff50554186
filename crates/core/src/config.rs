//! Workspace configuration: parsing, defaults and root resolution.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::guard::policy::PolicyConfig;
use serde::{Deserialize, Serialize};

/// Per-workspace bounds applied to every call.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Eq)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    pub max_read_bytes: u64,
    pub max_write_bytes: u64,
    pub max_list_entries: u64,
    pub operation_timeout_ms: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_read_bytes: 256 * 1024,
            max_write_bytes: 1024 * 1024,
            max_list_entries: 500,
            operation_timeout_ms: 10_000,
        }
    }
}

/// Hard ceilings on the limits themselves, so one config cannot ask for unbounded memory.
const CEILING_BYTES: u64 = 1 << 30;
const CEILING_ENTRIES: u64 = 1_000_000;
const CEILING_TIMEOUT_MS: u64 = 24 * 3600 * 1000;

impl Limits {
    /// Refuses `len` bytes over `max_write_bytes`; `hint` tells the model what to do instead.
    pub fn check_write(&self, len: u64, what: &str, hint: &str) -> Result<()> {
        let max = self.max_write_bytes;
        if len > max {
            return Err(WsfsError::new(
                ErrorCode::TooLarge,
                format!("{what} is {len} bytes; the limit is max_write_bytes = {max}. {hint}"),
            ));
        }
        Ok(())
    }

    /// A limit by its configuration name (`max_read_bytes`, ...).
    pub fn get(&self, name: &str) -> Option<u64> {
        match name {
            "max_read_bytes" => Some(self.max_read_bytes),
            "max_write_bytes" => Some(self.max_write_bytes),
            "max_list_entries" => Some(self.max_list_entries),
            "operation_timeout_ms" => Some(self.operation_timeout_ms),
            _ => None,
        }
    }

    fn validate(&self) -> Result<()> {
        let checks = [
            ("max_read_bytes", self.max_read_bytes, CEILING_BYTES),
            ("max_write_bytes", self.max_write_bytes, CEILING_BYTES),
            ("max_list_entries", self.max_list_entries, CEILING_ENTRIES),
            (
                "operation_timeout_ms",
                self.operation_timeout_ms,
                CEILING_TIMEOUT_MS,
            ),
        ];
        for (name, value, ceiling) in checks {
            if value == 0 || value > ceiling {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("limits.{name} must be between 1 and {ceiling}, got {value}"),
                ));
            }
        }
        Ok(())
    }
}

/// The JSON accepted by `wsfs_workspace_open`.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Config {
    pub root: String,
    /// Whether a missing root is made (with its parents) at open. Default false: a missing root
    /// is `path_not_found` naming the path, so a typo'd root is not silently turned into an
    /// empty workspace. Hosts whose root is theirs to make (MiniClaw's default workspace) set it.
    #[serde(default)]
    pub create_root: bool,
    #[serde(default = "default_true")]
    pub restrict_to_workspace: bool,
    #[serde(default, deserialize_with = "limits_object")]
    pub limits: Limits,
    /// Where wsfs keeps its state (the journals of multi-file patches): a directory outside
    /// the workspace. Default `$XDG_STATE_HOME/wsfs`, else `~/.local/state/wsfs`.
    #[serde(default)]
    pub state_dir: Option<String>,
    /// What the agent may read and change, and the audit log (see `policy`).
    #[serde(default, deserialize_with = "policy_object")]
    pub policy: PolicyConfig,
    /// The tools as one host expects them (names, arguments, results, codes, envelope): a
    /// profile's name, checked at the ABI edge where profiles live. Default `wsfs`, the native
    /// tools.
    #[serde(default = "default_profile")]
    pub profile: String,
    /// Folders of Wasm tools to load (host paths): each a tool folder (`manifest.json` beside
    /// `module.wasm` or `module.wat`) or a folder of them. See docs/TOOL_AUTHORING.md.
    #[serde(default)]
    pub wasm_tools: Vec<String>,
    /// The most any Wasm tool of this workspace may have (see [`WasmPolicy`]).
    #[serde(default, deserialize_with = "wasm_policy_object")]
    pub wasm_policy: WasmPolicy,
    /// `host` (the default): the tools change the workspace in place. `overlay`: the root is
    /// the read-only base, and every change goes to the session `session` (kept in the state
    /// directory) until the host commits it. See docs/sessions.md.
    #[serde(default)]
    pub mode: Mode,
    /// The overlay session's name (`overlay` mode only): opening the same name again
    /// continues it. Default `default`.
    #[serde(default)]
    pub session: Option<String>,
    /// Overlay mode: a view older than this many milliseconds is mounted afresh by the next
    /// call that starts while no other runs, so changes made to the base outside the session
    /// show (the kernel caches the base's names). Default 1000; 0: before every such call.
    #[serde(default)]
    pub session_refresh_ms: Option<u64>,
    /// The model gateway the library itself provides to the Wasm tools (`model_access`), for a
    /// host that sets no gateway callback; a callback the host sets takes precedence. See
    /// [`ModelGatewayConfig`] and docs/model-gateway.md.
    #[serde(default, deserialize_with = "model_gateway_object")]
    pub model_gateway: Option<ModelGatewayConfig>,
}

/// Where a workspace's changes go.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    /// In place, in the workspace root.
    #[default]
    Host,
    /// Into an overlay session over the root (the base), which stays unchanged until a commit.
    Overlay,
}

/// The session name used when an overlay workspace's config gives none.
pub const DEFAULT_SESSION: &str = "default";

/// The host's ceiling for the Wasm tools a workspace loads: a manifest asking for more is
/// refused at load (`capability_denied`), and each limit is the default of a manifest that
/// asks for none.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WasmPolicy {
    /// Longest run (`TOOL_TIMEOUT_SECS` in the loaders). A call's own deadline still applies.
    pub timeout_ms: u64,
    /// Most linear memory (`TOOL_MEMORY_MB`).
    pub memory_mb: u64,
    /// Most fuel (instructions, roughly) one run may use.
    pub fuel: u64,
    /// Whether tools with the `network` capability may reach their `allowed_hosts`
    /// (`TOOL_ALLOW_DIRECT_NETWORK`); off by default.
    pub allow_direct_network: bool,
    /// Whether tools may ask for `model_access` (the gateway the host sets).
    pub allow_model_access: bool,
    /// The most workspace access a tool may ask for: `none`, `read` or `write` (the
    /// workspace's own policy applies on top).
    pub filesystem: String,
    /// Environment variables of the host process a tool may ask to see.
    pub allowed_env: Vec<String>,
    /// The engine that runs the tools: `wasmi` (the default, an interpreter) or `wasmtime` (a
    /// JIT, only in a library built with the cargo feature `wasmtime`). Same manifests, limits,
    /// WASI and host functions; see docs/PERFORMANCE.md for what each costs.
    pub engine: String,
}

impl Default for WasmPolicy {
    fn default() -> Self {
        WasmPolicy {
            timeout_ms: 30_000,
            memory_mb: 64,
            fuel: 10_000_000_000,
            allow_direct_network: false,
            allow_model_access: true,
            filesystem: "write".to_string(),
            allowed_env: Vec::new(),
            engine: "wasmi".to_string(),
        }
    }
}

/// wasm32's whole address space.
const CEILING_WASM_MEMORY_MB: u64 = 4096;

impl WasmPolicy {
    fn validate(&self) -> Result<()> {
        let checks = [
            ("timeout_ms", self.timeout_ms, CEILING_TIMEOUT_MS),
            ("memory_mb", self.memory_mb, CEILING_WASM_MEMORY_MB),
            ("fuel", self.fuel, u64::MAX),
        ];
        for (name, value, ceiling) in checks {
            if value == 0 || value > ceiling {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("wasm_policy.{name} must be between 1 and {ceiling}, got {value}"),
                ));
            }
        }
        if !["none", "read", "write"].contains(&self.filesystem.as_str()) {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "wasm_policy.filesystem must be none, read or write, got {:?}",
                    self.filesystem
                ),
            ));
        }
        match self.engine.as_str() {
            "wasmi" => {}
            "wasmtime" if cfg!(feature = "wasmtime") => {}
            "wasmtime" => {
                return Err(crate::error::feature_not_built(
                    "wasmtime",
                    "wasm_policy.engine \"wasmtime\"",
                ))
            }
            other => {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("wasm_policy.engine must be wasmi or wasmtime, got {other:?}"),
                ))
            }
        }
        Ok(())
    }
}

/// The configured model gateway (`model_gateway`; the loaders' `MODEL_*` environment variables):
/// which provider, where, with which key and model. The key itself is never in the
/// configuration: `api_key_env` names the environment variable that holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelGatewayConfig {
    /// `openai-compatible`, `anthropic` or `ollama` (`MODEL_PROVIDER`).
    pub provider: String,
    /// Where the provider's API is (`MODEL_BASE_URL`): `https://`, or `http://` to a loopback
    /// host only. Default: `https://api.anthropic.com` (anthropic), `http://localhost:11434/v1`
    /// (ollama); openai-compatible needs one.
    #[serde(default)]
    pub base_url: Option<String>,
    /// The name of the environment variable holding the API key (`MODEL_API_KEY_ENV`); none:
    /// no key is sent.
    #[serde(default)]
    pub api_key_env: Option<String>,
    /// The model's name, as the provider knows it (`MODEL_NAME`).
    pub model: String,
    /// Longest one model call may take, retries included (`MODEL_TIMEOUT_SECS`); the tool
    /// call's own deadline still applies.
    #[serde(default = "default_model_timeout_ms")]
    pub timeout_ms: u64,
    /// How many times a 429 or 5xx answer (or a refused connection) is retried, with backoff.
    #[serde(default = "default_model_retries")]
    pub max_retries: u32,
}

/// The providers `model_gateway.provider` names.
pub const MODEL_PROVIDERS: &[&str] = &["openai-compatible", "anthropic", "ollama"];

/// The most retries `model_gateway.max_retries` may ask for.
pub const CEILING_MODEL_RETRIES: u32 = 10;

fn default_model_timeout_ms() -> u64 {
    60_000
}

fn default_model_retries() -> u32 {
    2
}

impl ModelGatewayConfig {
    /// The base URL: the configured one, else the provider's default.
    pub fn base_url(&self) -> Option<&str> {
        match (&self.base_url, self.provider.as_str()) {
            (Some(url), _) => Some(url),
            (None, "anthropic") => Some("https://api.anthropic.com"),
            (None, "ollama") => Some("http://localhost:11434/v1"),
            (None, _) => None,
        }
    }

    fn validate(&self) -> Result<()> {
        let invalid = |m: String| Err(WsfsError::new(ErrorCode::InvalidArguments, m));
        if !MODEL_PROVIDERS.contains(&self.provider.as_str()) {
            return invalid(format!(
                "model_gateway.provider must be openai-compatible, anthropic or ollama, got {:?}",
                self.provider
            ));
        }
        if self.model.trim().is_empty() {
            return invalid(
                "model_gateway.model is empty: name the provider's model (MODEL_NAME)".into(),
            );
        }
        if self.timeout_ms == 0 || self.timeout_ms > CEILING_TIMEOUT_MS {
            return invalid(format!(
                "model_gateway.timeout_ms must be between 1 and {CEILING_TIMEOUT_MS}, got {}",
                self.timeout_ms
            ));
        }
        if self.max_retries > CEILING_MODEL_RETRIES {
            return invalid(format!(
                "model_gateway.max_retries must be at most {CEILING_MODEL_RETRIES}, got {}",
                self.max_retries
            ));
        }
        if let Some(name) = &self.api_key_env {
            // An environment variable's conventional name; a key (mixed case, `-`, long) is
            // not one, and is not echoed should it have been put here by mistake.
            let ok = name.len() <= 64
                && name
                    .bytes()
                    .next()
                    .is_some_and(|b| b.is_ascii_uppercase() || b == b'_')
                && name
                    .bytes()
                    .all(|b| b.is_ascii_uppercase() || b.is_ascii_digit() || b == b'_');
            if !ok {
                return invalid(
                    "model_gateway.api_key_env must be the NAME of an environment variable \
                     (such as OPENAI_API_KEY: uppercase letters, digits and _, at most 64), and \
                     what it holds is not one; the key itself never goes in the configuration"
                        .into(),
                );
            }
        }
        let Some(url) = self.base_url() else {
            return invalid(
                "model_gateway.base_url is needed for openai-compatible (MODEL_BASE_URL, such as \
                 https://api.openai.com/v1)"
                    .into(),
            );
        };
        check_model_url(url)?;
        if !cfg!(feature = "model-gateway-http") {
            return Err(crate::error::feature_not_built(
                "model-gateway-http",
                "model_gateway",
            ));
        }
        Ok(())
    }
}

/// A base URL is `https://HOST[:PORT][/PATH]`, or `http://` to a loopback host (`localhost`,
/// `127.x.x.x`, `[::1]`): a key or a prompt never crosses a network in clear text.
pub fn check_model_url(url: &str) -> Result<()> {
    let invalid = |why: &str| {
        Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("model_gateway.base_url {url:?} {why}"),
        ))
    };
    let (https, rest) = match (url.strip_prefix("https://"), url.strip_prefix("http://")) {
        (Some(rest), _) => (true, rest),
        (None, Some(rest)) => (false, rest),
        (None, None) => return invalid("must start with https:// (or http:// to a loopback host)"),
    };
    let authority = rest.split(['/', '?', '#']).next().unwrap_or("");
    if authority.contains('@') {
        return invalid("must not hold user info; name the key's variable in api_key_env");
    }
    if rest.contains(['?', '#']) || url.bytes().any(|b| b.is_ascii_control() || b == b' ') {
        return invalid("must be a plain base URL, without a query, fragment or spaces");
    }
    let host = match authority.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some((host, port)) if port.is_empty() || port.starts_with(':') => host,
            _ => return invalid("has a malformed IPv6 host"),
        },
        None => authority.split(':').next().unwrap_or(""),
    };
    let port = authority.rsplit_once("]:").map(|(_, p)| p).or_else(|| {
        (!authority.starts_with('['))
            .then(|| authority.split_once(':').map(|(_, p)| p))
            .flatten()
    });
    if host.is_empty() || port.is_some_and(|p| p.parse::<u16>().is_err()) {
        return invalid("has no valid host[:port]");
    }
    let loopback = host.eq_ignore_ascii_case("localhost")
        || host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !https && !loopback {
        return invalid(
            "is plain http to a host that is not loopback: use https:// (http:// is for \
             localhost, 127.0.0.1 or [::1] only)",
        );
    }
    Ok(())
}

fn default_true() -> bool {
    true
}

fn default_profile() -> String {
    "wsfs".to_string()
}

impl Config {
    pub fn from_json(json: &str) -> Result<Config> {
        let config: Config = crate::json::parse_object(json).map_err(|e| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("invalid workspace config: {e}"),
            )
        })?;
        config.limits.validate()?;
        config.policy.validate()?;
        config.wasm_policy.validate()?;
        if let Some(gateway) = &config.model_gateway {
            gateway.validate()?;
        }
        if let Some(empty) = config.wasm_tools.iter().find(|f| f.trim().is_empty()) {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("wasm_tools holds an empty folder name ({empty:?})"),
            ));
        }
        config.check_mode()?;
        Ok(config)
    }
}

impl Config {
    /// The overlay session's name, when the workspace is in overlay mode.
    pub fn session_name(&self) -> Option<&str> {
        (self.mode == Mode::Overlay).then(|| self.session.as_deref().unwrap_or(DEFAULT_SESSION))
    }

    /// `session` belongs to overlay mode, and an overlay confines to its root.
    pub fn check_mode(&self) -> Result<()> {
        let invalid = |m: &str| Err(WsfsError::new(ErrorCode::InvalidArguments, m.to_string()));
        match self.mode {
            Mode::Host if self.session.is_some() || self.session_refresh_ms.is_some() => invalid(
                "session and session_refresh_ms are for overlay sessions, but mode is host: set \
                 \"mode\": \"overlay\" (or drop them)",
            ),
            Mode::Overlay
                if self
                    .session_refresh_ms
                    .is_some_and(|ms| ms > CEILING_TIMEOUT_MS) =>
            {
                invalid("session_refresh_ms must be at most 86400000 (a day)")
            }
            Mode::Overlay if !self.restrict_to_workspace => invalid(
                "mode overlay needs restrict_to_workspace: true (the session is a view of the \
                 workspace root, and nothing outside it can be overlaid)",
            ),
            #[cfg(feature = "overlay")]
            Mode::Overlay => {
                crate::overlay::check_name(self.session.as_deref().unwrap_or(DEFAULT_SESSION))
            }
            #[cfg(not(feature = "overlay"))]
            Mode::Overlay => Err(crate::error::feature_not_built(
                "overlay",
                "\"mode\": \"overlay\"",
            )),
            Mode::Host => Ok(()),
        }
    }
}

/// `limits` must be an object too (serde would take an array positionally).
fn limits_object<'de, D: serde::Deserializer<'de>>(de: D) -> std::result::Result<Limits, D::Error> {
    object_field(de, "limits")
}

/// `wasm_policy` likewise.
fn wasm_policy_object<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> std::result::Result<WasmPolicy, D::Error> {
    object_field(de, "wasm_policy")
}

/// `model_gateway` likewise (and `null` is no gateway).
fn model_gateway_object<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> std::result::Result<Option<ModelGatewayConfig>, D::Error> {
    object_field(de, "model_gateway").map(Some)
}

/// `policy` likewise.
fn policy_object<'de, D: serde::Deserializer<'de>>(
    de: D,
) -> std::result::Result<PolicyConfig, D::Error> {
    object_field(de, "policy")
}

fn object_field<'de, D: serde::Deserializer<'de>, T: serde::de::DeserializeOwned>(
    de: D,
    name: &str,
) -> std::result::Result<T, D::Error> {
    let value = serde_json::Value::deserialize(de)?;
    if !value.is_object() {
        return Err(serde::de::Error::custom(format!(
            "{name} must be a JSON object"
        )));
    }
    serde_json::from_value(value).map_err(|e| serde::de::Error::custom(format!("{name}: {e}")))
}

impl Config {
    #[cfg(test)]
    fn rejects(json: &str) -> bool {
        Config::from_json(json).is_err()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_apply() {
        let c = Config::from_json(r#"{"root":"/tmp/x"}"#).unwrap();
        assert!(c.restrict_to_workspace);
        assert_eq!(c.profile, "wsfs");
        assert_eq!(c.limits, Limits::default());
        assert_eq!(c.limits.max_read_bytes, 262144);
    }

    #[test]
    fn partial_limits_keep_other_defaults() {
        let c = Config::from_json(r#"{"root":"/x","limits":{"max_list_entries":7}}"#).unwrap();
        assert_eq!(c.limits.max_list_entries, 7);
        assert_eq!(c.limits.max_write_bytes, 1048576);
    }

    #[test]
    fn rejects_unknown_fields_and_zero_limits() {
        let e = Config::from_json(r#"{"root":"/x","rot":1}"#).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(e.message.contains("rot"), "{}", e.message);
        let e = Config::from_json(r#"{"root":"/x","limits":{"max_read_bytes":0}}"#).unwrap_err();
        assert!(e.message.contains("max_read_bytes"));
    }

    /// A misspelt key must fail the open, naming the key and every key that is known there: a
    /// typo such as `deny_reed` would otherwise silently drop a deny rule.
    #[test]
    fn unknown_keys_are_named_with_the_known_ones() {
        let keys = |value: serde_json::Value| -> Vec<String> {
            value.as_object().unwrap().keys().cloned().collect()
        };
        let limits = keys(serde_json::to_value(Limits::default()).unwrap());
        let policy = keys(serde_json::to_value(PolicyConfig::default()).unwrap());
        let top = [
            "root",
            "create_root",
            "restrict_to_workspace",
            "limits",
            "state_dir",
            "policy",
            "profile",
            "wasm_tools",
            "wasm_policy",
        ]
        .map(String::from)
        .to_vec();
        let cases = [
            (r#"{"root":"/x","roots":"/y"}"#, "roots", &top),
            (
                r#"{"root":"/x","limits":{"max_read":1}}"#,
                "max_read",
                &limits,
            ),
            (
                r#"{"root":"/x","policy":{"deny_reed":[".env"]}}"#,
                "deny_reed",
                &policy,
            ),
        ];
        for (json, key, known) in cases {
            let e = Config::from_json(json).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArguments, "{json}");
            assert!(
                e.message.contains(&format!("`{key}`")),
                "{json}: {}",
                e.message
            );
            for name in known {
                assert!(
                    e.message.contains(&format!("`{name}`")),
                    "{json}: {}",
                    e.message
                );
            }
        }
    }

    /// The library's configuration has no comment keys: `_comment` is as unknown as any other
    /// key, at every level (MiniClaw's `_comment` keys stay in its own file; see docs/configuration.md).
    #[test]
    fn comment_keys_are_unknown_keys() {
        for json in [
            r#"{"root":"/x","_comment":"a workspace"}"#,
            r#"{"root":"/x","limits":{"_comment":"bounds"}}"#,
            r#"{"root":"/x","policy":{"_comment":"rules"}}"#,
        ] {
            let e = Config::from_json(json).unwrap_err();
            assert!(
                e.message.contains("unknown field `_comment`"),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn wasm_tools_and_their_policy_are_strict() {
        let c = Config::from_json(
            r#"{"root":"/x","wasm_tools":["/t"],"wasm_policy":{"memory_mb":8,"filesystem":"read"}}"#,
        )
        .unwrap();
        assert_eq!(c.wasm_tools, ["/t"]);
        assert_eq!(c.wasm_policy.memory_mb, 8);
        assert_eq!(c.wasm_policy.timeout_ms, WasmPolicy::default().timeout_ms);
        for bad in [
            r#"{"root":"/x","wasm_tools":"/t"}"#,
            r#"{"root":"/x","wasm_tools":[""]}"#,
            r#"{"root":"/x","wasm_tools":[1]}"#,
            r#"{"root":"/x","wasm_policy":[]}"#,
            r#"{"root":"/x","wasm_policy":{"memory":8}}"#,
            r#"{"root":"/x","wasm_policy":{"memory_mb":0}}"#,
            r#"{"root":"/x","wasm_policy":{"memory_mb":5000}}"#,
            r#"{"root":"/x","wasm_policy":{"filesystem":"all"}}"#,
            r#"{"root":"/x","wasm_policy":{"allow_direct_network":"yes"}}"#,
        ] {
            assert!(Config::rejects(bad), "{bad}");
        }
    }

    #[test]
    fn model_gateway_is_strict_and_names_the_key() {
        let c = Config::from_json(
            r#"{"root":"/x","model_gateway":{"provider":"ollama","model":"llama3.2"}}"#,
        );
        if cfg!(feature = "model-gateway-http") {
            let c = c.unwrap();
            let g = c.model_gateway.unwrap();
            assert_eq!(g.base_url(), Some("http://localhost:11434/v1"));
            assert_eq!(g.timeout_ms, 60_000);
            assert_eq!(g.max_retries, 2);
        } else {
            assert_eq!(c.unwrap_err().code, ErrorCode::FeatureNotBuilt);
        }
        let gw =
            |extra: &str| format!(r#"{{"root":"/x","model_gateway":{{"model":"m",{extra}}}}}"#);
        for (extra, key) in [
            (r#""provider":"openai""#, "model_gateway.provider"),
            (
                r#""provider":"openai-compatible""#,
                "model_gateway.base_url",
            ),
            (
                r#""provider":"anthropic","base_url":"http://api.example.com""#,
                "model_gateway.base_url",
            ),
            (
                r#""provider":"anthropic","base_url":"ftp://localhost""#,
                "model_gateway.base_url",
            ),
            (
                r#""provider":"anthropic","base_url":"https://u:p@h.example""#,
                "model_gateway.base_url",
            ),
            (
                r#""provider":"ollama","base_url":"http://localhost:99999""#,
                "model_gateway.base_url",
            ),
            (
                r#""provider":"ollama","timeout_ms":0"#,
                "model_gateway.timeout_ms",
            ),
            (
                r#""provider":"ollama","max_retries":11"#,
                "model_gateway.max_retries",
            ),
            (
                r#""provider":"ollama","api_key_env":"sk-abc123""#,
                "model_gateway.api_key_env",
            ),
            (
                r#""provider":"ollama","api_key_env":"openai_api_key""#,
                "model_gateway.api_key_env",
            ),
            (r#""provider":"ollama","apikey":"x""#, "apikey"),
        ] {
            let e = Config::from_json(&gw(extra)).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArguments, "{extra}");
            assert!(e.message.contains(key), "{extra}: {}", e.message);
            // A key put where its variable's name goes is not echoed.
            assert!(!e.message.contains("sk-abc123"), "{}", e.message);
        }
        assert!(Config::rejects(r#"{"root":"/x","model_gateway":"ollama"}"#));
        let e =
            Config::from_json(r#"{"root":"/x","model_gateway":{"provider":"ollama","model":" "}}"#)
                .unwrap_err();
        assert!(e.message.contains("model_gateway.model"), "{}", e.message);
        for ok in [
            "http://127.0.0.1:8080/v1",
            "http://[::1]:11434",
            "http://LOCALHOST",
            "https://api.openai.com/v1",
        ] {
            assert!(check_model_url(ok).is_ok(), "{ok}");
        }
    }

    #[test]
    fn rejects_non_objects() {
        assert!(Config::rejects(r#"["/tmp/x"]"#));
        assert!(Config::rejects(r#"{"root":"/x","limits":[1,2,3,4]}"#));
        assert!(!Config::rejects(r#"{"root":"/x","limits":{}}"#));
    }
}
