//! node's test runner (`node --test`, often behind `npm test`): its TAP reporter (node's
//! default when stdout is not a terminal, up to node 22) and its spec reporter (node 23's
//! default). The counts come from the closing `# tests 2` / `ℹ tests 2` lines, the failures
//! from TAP's `not ok` blocks (their `location:` and `error:` fields) or spec's
//! `✖ failing tests:` section (`test at file:line:col`, then the test's name and error).

use super::{relative, tail_lines, TestCounts, TestFailure, MAX_SNIPPET};

/// The counts and failures, or None when `text` holds no node test summary.
pub fn parse(text: &str, base: &str) -> Option<TestCounts> {
    let mut counts = TestCounts::default();
    let mut saw_total = false;
    let mut total = 0;
    for line in text.lines() {
        let l = line.trim();
        let Some(rest) = l.strip_prefix("# ").or_else(|| l.strip_prefix("ℹ ")) else {
            continue;
        };
        let Some((word, n)) = rest.split_once(' ') else {
            continue;
        };
        let Ok(n) = n.trim().parse::<u64>() else {
            continue;
        };
        match word {
            "tests" => (total, saw_total) = (n, true),
            "pass" => counts.passed = n,
            "fail" | "cancelled" => counts.failed += n,
            "skipped" | "todo" => counts.skipped += n,
            _ => {}
        }
    }
    if !saw_total {
        return None;
    }
    // `# tests` is the one count that covers every test; the rest are its parts.
    counts.passed = counts.passed.min(total);
    counts.failed = counts.failed.min(total - counts.passed);
    counts.skipped = total - counts.passed - counts.failed;
    counts.failures = if text.contains("TAP version") || text.contains("\nnot ok ") {
        tap_failures(text, base)
    } else {
        spec_failures(text, base)
    };
    Some(counts)
}

/// `'/w/test/a.test.js:4:1'` as (`test/a.test.js`, 4).
fn location(raw: &str, base: &str) -> (String, u64) {
    let raw = raw.trim().trim_matches('\'').trim_matches('"');
    let raw = raw.strip_prefix("file://").unwrap_or(raw);
    let mut parts = raw.rsplitn(3, ':');
    let (col, line, file) = (parts.next(), parts.next(), parts.next());
    match (file, line.and_then(|l| l.parse().ok()), col) {
        (Some(file), Some(line), Some(c)) if c.parse::<u64>().is_ok() => {
            (relative(file, base), line)
        }
        _ => (relative(raw, base), 0),
    }
}

/// TAP's `not ok N - name` blocks; a test failing only because its subtests did
/// (`failureType: 'subtestsFailed'`) is left out, its subtests are listed.
fn tap_failures(text: &str, base: &str) -> Vec<TestFailure> {
    let lines: Vec<&str> = text.lines().collect();
    let mut failures = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        let Some(rest) = trimmed.strip_prefix("not ok ") else {
            continue;
        };
        let indent = line.len() - trimmed.len();
        let name = rest
            .split_once(" - ")
            .map_or("", |(_, n)| n)
            .split(" # ")
            .next()
            .unwrap_or_default()
            .trim()
            .to_string();
        let block: Vec<&str> = lines[i + 1..]
            .iter()
            .take_while(|l| {
                let t = l.trim_start();
                l.len() - t.len() > indent && !t.starts_with("not ok ") && !t.starts_with("ok ")
                    || t.is_empty()
            })
            .copied()
            .collect();
        let field = |key: &str| {
            block
                .iter()
                .find_map(|l| l.trim_start().strip_prefix(key))
                .map(str::trim)
        };
        if field("failureType:").is_some_and(|t| t.contains("subtestsFailed")) {
            continue;
        }
        let (file, line_no) = field("location:").map_or((String::new(), 0), |l| location(l, base));
        let reason = match field("error:") {
            Some("|-" | "|" | ">-" | ">") => block
                .iter()
                .skip_while(|l| !l.trim_start().starts_with("error:"))
                .skip(1)
                .map(|l| l.trim())
                .find(|l| !l.is_empty())
                .unwrap_or_default()
                .to_string(),
            Some(one) => one.trim_matches('\'').to_string(),
            None => String::new(),
        };
        failures.push(TestFailure {
            file,
            line: line_no,
            test: name,
            reason,
            snippet: tail_lines(&block.join("\n"), MAX_SNIPPET),
        });
    }
    failures
}

/// The spec reporter's `✖ failing tests:` section: `test at file:line:col`, then
/// `✖ name (1.2ms)`, then the error's lines.
fn spec_failures(text: &str, base: &str) -> Vec<TestFailure> {
    let Some(at) = text.find("✖ failing tests:") else {
        return Vec::new();
    };
    let lines: Vec<&str> = text[at..].lines().skip(1).collect();
    let mut failures = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        let l = lines[i].trim();
        let (file, line_no, name_at) = match l.strip_prefix("test at ") {
            Some(loc) => {
                let (f, n) = location(loc, base);
                (f, n, i + 1)
            }
            None => (String::new(), 0, i),
        };
        let Some(name) = lines.get(name_at).and_then(|n| n.trim().strip_prefix("✖ ")) else {
            i += 1;
            continue;
        };
        let name = match name.rfind(" (") {
            Some(p) if name.ends_with(')') => &name[..p],
            _ => name,
        };
        let body: Vec<&str> = lines[name_at + 1..]
            .iter()
            .take_while(|l| {
                let t = l.trim();
                !t.starts_with("test at ") && !t.starts_with("✖ ")
            })
            .copied()
            .collect();
        let reason = body
            .iter()
            .map(|l| l.trim())
            .find(|l| !l.is_empty())
            .unwrap_or_default()
            .to_string();
        failures.push(TestFailure {
            file,
            line: line_no,
            test: name.to_string(),
            reason,
            snippet: tail_lines(&body.join("\n"), MAX_SNIPPET),
        });
        i = name_at + 1 + body.len();
    }
    failures
}

#[cfg(test)]
mod tests {
    use super::*;

    const TAP: &str = "TAP version 13\n# Subtest: adds\nok 1 - adds\n  ---\n  duration_ms: 1.1\n  ...\n# Subtest: breaks\nnot ok 2 - breaks\n  ---\n  duration_ms: 1.3\n  location: '/w/test/a.test.js:4:1'\n  failureType: 'testCodeFailure'\n  error: |-\n    Expected values to be strictly equal:\n    \n    1 !== 2\n    \n  code: 'ERR_ASSERTION'\n  ...\n# Subtest: group\nnot ok 3 - group\n  ---\n  location: '/w/test/b.test.js:1:1'\n  failureType: 'subtestsFailed'\n  error: '1 subtest failed'\n  ...\n    # Subtest: inner\n    not ok 1 - inner\n      ---\n      location: '/w/test/b.test.js:2:3'\n      error: 'boom'\n      ...\n1..3\n# tests 3\n# suites 0\n# pass 1\n# fail 2\n# cancelled 0\n# skipped 0\n# todo 0\n# duration_ms 136.1\n";

    const SPEC: &str = "✔ adds (0.8ms)\n✖ breaks (0.9ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n\nℹ tests 3\nℹ suites 0\nℹ pass 1\nℹ fail 1\nℹ cancelled 0\nℹ skipped 1\nℹ todo 0\nℹ duration_ms 166.2\n\n✖ failing tests:\n\ntest at test/a.test.js:4:1\n✖ breaks (0.9ms)\n  AssertionError [ERR_ASSERTION]: Expected values to be strictly equal:\n  \n  1 !== 2\n";

    #[test]
    fn tap_counts_and_names_the_failing_tests_where_they_are() {
        let c = parse(TAP, "/w").unwrap();
        assert_eq!((c.passed, c.failed, c.skipped), (1, 2, 0));
        let got: Vec<(&str, u64, &str, &str)> = c
            .failures
            .iter()
            .map(|f| (f.file.as_str(), f.line, f.test.as_str(), f.reason.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "test/a.test.js",
                    4,
                    "breaks",
                    "Expected values to be strictly equal:"
                ),
                ("test/b.test.js", 2, "inner", "boom"),
            ]
        );
        assert!(c.failures[0].snippet.contains("1 !== 2"));
    }

    #[test]
    fn spec_counts_and_names_the_failing_test() {
        let c = parse(SPEC, "/w").unwrap();
        assert_eq!((c.passed, c.failed, c.skipped), (1, 1, 1));
        assert_eq!(c.failures.len(), 1, "{:?}", c.failures);
        let f = &c.failures[0];
        assert_eq!(
            (f.file.as_str(), f.line, f.test.as_str()),
            ("test/a.test.js", 4, "breaks")
        );
        assert!(f.reason.starts_with("AssertionError"), "{f:?}");
    }

    #[test]
    fn other_output_and_garbage_are_not_node() {
        for text in [
            "",
            "3 passed, 1 failed",
            "# tests x\n# pass",
            "ℹ tests",
            "not ok\n✖ failing tests:",
        ] {
            assert_eq!(parse(text, "/w"), None, "{text:?}");
        }
        // A summary without details still counts.
        let c = parse("# tests 2\n# pass 2\n", "/w").unwrap();
        assert_eq!((c.passed, c.failed, c.failures.len()), (2, 0, 0));
        // Counts that disagree never make more tests than `# tests` says.
        let c = parse("# tests 1\n# pass 5\n# fail 5\n", "/w").unwrap();
        assert_eq!(c.total(), 1);
    }
}
