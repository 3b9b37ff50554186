//! `cargo test`'s text on stable Rust (its JSON output needs nightly): `test x ... ok` lines,
//! each binary's `test result:` line, the `---- x stdout ----` sections of failures, and
//! compiler errors (`error[E0308]: ...` then ` --> src/lib.rs:3:5`) when it does not build.

use super::{tail_lines, TestCounts, TestFailure, MAX_SNIPPET};

pub fn parse(text: &str) -> TestCounts {
    let mut counts = TestCounts::default();
    let mut sections: Vec<(String, String)> = Vec::new();
    let mut current: Option<(String, String)> = None;
    let mut failed_names: Vec<String> = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    for (i, line) in lines.iter().enumerate() {
        if let Some(rest) = line.strip_prefix("test ") {
            if let Some((name, outcome)) = rest.rsplit_once(" ... ") {
                match outcome.trim() {
                    "ok" => counts.passed += 1,
                    "FAILED" => {
                        counts.failed += 1;
                        failed_names.push(name.to_string());
                    }
                    o if o.starts_with("ignored") => counts.skipped += 1,
                    _ => {}
                }
                continue;
            }
        }
        if let Some(name) = line
            .strip_prefix("---- ")
            .and_then(|l| l.strip_suffix(" stdout ----"))
        {
            sections.extend(current.take());
            current = Some((name.to_string(), String::new()));
            continue;
        }
        if line.trim() == "failures:" || line.starts_with("test result:") {
            sections.extend(current.take());
            continue;
        }
        if let Some((_, body)) = current.as_mut() {
            body.push_str(line);
            body.push('\n');
        }
        if let Some(message) = line.strip_prefix("error") {
            // error[E0308]: mismatched types / error: could not compile
            if let Some(at) = lines[i + 1..]
                .iter()
                .take(3)
                .find_map(|l| l.trim_start().strip_prefix("--> "))
            {
                let (file, line_no) = location(at);
                counts.failed += 1;
                counts.failures.push(TestFailure {
                    file,
                    line: line_no,
                    test: "(build)".into(),
                    reason: format!("error{message}"),
                    snippet: lines[i..lines.len().min(i + 12)].join("\n"),
                });
            }
        }
    }
    sections.extend(current.take());
    for name in failed_names {
        let body = sections
            .iter()
            .find(|(n, _)| *n == name)
            .map(|(_, b)| b.as_str())
            .unwrap_or_default();
        let (file, line, reason) = panic_site(body);
        counts.failures.push(TestFailure {
            file,
            line,
            test: name,
            reason,
            snippet: tail_lines(body, MAX_SNIPPET),
        });
    }
    counts
}

/// `src/lib.rs:3:5` -> (`src/lib.rs`, 3).
fn location(at: &str) -> (String, u64) {
    let mut parts = at.trim().rsplitn(3, ':');
    let _col = parts.next();
    let line = parts.next().and_then(|l| l.parse().ok()).unwrap_or(0);
    (parts.next().unwrap_or(at).to_string(), line)
}

/// From `thread 'x' panicked at src/lib.rs:10:5:` and the message line after it.
fn panic_site(body: &str) -> (String, u64, String) {
    let mut lines = body.lines();
    while let Some(line) = lines.next() {
        if let Some(rest) = line.split_once(" panicked at ").map(|(_, r)| r) {
            let at = rest.trim_end_matches(':');
            // Before Rust 1.73: `panicked at 'message', src/lib.rs:10:5`.
            let (at, inline) = match at.rsplit_once("', ") {
                Some((msg, at)) => (at, Some(msg.trim_start_matches('\'').to_string())),
                None => (at, None),
            };
            let (file, line_no) = location(at);
            let reason = inline
                .or_else(|| lines.next().map(|l| l.trim().to_string()))
                .unwrap_or_default();
            return (file, line_no, reason);
        }
    }
    (String::new(), 0, "failed".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    const RUN: &str = "\
running 3 tests
test tests::adds ... ok
test tests::subtracts ... FAILED
test tests::later ... ignored, not yet

failures:

---- tests::subtracts stdout ----

thread 'tests::subtracts' panicked at src/lib.rs:12:9:
assertion `left == right` failed
  left: 1
 right: 2
note: run with `RUST_BACKTRACE=1` environment variable to display a backtrace


failures:
    tests::subtracts

test result: FAILED. 1 passed; 1 failed; 1 ignored; 0 measured; 0 filtered out; finished in 0.00s
";

    #[test]
    fn a_failing_test_and_its_panic() {
        let c = parse(RUN);
        assert_eq!((c.passed, c.failed, c.skipped), (1, 1, 1));
        let f = &c.failures[0];
        assert_eq!(f.test, "tests::subtracts");
        assert_eq!((f.file.as_str(), f.line), ("src/lib.rs", 12));
        assert_eq!(f.reason, "assertion `left == right` failed");
        assert!(f.snippet.contains("right: 2"));
    }

    #[test]
    fn a_build_failure() {
        let text = "   Compiling demo v0.1.0\nerror[E0308]: mismatched types\n --> src/lib.rs:3:5\n  |\n3 |     \"x\"\n  |     ^^^ expected `i32`\n\nerror: could not compile `demo`\n";
        let c = parse(text);
        assert_eq!(c.failed, 1);
        let f = &c.failures[0];
        assert_eq!(
            (f.test.as_str(), f.file.as_str(), f.line),
            ("(build)", "src/lib.rs", 3)
        );
        assert_eq!(f.reason, "error[E0308]: mismatched types");
    }

    #[test]
    fn garbage_is_nothing() {
        assert_eq!(parse("test\n---- \nerror\n").total(), 0);
    }
}
