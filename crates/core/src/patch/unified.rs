//! Unified diffs (`--- a/x` / `+++ b/x` / `@@ -l,n +l,n @@`, several files, `/dev/null` for
//! adds and deletes, git's `diff --git` headers and renames), parsed by `diffy`; this module
//! only turns its file patches into [`FileSection`]s.

use super::header_names::quote_header_names;
use super::model::{Action, FileSection, Hunk, LineOp, LinesHunk, NewFile, ParsedPatch};
use super::text::patch_line;
use crate::error::{ErrorCode, Result, WsfsError};
use diffy::patch_set::{FileMode, FileOperation, ParseOptions, PatchKind, PatchSet};

/// Parses a unified diff, one file section at a time (see [`split_files`]); git's extended
/// headers are understood in sections that start with `diff --git`. File names may be given
/// as the tools show them or C-quoted as git writes them (see [`quote_header_names`]).
pub fn parse(text: &str) -> Result<ParsedPatch> {
    let text = quote_header_names(text);
    let mut parsed = ParsedPatch::default();
    for (chunk, git) in split_files(&text) {
        parse_chunk(chunk, git, &mut parsed)?;
    }
    Ok(parsed)
}

/// Splits a patch into file sections: each starts at a `diff --git` line, or at a `--- `
/// line followed by a `+++ ` line that is not the one of a `diff --git` section's header.
/// Text before the first section is ignored (a commit message, prose).
pub fn split_files(text: &str) -> Vec<(&str, bool)> {
    let mut starts: Vec<(usize, bool)> = Vec::new();
    let mut in_git_header = false;
    let mut offset = 0;
    let mut lines = text.split_inclusive('\n').peekable();
    while let Some(line) = lines.next() {
        if line.starts_with("diff --git ") {
            starts.push((offset, true));
            in_git_header = true;
        } else if line.starts_with("--- ") && lines.peek().is_some_and(|l| l.starts_with("+++ ")) {
            if !in_git_header {
                starts.push((offset, false));
            }
            in_git_header = false;
        } else if line.starts_with("@@") {
            in_git_header = false;
        }
        offset += line.len();
    }
    let ends = starts
        .iter()
        .skip(1)
        .map(|s| s.0)
        .chain(std::iter::once(text.len()));
    starts
        .iter()
        .zip(ends)
        .map(|(&(start, git), end)| (&text[start..end], git))
        .collect()
}

fn parse_chunk(chunk: &str, git: bool, parsed: &mut ParsedPatch) -> Result<()> {
    let opts = if git {
        ParseOptions::gitdiff()
    } else {
        ParseOptions::unidiff()
    };
    for file in PatchSet::parse(chunk, opts) {
        let file = file.map_err(|e| invalid(&e.to_string()))?;
        let patch = match file.patch() {
            PatchKind::Text(patch) => patch,
            PatchKind::Binary(_) => {
                return Err(invalid_with(
                    "it contains a binary patch; apply_patch changes text files only",
                ))
            }
        };
        for mode in [file.old_mode(), file.new_mode()].into_iter().flatten() {
            if matches!(mode, FileMode::Symlink | FileMode::Gitlink) {
                return Err(invalid_with(
                    "it changes a symlink or a submodule; apply_patch changes regular files only",
                ));
            }
        }
        let hunks: Vec<Hunk> = patch.hunks().iter().map(lines_hunk).collect();
        let section = match file.operation() {
            FileOperation::Create(path) => {
                let mut s = FileSection::new(strip(path, "b/"), Action::Add);
                s.add = Some(new_file(patch.hunks()));
                s
            }
            FileOperation::Delete(path) => {
                let mut s = FileSection::new(strip(path, "a/"), Action::Delete);
                s.hunks = hunks;
                s
            }
            FileOperation::Modify { original, modified } => {
                let (_, path) = strip_pair(original, modified);
                if hunks.is_empty() {
                    parsed.notes.push(format!(
                        "{path}: the patch changes only its mode, which apply_patch keeps; nothing to do"
                    ));
                    continue;
                }
                let mut s = FileSection::new(path, Action::Update);
                s.hunks = hunks;
                s
            }
            FileOperation::Rename { from, to } => {
                let mut s = FileSection::new(from.to_string(), Action::Move);
                s.move_to = Some(to.to_string());
                s.hunks = hunks;
                s
            }
            FileOperation::Copy { .. } => {
                return Err(invalid_with(
                    "it copies a file (copy from/copy to), which apply_patch does not do; add the copy as a new file instead",
                ))
            }
        };
        if file.old_mode().is_some()
            && file.new_mode().is_some()
            && file.old_mode() != file.new_mode()
        {
            parsed.notes.push(format!(
                "{}: the mode change in the patch was ignored; apply_patch keeps file modes",
                section.path
            ));
        }
        check_all_lines_read(chunk, patch, &section.path)?;
        parsed.files.push(section);
    }
    Ok(())
}

/// diffy stops a hunk when its header's counts are reached and ignores what follows; a
/// `+` or `-` line left over would be a change silently dropped, so it is an error.
fn check_all_lines_read(chunk: &str, patch: &diffy::Patch<'_, str>, path: &str) -> Result<()> {
    let Some(first) = chunk
        .find("\n@@")
        .map(|i| i + 1)
        .or_else(|| chunk.starts_with("@@").then_some(0))
    else {
        return Ok(());
    };
    let in_text = chunk[first..]
        .lines()
        .filter(|l| l.starts_with('+') || l.starts_with('-'))
        .count();
    let parsed: usize = patch
        .hunks()
        .iter()
        .flat_map(|h| h.lines())
        .filter(|l| !matches!(l, diffy::Line::Context(_)))
        .count();
    if in_text > parsed {
        return Err(invalid(&format!(
            "{path}: {} '+'/'-' lines are outside every hunk, so an '@@' header counts fewer lines than its hunk has",
            in_text - parsed
        )));
    }
    Ok(())
}

/// `a/x` and `b/x` name `x` (git's default prefixes); other names are taken as they are.
/// A plain unified diff whose two names differ (`x.orig` / `x`) patches the `+++` file.
fn strip_pair(original: &str, modified: &str) -> (String, String) {
    match (original.strip_prefix("a/"), modified.strip_prefix("b/")) {
        (Some(o), Some(m)) if !o.is_empty() && !m.is_empty() => (o.to_string(), m.to_string()),
        _ => (original.to_string(), modified.to_string()),
    }
}

fn strip(path: &str, prefix: &str) -> String {
    path.strip_prefix(prefix)
        .filter(|rest| !rest.is_empty())
        .unwrap_or(path)
        .to_string()
}

fn lines_hunk(h: &diffy::Hunk<'_, str>) -> Hunk {
    let old = h.old_range();
    // `-5,0` inserts after line 5 (index 5); `-5,3` starts at line 5 (index 4).
    let stated = if old.is_empty() {
        old.start()
    } else {
        old.start().saturating_sub(1)
    };
    let mut hunk = LinesHunk {
        stated_index: Some(stated),
        ..LinesHunk::default()
    };
    for line in h.lines() {
        match line {
            diffy::Line::Context(s) => {
                hunk.old_missing_newline = !s.ends_with('\n');
                hunk.new_missing_newline = !s.ends_with('\n');
                hunk.ops.push(LineOp::Context(patch_line(s)));
            }
            diffy::Line::Delete(s) => {
                hunk.old_missing_newline = !s.ends_with('\n');
                hunk.ops.push(LineOp::Delete(patch_line(s)));
            }
            diffy::Line::Insert(s) => {
                hunk.new_missing_newline = !s.ends_with('\n');
                hunk.ops.push(LineOp::Insert(patch_line(s)));
            }
        }
    }
    Hunk::Lines(hunk)
}

/// The content of a created file: its hunks' added lines, with the endings they carry.
fn new_file(hunks: &[diffy::Hunk<'_, str>]) -> NewFile {
    let mut file = NewFile {
        lines: Vec::new(),
        final_newline: true,
    };
    for h in hunks {
        for line in h.lines() {
            if let diffy::Line::Insert(s) = line {
                file.final_newline = s.ends_with('\n');
                file.lines
                    .push(s.strip_suffix('\n').unwrap_or(s).to_string());
            }
        }
    }
    file
}

fn invalid(parser: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!(
            "patch is not a valid unified diff ({parser}). Each file needs '--- a/path' and '+++ b/path' lines, and each '@@ -l,n +l,n @@' header must count the hunk's lines exactly (context and '-' lines for n on the left, context and '+' lines on the right), with hunks in file order. The '*** Begin Patch' format needs no line numbers"
        ),
    )
}

fn invalid_with(why: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("patch cannot be applied: {why}"),
    )
}
