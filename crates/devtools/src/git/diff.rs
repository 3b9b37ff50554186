//! `git_diff`: hardened `git diff` (no external diff, no textconv), split per file with its
//! added and deleted line counts, bounded.

use super::quote::unquote;
use super::{check_ref, Git};
use crate::error::{ErrorCode, WsfsError};
use crate::exec::runner::{Control, Runner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Bytes of `diff_text`; each file's `diff` gets at most [`MAX_FILE_DIFF`].
pub const MAX_DIFF_TEXT: usize = 100_000;
pub const MAX_FILE_DIFF: usize = 20_000;
pub const MAX_FILES: usize = 1000;
/// What git may print before the diff is refused as too large to count.
const MAX_GIT_OUTPUT: usize = 64 << 20;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitDiffArgs {
    /// Show what is staged (the index against HEAD, or against base_ref) instead of the unstaged changes in the work tree. Default false.
    #[serde(default)]
    pub staged: bool,
    /// Only these files or directories (workspace paths, taken literally: no globs).
    #[serde(default)]
    pub pathspec: Vec<String>,
    /// Compare from this revision (a branch, tag or commit such as 'main' or 'HEAD~1') instead of the index.
    #[serde(default)]
    pub base_ref: String,
    /// Compare base_ref to this revision instead of to the work tree. Needs base_ref.
    #[serde(default)]
    pub target_ref: String,
}

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct GitDiff {
    /// The unified diff, cut at a line boundary past 100,000 bytes (with a note saying so).
    pub diff_text: String,
    pub files_changed: Vec<FileDiff>,
    pub additions: u64,
    pub deletions: u64,
    /// Whether diff_text or a file's diff was cut, or files were left out.
    pub truncated: bool,
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted_files: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct FileDiff {
    /// Relative to the repository's root (the new name of a renamed file).
    pub path: String,
    /// modified, added, deleted, renamed, copied, mode_changed.
    pub status: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub binary: bool,
    pub additions: u64,
    pub deletions: u64,
    /// This file's part of the diff (cut past 20,000 bytes).
    pub diff: String,
}

/// Runs hardened `git diff` in `dir`. `pathspec` entries are repository paths the caller has
/// already resolved and checked against the policy.
pub fn git_diff(
    runner: &Runner,
    dir: &Path,
    args: &GitDiffArgs,
    ctl: &Control,
) -> Result<GitDiff, WsfsError> {
    if !args.target_ref.is_empty() && args.base_ref.is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "target_ref needs base_ref: give both to compare two revisions",
        ));
    }
    let mut argv = vec![
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--no-color",
        "--find-renames",
    ];
    if args.staged {
        argv.push("--cached");
    }
    argv.push("--end-of-options");
    for (what, r) in [
        ("base_ref", &args.base_ref),
        ("target_ref", &args.target_ref),
    ] {
        if !r.is_empty() {
            check_ref(what, r)?;
            argv.push(r);
        }
    }
    argv.push("--");
    argv.extend(args.pathspec.iter().map(String::as_str));
    let git = Git::open(runner, dir, ctl)?;
    let mut req = git.request(&argv);
    req.stdout_cap = Some(MAX_GIT_OUTPUT);
    req.env.push(("GIT_LITERAL_PATHSPECS".into(), "1".into()));
    let out = git.run_request(&req, None)?;
    if out.exit_code != Some(0) {
        return Err(git.failure("computing the diff", &out));
    }
    let bytes = out.stdout.complete().ok_or_else(|| {
        WsfsError::new(
            ErrorCode::TooLarge,
            "the diff is over 64 MiB; narrow it with pathspec",
        )
    })?;
    Ok(parse(&String::from_utf8_lossy(bytes)))
}

/// Splits `git diff` output into files and counts their lines.
pub fn parse(text: &str) -> GitDiff {
    let mut result = GitDiff::default();
    let mut current: Option<(FileDiff, String)> = None;
    let mut in_hunk = false;
    let finish = |result: &mut GitDiff, file: Option<(FileDiff, String)>| {
        let Some((mut file, body)) = file else {
            return;
        };
        result.additions += file.additions;
        result.deletions += file.deletions;
        if result.files_changed.len() >= MAX_FILES {
            result.omitted_files += 1;
            result.truncated = true;
            return;
        }
        let (cut, was_cut) = cut_at_line(&body, MAX_FILE_DIFF);
        file.diff = cut;
        result.truncated |= was_cut;
        result.files_changed.push(file);
    };
    for line in text.split_inclusive('\n') {
        let bare = line.trim_end_matches('\n');
        if let Some(header) = bare.strip_prefix("diff --git ") {
            finish(&mut result, current.take());
            in_hunk = false;
            let path = header_path(header).unwrap_or_default();
            current = Some((
                FileDiff {
                    path,
                    status: "modified",
                    ..FileDiff::default()
                },
                String::new(),
            ));
        }
        let Some((file, body)) = current.as_mut() else {
            continue;
        };
        body.push_str(line);
        if bare.starts_with("@@") {
            in_hunk = true;
            continue;
        }
        if in_hunk {
            if bare.starts_with('+') {
                file.additions += 1;
            } else if bare.starts_with('-') {
                file.deletions += 1;
            }
            continue;
        }
        if let Some(p) = bare.strip_prefix("+++ ") {
            if p != "/dev/null" {
                file.path = strip_side(&unquote(p), "b/");
            }
        } else if let Some(p) = bare.strip_prefix("--- ") {
            if p != "/dev/null" && file.path.is_empty() {
                file.path = strip_side(&unquote(p), "a/");
            }
        } else if bare.starts_with("new file mode") {
            file.status = "added";
        } else if bare.starts_with("deleted file mode") {
            file.status = "deleted";
        } else if let Some(p) = bare.strip_prefix("rename from ") {
            file.status = "renamed";
            file.from = Some(unquote(p));
        } else if let Some(p) = bare.strip_prefix("rename to ") {
            file.path = unquote(p);
        } else if let Some(p) = bare.strip_prefix("copy from ") {
            file.status = "copied";
            file.from = Some(unquote(p));
        } else if let Some(p) = bare.strip_prefix("copy to ") {
            file.path = unquote(p);
        } else if bare.starts_with("old mode") && file.status == "modified" {
            file.status = "mode_changed";
        } else if bare.starts_with("Binary files ") || bare == "GIT binary patch" {
            file.binary = true;
        }
    }
    finish(&mut result, current.take());
    let (cut, was_cut) = cut_at_line(text, MAX_DIFF_TEXT);
    result.truncated |= was_cut;
    result.diff_text = if was_cut {
        format!(
            "{cut}[diff cut at {MAX_DIFF_TEXT} bytes of {}; see files_changed, or narrow with pathspec]\n",
            text.len()
        )
    } else {
        cut
    };
    result
}

/// The path in `a/x b/x` (the header of a file whose name has no space is unambiguous; a
/// quoted pair is split on the quotes). `+++`, `rename to` and friends correct it later.
fn header_path(header: &str) -> Option<String> {
    if let Some(rest) = header.strip_prefix('"') {
        let end = find_closing_quote(rest)?;
        let b = header[end + 2..].trim_start();
        return Some(strip_side(&unquote(b), "b/"));
    }
    let half = header.len().checked_sub(1)? / 2;
    let (a, b) = (header.get(..half)?, header.get(half + 1..)?);
    if a.strip_prefix("a/") == b.strip_prefix("b/") {
        return Some(strip_side(b, "b/"));
    }
    header.rsplit_once(" b/").map(|(_, b)| b.to_string())
}

fn find_closing_quote(s: &str) -> Option<usize> {
    let bytes = s.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'\\' => i += 2,
            b'"' => return Some(i),
            _ => i += 1,
        }
    }
    None
}

fn strip_side(path: &str, side: &str) -> String {
    path.strip_prefix(side).unwrap_or(path).to_string()
}

/// `text` up to `max` bytes, ending at a line boundary; and whether it was cut.
fn cut_at_line(text: &str, max: usize) -> (String, bool) {
    if text.len() <= max {
        return (text.to_string(), false);
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let end = text[..end].rfind('\n').map_or(end, |i| i + 1);
    (text[..end].to_string(), true)
}

impl GitDiff {
    pub fn text(&self) -> String {
        if self.files_changed.is_empty() {
            return "No differences.".to_string();
        }
        let mut s = format!(
            "{} file(s) changed, +{} -{}\n",
            self.files_changed.len() as u64 + self.omitted_files,
            self.additions,
            self.deletions
        );
        s.push_str(&self.diff_text);
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIFF: &str = "\
diff --git a/src/lib.rs b/src/lib.rs
index 1111111..2222222 100644
--- a/src/lib.rs
+++ b/src/lib.rs
@@ -1,3 +1,3 @@
 fn a() {}
-fn b() {}
+fn c() {}
+++ not a header: an added line starting with ++
diff --git a/gone.txt b/gone.txt
deleted file mode 100644
index 3333333..0000000
--- a/gone.txt
+++ /dev/null
@@ -1,2 +0,0 @@
-x
-y
diff --git a/old name.txt b/new name.txt
similarity index 90%
rename from old name.txt
rename to new name.txt
diff --git a/img.png b/img.png
new file mode 100644
index 0000000..4444444
Binary files /dev/null and b/img.png differ
diff --git \"a/\\303\\251t\\303\\251.txt\" \"b/\\303\\251t\\303\\251.txt\"
old mode 100644
new mode 100755
";

    #[test]
    fn files_statuses_and_counts() {
        let d = parse(DIFF);
        let got: Vec<_> = d
            .files_changed
            .iter()
            .map(|f| {
                (
                    f.path.as_str(),
                    f.status,
                    f.additions,
                    f.deletions,
                    f.binary,
                )
            })
            .collect();
        assert_eq!(
            got,
            [
                ("src/lib.rs", "modified", 2, 1, false),
                ("gone.txt", "deleted", 0, 2, false),
                ("new name.txt", "renamed", 0, 0, false),
                ("img.png", "added", 0, 0, true),
                ("été.txt", "mode_changed", 0, 0, false),
            ]
        );
        assert_eq!(d.files_changed[2].from.as_deref(), Some("old name.txt"));
        assert_eq!((d.additions, d.deletions), (2, 3));
        assert!(d.files_changed[0]
            .diff
            .starts_with("diff --git a/src/lib.rs"));
        assert!(d.files_changed[0].diff.ends_with("starting with ++\n"));
        assert_eq!(d.diff_text, DIFF);
        assert!(!d.truncated);
    }

    #[test]
    fn large_diffs_are_cut_at_lines() {
        let mut text = String::from("diff --git a/f b/f\n--- a/f\n+++ b/f\n@@ -0,0 +1,50000 @@\n");
        for i in 0..50_000 {
            text.push_str(&format!("+line {i}\n"));
        }
        let d = parse(&text);
        assert!(d.truncated);
        assert_eq!(d.files_changed[0].additions, 50_000);
        assert!(d.files_changed[0].diff.len() <= MAX_FILE_DIFF);
        assert!(d.files_changed[0].diff.ends_with('\n'));
        assert!(d.diff_text.len() < MAX_DIFF_TEXT + 200);
        assert!(d.diff_text.contains("[diff cut at"));
    }

    #[test]
    fn an_empty_diff() {
        let d = parse("");
        assert!(d.files_changed.is_empty());
        assert_eq!(d.text(), "No differences.");
    }
}
