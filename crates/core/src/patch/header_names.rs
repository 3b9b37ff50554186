//! File names in a unified diff's headers, as the tools show them.
//!
//! A name that is not UTF-8 is shown by every tool in its escaped form (`caf\xe9.txt`, see
//! `crate::names`), and a model copies that into its diff. git writes such a name C-quoted
//! instead (`"a/caf\351.txt"`). `diffy` accepts neither as a `&str` name (a backslash must be
//! quoted, and a quoted name must decode to UTF-8), so before parsing, every name in a
//! `---`/`+++`/`rename from`/`rename to` line (and quoted names in a `diff --git` line) is
//! rewritten as the quoted form of its shown name: `diffy` then hands back exactly the shown
//! name, which the tools read back as the file's bytes.

use crate::names::encode;
use std::borrow::Cow;
use std::fmt::Write;

/// `patch` with every header name rewritten as described in the module documentation.
pub fn quote_header_names(patch: &str) -> Cow<'_, str> {
    if !patch.contains(['\\', '"']) {
        return Cow::Borrowed(patch);
    }
    let mut out = String::with_capacity(patch.len() + 16);
    let mut lines = patch.split_inclusive('\n').peekable();
    let mut after_minus = false;
    while let Some(line) = lines.next() {
        // `---` and `+++` are headers only as a pair (as `unified::split_files` decides):
        // alone, `--- x` is a hunk's removed line `-- x`, never rewritten.
        let header = if line.starts_with("--- ") {
            lines.peek().is_some_and(|next| next.starts_with("+++ "))
        } else {
            after_minus && line.starts_with("+++ ")
        };
        after_minus = header && line.starts_with("--- ");
        out.push_str(&rewrite_line(line, header));
    }
    Cow::Owned(out)
}

fn rewrite_line(line: &str, file_header: bool) -> Cow<'_, str> {
    let body = line.trim_end_matches(['\n', '\r']);
    let ending = &line[body.len()..];
    for prefix in ["--- ", "+++ "] {
        if let Some(rest) = body.strip_prefix(prefix).filter(|_| file_header) {
            // The name ends at a tab (a timestamp may follow); a quoted name has no raw tab.
            let (name, tail) = rest.split_at(rest.find('\t').unwrap_or(rest.len()));
            return Cow::Owned(format!("{prefix}{}{tail}{ending}", diffy_name(name)));
        }
    }
    for prefix in ["rename from ", "rename to "] {
        if let Some(name) = body.strip_prefix(prefix) {
            return Cow::Owned(format!("{prefix}{}{ending}", diffy_name(name)));
        }
    }
    if let Some(rest) = body.strip_prefix("diff --git ") {
        if let Some((left, right)) = split_quoted_pair(rest) {
            return Cow::Owned(format!(
                "diff --git {} {}{ending}",
                diffy_name(left),
                diffy_name(right)
            ));
        }
    }
    Cow::Borrowed(line)
}

/// The two names of a `diff --git` line when at least one is quoted (unquoted pairs are
/// split by `diffy` itself, which reads them literally).
fn split_quoted_pair(rest: &str) -> Option<(&str, &str)> {
    if rest.starts_with('"') {
        let end = quoted_end(rest)?;
        let (left, right) = rest.split_at(end);
        return Some((left, right.strip_prefix(' ')?));
    }
    let at = rest.find(" \"")?;
    Some((&rest[..at], &rest[at + 1..]))
}

/// The byte just after the closing quote of the quoted name `s` starts with.
fn quoted_end(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 1;
    loop {
        match bytes.get(i)? {
            b'"' => return Some(i + 1),
            b'\\' => i += 2,
            _ => i += 1,
        }
    }
}

/// The name as `diffy` must see it to return its shown form: unchanged when it needs no
/// quoting, else the shown name quoted (a git-quoted name is decoded and shown first).
fn diffy_name(raw: &str) -> Cow<'_, str> {
    let shown: Cow<'_, str> = match raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        Some(inner) if raw.len() >= 2 => match c_unquote(inner) {
            Some(bytes) => Cow::Owned(show_path(&bytes)),
            // Not valid C quoting: leave it for diffy to report.
            None => return Cow::Borrowed(raw),
        },
        _ => Cow::Borrowed(raw),
    };
    if !shown.bytes().any(needs_quoting) && !raw.starts_with('"') {
        return shown;
    }
    let mut quoted = String::with_capacity(shown.len() + 2);
    quoted.push('"');
    for c in shown.chars() {
        match c {
            '\\' => quoted.push_str("\\\\"),
            '"' => quoted.push_str("\\\""),
            c if c.is_ascii() && needs_quoting(c as u8) => {
                let _ = write!(quoted, "\\{:03o}", c as u8);
            }
            c => quoted.push(c),
        }
    }
    quoted.push('"');
    Cow::Owned(quoted)
}

/// Bytes `diffy` refuses in an unquoted name.
fn needs_quoting(b: u8) -> bool {
    b < 0x20 || b == 0x7f || b == b'"' || b == b'\\'
}

/// A path's bytes with each name shown as the tools show it.
fn show_path(bytes: &[u8]) -> String {
    bytes
        .split(|&b| b == b'/')
        .map(encode)
        .collect::<Vec<_>>()
        .join("/")
}

/// The bytes of a C-quoted name's inside, as git writes it (`\\`, `\"`, `\t`, `\n`, ...,
/// `\ooo`); `None` for an escape git never writes.
fn c_unquote(inner: &str) -> Option<Vec<u8>> {
    let bytes = inner.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != b'\\' {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        let c = *bytes.get(i + 1)?;
        i += 2;
        out.push(match c {
            b'a' => 0x07,
            b'b' => 0x08,
            b't' => b'\t',
            b'n' => b'\n',
            b'v' => 0x0b,
            b'f' => 0x0c,
            b'r' => b'\r',
            b'"' | b'\\' => c,
            b'0'..=b'3' => {
                let digits = bytes.get(i..i + 2)?;
                if !digits.iter().all(|d| (b'0'..=b'7').contains(d)) {
                    return None;
                }
                i += 2;
                (c - b'0') << 6 | (digits[0] - b'0') << 3 | (digits[1] - b'0')
            }
            _ => return None,
        });
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shown_names_and_git_quoted_names_become_quoted_shown_names() {
        let p = "--- a/d\\xff/caf\\xe9.txt\n+++ b/d\\xff/caf\\xe9.txt\t2024-01-01\n@@ -1 +1 @@\n-\\x\n+y\n";
        assert_eq!(
            quote_header_names(p),
            "--- \"a/d\\\\xff/caf\\\\xe9.txt\"\n+++ \"b/d\\\\xff/caf\\\\xe9.txt\"\t2024-01-01\n@@ -1 +1 @@\n-\\x\n+y\n"
        );
        // git's own quoting of the bytes ff and e9: decoded, then shown.
        let git = "diff --git \"a/caf\\351.txt\" \"b/caf\\351.txt\"\nrename from \"caf\\351.txt\"\n--- \"a/caf\\351.txt\"\n+++ \"b/caf\\351.txt\"\n";
        assert_eq!(
            quote_header_names(git),
            "diff --git \"a/caf\\\\xe9.txt\" \"b/caf\\\\xe9.txt\"\nrename from \"caf\\\\xe9.txt\"\n--- \"a/caf\\\\xe9.txt\"\n+++ \"b/caf\\\\xe9.txt\"\n"
        );
        // A quoted UTF-8 name with a tab stays a quoted UTF-8 name with a tab.
        assert_eq!(
            quote_header_names("--- \"a/x\\ty\"\n+++ b/y\n"),
            "--- \"a/x\\011y\"\n+++ b/y\n"
        );
    }

    #[test]
    fn ordinary_patches_are_untouched() {
        // Hunk lines are content, even one that reads like a header (`-- "a\b"` removed).
        let p =
            "--- a/x.txt\n+++ b/x.txt\n@@ -1,2 +1,1 @@\n-\"quoted\" \\ text\n--- \"a\\b\"\n+y\n";
        let out = quote_header_names(p);
        assert_eq!(out, p);
        assert!(matches!(
            quote_header_names("--- a/x\n+++ b/x\n"),
            Cow::Borrowed(_)
        ));
    }
}
