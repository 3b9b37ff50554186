//! Reports of test runners, linters and type checkers, turned into the tools' structured
//! results. Machine formats wherever the tool has one (pytest's JUnit XML, `go test -json`,
//! ruff / eslint / mypy / pyright JSON, node's TAP), text where it has none (cargo test on stable, tsc),
//! and a best-effort `file:line:col` scan for anything else (`parser_used: "fallback"`).
//! Every parser takes bytes and returns a value or an error string; none panics on garbage
//! (each has a test feeding it some).

pub mod cargo;
pub mod eslint;
pub mod fallback;
pub mod gotest;
pub mod junit;
pub mod mypy;
pub mod nodetest;
pub mod pyright;
pub mod ruff;
pub mod tsc;

use serde::Serialize;

/// One finding of a linter or type checker. Lines and columns are 1-based (0 where the tool
/// gave none).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Issue {
    pub file: String,
    pub line: u64,
    pub col: u64,
    /// The tool's rule or error code (`F401`, `no-unused-vars`, `arg-type`, `TS2322`); empty
    /// where it gave none.
    pub rule: String,
    pub message: String,
    /// `error`, `warning` or `info`.
    pub severity: &'static str,
}

/// One failing test.
#[derive(Debug, Clone, Serialize, PartialEq, Eq, Default)]
pub struct TestFailure {
    pub file: String,
    /// Where it failed (the assertion's line where the runner says), 0 if unknown.
    pub line: u64,
    pub test: String,
    /// One line: the assertion or error message.
    pub reason: String,
    /// The runner's own lines about it (traceback, output), bounded.
    pub snippet: String,
}

/// What a test runner's report says.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TestCounts {
    pub passed: u64,
    pub failed: u64,
    pub skipped: u64,
    pub failures: Vec<TestFailure>,
}

impl TestCounts {
    pub fn total(&self) -> u64 {
        self.passed + self.failed + self.skipped
    }
}

/// Bytes of a failure's snippet.
pub const MAX_SNIPPET: usize = 2000;

/// The last `max` bytes of `text`, on a line boundary where there is one.
pub fn tail_lines(text: &str, max: usize) -> String {
    let text = text.trim_end();
    if text.len() <= max {
        return text.to_string();
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let cut = &text[start..];
    match cut.find('\n') {
        Some(i) if i + 1 < cut.len() => cut[i + 1..].to_string(),
        _ => cut.to_string(),
    }
}

/// `path`, relative to `base` when it lies beneath it (tools print absolute paths).
pub fn relative(path: &str, base: &str) -> String {
    let base = base.trim_end_matches('/');
    path.strip_prefix(base)
        .and_then(|p| p.strip_prefix('/'))
        .unwrap_or(path)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn helpers() {
        assert_eq!(relative("/w/src/a.py", "/w"), "src/a.py");
        assert_eq!(relative("/w/src/a.py", "/w/"), "src/a.py");
        assert_eq!(relative("/other/a.py", "/w"), "/other/a.py");
        assert_eq!(tail_lines("a\nb\nc\n", 3), "c");
        assert_eq!(tail_lines("short", 100), "short");
    }
}
