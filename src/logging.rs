//! Opt-in tracing output: set `WSFS_LOG` to `error`, `warn`, `info`, `debug` or `trace` to get
//! one event per call on stderr (tool, workspace-relative path, outcome, duration; never file
//! contents). Hosts with their own `tracing` subscriber get the events without it.

use std::sync::LazyLock;
use tracing::Level;

static INIT: LazyLock<()> = LazyLock::new(|| {
    let Some(level) = std::env::var("WSFS_LOG").ok().and_then(|v| parse_level(&v)) else {
        return;
    };
    // Fails only if the host already installed a global subscriber; theirs then wins.
    let _ = tracing_subscriber::fmt()
        .with_max_level(level)
        .with_writer(std::io::stderr)
        .try_init();
});

pub fn init() {
    LazyLock::force(&INIT);
}

fn parse_level(value: &str) -> Option<Level> {
    match value.trim().to_ascii_lowercase().as_str() {
        "error" => Some(Level::ERROR),
        "warn" => Some(Level::WARN),
        "info" | "1" | "true" => Some(Level::INFO),
        "debug" => Some(Level::DEBUG),
        "trace" => Some(Level::TRACE),
        _ => None,
    }
}
