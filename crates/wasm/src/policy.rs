//! The host's side of a Wasm tool's capabilities: the most it lets any tool have.
//!
//! A manifest that asks for more than this is refused when the tool is loaded
//! (`capability_denied`); what a manifest grants is checked again by each host function when
//! the tool calls it.

use serde::{Deserialize, Serialize};

/// What a tool may do with the workspace (the manifest's `capabilities.filesystem`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsCapability {
    /// No `/workspace` directory at all.
    #[default]
    None,
    /// `/workspace` for reading: opening, listing, stat.
    Read,
    /// `/workspace` for reading and changing.
    Write,
}

impl FsCapability {
    pub fn as_str(self) -> &'static str {
        match self {
            FsCapability::None => "none",
            FsCapability::Read => "read",
            FsCapability::Write => "write",
        }
    }
}

/// Mebibytes, for memory limits.
pub const MIB: u64 = 1 << 20;

/// The host's ceiling for every Wasm tool it loads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WasmCeiling {
    /// The most workspace access a tool may have (the workspace's own policy applies on top).
    pub filesystem: FsCapability,
    /// Whether tools may ask for `model_access` (the model gateway, set by the host).
    pub allow_model_access: bool,
    /// Whether tools may ask for `network` at all (`TOOL_ALLOW_DIRECT_NETWORK`); off by default.
    pub allow_direct_network: bool,
    /// Environment variables a tool may ask to see (their values come from the host process).
    pub allowed_env: Vec<String>,
    /// Longest run a manifest may ask for, and the default (`TOOL_TIMEOUT_SECS`).
    pub max_timeout_ms: u64,
    /// Most linear memory a manifest may ask for, and the default (`TOOL_MEMORY_MB`).
    pub max_memory_mb: u64,
    /// Most fuel (instruction budget) a manifest may ask for, and the default.
    pub max_fuel: u64,
    /// Most bytes a tool may write on stdout; more stops it (`too_large`).
    pub max_output_bytes: usize,
    /// Largest module file loaded.
    pub max_module_bytes: usize,
}

impl Default for WasmCeiling {
    fn default() -> Self {
        WasmCeiling {
            filesystem: FsCapability::Write,
            allow_model_access: true,
            allow_direct_network: false,
            allowed_env: Vec::new(),
            max_timeout_ms: 30_000,
            max_memory_mb: 64,
            // About ten seconds of an interpreted loop on one core; the timeout ends it first
            // on a slow machine.
            max_fuel: 10_000_000_000,
            max_output_bytes: 1 << 20,
            max_module_bytes: 64 << 20,
        }
    }
}

/// The limits one tool runs under: the manifest's, or the host's ceiling where it asks for none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ToolLimits {
    pub timeout_ms: u64,
    pub memory_bytes: u64,
    pub fuel: u64,
    pub max_output_bytes: usize,
}
