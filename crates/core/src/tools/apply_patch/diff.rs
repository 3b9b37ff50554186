//! The unified diff `apply_patch` returns: what it applied, made with `similar` from the old
//! and new texts (so it shows where loosely matched hunks really landed), bounded in size.

use crate::control::CallControl;
use similar::TextDiff;

/// One file's diff: `old`/`new` are `None` for a file that did not exist / no longer does.
pub fn file_diff(
    old_path: &str,
    new_path: &str,
    old: Option<&str>,
    new: Option<&str>,
    ctl: &CallControl,
) -> String {
    let a = old.map_or_else(|| "/dev/null".to_string(), |_| format!("a/{old_path}"));
    let b = new.map_or_else(|| "/dev/null".to_string(), |_| format!("b/{new_path}"));
    let (old, new) = (old.unwrap_or(""), new.unwrap_or(""));
    if old == new {
        return if old_path == new_path {
            String::new()
        } else {
            format!("rename from {old_path}\nrename to {new_path}\n")
        };
    }
    let diff = TextDiff::configure()
        .deadline(ctl.deadline())
        .diff_lines(old, new);
    diff.unified_diff().header(&a, &b).to_string()
}

/// Joins per-file diffs, cut at a line boundary once `limit` bytes are reached.
pub fn bounded(diffs: &[String], limit: usize) -> String {
    let total: usize = diffs.iter().map(String::len).sum();
    let mut out = String::with_capacity(total.min(limit));
    for d in diffs {
        out.push_str(d);
    }
    if total <= limit {
        return out;
    }
    let mut cut = limit;
    while !out.is_char_boundary(cut) {
        cut -= 1;
    }
    let cut = out[..cut].rfind('\n').map_or(0, |i| i + 1);
    out.truncate(cut);
    out.push_str(&format!(
        "[diff truncated: showing the first {cut} of {total} bytes]\n"
    ));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn headers_for_each_action_and_the_bound() {
        let ctl = CallControl::new(Duration::from_secs(5), None);
        let d = file_diff("x", "x", Some("a\n"), Some("b\n"), &ctl);
        assert!(
            d.starts_with("--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n"),
            "{d}"
        );
        assert!(file_diff("x", "x", None, Some("n\n"), &ctl).starts_with("--- /dev/null\n+++ b/x"));
        assert!(file_diff("x", "x", Some("o\n"), None, &ctl).contains("+++ /dev/null"));
        assert_eq!(
            file_diff("x", "y", Some("s\n"), Some("s\n"), &ctl),
            "rename from x\nrename to y\n"
        );
        let cut = bounded(&["aaaa\nbbbb\n".to_string(), "cccc\n".to_string()], 12);
        assert_eq!(
            cut,
            "aaaa\nbbbb\n[diff truncated: showing the first 10 of 15 bytes]\n"
        );
        assert_eq!(bounded(&["ab\n".to_string()], 12), "ab\n");
    }
}
