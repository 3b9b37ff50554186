//! pytest's JUnit XML report (`--junitxml=FILE -o junit_family=xunit1`, which adds `file` and
//! `line` to each test case). roxmltree refuses DTDs, so no entity can expand; the node count
//! is capped too.

use super::{tail_lines, TestCounts, TestFailure, MAX_SNIPPET};

const MAX_NODES: u32 = 2_000_000;

pub fn parse(xml: &str) -> Result<TestCounts, String> {
    let opts = roxmltree::ParsingOptions {
        nodes_limit: MAX_NODES,
        ..Default::default()
    };
    let doc = roxmltree::Document::parse_with_options(xml, opts)
        .map_err(|e| format!("the JUnit report is not valid XML: {e}"))?;
    let mut counts = TestCounts::default();
    for case in doc.descendants().filter(|n| n.has_tag_name("testcase")) {
        let outcome = case.children().find(|c| {
            ["failure", "error", "skipped"]
                .iter()
                .any(|t| c.has_tag_name(*t))
        });
        let Some(outcome) = outcome else {
            counts.passed += 1;
            continue;
        };
        if outcome.has_tag_name("skipped") {
            counts.skipped += 1;
            continue;
        }
        counts.failed += 1;
        let classname = case.attribute("classname").unwrap_or_default();
        let name = case.attribute("name").unwrap_or_default();
        let body = outcome.text().unwrap_or_default();
        let message = outcome.attribute("message").unwrap_or_default();
        let (file, line) = match failing_location(body) {
            Some((f, l)) => (f, l),
            None => (
                case.attribute("file").unwrap_or_default().to_string(),
                // xunit1's line is pytest's 0-based location of the test function.
                case.attribute("line")
                    .and_then(|l| l.parse::<u64>().ok())
                    .map_or(0, |l| l + 1),
            ),
        };
        let test = match (classname.is_empty(), name.is_empty()) {
            (false, false) => format!("{classname}::{name}"),
            (true, _) => name.to_string(),
            (_, true) => classname.to_string(),
        };
        let reason = first_line(message)
            .or_else(|| {
                body.lines()
                    .rev()
                    .find(|l| l.starts_with("E "))
                    .map(|l| l[1..].trim().to_string())
            })
            .unwrap_or_else(|| outcome.tag_name().name().to_string());
        counts.failures.push(TestFailure {
            file,
            line,
            test,
            reason,
            snippet: snippet(body),
        });
    }
    Ok(counts)
}

fn first_line(s: &str) -> Option<String> {
    let line = s.lines().find(|l| !l.trim().is_empty())?.trim();
    Some(line.to_string())
}

/// The last `path.py:LINE: ...` line of a pytest traceback: where it failed.
fn failing_location(body: &str) -> Option<(String, u64)> {
    body.lines().rev().find_map(|l| {
        let (path, rest) = l.split_once(':')?;
        if !path.ends_with(".py") || path.contains(' ') {
            return None;
        }
        let (line, _) = rest.split_once(':')?;
        Some((path.to_string(), line.parse().ok()?))
    })
}

/// The traceback's telling lines (`>` the failing source, `E` the explanation, the location),
/// or its tail when it has none of those.
fn snippet(body: &str) -> String {
    let telling: Vec<&str> = body
        .lines()
        .filter(|l| l.starts_with('>') || l.starts_with("E ") || failing_location(l).is_some())
        .collect();
    if telling.is_empty() {
        tail_lines(body, MAX_SNIPPET)
    } else {
        tail_lines(&telling.join("\n"), MAX_SNIPPET)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const REPORT: &str = r#"<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1" skipped="1" tests="4">
<testcase classname="tests.test_calc" name="test_add" file="tests/test_calc.py" line="3" time="0.001" />
<testcase classname="tests.test_calc" name="test_sub" file="tests/test_calc.py" line="6" time="0.001"><failure message="assert 1 == 2&#10; +  where 1 = sub(3, 2)">def test_sub():
&gt;       assert sub(3, 2) == 2
E       assert 1 == 2
E        +  where 1 = sub(3, 2)

tests/test_calc.py:8: AssertionError</failure></testcase>
<testcase classname="tests.test_calc" name="test_skip" file="tests/test_calc.py" line="10"><skipped type="pytest.skip" message="not today">skipped</skipped></testcase>
<testcase classname="" name="tests.test_broken" time="0.000"><error message="collection failure">tests/test_broken.py:1: in &lt;module&gt;
    import nonexistent
E   ModuleNotFoundError: No module named 'nonexistent'</error></testcase>
</testsuite></testsuites>"#;

    #[test]
    fn counts_failures_and_where_they_failed() {
        let c = parse(REPORT).unwrap();
        assert_eq!((c.passed, c.failed, c.skipped, c.total()), (1, 2, 1, 4));
        let f = &c.failures[0];
        assert_eq!(f.test, "tests.test_calc::test_sub");
        assert_eq!((f.file.as_str(), f.line), ("tests/test_calc.py", 8));
        assert_eq!(f.reason, "assert 1 == 2");
        assert!(
            f.snippet.contains(">       assert sub(3, 2) == 2"),
            "{}",
            f.snippet
        );
        assert!(f.snippet.contains("E       assert 1 == 2"));
        let e = &c.failures[1];
        assert_eq!(e.test, "tests.test_broken");
        assert_eq!((e.file.as_str(), e.line), ("tests/test_broken.py", 1));
        assert_eq!(e.reason, "collection failure");
    }

    #[test]
    fn garbage_and_entities_are_errors() {
        assert!(parse("not xml").is_err());
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]><testsuite>&b;</testsuite>"#;
        assert!(parse(bomb).is_err());
        assert_eq!(parse("<testsuites/>").unwrap().total(), 0);
    }
}
