//! The planning core of `apply_patch`, without any I/O: parsing the three patch forms
//! (unified diffs, the `*** Begin Patch` format, the structured `files` form) into file
//! sections, and applying a section's hunks to a file's text in memory.

pub mod apply;
pub mod header_names;
pub mod locate;
pub mod model;
pub mod openai;
pub mod structured;
pub mod text;
pub mod unified;

#[cfg(test)]
mod tests;

use crate::error::{ErrorCode, Result, WsfsError};
use model::{Action, FileSection, ParsedPatch};
use std::collections::HashMap;

/// Which syntax a patch is written in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// `*** Begin Patch` ... `*** End Patch`.
    BeginPatch,
    /// `--- a/x` / `+++ b/x` / `@@`, with or without git's headers.
    Unified,
}

pub fn detect(text: &str) -> Option<Format> {
    if openai::detect(text) {
        return Some(Format::BeginPatch);
    }
    let unified = text
        .lines()
        .any(|l| l.starts_with("--- ") || l.starts_with("+++ ") || l.starts_with("diff --git "));
    unified.then_some(Format::Unified)
}

/// Parses a patch in either syntax and checks that its sections can be applied together.
pub fn parse(text: &str) -> Result<ParsedPatch> {
    let parsed = match detect(text) {
        Some(Format::BeginPatch) => openai::parse(text)?,
        Some(Format::Unified) => unified::parse(text)?,
        None => {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                "patch is neither a unified diff ('--- a/path', '+++ b/path', '@@ ... @@' hunks) nor in the '*** Begin Patch' format; see the tool description",
            ))
        }
    };
    merge_sections(parsed)
}

/// Two update sections of one file become one (their hunks in order); any other repeat of
/// a path (including as a move's destination) is refused, since the result would depend on
/// the order of the sections.
pub fn merge_sections(mut parsed: ParsedPatch) -> Result<ParsedPatch> {
    if parsed.files.is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "the patch changes no file",
        ));
    }
    let mut merged: Vec<FileSection> = Vec::with_capacity(parsed.files.len());
    let mut seen: HashMap<String, usize> = HashMap::new();
    for section in parsed.files.drain(..) {
        let names = std::iter::once(&section.path).chain(section.move_to.as_ref());
        let repeat = names.clone().find_map(|n| seen.get(n).copied());
        match repeat {
            Some(i)
                if merged[i].action == Action::Update
                    && section.action == Action::Update
                    && merged[i].path == section.path
                    && merged[i].file_hash == section.file_hash =>
            {
                merged[i].hunks.extend(section.hunks);
            }
            Some(i) => {
                return Err(WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "the patch names {} in two file sections ({} and {}); give each file one section",
                        section.path,
                        merged[i].action.as_str(),
                        section.action.as_str()
                    ),
                ))
            }
            None => {
                for name in names {
                    seen.insert(name.clone(), merged.len());
                }
                merged.push(section);
            }
        }
    }
    parsed.files = merged;
    Ok(parsed)
}
