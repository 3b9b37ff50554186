//! `read_file`: a bounded read of a regular text file, whole (plain mode) or a range of its
//! lines (see [`super::read_range`]).

use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::fileops::{decode_text, open_error, open_leaf_read, require_regular};
use crate::lines::FileHash;
use crate::policy::Access;
use crate::tool::{Annotations, Call, Tool, ToolOutput};
use crate::tools::read_range::{self, RangeRequest, RangeView};
use crate::workspace::{ToolPath, Workspace};
use cap_std::fs::{File, Metadata};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::Read;

pub struct ReadFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ReadFileArgs {
    /// File to read, e.g. 'src/main.go'.
    pub path: String,
    /// First line to return, 1-based. Giving start_line, max_lines or line_numbers reads a range of lines (from line 1 if start_line is 0 or absent), ending with a hint such as '[lines 1-2000 of 9120; continue with start_line=2001]'.
    #[serde(default)]
    pub start_line: u64,
    /// Most lines to return in a range (0 or absent: 2000; at most 10000). The range also stops at the read limit (256 KiB by default), at a line boundary.
    #[serde(default)]
    pub max_lines: u64,
    /// Prefix each returned line with its number and '| ' (in the text only). Default false.
    #[serde(default)]
    pub line_numbers: bool,
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = ReadFileArgs;
    type Output = ReadOutput;

    fn description() -> String {
        format!("Read a UTF-8 text file from the workspace. Returns the file's text; files larger than the read limit (256 KiB by default) are cut at a character boundary and end with a '[truncated: ...]' notice. To page through a large file, give start_line and/or max_lines: the text then holds those lines (as in the file, line endings included) and ends with a hint such as '[lines 1-2000 of 9120; continue with start_line=2001]'. Binary files, directories, FIFOs and devices are refused. {}", super::PATHS)
    }

    fn run(call: &mut Call<'_>, args: ReadFileArgs) -> Result<(ReadOutput, Vec<String>)> {
        let range = RangeRequest::from_args(args.start_line, args.max_lines, args.line_numbers)?;
        let path = call.path(&args.path)?;
        let output = match range {
            None => read_file(call.ws, &path, call.ctl)?,
            Some(range) => read_file_range(call.ws, &path, &range, call.ctl)?,
        };
        Ok((output, Vec::new()))
    }
}

/// `data` of `read_file`. A plain read (no range arguments) has the first five fields and
/// `sha256` when it read the whole file; a range read adds the line fields (see
/// [`read_range`] for when each appears).
#[derive(Debug, Serialize)]
pub struct ReadOutput {
    pub path: String,
    pub content: String,
    pub bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
    #[serde(flatten)]
    pub lines: Option<LineFields>,
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

impl ToolOutput for ReadOutput {
    /// The file's content, borrowed unless a truncation notice is added.
    fn text(&self) -> Cow<'_, str> {
        if self.lines.is_some() {
            let mut text = String::new();
            read_range::push_text(self, &mut text);
            return Cow::Owned(text);
        }
        match self.notice() {
            None if self.content.is_empty() => Cow::Borrowed(EMPTY_FILE),
            None => Cow::Borrowed(&self.content),
            Some(notice) => Cow::Owned(self.content.clone() + &notice),
        }
    }

    /// The content and its notice copied once, straight into `out`.
    fn push_text(&self, out: &mut String) {
        if self.lines.is_some() {
            return read_range::push_text(self, out);
        }
        if self.content.is_empty() && !self.truncated {
            return out.push_str(EMPTY_FILE);
        }
        let notice = self.notice().unwrap_or_default();
        out.reserve_exact(self.content.len() + notice.len() + 1);
        out.push_str(&self.content);
        out.push_str(&notice);
    }

    fn split_raw(&self) -> Option<(Box<dyn erased_serde::Serialize + '_>, &str)> {
        let meta = ReadMeta {
            path: &self.path,
            bytes: self.bytes,
            total_bytes: self.total_bytes,
            truncated: self.truncated,
            lines: self.lines.as_ref(),
            sha256: self.sha256.as_deref(),
        };
        Some((Box::new(meta), &self.content))
    }
}

/// `data` without the content, for the `data_raw` output mode.
#[derive(Serialize)]
struct ReadMeta<'a> {
    path: &'a str,
    bytes: u64,
    total_bytes: u64,
    truncated: bool,
    #[serde(flatten)]
    lines: Option<&'a LineFields>,
    #[serde(skip_serializing_if = "Option::is_none")]
    sha256: Option<&'a str>,
}

/// The text of an empty file, so a model does not take an empty answer for a failure.
pub const EMPTY_FILE: &str = "(empty file)";

impl ReadOutput {
    /// What follows the content in a truncated read's text: a newline unless the content ends
    /// with one, then the notice. `None` when the read was complete.
    pub fn notice(&self) -> Option<String> {
        if !self.truncated {
            return None;
        }
        let newline = if self.content.ends_with('\n') {
            ""
        } else {
            "\n"
        };
        Some(format!(
            "{newline}[truncated: showing the first {} of {} bytes; max_read_bytes is {}]",
            self.bytes, self.total_bytes, self.limit
        ))
    }
}

/// Bytes read per step between cancellation checks.
const CHUNK: usize = 64 * 1024;

/// Opens the regular file `path` names for reading, with its metadata.
fn open_regular(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<(File, Metadata)> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let leaf = located.file_leaf(display, false)?;
    let file = open_leaf_read(&located.dir, leaf).map_err(|e| open_error(e, display))?;
    // Checked again on the open file: the name may have been swapped since resolution.
    let meta = file
        .metadata()
        .map_err(|e| WsfsError::from_io(&e, display))?;
    require_regular(&meta, display)?;
    Ok((file, meta))
}

pub fn read_file_range(
    ws: &Workspace,
    path: &ToolPath,
    range: &RangeRequest,
    ctl: &CallControl,
) -> Result<ReadOutput> {
    let (file, meta) = open_regular(ws, path, ctl)?;
    read_range::read_range(file, meta.len(), &ws.limits, range, &path.display, ctl)
}

pub fn read_file(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<ReadOutput> {
    let display = &path.display;
    let (file, meta) = open_regular(ws, path, ctl)?;
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let limit = ws.limits.max_read_bytes;
    let (bytes, more) = read_bounded(file, limit, meta.len(), ctl).map_err(|e| match e {
        Stop::Io(e) => io_err(e),
        Stop::Call(e) => e,
    })?;
    let (content, truncated) = if more {
        (decode_text(cut_to_char_boundary(bytes), display)?, true)
    } else {
        (decode_text(bytes, display)?, false)
    };
    let sha256 = (!truncated && content.len() as u64 <= ws.limits.max_write_bytes).then(|| {
        let mut hash = FileHash::default();
        hash.feed(content.as_bytes());
        hash.hex()
    });
    Ok(ReadOutput {
        path: display.clone(),
        bytes: content.len() as u64,
        total_bytes: meta.len().max(content.len() as u64),
        truncated,
        content,
        lines: None,
        sha256,
        limit,
        view: None,
    })
}

enum Stop {
    Io(std::io::Error),
    Call(WsfsError),
}

/// Reads at most `limit` bytes, whatever the size the file claims, and says whether more
/// follows. Memory is bounded by `limit`, not by the file.
fn read_bounded(
    file: cap_std::fs::File,
    limit: u64,
    size_hint: u64,
    ctl: &CallControl,
) -> std::result::Result<(Vec<u8>, bool), Stop> {
    let limit_len = usize::try_from(limit).unwrap_or(usize::MAX);
    // The size is only a hint (it can change, or lie for /proc files), but it saves regrowing
    // the buffer for the usual file; one spare byte detects that more follows.
    let hint = usize::try_from(size_hint.min(limit)).unwrap_or(limit_len);
    let mut buf = Vec::with_capacity(hint.saturating_add(1));
    // One byte past the limit tells whether the file goes on (st_size can lie: /proc, FUSE).
    let mut reader = file.take(limit.saturating_add(1));
    loop {
        ctl.check().map_err(Stop::Call)?;
        let n = (&mut reader)
            .take(CHUNK as u64)
            .read_to_end(&mut buf)
            .map_err(Stop::Io)?;
        // read_to_end stops at CHUNK bytes or at end of file: anything short is the end.
        if n < CHUNK {
            break;
        }
    }
    let more = buf.len() > limit_len;
    buf.truncate(limit_len);
    Ok((buf, more))
}

/// Drops a UTF-8 sequence cut in half at the end of a truncated read.
pub(super) fn cut_to_char_boundary(mut bytes: Vec<u8>) -> Vec<u8> {
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
    fn cuts_only_an_incomplete_tail() {
        let euro = "€".as_bytes(); // 3 bytes
        let mut v = b"ab".to_vec();
        v.extend_from_slice(&euro[..2]);
        assert_eq!(cut_to_char_boundary(v), b"ab");
        let invalid = vec![b'a', 0xff, b'b'];
        assert_eq!(cut_to_char_boundary(invalid.clone()), invalid);
    }
}
