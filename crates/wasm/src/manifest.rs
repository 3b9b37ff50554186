//! `manifest.json`: what a Wasm tool is, what it may do and how much it may use.
//!
//! ```json
//! {
//!   "name": "word_count",
//!   "version": "0.1.0",
//!   "description": "Counts the words of a text.",
//!   "input_schema": {"type": "object", "properties": {"text": {"type": "string",
//!                    "description": "The text"}}, "required": ["text"]},
//!   "module_sha256": "<64 hex digits of module.wasm or module.wat>",
//!   "capabilities": {"filesystem": "none", "model_access": false,
//!                    "network": {"allowed_hosts": ["api.example.com"]}, "env": ["LANG"]},
//!   "limits": {"timeout_ms": 5000, "memory_mb": 32, "fuel": 1000000000}
//! }
//! ```
//!
//! Unknown fields are refused everywhere, so a misspelt capability is an error rather than a
//! silent default. Validation ([`Manifest::validate`]) is `manifest_invalid`; asking for more
//! than the host allows ([`Manifest::limits_under`]) is `capability_denied`.

use super::policy::{FsCapability, ToolLimits, WasmCeiling, MIB};
use super::schema;
use crate::error::{ErrorCode, Result, WsfsError};
use serde::Deserialize;
use serde_json::Value;

/// Longest tool name: what the model providers accept for a function name.
pub const MAX_NAME_BYTES: usize = 64;
const MAX_DESCRIPTION_BYTES: usize = 8192;
const MAX_VERSION_BYTES: usize = 64;
const MAX_LIST_ITEMS: usize = 64;
const MAX_HOST_BYTES: usize = 253;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub version: String,
    pub description: String,
    /// The arguments' JSON Schema, in the subset [`schema`] supports.
    pub input_schema: Value,
    /// SHA-256 of the module file's bytes, lowercase hex.
    pub module_sha256: String,
    #[serde(default)]
    pub capabilities: Capabilities,
    #[serde(default)]
    pub limits: RequestedLimits,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Capabilities {
    #[serde(default)]
    pub filesystem: FsCapability,
    /// The `model_generate` host function, through the host's model gateway.
    #[serde(default)]
    pub model_access: bool,
    /// The `http_request` host function, to these hosts only (and only when the host allows
    /// direct network at all).
    #[serde(default)]
    pub network: Option<Network>,
    /// Environment variables the tool sees, from the host process, when the host allows them.
    #[serde(default)]
    pub env: Vec<String>,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Network {
    /// Host names (or `name:port`), matched without letter case. No wildcards.
    pub allowed_hosts: Vec<String>,
}

#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RequestedLimits {
    pub timeout_ms: Option<u64>,
    pub memory_mb: Option<u64>,
    pub fuel: Option<u64>,
}

fn invalid(message: impl Into<String>) -> WsfsError {
    WsfsError::new(ErrorCode::ManifestInvalid, message)
}

fn denied(message: impl Into<String>) -> WsfsError {
    WsfsError::new(ErrorCode::CapabilityDenied, message)
}

impl Manifest {
    /// Parses `manifest.json`'s text; `manifest_invalid` names what is wrong.
    pub fn parse(json: &str) -> Result<Manifest> {
        let manifest: Manifest = serde_json::from_str(json)
            .map_err(|e| invalid(format!("manifest.json is not a valid manifest: {e}")))?;
        manifest.validate()?;
        Ok(manifest)
    }

    /// Every field's own rules (not yet the host's).
    pub fn validate(&self) -> Result<()> {
        check_name(&self.name)?;
        let name = &self.name;
        let version = &self.version;
        if version.is_empty()
            || version.len() > MAX_VERSION_BYTES
            || version.chars().any(|c| c.is_whitespace() || c.is_control())
        {
            return Err(invalid(format!(
                "{name}: version must be 1 to {MAX_VERSION_BYTES} characters without spaces, \
                 such as \"0.1.0\""
            )));
        }
        if self.description.trim().is_empty() || self.description.len() > MAX_DESCRIPTION_BYTES {
            return Err(invalid(format!(
                "{name}: description must say what the tool does (1 to {MAX_DESCRIPTION_BYTES} \
                 bytes): the model reads it to decide when to call the tool"
            )));
        }
        schema::check_input_schema(&self.input_schema)
            .map_err(|e| invalid(format!("{name}: input_schema {e}")))?;
        let hash = &self.module_sha256;
        if hash.len() != 64 || !hash.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')) {
            return Err(invalid(format!(
                "{name}: module_sha256 must be the module file's SHA-256 as 64 lowercase hex \
                 digits (sha256sum module.wasm)"
            )));
        }
        self.capabilities.validate(name)?;
        self.limits.validate(name)
    }

    /// The limits the tool runs under, or `capability_denied` when the manifest asks for more
    /// than `host` allows (a capability, or a limit over the host's ceiling).
    pub fn limits_under(&self, host: &WasmCeiling) -> Result<ToolLimits> {
        let name = &self.name;
        let caps = &self.capabilities;
        if caps.filesystem > host.filesystem {
            return Err(denied(format!(
                "{name} asks for filesystem \"{}\" but the host allows at most \"{}\"; the tool \
                 was not loaded. Lower capabilities.filesystem, or ask the host to allow it",
                caps.filesystem.as_str(),
                host.filesystem.as_str()
            )));
        }
        if caps.model_access && !host.allow_model_access {
            return Err(denied(format!(
                "{name} asks for model_access but the host gives tools no model access; the \
                 tool was not loaded"
            )));
        }
        if caps.network.is_some() && !host.allow_direct_network {
            return Err(denied(format!(
                "{name} asks for network access but the host does not allow direct network \
                 (TOOL_ALLOW_DIRECT_NETWORK is off); the tool was not loaded. Use the model \
                 gateway (model_access) for model calls"
            )));
        }
        if let Some(var) = caps.env.iter().find(|v| !host.allowed_env.contains(v)) {
            return Err(denied(format!(
                "{name} asks for the environment variable {var}, which the host does not pass \
                 to tools; the tool was not loaded"
            )));
        }
        let requested = self.limits;
        let ceiling = |what: &str, asked: Option<u64>, max: u64| match asked {
            Some(asked) if asked > max => Err(denied(format!(
                "{name} asks for limits.{what} = {asked}, over the host's limit of {max}; the \
                 tool was not loaded. Ask for at most {max}"
            ))),
            Some(asked) => Ok(asked),
            None => Ok(max),
        };
        let timeout_ms = ceiling("timeout_ms", requested.timeout_ms, host.max_timeout_ms)?;
        let memory_mb = ceiling("memory_mb", requested.memory_mb, host.max_memory_mb)?;
        let fuel = ceiling("fuel", requested.fuel, host.max_fuel)?;
        Ok(ToolLimits {
            timeout_ms,
            memory_bytes: memory_mb.saturating_mul(MIB),
            fuel,
            max_output_bytes: host.max_output_bytes,
        })
    }
}

/// Tool names: lowercase letters, digits and `_`, starting with a letter, as every model
/// provider accepts them.
pub fn check_name(name: &str) -> Result<()> {
    let ok = !name.is_empty()
        && name.len() <= MAX_NAME_BYTES
        && name.as_bytes()[0].is_ascii_lowercase()
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_');
    if !ok {
        let shown: String = name.chars().take(MAX_NAME_BYTES).collect();
        return Err(invalid(format!(
            "name {shown:?} must be 1 to {MAX_NAME_BYTES} lowercase letters, digits or '_', \
             starting with a letter"
        )));
    }
    Ok(())
}

impl Capabilities {
    fn validate(&self, name: &str) -> Result<()> {
        if let Some(network) = &self.network {
            let hosts = &network.allowed_hosts;
            if hosts.is_empty() || hosts.len() > MAX_LIST_ITEMS {
                return Err(invalid(format!(
                    "{name}: capabilities.network.allowed_hosts must list 1 to {MAX_LIST_ITEMS} \
                     hosts; leave network out for a tool that needs none"
                )));
            }
            if let Some(bad) = hosts.iter().find(|h| !is_host_pattern(h)) {
                return Err(invalid(format!(
                    "{name}: capabilities.network.allowed_hosts has {bad:?}, which is not a host \
                     name or host:port (no scheme, path or wildcard)"
                )));
            }
        }
        if self.env.len() > MAX_LIST_ITEMS {
            return Err(invalid(format!(
                "{name}: capabilities.env lists more than {MAX_LIST_ITEMS} variables"
            )));
        }
        if let Some(bad) = self.env.iter().find(|v| !is_env_name(v)) {
            return Err(invalid(format!(
                "{name}: capabilities.env has {bad:?}, which is not an environment variable name"
            )));
        }
        Ok(())
    }
}

impl RequestedLimits {
    fn validate(&self, name: &str) -> Result<()> {
        let fields = [
            ("timeout_ms", self.timeout_ms),
            ("memory_mb", self.memory_mb),
            ("fuel", self.fuel),
        ];
        for (field, value) in fields {
            if value == Some(0) {
                return Err(invalid(format!(
                    "{name}: limits.{field} must be positive; leave it out for the host's default"
                )));
            }
        }
        Ok(())
    }
}

fn is_env_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    !bytes.is_empty()
        && bytes.len() <= 128
        && (bytes[0].is_ascii_alphabetic() || bytes[0] == b'_')
        && bytes
            .iter()
            .all(|b| b.is_ascii_alphanumeric() || *b == b'_')
}

/// `name` or `name:port`, where `name` is a DNS name or an IPv4 address.
fn is_host_pattern(pattern: &str) -> bool {
    let (host, port) = match pattern.rsplit_once(':') {
        Some((host, port)) => (host, Some(port)),
        None => (pattern, None),
    };
    let port_ok = port.is_none_or(|p| p.parse::<u16>().is_ok_and(|p| p > 0));
    port_ok
        && !host.is_empty()
        && host.len() <= MAX_HOST_BYTES
        && host.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    pub fn manifest_json(extra: &str) -> String {
        format!(
            r#"{{"name":"echo","version":"0.1.0","description":"Echoes.",
               "input_schema":{{"type":"object","properties":{{}}}},
               "module_sha256":"{}"{extra}}}"#,
            "0".repeat(64)
        )
    }

    #[test]
    fn a_minimal_manifest_gets_the_hosts_limits() {
        let m = Manifest::parse(&manifest_json("")).unwrap();
        assert_eq!(m.capabilities.filesystem, FsCapability::None);
        let host = WasmCeiling::default();
        let limits = m.limits_under(&host).unwrap();
        assert_eq!(limits.timeout_ms, host.max_timeout_ms);
        assert_eq!(limits.memory_bytes, host.max_memory_mb * MIB);
        assert_eq!(limits.fuel, host.max_fuel);
    }

    #[test]
    fn invalid_manifests_name_the_field() {
        let cases = [
            (
                r#","capabilities":{"filesystem":"all"}"#,
                "`none`, `read`, `write`",
            ),
            (r#","capabilities":{"netwrok":{}}"#, "netwrok"),
            (r#","limits":{"fuel":0}"#, "limits.fuel"),
            (
                r#","capabilities":{"network":{"allowed_hosts":["http://x"]}}"#,
                "allowed_hosts",
            ),
            (
                r#","capabilities":{"network":{"allowed_hosts":[]}}"#,
                "allowed_hosts",
            ),
            (r#","capabilities":{"env":["A=B"]}"#, "capabilities.env"),
        ];
        for (extra, named) in cases {
            let e = Manifest::parse(&manifest_json(extra)).unwrap_err();
            assert_eq!(e.code, ErrorCode::ManifestInvalid, "{extra}");
            assert!(e.message.contains(named), "{extra}: {}", e.message);
        }
        let bad_name = manifest_json("").replace("\"echo\"", "\"Echo-1\"");
        let e = Manifest::parse(&bad_name).unwrap_err();
        assert!(e.message.contains("lowercase"), "{}", e.message);
        let bad_hash = manifest_json("").replace(&"0".repeat(64), "abc");
        let e = Manifest::parse(&bad_hash).unwrap_err();
        assert!(e.message.contains("module_sha256"), "{}", e.message);
    }

    #[test]
    fn asking_for_more_than_the_host_allows_is_capability_denied() {
        let host = WasmCeiling {
            filesystem: FsCapability::Read,
            allow_model_access: false,
            ..WasmCeiling::default()
        };
        let cases = [
            (r#","capabilities":{"filesystem":"write"}"#, "filesystem"),
            (r#","capabilities":{"model_access":true}"#, "model_access"),
            (
                r#","capabilities":{"network":{"allowed_hosts":["127.0.0.1"]}}"#,
                "direct network",
            ),
            (r#","capabilities":{"env":["HOME"]}"#, "HOME"),
            (r#","limits":{"memory_mb":65}"#, "memory_mb"),
            (r#","limits":{"timeout_ms":30001}"#, "timeout_ms"),
            (r#","limits":{"fuel":10000000001}"#, "fuel"),
        ];
        for (extra, named) in cases {
            let m = Manifest::parse(&manifest_json(extra)).unwrap();
            let e = m.limits_under(&host).unwrap_err();
            assert_eq!(e.code, ErrorCode::CapabilityDenied, "{extra}");
            assert!(e.message.contains(named), "{extra}: {}", e.message);
        }
        let within = Manifest::parse(&manifest_json(
            r#","capabilities":{"filesystem":"read"},"limits":{"memory_mb":8,"fuel":5}"#,
        ))
        .unwrap();
        let limits = within.limits_under(&host).unwrap();
        assert_eq!((limits.memory_bytes, limits.fuel), (8 * MIB, 5));
    }

    #[test]
    fn host_patterns() {
        for ok in ["localhost", "127.0.0.1", "api.example.com:8080", "a-b.c"] {
            assert!(is_host_pattern(ok), "{ok}");
        }
        for bad in [
            "",
            "*.x.com",
            "x.com/path",
            "x.com:0",
            "x.com:99999",
            "-x.com",
            "a..b",
        ] {
            assert!(!is_host_pattern(bad), "{bad}");
        }
    }
}
