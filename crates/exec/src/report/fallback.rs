//! For tools without a parser: every line that starts `path:line[:col]: message` becomes an
//! issue (gcc, clang, go vet, flake8, pylint's default, shellcheck's gcc format...).

use super::{relative, Issue};

pub fn parse(text: &str, base: &str) -> Vec<Issue> {
    text.lines().filter_map(|l| line(l, base)).collect()
}

fn line(l: &str, base: &str) -> Option<Issue> {
    let l = l.trim_start();
    let mut parts = l.splitn(4, ':');
    let file = parts.next()?.trim();
    if file.is_empty() || file.contains(' ') || !(file.contains('.') || file.contains('/')) {
        return None;
    }
    let line_no: u64 = parts.next()?.trim().parse().ok()?;
    let third = parts.next()?;
    let (col, rest) = match third.trim().parse::<u64>() {
        Ok(c) => (c, parts.next()?.to_string()),
        Err(_) => (
            0,
            match parts.next() {
                Some(more) => format!("{third}:{more}"),
                None => third.to_string(),
            },
        ),
    };
    let message = rest.trim();
    if message.is_empty() {
        return None;
    }
    let lower = message.to_ascii_lowercase();
    let severity = if lower.starts_with("warning") {
        "warning"
    } else if lower.starts_with("note") || lower.starts_with("info") {
        "info"
    } else {
        "error"
    };
    let message = ["error:", "warning:", "note:"]
        .iter()
        .find_map(|p| message.strip_prefix(p))
        .unwrap_or(message)
        .trim()
        .to_string();
    Some(Issue {
        file: relative(file.trim_start_matches("./"), base),
        line: line_no,
        col,
        rule: String::new(),
        message,
        severity,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_shapes() {
        let text = "main.c:3:5: error: expected ';'\n./pkg/x.go:10: unreachable code\nlib.py:7:1: warning: unused\nnot an issue\nhttp://example.com:80: nope\nFound 2 problems\n";
        let issues = parse(text, "/w");
        let got: Vec<_> = issues
            .iter()
            .map(|i| (i.file.as_str(), i.line, i.col, i.severity))
            .collect();
        assert_eq!(
            got,
            [
                ("main.c", 3, 5, "error"),
                ("pkg/x.go", 10, 0, "error"),
                ("lib.py", 7, 1, "warning")
            ]
        );
        assert_eq!(issues[0].message, "expected ';'");
    }
}
