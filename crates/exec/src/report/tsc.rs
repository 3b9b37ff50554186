//! `tsc --noEmit --pretty false`: `file(line,col): error TS2322: message`, continuation lines
//! indented, and project-level errors without a location (`error TS5058: ...`).

use super::{relative, Issue};

pub fn parse(text: &str, base: &str) -> Vec<Issue> {
    let mut issues: Vec<Issue> = Vec::new();
    for line in text.lines() {
        if line.starts_with(' ') || line.starts_with('\t') {
            if let Some(prev) = issues.last_mut() {
                prev.message.push('\n');
                prev.message.push_str(line.trim_end());
            }
            continue;
        }
        let (located, rest) = match line.split_once("): ") {
            Some((head, rest)) if head.contains('(') => (Some(head), rest),
            _ => (None, line),
        };
        let Some((severity, rest)) = rest
            .strip_prefix("error ")
            .map(|r| ("error", r))
            .or_else(|| rest.strip_prefix("warning ").map(|r| ("warning", r)))
        else {
            continue;
        };
        let Some((rule, message)) = rest.split_once(": ") else {
            continue;
        };
        let (file, line_no, col) = located
            .and_then(|head| {
                let (file, pos) = head.rsplit_once('(')?;
                let (l, c) = pos.split_once(',')?;
                Some((relative(file, base), l.parse().ok()?, c.parse().ok()?))
            })
            .unwrap_or_default();
        issues.push(Issue {
            file,
            line: line_no,
            col,
            rule: rule.trim().to_string(),
            message: message.to_string(),
            severity,
        });
    }
    issues
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn located_and_project_errors() {
        let text = "src/a.ts(3,7): error TS2322: Type 'string' is not assignable to type 'number'.\nsrc/b (1).ts(10,1): error TS2304: Cannot find name 'foo'.\n  Did you mean 'for'?\nerror TS5058: The specified path does not exist: 'tsconfig.json'.\nFound 3 errors.\n";
        let issues = parse(text, "/w");
        assert_eq!(issues.len(), 3);
        assert_eq!(
            (
                issues[0].file.as_str(),
                issues[0].line,
                issues[0].col,
                issues[0].rule.as_str()
            ),
            ("src/a.ts", 3, 7, "TS2322")
        );
        assert_eq!(issues[1].file, "src/b (1).ts");
        assert!(issues[1].message.ends_with("Did you mean 'for'?"));
        assert_eq!((issues[2].file.as_str(), issues[2].line), ("", 0));
        assert!(parse("garbage ): error", "/w").is_empty());
    }
}
