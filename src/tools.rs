//! Every tool this library offers: the file tools (`wsfs_core::tools`), then the developer
//! tools (`wsfs_devtools`).

pub use wsfs_core::tools::*;

use once_cell::sync::Lazy;
use wsfs_core::tools::contract::ToolEntry;

/// Every built-in tool, in the order specs list them.
pub static REGISTRY: Lazy<Vec<&'static ToolEntry>> = Lazy::new(|| {
    FILE_TOOLS
        .iter()
        .chain(wsfs_devtools::DEV_TOOLS.iter())
        .collect()
});

/// The built-in tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolEntry> {
    REGISTRY.iter().copied().find(|t| t.name == name)
}
