//! `read_file`'s result: its `data`, and the text a model reads (a file's content with a
//! truncation notice, or a range of lines with the hint on how to go on).

use crate::text::FileText;
use crate::tools::contract::{Metrics, Output, ToolOutput};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;

/// `data` of `read_file`. A plain read (no range arguments) has the first five fields and
/// `sha256` when it read the whole file; a range read adds the line fields (see
/// [`read_range`] for when each appears).
#[derive(Debug, Serialize)]
pub struct ReadOutput {
    pub path: String,
    pub content: FileText,
    pub bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
    #[serde(flatten)]
    pub lines: Option<LineFields>,
    /// A plain read that was cut: the `start_line` of a range read going on after it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
    /// Lowercase hex SHA-256 of the whole file (the change tools' `file_hash` guard), when the
    /// read saw the whole file and it is at most `max_write_bytes`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<String>,
    /// Not part of `data`: kept for the truncation notice in `text`.
    #[serde(skip)]
    pub limit: u64,
    /// Not part of `data`: how a range read's text is rendered.
    #[serde(skip)]
    pub view: Option<RangeView>,
    /// With `encoding_errors: "replace"`: invalid UTF-8 was replaced (absent when not).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub encoding_errors: bool,
    /// A plain read that saw the whole file: its line count, counted in the text check's pass
    /// (a range read has its own `total_lines` in `lines`, and leaves this `None`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    /// Not part of `data`: the digits of the file's size, the width `total_lines` was
    /// predicted with in the `data_raw` head (see `raw_meta`).
    #[serde(skip)]
    pub lines_width: usize,
}

/// The fields a range read adds to `data`.
#[derive(Debug, Clone, Serialize)]
pub struct LineFields {
    pub start_line: u64,
    pub end_line: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
}

/// How a range read's text is rendered (not part of `data`).
#[derive(Debug, Clone, Copy)]
pub struct RangeView {
    pub line_numbers: bool,
    /// The one line returned was longer than `max_read_bytes` and was cut.
    pub line_cut: bool,
    /// The `max_lines` the caller gave (0: none), repeated in the hint's next call.
    pub max_lines: u64,
}

impl ToolOutput for ReadOutput {
    /// The file's content, borrowed unless a truncation notice is added.
    fn text(&self) -> Cow<'_, str> {
        if self.lines.is_some() {
            let mut text = String::new();
            push_text(self, &mut text);
            return Cow::Owned(text);
        }
        match self.notice() {
            None if self.content.is_empty() => Cow::Borrowed(EMPTY_FILE),
            None => Cow::Borrowed(self.content.as_str()),
            Some(notice) => Cow::Owned(self.content.as_str().to_owned() + &notice),
        }
    }

    /// The content and its notice copied once, straight into `out`.
    fn push_text(&self, out: &mut String) {
        if self.lines.is_some() {
            return push_text(self, out);
        }
        if self.content.is_empty() && !self.truncated {
            return out.push_str(EMPTY_FILE);
        }
        let notice = self.notice().unwrap_or_default();
        out.reserve_exact(self.content.len() + notice.len() + 1);
        out.push_str(self.content.as_str());
        out.push_str(&notice);
    }

    /// The `data_raw` head's `data`. Its length was predicted from the file's size, with
    /// `total_lines` as wide as the size (a file has at most as many lines as bytes): the real
    /// count is followed by as many spaces (JSON whitespace, before the object's `}`) as it
    /// is narrower, so the head is exactly as long as predicted and the content, read into
    /// the buffer behind that room, is never moved.
    fn raw_meta(&self) -> Option<Box<dyn erased_serde::Serialize + '_>> {
        let meta = self.meta();
        let pad = match self.total_lines {
            Some(lines) if self.lines.is_none() => self.lines_width.saturating_sub(digits(lines)),
            _ => 0,
        };
        if pad == 0 {
            return Some(Box::new(meta));
        }
        let mut json = serde_json::to_string(&meta).ok()?;
        json.insert_str(json.len() - 1, &" ".repeat(pad));
        match serde_json::value::RawValue::from_string(json) {
            Ok(raw) => Some(Box::new(raw)),
            Err(_) => Some(Box::new(meta)),
        }
    }

    fn raw_part(&self) -> &str {
        self.content.as_str()
    }

    fn add_metrics(&self, m: &mut Metrics) {
        let (start, lines) = match &self.lines {
            Some(range) if range.end_line >= range.start_line => (
                range.start_line,
                Some(range.end_line - range.start_line + 1),
            ),
            Some(range) => (range.start_line, Some(0)),
            // A plain read: whole lines up to the cut (a first line cut inside counts as one).
            None if self.truncated => (1, self.next_start_line.map(|next| next.max(2) - 1)),
            None => (1, self.total_lines),
        };
        m.start_line = Some(start);
        m.lines_read = lines;
        m.bytes_read = Some(self.bytes);
        m.truncated = Some(self.truncated);
    }

    /// A plain read keeps the room in front of its content that the envelope's head needs
    /// (see [`read_file`]); the text of `text_raw` is the content and the notice, appended in
    /// the room kept after it.
    fn take_raw(&mut self, output: Output, room: usize) -> Option<Vec<u8>> {
        let notice = match output {
            _ if self.lines.is_some() => return None,
            Output::DataRaw => None,
            Output::TextRaw if self.content.is_empty() => return None, // "(empty file)"
            Output::TextRaw => self.notice(),
            _ => return None,
        };
        // The head was predicted from the file's size, at most as long as it turns out (a
        // cut read's `bytes` and `next_start_line` are only known once read): the content
        // moves back by the difference, within its buffer.
        if self.content.room() < room {
            return None;
        }
        self.content.shrink_room(room);
        let (mut buf, _) = std::mem::take(&mut self.content).into_parts();
        if let Some(notice) = notice {
            buf.extend_from_slice(notice.as_bytes());
        }
        Some(buf)
    }
}

/// `data` without the content, for the `data_raw` output mode.
#[derive(Serialize)]
pub(super) struct ReadMeta<'a> {
    pub path: &'a str,
    pub bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
    #[serde(flatten)]
    pub lines: Option<&'a LineFields>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_start_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sha256: Option<&'a str>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub encoding_errors: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total_lines: Option<u64>,
}

/// The decimal digits of `n`.
pub(super) fn digits(n: u64) -> usize {
    n.checked_ilog10().map_or(1, |d| d as usize + 1)
}

/// The text of an empty file, so a model does not take an empty answer for a failure.
pub const EMPTY_FILE: &str = "(empty file)";

/// The longest truncation notice (five 20-digit numbers).
pub(super) const MAX_NOTICE: usize = 256;

impl ReadOutput {
    pub(super) fn meta(&self) -> ReadMeta<'_> {
        ReadMeta {
            path: &self.path,
            bytes: self.bytes,
            total_bytes: self.total_bytes,
            truncated: self.truncated,
            lines: self.lines.as_ref(),
            next_start_line: self.next_start_line,
            sha256: self.sha256.as_deref(),
            encoding_errors: self.encoding_errors,
            total_lines: self.total_lines,
        }
    }

    /// What follows the content in a truncated read's text: a newline unless the content ends
    /// with one, then the notice, ending with the next call. `None` when the read was complete.
    ///
    /// A cut read ends at a line boundary: `[truncated: showing lines 1-N (B of T bytes);
    /// max_read_bytes is L; continue with start_line=N+1]`; a first line longer than the limit
    /// is cut inside: `[truncated: line 1 is longer than max_read_bytes (L): only its first B
    /// of T bytes are shown; continue with start_line=2]`.
    pub fn notice(&self) -> Option<String> {
        if !self.truncated {
            return None;
        }
        let next = self.next_start_line.unwrap_or(2);
        if !self.content.ends_with_newline() {
            return Some(format!(
                "\n[truncated: line 1 is longer than max_read_bytes ({}): only its first {} of {} bytes are shown; continue with start_line={next}]",
                self.limit, self.bytes, self.total_bytes
            ));
        }
        let shown = match next - 1 {
            1 => "line 1".to_string(),
            n => format!("lines 1-{n}"),
        };
        Some(format!(
            "[truncated: showing {shown} ({} of {} bytes); max_read_bytes is {}; continue with start_line={next}]",
            self.bytes, self.total_bytes, self.limit
        ))
    }
}

/// A range read's text: its lines (numbered `N| ` if asked), then a hint on how to go on.
fn push_text(o: &ReadOutput, out: &mut String) {
    let (Some(lines), Some(view)) = (&o.lines, &o.view) else {
        return;
    };
    if lines.end_line < lines.start_line {
        out.push_str(EMPTY_FILE);
        return;
    }
    if view.line_numbers {
        let digits = lines.end_line.to_string().len() + 2;
        out.reserve(o.content.len() + (lines.end_line - lines.start_line + 1) as usize * digits);
        for (n, line) in (lines.start_line..).zip(o.content.as_str().split_inclusive('\n')) {
            let _ = write!(out, "{n}| ");
            out.push_str(line);
        }
    } else {
        out.reserve(o.content.len() + 96);
        out.push_str(o.content.as_str());
    }
    if !o.content.ends_with_newline() {
        out.push('\n');
    }
    push_hint(o, lines, view, out);
}

/// `[lines 1-2000 of 9120; continue with start_line=2001]` and its variants.
fn push_hint(o: &ReadOutput, lines: &LineFields, view: &RangeView, out: &mut String) {
    let (start, end) = (lines.start_line, lines.end_line);
    out.push('[');
    if start == end {
        let _ = write!(out, "line {start}");
    } else {
        let _ = write!(out, "lines {start}-{end}");
    }
    match lines.total_lines {
        Some(total) => {
            let _ = write!(out, " of {total}");
        }
        None => {
            let _ = write!(
                out,
                "; total not counted: the file is {} bytes",
                o.total_bytes
            );
        }
    }
    if view.line_cut {
        let _ = write!(
            out,
            "; line {end} is longer than max_read_bytes ({}): only its first {} bytes are shown",
            o.limit, o.bytes
        );
    } else if o.truncated {
        let _ = write!(
            out,
            "; stopped before line {} to stay within max_read_bytes ({} bytes)",
            end + 1,
            o.limit
        );
    }
    match lines.next_start_line {
        Some(next) => {
            // The exact next call: the page size and numbering the caller asked for.
            let _ = write!(out, "; continue with start_line={next}");
            if view.max_lines != 0 {
                let _ = write!(out, ", max_lines={}", view.max_lines);
            }
            if view.line_numbers {
                out.push_str(", line_numbers=true");
            }
            out.push(']');
        }
        None => out.push_str("; end of file]"),
    }
}
