//! `ruff check --output-format=json`: an array of diagnostics with 1-based `location`s.

use super::{relative, Issue};
use serde::Deserialize;

#[derive(Deserialize)]
struct Diagnostic {
    code: Option<String>,
    message: String,
    filename: String,
    location: Option<Location>,
}

#[derive(Deserialize)]
struct Location {
    row: u64,
    column: u64,
}

pub fn parse(json: &str, base: &str) -> Result<Vec<Issue>, String> {
    let list: Vec<Diagnostic> =
        serde_json::from_str(json.trim()).map_err(|e| format!("not ruff's JSON: {e}"))?;
    Ok(list
        .into_iter()
        .map(|d| Issue {
            file: relative(&d.filename, base),
            line: d.location.as_ref().map_or(0, |l| l.row),
            col: d.location.as_ref().map_or(0, |l| l.column),
            // A syntax error has no code.
            severity: "error",
            rule: d.code.unwrap_or_default(),
            message: d.message,
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn diagnostics() {
        let json = r#"[{"cell":null,"code":"F401","end_location":{"column":10,"row":1},"filename":"/w/app/util.py","fix":{"applicability":"safe","edits":[],"message":"Remove unused import: `os`"},"location":{"column":8,"row":1},"message":"`os` imported but unused","noqa_row":1,"url":"https://docs.astral.sh/ruff/rules/unused-import"},
{"code":null,"filename":"/w/bad.py","location":{"column":5,"row":2},"message":"SyntaxError: Expected an expression"}]"#;
        let issues = parse(json, "/w").unwrap();
        assert_eq!(issues[0].file, "app/util.py");
        assert_eq!((issues[0].line, issues[0].col), (1, 8));
        assert_eq!(issues[0].rule, "F401");
        assert_eq!(issues[1].rule, "");
        assert!(parse("[]", "/w").unwrap().is_empty());
        assert!(parse("All checks passed!", "/w").is_err());
    }
}
