//! `mypy -O json` (mypy 1.11+): one JSON object per line. Its `column` is 0-based (the text
//! output adds one), and `-1` when there is none; `note`s explain the error before them and
//! are folded into its message.

use super::{relative, Issue};
use serde::Deserialize;

#[derive(Deserialize)]
struct Line {
    file: String,
    line: i64,
    column: i64,
    message: String,
    #[serde(default)]
    hint: Option<String>,
    #[serde(default)]
    code: Option<String>,
    severity: String,
}

pub fn parse(text: &str, base: &str) -> Result<Vec<Issue>, String> {
    let mut issues: Vec<Issue> = Vec::new();
    let mut saw = false;
    for raw in text.lines().filter(|l| l.trim_start().starts_with('{')) {
        let l: Line = serde_json::from_str(raw).map_err(|e| format!("not mypy's JSON: {e}"))?;
        saw = true;
        let mut message = l.message;
        if let Some(hint) = l.hint.filter(|h| !h.is_empty()) {
            message = format!("{message} ({hint})");
        }
        if l.severity == "note" {
            match issues.last_mut() {
                Some(prev) if prev.file == relative(&l.file, base) => {
                    prev.message.push_str("; note: ");
                    prev.message.push_str(&message);
                    continue;
                }
                _ => {}
            }
        }
        issues.push(Issue {
            file: relative(&l.file, base),
            line: l.line.max(0) as u64,
            col: if l.column < 0 { 0 } else { l.column as u64 + 1 },
            rule: l.code.unwrap_or_default(),
            message,
            severity: match l.severity.as_str() {
                "error" => "error",
                "warning" => "warning",
                _ => "info",
            },
        });
    }
    if !saw && !text.trim().is_empty() && !text.contains("Success: no issues found") {
        return Err("mypy printed no JSON lines".into());
    }
    Ok(issues)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_with_their_notes_and_one_based_columns() {
        let text = r#"{"file": "app/calc.py", "line": 4, "column": 11, "message": "Incompatible return value type (got \"str\", expected \"int\")", "hint": null, "code": "return-value", "severity": "error"}
{"file": "app/calc.py", "line": 4, "column": 11, "message": "See https://mypy.rtfd.io", "hint": null, "code": null, "severity": "note"}
{"file": "app/other.py", "line": 1, "column": -1, "message": "Library stubs not installed", "hint": "python3 -m pip install types-x", "code": "import-untyped", "severity": "error"}
"#;
        let issues = parse(text, "/w").unwrap();
        assert_eq!(issues.len(), 2);
        assert_eq!((issues[0].line, issues[0].col), (4, 12));
        assert!(issues[0].message.contains("; note: See"));
        assert_eq!(issues[1].col, 0);
        assert!(issues[1]
            .message
            .ends_with("(python3 -m pip install types-x)"));
        assert!(parse("Success: no issues found in 3 source files\n", "/w")
            .unwrap()
            .is_empty());
        assert!(parse("mypy: error: unrecognized arguments: -O", "/w").is_err());
    }
}
