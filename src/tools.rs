//! Every tool this library offers: the file tools (`wsfs_core::tools`), then the developer
//! tools (`wsfs_devtools`, cargo feature `exec`), and per open workspace its [`ToolSet`]:
//! those, then the Wasm tools it loaded (cargo feature `wasm`).

pub use wsfs_core::tools::*;

use crate::approval::ApprovalSlot;
use crate::config::Config;
use crate::error::Result;
use crate::workspace::Workspace;
use std::sync::Arc;
use std::sync::LazyLock;
use wsfs_core::tools::contract::{ToolEntry, ToolRunner};

#[cfg(feature = "wasm")]
use crate::wasm::tool::WasmTools;

/// Every built-in tool this library was built with, in the order specs list them.
pub static REGISTRY: LazyLock<Vec<&'static ToolEntry>> = LazyLock::new(|| {
    let file_tools = FILE_TOOLS.iter();
    #[cfg(feature = "exec")]
    let file_tools = file_tools.chain(wsfs_devtools::DEV_TOOLS.iter());
    file_tools.collect()
});

/// The built-in tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolEntry> {
    REGISTRY.iter().copied().find(|t| t.name == name)
}

/// The tools one open workspace offers natively: every built-in tool, then the Wasm tools
/// its configuration loaded, in load order.
#[derive(Default)]
pub struct ToolSet {
    #[cfg(feature = "wasm")]
    wasm: Option<WasmTools>,
    /// The host's approval handler of the calls that need confirming (`git_commit`).
    pub approval: ApprovalSlot,
}

/// What the tools need from a configuration, read and checked before anything is opened or
/// created ([`ToolSet::check`]) and handed to [`ToolSet::open`].
#[derive(Default)]
pub struct Checked {
    /// The host's safe_shell rules (`policy.safe_shell_rules`), read and checked.
    #[cfg(feature = "exec")]
    shell_rules: Option<wsfs_devtools::entries::ShellRules>,
}

impl ToolSet {
    /// Refuses a configuration the tools cannot honour before anything is opened or created:
    /// parts this library was built without (`feature_not_built`), and a safe_shell rules file
    /// that cannot be read or disagrees with its own examples.
    pub fn check(config: &Config) -> Result<Checked> {
        ToolSet::check_built(config)?;
        Ok(Checked {
            #[cfg(feature = "exec")]
            shell_rules: wsfs_devtools::entries::read_shell_rules(&config.policy)?,
        })
    }

    /// The built-in tools and the Wasm tools `config.wasm_tools` names, loaded (manifests
    /// checked, modules hashed and compiled) for `ws`: a tool that cannot be loaded fails the
    /// open with its code. `checked` is [`ToolSet::check`]'s answer for `config`.
    #[cfg_attr(not(feature = "wasm"), allow(unused_variables))]
    #[cfg_attr(not(feature = "exec"), allow(unused_mut))]
    pub fn open(ws: &Arc<Workspace>, config: &Config, mut checked: Checked) -> Result<ToolSet> {
        #[cfg(feature = "exec")]
        if let Some(rules) = checked.shell_rules.take() {
            wsfs_devtools::entries::keep_shell_rules(ws, rules);
        }
        #[cfg(feature = "exec")]
        if config.policy.exec_enabled {
            wsfs_devtools::entries::settle_read_paths(ws);
        }
        // Built even without Wasm tools, so that a key variable that is not set fails the open.
        #[cfg(feature = "model-gateway-http")]
        let configured = match &config.model_gateway {
            Some(gateway) => Some(crate::wasm::host::provider::ConfiguredGateway::from_config(
                gateway,
            )?),
            None => None,
        };
        #[cfg(feature = "wasm")]
        if !config.wasm_tools.is_empty() {
            let wasm = WasmTools::load(ws.clone(), &config.wasm_tools, &config.wasm_policy)?;
            #[cfg(feature = "model-gateway-http")]
            if let Some(configured) = configured {
                wasm.configure_gateway(Arc::new(configured));
            }
            return Ok(ToolSet {
                wasm: Some(wasm),
                ..ToolSet::default()
            });
        }
        Ok(ToolSet::default())
    }

    /// Refuses a configuration that asks for tools this library was built without.
    fn check_built(config: &Config) -> Result<()> {
        if config.policy.exec_enabled && !cfg!(feature = "exec") {
            return Err(crate::error::feature_not_built(
                "exec",
                "policy.exec_enabled (the developer tools)",
            ));
        }
        if config.policy.safe_shell_rules.is_some() && !cfg!(feature = "exec") {
            return Err(crate::error::feature_not_built(
                "exec",
                "policy.safe_shell_rules (safe_shell's rules)",
            ));
        }
        if !config.wasm_tools.is_empty() && !cfg!(feature = "wasm") {
            return Err(crate::error::feature_not_built("wasm", "wasm_tools"));
        }
        Ok(())
    }

    /// The tool named `name`: a built-in one, else one of the workspace's Wasm tools.
    pub fn find(&self, name: &str) -> Option<&dyn ToolRunner> {
        match find(name) {
            Some(entry) => Some(entry),
            #[cfg(feature = "wasm")]
            None => Some(self.wasm.as_ref()?.find(name)?),
            #[cfg(not(feature = "wasm"))]
            None => None,
        }
    }

    /// Every tool, built-in first.
    pub fn all(&self) -> impl Iterator<Item = &dyn ToolRunner> {
        REGISTRY
            .iter()
            .map(|t| *t as &dyn ToolRunner)
            .chain(self.loaded())
    }

    /// The Wasm tools, in load order.
    pub fn loaded(&self) -> impl Iterator<Item = &dyn ToolRunner> {
        #[cfg(feature = "wasm")]
        let loaded = self
            .wasm
            .iter()
            .flat_map(|w| w.tools().iter().map(|t| t as &dyn ToolRunner));
        #[cfg(not(feature = "wasm"))]
        let loaded = std::iter::empty();
        loaded
    }

    /// The Wasm tools, for their model gateway.
    #[cfg(feature = "wasm")]
    pub fn wasm(&self) -> Option<&WasmTools> {
        self.wasm.as_ref()
    }
}
