//! `pyright --outputjson`: `generalDiagnostics` with 0-based `range.start` line and character,
//! turned 1-based here.

use super::{relative, Issue};
use serde::Deserialize;

#[derive(Deserialize)]
struct Report {
    #[serde(rename = "generalDiagnostics", default)]
    diagnostics: Vec<Diagnostic>,
}

#[derive(Deserialize)]
struct Diagnostic {
    #[serde(default)]
    file: String,
    severity: String,
    message: String,
    #[serde(default)]
    rule: Option<String>,
    range: Option<Range>,
}

#[derive(Deserialize)]
struct Range {
    start: Position,
}

#[derive(Deserialize)]
struct Position {
    line: u64,
    character: u64,
}

pub fn parse(json: &str, base: &str) -> Result<Vec<Issue>, String> {
    // pyright's npm wrapper may print a line before the JSON.
    let start = json.find('{').ok_or("pyright printed no JSON")?;
    let report: Report =
        serde_json::from_str(&json[start..]).map_err(|e| format!("not pyright's JSON: {e}"))?;
    Ok(report
        .diagnostics
        .into_iter()
        .map(|d| Issue {
            file: relative(&d.file, base),
            line: d.range.as_ref().map_or(0, |r| r.start.line + 1),
            col: d.range.as_ref().map_or(0, |r| r.start.character + 1),
            rule: d.rule.unwrap_or_default(),
            message: d.message,
            severity: match d.severity.as_str() {
                "error" => "error",
                "warning" => "warning",
                _ => "info",
            },
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_based_positions_become_one_based() {
        let json = r#"{"version":"1.1.390","time":"1","generalDiagnostics":[{"file":"/w/app/calc.py","severity":"error","message":"Type \"str\" is not assignable to return type \"int\"","range":{"start":{"line":3,"character":11},"end":{"line":3,"character":16}},"rule":"reportReturnType"},{"file":"/w/app/x.py","severity":"information","message":"m","range":{"start":{"line":0,"character":0},"end":{"line":0,"character":1}}}],"summary":{"filesAnalyzed":2,"errorCount":1,"warningCount":0,"informationCount":1,"timeInSec":0.5}}"#;
        let issues = parse(json, "/w").unwrap();
        assert_eq!(
            (issues[0].file.as_str(), issues[0].line, issues[0].col),
            ("app/calc.py", 4, 12)
        );
        assert_eq!(issues[0].rule, "reportReturnType");
        assert_eq!(
            (issues[1].line, issues[1].col, issues[1].severity),
            (1, 1, "info")
        );
        assert!(parse("No configuration file found.", "/w").is_err());
    }
}
