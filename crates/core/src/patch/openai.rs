//! The `*** Begin Patch` format that OpenAI's models are trained to emit, re-implemented from
//! its public description:
//!
//! ```text
//! *** Begin Patch
//! *** Add File: path          then every line starts with '+'
//! *** Delete File: path
//! *** Update File: path
//! *** Move to: new/path       optional, right after Update File
//! @@ class Foo                optional anchor lines: found in turn, the hunk comes after them
//!  context line               ' ' context, '-' removed, '+' added
//! *** End of File             optional: the hunk ends at the end of the file
//! *** End Patch
//! ```
//!
//! A hunk has no line numbers: its context and removed lines are searched for. A bare `@@`
//! separates hunks; an `@@ -l,n +l,n @@` header (a unified-diff habit) is taken as the
//! hunk's stated line.

use super::model::{Action, FileSection, Hunk, LineOp, LinesHunk, NewFile, ParsedPatch};
use super::text::patch_line;
use crate::error::{ErrorCode, Result, WsfsError};

pub const BEGIN: &str = "*** Begin Patch";
const END: &str = "*** End Patch";
const ADD: &str = "*** Add File: ";
const DELETE: &str = "*** Delete File: ";
const UPDATE: &str = "*** Update File: ";
const MOVE: &str = "*** Move to: ";
const END_OF_FILE: &str = "*** End of File";

/// Whether `text` is in this format: its first non-blank line (after an optional code fence)
/// is `*** Begin Patch`.
pub fn detect(text: &str) -> bool {
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with("```"))
        .is_some_and(|l| l == BEGIN)
}

pub fn parse(text: &str) -> Result<ParsedPatch> {
    let lines: Vec<&str> = text.split('\n').collect();
    let mut p = Parser { lines, at: 0 };
    let begin = p
        .lines
        .iter()
        .position(|l| l.trim() == BEGIN)
        .ok_or_else(|| p.error(0, &format!("it does not start with '{BEGIN}'")))?;
    p.at = begin + 1;
    let mut parsed = ParsedPatch::default();
    loop {
        let Some(line) = p.peek() else {
            return Err(p.error(
                p.at,
                &format!("it does not end with '{END}' (was it cut off?); nothing was applied"),
            ));
        };
        let line = line.trim_end();
        if line == END {
            break;
        }
        if line.is_empty() {
            p.at += 1;
        } else if let Some(path) = line.strip_prefix(ADD) {
            p.at += 1;
            parsed.files.push(p.add(path.trim())?);
        } else if let Some(path) = line.strip_prefix(DELETE) {
            p.at += 1;
            parsed
                .files
                .push(FileSection::new(path.trim(), Action::Delete));
        } else if let Some(path) = line.strip_prefix(UPDATE) {
            p.at += 1;
            parsed.files.push(p.update(path.trim())?);
        } else {
            return Err(p.error(
                p.at,
                &format!(
                    "expected '{ADD}', '{UPDATE}', '{DELETE}' or '{END}', found '{}'",
                    clip(line)
                ),
            ));
        }
    }
    if parsed.files.is_empty() {
        return Err(p.error(p.at, "it changes no file"));
    }
    Ok(parsed)
}

struct Parser<'a> {
    lines: Vec<&'a str>,
    at: usize,
}

impl<'a> Parser<'a> {
    fn peek(&self) -> Option<&'a str> {
        self.lines.get(self.at).copied()
    }

    /// The next line when it belongs to the current file section (not a `*** ` line).
    fn body_line(&self) -> Option<&'a str> {
        self.peek().filter(|l| {
            let l = l.trim_end();
            !l.starts_with("*** ") || l == END_OF_FILE
        })
    }

    fn error(&self, index: usize, why: &str) -> WsfsError {
        WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("patch line {}: {why}. The format: '{BEGIN}', then per file '{ADD}path' (every line '+'), '{DELETE}path' or '{UPDATE}path' with hunks of ' ' context, '-' removed and '+' added lines separated by '@@' lines, then '{END}'", index + 1),
        )
    }

    fn add(&mut self, path: &str) -> Result<FileSection> {
        let mut file = NewFile {
            lines: Vec::new(),
            final_newline: true,
        };
        while let Some(line) = self.body_line() {
            let Some(content) = line.strip_prefix('+') else {
                if line.trim().is_empty() && self.only_blank_until_next_section() {
                    break;
                }
                return Err(self.error(
                    self.at,
                    &format!("every line of '{ADD}{path}' starts with '+'"),
                ));
            };
            file.lines.push(content.to_string());
            self.at += 1;
        }
        let mut section = FileSection::new(path, Action::Add);
        section.add = Some(file);
        Ok(section)
    }

    fn only_blank_until_next_section(&mut self) -> bool {
        let rest = self.lines[self.at..]
            .iter()
            .position(|l| !l.trim().is_empty())
            .map(|p| p + self.at);
        match rest {
            Some(next) if self.lines[next].trim_end().starts_with("*** ") => {
                self.at = next;
                true
            }
            None => {
                self.at = self.lines.len();
                true
            }
            Some(_) => false,
        }
    }

    fn update(&mut self, path: &str) -> Result<FileSection> {
        let mut section = FileSection::new(path, Action::Update);
        if let Some(to) = self.peek().and_then(|l| l.trim_end().strip_prefix(MOVE)) {
            section.action = Action::Move;
            section.move_to = Some(to.trim().to_string());
            self.at += 1;
        }
        let mut hunk = LinesHunk::default();
        let mut hunk_start = self.at;
        while let Some(raw) = self.body_line() {
            let line = raw.trim_end_matches('\r');
            if let Some(header) = line.strip_prefix("@@") {
                if !hunk.ops.is_empty() {
                    section.hunks.push(Hunk::Lines(std::mem::take(&mut hunk)));
                    hunk_start = self.at;
                }
                read_header(header, &mut hunk);
            } else if line.trim_end() == END_OF_FILE {
                hunk.at_eof = true;
                self.at += 1;
                if hunk.ops.is_empty() {
                    return Err(self.error(
                        self.at - 1,
                        &format!("'{END_OF_FILE}' ends a hunk that has no lines"),
                    ));
                }
                section.hunks.push(Hunk::Lines(std::mem::take(&mut hunk)));
                hunk_start = self.at;
                continue;
            } else if let Some(s) = line.strip_prefix(' ') {
                hunk.ops.push(LineOp::Context(patch_line(s)));
            } else if let Some(s) = line.strip_prefix('-') {
                hunk.ops.push(LineOp::Delete(patch_line(s)));
            } else if let Some(s) = line.strip_prefix('+') {
                hunk.ops.push(LineOp::Insert(patch_line(s)));
            } else if line.is_empty() {
                // A blank line without its ' ' prefix (editors strip trailing spaces).
                if self.only_blank_until_next_section() {
                    break;
                }
                hunk.ops.push(LineOp::Context(String::new()));
            } else {
                return Err(self.error(
                    self.at,
                    &format!("in '{UPDATE}{path}' every hunk line starts with ' ', '-' or '+' (or is an '@@' line), found '{}'", clip(line)),
                ));
            }
            self.at += 1;
        }
        if !hunk.ops.is_empty() {
            section.hunks.push(Hunk::Lines(hunk));
        } else if !hunk.anchors.is_empty() {
            return Err(self.error(hunk_start, "an '@@' line is followed by no hunk lines"));
        }
        if section.hunks.is_empty() && section.move_to.is_none() {
            return Err(self.error(
                self.at.saturating_sub(1),
                &format!("'{UPDATE}{path}' has no hunks"),
            ));
        }
        Ok(section)
    }
}

/// The rest of an `@@` line: nothing (a separator), `-l,n +l,n @@ [anchor]` (a stated
/// line), or an anchor line.
fn read_header(header: &str, hunk: &mut LinesHunk) {
    let header = header.trim();
    if header.is_empty() {
        return;
    }
    if let Some((ranges, rest)) = header.split_once("@@") {
        let old = ranges
            .split_whitespace()
            .next()
            .and_then(|r| r.strip_prefix('-'));
        let (start, len) = match old.map(|r| r.split_once(',').unwrap_or((r, "1"))) {
            Some((s, l)) => (s.parse::<usize>().ok(), l.parse::<usize>().ok()),
            None => (None, None),
        };
        if let (Some(start), Some(len)) = (start, len) {
            hunk.stated_index = Some(if len == 0 {
                start
            } else {
                start.saturating_sub(1)
            });
            let anchor = rest.trim();
            if !anchor.is_empty() {
                hunk.anchors.push(anchor.to_string());
            }
            return;
        }
    }
    hunk.anchors.push(header.to_string());
}

fn clip(line: &str) -> String {
    let mut s: String = line.chars().take(60).collect();
    if s.len() < line.len() {
        s.push_str("...");
    }
    s
}
