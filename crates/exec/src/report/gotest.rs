//! `go test -json`'s event stream (test2json): one JSON object a line. Test results come as
//! `pass` / `fail` / `skip` events with a `Test`; a package that does not build comes (Go
//! 1.24+) as `build-output` events keyed by `ImportPath` and a package `fail` event with
//! `FailedBuild`. Older Go prints build errors on stderr instead: the caller scans that with
//! the fallback parser.

use super::{tail_lines, TestCounts, TestFailure, MAX_SNIPPET};
use serde::Deserialize;
use std::collections::BTreeMap;

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "Action")]
    action: String,
    #[serde(rename = "Package", default)]
    package: String,
    #[serde(rename = "Test", default)]
    test: Option<String>,
    #[serde(rename = "Output", default)]
    output: String,
    #[serde(rename = "ImportPath", default)]
    import_path: String,
    #[serde(rename = "FailedBuild", default)]
    failed_build: Option<String>,
}

/// What the stream said; `build_failed` lists packages that did not compile.
#[derive(Debug, Default)]
pub struct GoReport {
    pub counts: TestCounts,
    pub build_failed: Vec<String>,
    /// Whether any line was a test2json event (else the output was not `-json`).
    pub saw_events: bool,
}

/// `module` is the path in go.mod's `module` line, to turn a package into its directory
/// (`example.com/m/calc` -> `calc/`) in front of the file names Go prints.
pub fn parse(text: &str, module: Option<&str>) -> GoReport {
    let mut report = GoReport::default();
    let mut outputs: BTreeMap<(String, String), String> = BTreeMap::new();
    let mut build_out: BTreeMap<String, String> = BTreeMap::new();
    let mut results: Vec<(String, String, String)> = Vec::new();
    let mut package_fails: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines() {
        let Ok(ev) = serde_json::from_str::<Event>(line) else {
            continue;
        };
        report.saw_events = true;
        match (ev.action.as_str(), ev.test) {
            ("output", Some(test)) => outputs
                .entry((ev.package, test))
                .or_default()
                .push_str(&ev.output),
            ("output", None) => outputs
                .entry((ev.package, String::new()))
                .or_default()
                .push_str(&ev.output),
            ("build-output", _) => build_out
                .entry(ev.import_path)
                .or_default()
                .push_str(&ev.output),
            ("pass" | "fail" | "skip", Some(test)) => results.push((ev.package, test, ev.action)),
            ("fail", None) => package_fails.push((ev.package, ev.failed_build)),
            _ => {}
        }
    }
    let dir_of = |package: &str| -> String {
        module
            .and_then(|m| package.strip_prefix(m))
            .map(|rest| rest.trim_start_matches('/'))
            .filter(|rest| !rest.is_empty())
            .map(|rest| format!("{rest}/"))
            .unwrap_or_default()
    };
    let failed: Vec<&(String, String, String)> =
        results.iter().filter(|(_, _, a)| a == "fail").collect();
    for (package, test, action) in &results {
        if !test.contains('/') {
            match action.as_str() {
                "pass" => report.counts.passed += 1,
                "fail" => report.counts.failed += 1,
                _ => report.counts.skipped += 1,
            }
        }
        if action != "fail" {
            continue;
        }
        let prefix = format!("{test}/");
        if failed
            .iter()
            .any(|(p, t, _)| p == package && t.starts_with(&prefix))
        {
            continue; // a failing subtest says more
        }
        let out = outputs
            .get(&(package.clone(), test.clone()))
            .map(String::as_str)
            .unwrap_or_default();
        let (file, line, reason) = go_site(out);
        report.counts.failures.push(TestFailure {
            file: if file.is_empty() {
                file
            } else {
                format!("{}{file}", dir_of(package))
            },
            line,
            test: format!("{package}.{test}"),
            reason,
            snippet: tail_lines(out, MAX_SNIPPET),
        });
    }
    for (package, failed_build) in package_fails {
        if let Some(build) = failed_build {
            report.build_failed.push(package.clone());
            let out = build_out
                .get(&build)
                .map(String::as_str)
                .unwrap_or_default();
            let mut any = false;
            for l in out.lines() {
                if let Some((file, line, message)) = compiler_line(l) {
                    any = true;
                    report.counts.failed += 1;
                    report.counts.failures.push(TestFailure {
                        file,
                        line,
                        test: format!("{package} (build)"),
                        reason: message,
                        snippet: tail_lines(out, MAX_SNIPPET),
                    });
                }
            }
            if !any {
                report.counts.failed += 1;
                report.counts.failures.push(TestFailure {
                    test: format!("{package} (build)"),
                    reason: "the package does not build".into(),
                    snippet: tail_lines(out, MAX_SNIPPET),
                    ..TestFailure::default()
                });
            }
        } else if !results.iter().any(|(p, _, a)| *p == package && a == "fail") {
            // The package failed with no failing test: a panic in TestMain, a crash, a vet
            // failure.
            let out = outputs
                .get(&(package.clone(), String::new()))
                .map(String::as_str)
                .unwrap_or_default();
            report.counts.failed += 1;
            report.counts.failures.push(TestFailure {
                test: format!("{package} (package)"),
                reason: out
                    .lines()
                    .find(|l| l.starts_with("panic:") || l.contains(".go:"))
                    .unwrap_or("the package's tests failed without a failing test")
                    .trim()
                    .to_string(),
                snippet: tail_lines(out, MAX_SNIPPET),
                ..TestFailure::default()
            });
        }
    }
    report
}

/// `    calc_test.go:12: want 2, got 1` (t.Error) or a panic's `\t/abs/calc_test.go:12 +0x1d`.
fn go_site(out: &str) -> (String, u64, String) {
    for l in out.lines() {
        let t = l.trim();
        if let Some((file, rest)) = t.split_once(".go:") {
            if let Some((line, msg)) = rest.split_once(": ") {
                if let Ok(line) = line.parse() {
                    return (format!("{file}.go"), line, msg.trim().to_string());
                }
            }
        }
    }
    if let Some(panic) = out.lines().find(|l| l.starts_with("panic: ")) {
        let site = out.lines().find_map(|l| {
            let t = l.trim();
            let (file, rest) = t.split_once(".go:")?;
            if !file.ends_with("_test") {
                return None;
            }
            let line = rest.split(' ').next()?.parse().ok()?;
            let base = file.rsplit('/').next().unwrap_or(file);
            Some((format!("{base}.go"), line))
        });
        let (file, line) = site.unwrap_or_default();
        return (file, line, panic.trim().to_string());
    }
    let reason = out
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("=== ") && !l.starts_with("--- "))
        .unwrap_or("failed")
        .to_string();
    (String::new(), 0, reason)
}

/// `./calc.go:3:9: undefined: foo` -> (`calc.go`, 3, `undefined: foo`).
pub fn compiler_line(l: &str) -> Option<(String, u64, String)> {
    let (file, rest) = l.split_once(".go:")?;
    let mut parts = rest.splitn(3, ':');
    let line = parts.next()?.parse().ok()?;
    let _col = parts.next()?;
    let msg = parts.next()?.trim();
    Some((
        format!("{}.go", file.trim().trim_start_matches("./")),
        line,
        msg.to_string(),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    const STREAM: &str = r##"{"Action":"start","Package":"example.com/m/calc"}
{"Action":"run","Package":"example.com/m/calc","Test":"TestAdd"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestAdd","Output":"=== RUN   TestAdd\n"}
{"Action":"pass","Package":"example.com/m/calc","Test":"TestAdd","Elapsed":0}
{"Action":"run","Package":"example.com/m/calc","Test":"TestSub"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestSub","Output":"    calc_test.go:14: Sub(3, 2) = 2, want 1\n"}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestSub","Elapsed":0}
{"Action":"run","Package":"example.com/m/calc","Test":"TestTable/neg"}
{"Action":"output","Package":"example.com/m/calc","Test":"TestTable/neg","Output":"    calc_test.go:30: bad\n"}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestTable/neg","Elapsed":0}
{"Action":"fail","Package":"example.com/m/calc","Test":"TestTable","Elapsed":0}
{"Action":"skip","Package":"example.com/m/calc","Test":"TestLater","Elapsed":0}
{"Action":"fail","Package":"example.com/m/calc","Elapsed":0.01}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"# example.com/m/broken [example.com/m/broken.test]\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-output","Output":"broken/broken.go:5:9: undefined: missing\n"}
{"ImportPath":"example.com/m/broken [example.com/m/broken.test]","Action":"build-fail"}
{"Action":"start","Package":"example.com/m/broken"}
{"Action":"output","Package":"example.com/m/broken","Output":"FAIL\texample.com/m/broken [build failed]\n"}
{"Action":"fail","Package":"example.com/m/broken","Elapsed":0,"FailedBuild":"example.com/m/broken [example.com/m/broken.test]"}
"##;

    #[test]
    fn tests_subtests_and_a_package_that_does_not_build() {
        let r = parse(STREAM, Some("example.com/m"));
        let c = &r.counts;
        assert_eq!((c.passed, c.skipped), (1, 1));
        assert_eq!(c.failed, 3, "TestSub, TestTable, the build");
        let got: Vec<_> = c
            .failures
            .iter()
            .map(|f| (f.test.as_str(), f.file.as_str(), f.line, f.reason.as_str()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    "example.com/m/calc.TestSub",
                    "calc/calc_test.go",
                    14,
                    "Sub(3, 2) = 2, want 1"
                ),
                (
                    "example.com/m/calc.TestTable/neg",
                    "calc/calc_test.go",
                    30,
                    "bad"
                ),
                (
                    "example.com/m/broken (build)",
                    "broken/broken.go",
                    5,
                    "undefined: missing"
                ),
            ]
        );
        assert_eq!(r.build_failed, ["example.com/m/broken"]);
    }

    #[test]
    fn a_panic_points_at_the_test_file() {
        let out = "panic: runtime error: index out of range [3] with length 1\n\ngoroutine 7 [running]:\nexample.com/m.TestIdx(0xc0000)\n\t/w/m/idx_test.go:9 +0x1d\n";
        let (file, line, reason) = go_site(out);
        assert_eq!((file.as_str(), line), ("idx_test.go", 9));
        assert!(reason.starts_with("panic: runtime error"));
    }

    #[test]
    fn text_that_is_not_json_is_no_event() {
        let r = parse("ok  \texample.com/m\t0.01s\n{not json\n", None);
        assert!(!r.saw_events);
        assert_eq!(r.counts.total(), 0);
    }
}
