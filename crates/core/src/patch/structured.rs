//! The structured `files` form: line ranges of the current file, replaced.

use super::model::{Action, FileSection, Hunk, RangeHunk};
use super::text::strip_ending;
use crate::error::{ErrorCode, Result, WsfsError};

/// One range replacement as the arguments give it.
pub struct RangeEdit<'a> {
    pub start_line: u64,
    pub end_line: u64,
    pub replace_with: &'a str,
}

/// A file of the `files` form as a section.
pub fn section(path: &str, file_hash: &str, edits: &[RangeEdit<'_>]) -> Result<FileSection> {
    if edits.is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("files: {path} has no hunks; give at least one {{start_line, end_line, replace_with}}"),
        ));
    }
    let mut section = FileSection::new(path, Action::Update);
    section.file_hash = hash(path, file_hash)?;
    section.hunks = edits
        .iter()
        .map(|e| {
            Hunk::Range(RangeHunk {
                start_line: e.start_line,
                end_line: e.end_line,
                replace_with: lines(e.replace_with),
            })
        })
        .collect();
    Ok(section)
}

/// `replace_with` as lines: `"a\nb"` and `"a\nb\n"` are both two lines; `""` is none.
pub fn lines(text: &str) -> Vec<String> {
    if text.is_empty() {
        return Vec::new();
    }
    let body = text.strip_suffix('\n').unwrap_or(text);
    body.split('\n')
        .map(|l| strip_ending(l).to_string())
        .collect()
}

/// A `file_hash` must be a sha256 in hex (`""` means none); it is compared in lowercase.
fn hash(path: &str, given: &str) -> Result<Option<String>> {
    let given = given.trim();
    if given.is_empty() {
        return Ok(None);
    }
    if given.len() != 64 || !given.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("files: the file_hash of {path} is not a sha256 in hex (64 hex digits); use the sha256 read_file reports, or leave it out"),
        ));
    }
    Ok(Some(given.to_ascii_lowercase()))
}
