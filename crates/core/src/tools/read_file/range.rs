//! `read_file`'s range mode: a range of lines, read by streaming through the file with one
//! reused buffer, so memory is bounded by `max_read_bytes` plus the buffer, whatever the file.
//!
//! What a range read reports (plain reads report none of it):
//! - `start_line` and `end_line`: the first and last line returned (`end_line` is
//!   `start_line - 1` when none is: an empty file).
//! - `total_lines`: when the whole file was scanned: the range reached its end, or the file is
//!   at most [`COUNT_SCAN_BYTES`] (or `max_write_bytes`, if larger), in which case the rest is
//!   read to count its lines.
//! - `next_start_line`: the line after `end_line`, absent at the end of the file.
//! - `sha256`: of the whole file's bytes, when the file was scanned whole and is at most
//!   `max_write_bytes` (what the change tools accept as `file_hash`).
//!
//! Checks: the returned lines must be UTF-8 without NUL, as in a plain read. The lines skipped
//! before the range are checked for NUL bytes only (a NUL there means a binary file, whose line
//! numbers mean nothing: `io_error`), and the rest after the range is only counted and hashed.

use super::output::{LineFields, RangeView, ReadOutput};
use crate::config::Limits;
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::{FileHash, LineCounter};
use crate::sandbox::fileops::decode_text;
use crate::text::FileText;
use cap_std::fs::File;
use std::io::Read;

/// Lines a range holds when `max_lines` is not given.
pub const DEFAULT_MAX_LINES: u64 = 2000;
/// The most lines one call may ask for.
pub const MAX_LINES_LIMIT: u64 = 10_000;
/// After the range, the rest of a file is read to count its lines only if the file is at most
/// this large (or `max_write_bytes`, if larger).
pub const COUNT_SCAN_BYTES: u64 = 64 << 20;
/// Bytes read per step (between deadline checks), in one reused buffer.
const CHUNK: usize = 64 * 1024;

/// What a range read asks for.
#[derive(Debug, Clone, Copy)]
pub struct RangeRequest {
    pub start: u64,
    pub max_lines: u64,
    pub line_numbers: bool,
    /// `max_lines` as the caller gave it (0: not given), for the hint's next call.
    pub asked_max_lines: u64,
}

impl RangeRequest {
    /// The range the arguments ask for, or `None` for a plain read. A 0 is the same as an
    /// absent argument (optional JSON integers of typed callers are often sent as 0).
    pub fn from_args(start: u64, max_lines: u64, line_numbers: bool) -> Result<Option<Self>> {
        if start == 0 && max_lines == 0 && !line_numbers {
            return Ok(None);
        }
        if max_lines > MAX_LINES_LIMIT {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("max_lines is {max_lines}; at most {MAX_LINES_LIMIT} lines can be read per call: read further ranges with start_line"),
            ));
        }
        Ok(Some(RangeRequest {
            start: start.max(1),
            max_lines: if max_lines == 0 {
                DEFAULT_MAX_LINES
            } else {
                max_lines
            },
            line_numbers,
            asked_max_lines: max_lines,
        }))
    }
}

/// The file being read: one buffer, refilled in place, with every byte read counted into
/// lines and (while the file may still fit `max_write_bytes`) hashed.
struct Stream<'a> {
    file: File,
    buf: Vec<u8>,
    pos: usize,
    len: usize,
    read: u64,
    lines: LineCounter,
    hash: Option<FileHash>,
    hash_limit: u64,
    display: &'a str,
    ctl: &'a CallControl,
}

impl Stream<'_> {
    fn rest(&self) -> &[u8] {
        &self.buf[self.pos..self.len]
    }

    /// Reads the next chunk into the buffer once the current one is used up; false at EOF.
    fn fill(&mut self) -> Result<bool> {
        self.ctl.check()?;
        let n = loop {
            match self.file.read(&mut self.buf) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                Err(e) => return Err(WsfsError::from_io(&e, self.display)),
            }
        };
        self.pos = 0;
        self.len = n;
        self.read += n as u64;
        let chunk = &self.buf[..n];
        self.lines.feed(chunk);
        if self.read > self.hash_limit {
            self.hash = None;
        }
        if let Some(hash) = &mut self.hash {
            hash.feed(chunk);
        }
        Ok(n > 0)
    }

    /// Moves to the start of line `start` (1-based); false if the file ends before it. The
    /// bytes passed over are checked for NUL.
    fn skip_to(&mut self, start: u64) -> Result<bool> {
        let mut line = 1;
        while line < start {
            if self.pos == self.len && !self.fill()? {
                return Ok(false);
            }
            let need = start - line;
            let rest = self.rest();
            let newlines = memchr::memchr_iter(b'\n', rest).count() as u64;
            let passed = if newlines < need {
                line += newlines;
                rest.len()
            } else {
                line = start;
                let nth = usize::try_from(need - 1).unwrap_or(usize::MAX);
                memchr::memchr_iter(b'\n', rest)
                    .nth(nth)
                    .map_or(rest.len(), |i| i + 1)
            };
            if memchr::memchr(0, &rest[..passed]).is_some() {
                return Err(binary(self.display));
            }
            self.pos += passed;
        }
        Ok(true)
    }
}

fn binary(display: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::IoError,
        format!("{display} is binary or not UTF-8; only text files can be read or edited"),
    )
}

/// How collecting the range ended.
#[derive(PartialEq, Eq)]
enum Stop {
    /// `max_lines` lines were collected.
    Lines,
    /// The next line would not fit `max_read_bytes`.
    Bytes,
    /// The first line alone is longer than `max_read_bytes`: its head was kept.
    LineCut,
    /// The file ended.
    Eof,
}

/// Collects up to `max_lines` whole lines from the current position, at most `limit` bytes.
/// Returns the bytes, the number of lines (a cut line counts) and why it stopped.
fn collect(s: &mut Stream<'_>, max_lines: u64, limit: usize) -> Result<(Vec<u8>, u64, Stop)> {
    let mut out = Vec::new();
    let mut lines = 0u64;
    // out.len() where the current, incomplete line starts.
    let mut line_start = 0usize;
    loop {
        if lines == max_lines {
            return Ok((out, lines, Stop::Lines));
        }
        if s.pos == s.len && !s.fill()? {
            if out.len() > line_start {
                lines += 1; // a last line without a final newline
            }
            return Ok((out, lines, Stop::Eof));
        }
        let rest = s.rest();
        let (piece, ends_line) = match memchr::memchr(b'\n', rest) {
            Some(i) => (&rest[..=i], true),
            None => (rest, false),
        };
        if out.len() + piece.len() > limit {
            if lines > 0 {
                out.truncate(line_start);
                return Ok((out, lines, Stop::Bytes));
            }
            let room = limit - out.len();
            out.extend_from_slice(&piece[..room]);
            return Ok((out, 1, Stop::LineCut));
        }
        out.extend_from_slice(piece);
        s.pos += piece.len();
        if ends_line {
            lines += 1;
            line_start = out.len();
        }
    }
}

/// Reads lines `range.start..` of an open regular file of (claimed) size `size`.
pub fn read_range(
    file: File,
    size: u64,
    limits: &Limits,
    range: &RangeRequest,
    display: &str,
    ctl: &CallControl,
    replace: bool,
) -> Result<ReadOutput> {
    let hashing = size <= limits.max_write_bytes;
    let mut s = Stream {
        file,
        buf: vec![0; CHUNK],
        pos: 0,
        len: 0,
        read: 0,
        lines: LineCounter::default(),
        hash: hashing.then(FileHash::default),
        hash_limit: limits.max_write_bytes,
        display,
        ctl,
    };
    let limit = usize::try_from(limits.max_read_bytes).unwrap_or(usize::MAX);
    let (bytes, lines, stop) = if s.skip_to(range.start)? {
        collect(&mut s, range.max_lines, limit)?
    } else {
        (Vec::new(), 0, Stop::Eof)
    };
    // Past the range: read on to count the file's lines (and finish its hash) if it is small
    // enough; st_size can lie, so the bytes actually read are bounded too.
    let scan_limit = COUNT_SCAN_BYTES.max(limits.max_write_bytes);
    let mut at_eof = stop == Stop::Eof;
    if !at_eof && size <= scan_limit {
        s.pos = s.len;
        while s.read <= scan_limit {
            if !s.fill()? {
                at_eof = true;
                break;
            }
        }
    }
    let total_lines = at_eof.then(|| s.lines.lines());
    if lines == 0 && range.start > 1 {
        let total = total_lines.unwrap_or_default();
        let has = match total {
            0 => "is empty (0 lines)".to_string(),
            1 => "has 1 line".to_string(),
            n => format!("has {n} lines; use a start_line from 1 to {n}"),
        };
        return Err(WsfsError::new(
            ErrorCode::LineOutOfRange,
            format!(
                "start_line {} is past the end of {display}, which {has}",
                range.start
            ),
        ));
    }
    let bytes = if stop == Stop::LineCut {
        cut_to_char_boundary(bytes)
    } else {
        bytes
    };
    let (text, encoding_errors) = if replace {
        crate::text::lossy(&bytes, false).map_err(|_| crate::text::not_text(display))?
    } else {
        (decode_text(bytes, display)?, false)
    };
    let content = FileText::from_string(text);
    let end_line = range.start + lines - 1;
    let next_start_line = match total_lines {
        Some(total) => (end_line < total).then_some(end_line + 1),
        None => Some(end_line + 1),
    };
    let sha256 = if at_eof {
        s.hash.take().map(|hash| hash.hex())
    } else {
        None
    };
    Ok(ReadOutput {
        path: display.to_string(),
        bytes: content.len() as u64,
        total_bytes: if at_eof { s.read } else { size.max(s.read) },
        truncated: matches!(stop, Stop::Bytes | Stop::LineCut),
        content,
        lines: Some(LineFields {
            start_line: range.start,
            end_line,
            total_lines,
            next_start_line,
        }),
        sha256,
        limit: limits.max_read_bytes,
        next_start_line: None,
        view: Some(RangeView {
            line_numbers: range.line_numbers,
            line_cut: stop == Stop::LineCut,
            max_lines: range.asked_max_lines,
        }),
        encoding_errors,
        // A range read reports its `total_lines` in `lines`.
        total_lines: None,
        lines_width: 0,
    })
}

/// Drops a UTF-8 sequence cut in half at the end of a truncated read.
fn cut_to_char_boundary(mut bytes: Vec<u8>) -> Vec<u8> {
    if let Err(e) = std::str::from_utf8(&bytes) {
        if e.error_len().is_none() {
            bytes.truncate(e.valid_up_to());
        }
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zeros_mean_not_given() {
        assert!(RangeRequest::from_args(0, 0, false).unwrap().is_none());
        let r = RangeRequest::from_args(0, 0, true).unwrap().unwrap();
        assert_eq!((r.start, r.max_lines), (1, DEFAULT_MAX_LINES));
        let r = RangeRequest::from_args(7, 0, false).unwrap().unwrap();
        assert_eq!((r.start, r.max_lines), (7, DEFAULT_MAX_LINES));
        let err = RangeRequest::from_args(1, MAX_LINES_LIMIT + 1, false).unwrap_err();
        assert_eq!(err.code, ErrorCode::InvalidArguments);
        assert!(err.message.contains("10000"), "{}", err.message);
    }

    #[test]
    fn cuts_only_an_incomplete_tail() {
        let euro = "€".as_bytes(); // 3 bytes
        let mut v = b"ab".to_vec();
        v.extend_from_slice(&euro[..2]);
        assert_eq!(cut_to_char_boundary(v), b"ab");
        let invalid = vec![b'a', 0xff, b'b'];
        assert_eq!(cut_to_char_boundary(invalid.clone()), invalid);
    }
}
