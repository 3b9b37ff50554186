//! Opt-in log output: set `WSFS_LOG` to `error`, `warn`, `info`, `debug` or `trace` to get
//! one line per call on stderr (tool, workspace-relative path, outcome, duration; never file
//! contents). The events go through the `log` facade with the target `wsfs`: a host that
//! installed its own logger (or bridges `log` into `tracing`) gets them there instead.
//!
//! The stderr logger is these few lines rather than a logging crate: it formats one line,
//! and `env_logger` or `tracing-subscriber` would add crates to every host's build for it
//! (docs/decisions/dependencies.md).

use log::{Level, LevelFilter, Log, Metadata, Record};
use std::io::Write;
use std::sync::LazyLock;

static INIT: LazyLock<()> = LazyLock::new(|| {
    let Some(level) = std::env::var("WSFS_LOG").ok().and_then(|v| parse_level(&v)) else {
        return;
    };
    // Fails only if the host already installed a logger; theirs then wins.
    if log::set_logger(&STDERR).is_ok() {
        log::set_max_level(level);
    }
});

pub fn init() {
    LazyLock::force(&INIT);
}

/// Writes wsfs's events (target `wsfs…`), not those of the libraries it uses.
struct StderrLogger;

static STDERR: StderrLogger = StderrLogger;

impl Log for StderrLogger {
    fn enabled(&self, metadata: &Metadata<'_>) -> bool {
        metadata.level() <= log::max_level() && metadata.target().starts_with("wsfs")
    }

    fn log(&self, record: &Record<'_>) {
        if self.enabled(record.metadata()) {
            let _ = writeln!(std::io::stderr().lock(), "{}", line(record));
        }
    }

    fn flush(&self) {}
}

/// `2026-11-29T07:12:58.123456Z  INFO wsfs: tool call: tool=read_file ...`
fn line(record: &Record<'_>) -> String {
    let level = match record.level() {
        Level::Error => "ERROR",
        Level::Warn => " WARN",
        Level::Info => " INFO",
        Level::Debug => "DEBUG",
        Level::Trace => "TRACE",
    };
    let now = jiff::Timestamp::now().round(jiff::Unit::Microsecond);
    let now = now.map_or_else(|_| String::new(), |t| t.to_string());
    format!("{now} {level} {}: {}", record.target(), record.args())
}

fn parse_level(value: &str) -> Option<LevelFilter> {
    match value.trim().to_ascii_lowercase().as_str() {
        "error" => Some(LevelFilter::Error),
        "warn" => Some(LevelFilter::Warn),
        "info" | "1" | "true" => Some(LevelFilter::Info),
        "debug" => Some(LevelFilter::Debug),
        "trace" => Some(LevelFilter::Trace),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_has_time_level_target_and_message() {
        let args = format_args!("tool call: tool=read_file");
        let record = Record::builder()
            .level(Level::Info)
            .target("wsfs")
            .args(args)
            .build();
        let line = line(&record);
        let (time, rest) = line.split_once(' ').unwrap();
        assert!(time.parse::<jiff::Timestamp>().is_ok(), "{line}");
        assert_eq!(rest, " INFO wsfs: tool call: tool=read_file");
    }

    #[test]
    fn only_wsfs_targets_and_known_levels() {
        log::set_max_level(LevelFilter::Info);
        let meta = |target| {
            Metadata::builder()
                .level(Level::Info)
                .target(target)
                .build()
        };
        assert!(STDERR.enabled(&meta("wsfs")));
        assert!(!STDERR.enabled(&meta("globset")));
        assert_eq!(parse_level(" Debug "), Some(LevelFilter::Debug));
        assert_eq!(parse_level("loud"), None);
    }
}
