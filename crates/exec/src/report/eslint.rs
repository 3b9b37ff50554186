//! `eslint --format json`: one entry per file, its `messages` with 1-based line and column and
//! a severity of 1 (warning) or 2 (error).

use super::{relative, Issue};
use serde::Deserialize;

#[derive(Deserialize)]
struct FileResult {
    #[serde(rename = "filePath")]
    file_path: String,
    messages: Vec<Message>,
}

#[derive(Deserialize)]
struct Message {
    #[serde(rename = "ruleId")]
    rule_id: Option<String>,
    severity: u8,
    message: String,
    #[serde(default)]
    line: u64,
    #[serde(default)]
    column: u64,
}

pub fn parse(json: &str, base: &str) -> Result<Vec<Issue>, String> {
    let files: Vec<FileResult> =
        serde_json::from_str(json.trim()).map_err(|e| format!("not eslint's JSON: {e}"))?;
    Ok(files
        .into_iter()
        .flat_map(|f| {
            let file = relative(&f.file_path, base);
            f.messages.into_iter().map(move |m| Issue {
                file: file.clone(),
                line: m.line,
                col: m.column,
                rule: m.rule_id.unwrap_or_default(),
                message: m.message,
                severity: if m.severity >= 2 { "error" } else { "warning" },
            })
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_of_every_file() {
        let json = r#"[{"filePath":"/w/src/a.js","messages":[{"ruleId":"no-unused-vars","severity":2,"message":"'x' is assigned a value but never used.","line":1,"column":7,"nodeType":"Identifier"},{"ruleId":"eqeqeq","severity":1,"message":"Expected '===' and instead saw '=='.","line":2,"column":7}],"errorCount":1,"warningCount":1},
{"filePath":"/w/src/b.js","messages":[{"ruleId":null,"fatal":true,"severity":2,"message":"Parsing error: Unexpected token","line":3,"column":1}]},
{"filePath":"/w/src/ok.js","messages":[]}]"#;
        let issues = parse(json, "/w").unwrap();
        assert_eq!(issues.len(), 3);
        assert_eq!(
            (
                issues[0].file.as_str(),
                issues[0].rule.as_str(),
                issues[0].severity
            ),
            ("src/a.js", "no-unused-vars", "error")
        );
        assert_eq!(issues[1].severity, "warning");
        assert_eq!((issues[2].rule.as_str(), issues[2].line), ("", 3));
        assert!(parse("Oops! Something went wrong!", "/w").is_err());
    }
}
