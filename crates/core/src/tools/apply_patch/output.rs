//! What `apply_patch` returns, and the text a model reads: a rejected patch must be
//! impossible to mistake for an applied one, and must say how to fix it.

use crate::commit::ChangeRecord;
use crate::patch::model::{Action, Reason, Rejection};
use crate::tools::contract::{Metrics, ToolOutput};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;

#[derive(Debug, Clone, Serialize)]
pub struct FileChanged {
    /// The file's path (for a move, where it is now).
    pub path: String,
    pub action: Action,
    /// For a move: where the file was.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
    pub added_lines: u64,
    pub removed_lines: u64,
}

#[derive(Debug, Serialize)]
pub struct ApplyPatchOutput {
    /// Whether the changes in `files_changed` were written (with `dry_run`: would be).
    pub applied: bool,
    pub files_changed: Vec<FileChanged>,
    pub rejected_hunks: Vec<Rejection>,
    /// A unified diff of what was (or would be) applied, cut at `max_read_bytes`.
    pub diff: String,
    #[serde(skip)]
    pub dry_run: bool,
    /// Files not written because of a rejection elsewhere (strict) or in them.
    #[serde(skip)]
    pub files_rejected: usize,
    /// Each committed file's path and sha256 before and after, for an audit log.
    #[serde(skip)]
    pub changes: Vec<ChangeRecord>,
}

/// Lines of a rejected hunk shown in the text, at most.
const SHOWN_EXPECTED: usize = 8;

impl ToolOutput for ApplyPatchOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.files_changed = Some(self.files_changed.len() as u64);
    }

    fn text(&self) -> Cow<'_, str> {
        let mut t = String::new();
        let files = crate::render::count(self.files_changed.len() as u64, "file", "files");
        match (self.rejected_hunks.is_empty(), self.applied, self.dry_run) {
            (true, _, false) => {
                let _ = write!(t, "applied the patch: {files} changed");
            }
            (true, _, true) => {
                let _ = write!(t, "dry run: the patch applies cleanly and would change {files}; nothing was written");
            }
            (false, false, dry) => {
                let hunks = crate::render::count(self.rejected_hunks.len() as u64, "hunk", "hunks");
                let _ = write!(
                    t,
                    "PATCH NOT APPLIED: {hunks} rejected, so nothing {}.",
                    if dry {
                        "would be written (and, in this dry run, nothing was)"
                    } else {
                        "was written"
                    }
                );
            }
            (false, true, dry) => {
                let hunks = crate::render::count(self.rejected_hunks.len() as u64, "hunk", "hunks");
                let _ = write!(
                    t,
                    "PATCH PARTLY APPLIED (strict: false): {} {files}; {} with rejected hunks {} unchanged ({hunks} rejected).",
                    if dry { "dry run, would write" } else { "wrote" },
                    crate::render::count(self.files_rejected as u64, "file", "files"),
                    if self.files_rejected == 1 { "was left" } else { "were left" },
                );
            }
        }
        for f in &self.files_changed {
            let _ = write!(t, "\n  {} {}", f.action.as_str(), f.path);
            if let Some(from) = &f.from {
                let _ = write!(t, " (from {from})");
            }
            let _ = write!(t, " (+{} -{})", f.added_lines, f.removed_lines);
        }
        if !self.rejected_hunks.is_empty() {
            t.push_str("\nRejected:");
            for r in &self.rejected_hunks {
                rejection(&mut t, r);
            }
            t.push_str("\nHow to fix:");
            let mut reasons: Vec<Reason> = self.rejected_hunks.iter().map(|r| r.reason).collect();
            reasons.dedup();
            let mut said = Vec::new();
            for reason in reasons {
                let advice = advice(reason);
                if !said.contains(&advice) {
                    let _ = write!(t, "\n- {advice}");
                    said.push(advice);
                }
            }
        }
        if self.dry_run && !self.diff.is_empty() {
            t.push('\n');
            t.push_str(&self.diff);
        }
        Cow::Owned(t)
    }
}

fn rejection(t: &mut String, r: &Rejection) {
    let which = if r.hunk == 0 {
        r.path.clone()
    } else {
        format!("{} hunk {}", r.path, r.hunk)
    };
    let _ = write!(t, "\n- {which}: {}: {}", r.reason.as_str(), r.detail);
    if !r.expected.is_empty() {
        t.push_str("\n  expected:");
        for line in r.expected.iter().take(SHOWN_EXPECTED) {
            let _ = write!(t, "\n    |{line}");
        }
        if r.expected.len() > SHOWN_EXPECTED {
            let _ = write!(
                t,
                "\n    ... ({} more lines)",
                r.expected.len() - SHOWN_EXPECTED
            );
        }
    }
    // What the file has at the most similar place, marked as edit_file marks it, and the
    // call that shows it.
    if let (Some(first), false) = (r.nearest_line, r.file_lines.is_empty()) {
        let n = r.file_lines.len() as u64;
        let (span, them) = match n {
            1 => (format!("line {first}"), "it"),
            _ => (format!("lines {first}-{}", first + n - 1), "them"),
        };
        let _ = write!(
            t,
            "\n  the file at {span} (read_file with start_line={first}, max_lines={n} shows {them}):"
        );
        let mut marked = false;
        for (k, line) in r.file_lines.iter().take(SHOWN_EXPECTED).enumerate() {
            let (shown, has_marks) = crate::tools::edit_file::visible(line);
            marked |= has_marks;
            let _ = write!(t, "\n    {}| {shown}", first + k as u64);
        }
        if r.file_lines.len() > SHOWN_EXPECTED {
            let _ = write!(
                t,
                "\n    ... ({} more lines)",
                r.file_lines.len() - SHOWN_EXPECTED
            );
        }
        if marked {
            t.push_str("\n    (→ is a tab, · a trailing space, ␍ a carriage return)");
        }
    }
}

fn advice(reason: Reason) -> &'static str {
    match reason {
        Reason::ContextNotFound => "read the file again with read_file and resend the patch with context and '-' lines copied exactly from its current content",
        Reason::Ambiguous => "add more context lines around the change, or an '@@ <line>' anchor naming the enclosing function or class, so the hunk matches one place",
        Reason::Stale => "the file changed since you read it: read it again (read_file gives its new sha256 and line numbers) and redo the change",
        Reason::OutOfRange => "read the file again for its current line count and use line numbers inside it",
        Reason::FileNotFound => "check the path with list_dir; to create a file use '*** Add File:' (or '--- /dev/null' in a unified diff)",
        Reason::FileExists => "the file already exists: change it with '*** Update File:' (or delete it first), or choose another name",
        Reason::Overlap => "merge the overlapping hunks into one",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn out(applied: bool, rejected: Vec<Rejection>) -> ApplyPatchOutput {
        ApplyPatchOutput {
            applied,
            files_changed: vec![],
            rejected_hunks: rejected,
            diff: String::new(),
            dry_run: false,
            files_rejected: 1,
            changes: vec![],
        }
    }

    #[test]
    fn a_rejected_patch_is_unmistakable_and_says_how_to_fix_it() {
        let r = Rejection {
            path: "a.txt".into(),
            hunk: 2,
            reason: Reason::ContextNotFound,
            expected: vec!["fn x() {".into()],
            nearest_line: Some(4),
            detail: "its 1 context/removed lines are not in the file".into(),
            file_lines: vec!["fn  x()\t{\r\n".into()],
        };
        let text = out(false, vec![r]).text().into_owned();
        assert!(
            text.starts_with("PATCH NOT APPLIED: 1 hunk rejected, so nothing was written."),
            "{text}"
        );
        assert!(text.contains("a.txt hunk 2: context_not_found"), "{text}");
        assert!(text.contains("    |fn x() {"), "{text}");
        assert!(
            text.contains("  the file at line 4 (read_file with start_line=4, max_lines=1 shows it):\n    4| fn  x()→{␍\n    (→ is a tab"),
            "{text}"
        );
        assert!(text.contains("read the file again"), "{text}");
        let ok = out(true, vec![]).text().into_owned();
        assert!(ok.starts_with("applied the patch"), "{ok}");
    }
}
