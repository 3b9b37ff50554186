//! `read_file`: a bounded read of a regular text file, whole (plain mode) or a range of its
//! lines (see [`range`]).

mod output;
pub mod range;

pub use output::ReadOutput;

use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::lines::FileHash;
use crate::sandbox::fileops::{open_error, open_leaf_read, regular_file_size};
use crate::sandbox::gate::Access;
use crate::sandbox::root::ToolPath;
use crate::text::{self, FileText};
use crate::tools::contract::{Annotations, Call, Frame, Tool, Warning};
use crate::workspace::Workspace;
use cap_std::fs::File;
use output::{digits, ReadMeta, MAX_NOTICE};
use range::RangeRequest;
use schemars::JsonSchema;
use serde::Deserialize;

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
    /// 'strict' (default): a file that is not valid UTF-8 is refused. 'replace': each invalid byte sequence becomes U+FFFD and data.encoding_errors is true (for Latin-1 and other legacy files). A NUL byte means a binary file either way.
    #[serde(default)]
    pub encoding_errors: EncodingErrors,
}

/// `read_file`'s `encoding_errors`. (Plain comments on the variants: doc comments would turn
/// the schema into a `oneOf`.)
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum EncodingErrors {
    // Refuse a file that is not valid UTF-8 (the default).
    #[default]
    Strict,
    // Replace invalid sequences with U+FFFD and say so.
    Replace,
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = ReadFileArgs;
    type Output = ReadOutput;

    fn description() -> String {
        format!("Read a UTF-8 text file from the workspace. Returns the file's text; files larger than the read limit (256 KiB by default) are cut at the end of a line and end with a '[truncated: ...]' notice naming the next call. To page through a large file, give start_line and/or max_lines: the text then holds those lines (as in the file, line endings included) and ends with a hint such as '[lines 1-2000 of 9120; continue with start_line=2001]'. Binary files, directories, FIFOs and devices are refused. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: ReadFileArgs) -> Result<(ReadOutput, Vec<Warning>)> {
        let range = RangeRequest::from_args(args.start_line, args.max_lines, args.line_numbers)?;
        let path = call.path(&args.path)?;
        let replace = args.encoding_errors == EncodingErrors::Replace;
        let output = match range {
            None => read_file(call.ws, &path, call.ctl, call.frame, replace)?,
            Some(range) => read_file_range(call.ws, &path, &range, call.ctl, replace)?,
        };
        Ok((output, Vec::new()))
    }
}

/// Opens the regular file `path` names for reading, with its size.
fn open_regular(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<(File, u64)> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let leaf = located.file_leaf(display, false)?;
    let file = open_leaf_read(&located.dir, leaf).map_err(|e| open_error(e, display))?;
    // Checked again on the open file: the name may have been swapped since resolution.
    let size = regular_file_size(&file, display)?;
    Ok((file, size))
}

pub fn read_file_range(
    ws: &Workspace,
    path: &ToolPath,
    range: &RangeRequest,
    ctl: &CallControl,
    replace: bool,
) -> Result<ReadOutput> {
    let (file, size) = open_regular(ws, path, ctl)?;
    range::read_range(file, size, &ws.limits, range, &path.display, ctl, replace)
}

/// A plain read: at most `max_read_bytes` (cut back to a character boundary), checked as
/// text in one pass. The content is read once, into a buffer that also has the room the
/// envelope `frame` needs in front of it (the JSON head, whose length is known from the
/// file's size) and after it (a truncation notice, a C string's NUL), so the C ABI's result
/// is built around it without copying it (see [`Frame`]).
pub fn read_file(
    ws: &Workspace,
    path: &ToolPath,
    ctl: &CallControl,
    frame: &dyn Frame,
    replace: bool,
) -> Result<ReadOutput> {
    let display = &path.display;
    let (file, size) = open_regular(ws, path, ctl)?;
    let limit = ws.limits.max_read_bytes;
    // The result as the file's size predicts it: the head is as long as the real one unless
    // the file changes meanwhile (then the envelope copies the content instead).
    let predicted = ReadMeta {
        path: display,
        bytes: size.min(limit),
        total_bytes: size,
        truncated: size > limit,
        lines: None,
        // A cut read names the line to go on from; its number has at most as many digits as
        // the limit + 1 (the head is then at most this long, see `take_raw`).
        next_start_line: (size > limit).then_some(limit.saturating_add(1)),
        sha256: (size <= limit && size <= ws.limits.max_write_bytes).then_some(HASH_PLACEHOLDER),
        encoding_errors: false,
        // A whole file has at most as many lines as bytes: the real count is padded to the
        // width of this one (`ReadOutput::raw_meta`), so the head is exactly as predicted.
        total_lines: (size <= limit).then_some(size),
    };
    let room = frame.raw_head_len(&predicted);
    let expected = usize::try_from(predicted.bytes).unwrap_or(usize::MAX);
    let (buf, more) =
        read_bounded(file.into_std(), room, expected, limit, ctl).map_err(|e| match e {
            Stop::Io(e) => WsfsError::from_io(&e, display),
            Stop::Call(e) => e,
        })?;
    // The bytes read and their hash, when the content is not those bytes.
    let mut raw: Option<(u64, Option<String>)> = None;
    let (mut content, encoding_errors, newlines) =
        match FileText::new_counting_or_back(buf, room, more) {
            Ok((content, newlines)) => (content, false, newlines),
            // Rare: with encoding_errors "replace", a file that is not UTF-8 (but has no NUL) is
            // decoded lossily into a new buffer (the envelope then copies it).
            Err((text::NotText::Utf8, buf)) if replace => {
                let (lossy, replaced) =
                    text::lossy(&buf[room..], more).map_err(|_| text::not_text(display))?;
                let bytes = &buf[room..];
                let hash = (!more && bytes.len() as u64 <= ws.limits.max_write_bytes).then(|| {
                    let mut hash = FileHash::default();
                    hash.feed(bytes);
                    hash.hex()
                });
                raw = Some((bytes.len() as u64, hash));
                let newlines = memchr::memchr_iter(b'\n', lossy.as_bytes()).count() as u64;
                (FileText::from_string(lossy), replaced, newlines)
            }
            Err(_) => return Err(text::not_text(display)),
        };
    // A whole read's line count, as `lines.rs` counts lines: each `\n` ends one, and a last
    // line may lack it.
    let total_lines = (!more).then(|| {
        let unterminated = !content.is_empty() && !content.ends_with_newline();
        newlines + u64::from(unterminated)
    });
    // A cut read ends at a line boundary when it holds one, so the next call can go on with
    // the next line (`next_start_line`: the text's newlines all lie before the cut, so they
    // are the lines it shows); a first line longer than the limit stays cut.
    let next_start_line = more.then(|| {
        if let Some(end) = memchr::memrchr(b'\n', content.as_bytes()) {
            content.truncate(end + 1);
        }
        match newlines {
            0 => 2,
            lines => lines + 1,
        }
    });
    let len = content.len() as u64;
    let (read_len, sha256) = match raw {
        Some(raw) => raw,
        None => (
            len,
            (!more && len <= ws.limits.max_write_bytes).then(|| {
                let mut hash = FileHash::default();
                hash.feed(content.as_bytes());
                hash.hex()
            }),
        ),
    };
    Ok(ReadOutput {
        path: display.clone(),
        content,
        bytes: len,
        total_bytes: size.max(read_len),
        truncated: more,
        lines: None,
        next_start_line,
        sha256,
        limit,
        view: None,
        encoding_errors,
        total_lines,
        lines_width: digits(size),
    })
}

/// A hex SHA-256's length, for the predicted head.
const HASH_PLACEHOLDER: &str = "0000000000000000000000000000000000000000000000000000000000000000";

enum Stop {
    Io(std::io::Error),
    Call(WsfsError),
}

/// Reads at most `limit` bytes after `room` bytes kept free at the start of the buffer, and
/// says whether more follows. The buffer is allocated once for the size the file claims (at
/// most `limit`), with room after the content for a truncation notice and a NUL, and read
/// into without being zeroed first. The size is only a hint (files change, and /proc or FUSE
/// files lie), so the buffer grows if the file is longer. Memory is bounded by `limit`.
fn read_bounded(
    file: std::fs::File,
    room: usize,
    expected: usize,
    limit: u64,
    ctl: &CallControl,
) -> std::result::Result<(Vec<u8>, bool), Stop> {
    let limit = usize::try_from(limit).unwrap_or(usize::MAX);
    // One byte past the limit tells whether the file goes on.
    let want = limit.saturating_add(1);
    let tail = MAX_NOTICE + 1;
    // `with_capacity` gives exactly this capacity, so a read never goes past `want` bytes
    // of content by more than the tail (which is cut off again below).
    let mut buf = Vec::with_capacity(room + expected.min(limit) + 1 + tail);
    buf.resize(room, b' ');
    loop {
        ctl.check().map_err(Stop::Call)?;
        if buf.capacity() - buf.len() <= tail {
            if buf.len() - room >= want {
                break;
            }
            // Longer than its size said: grow by a chunk (a copy, in this rare case).
            let more = (buf.len() - room).clamp(CHUNK, limit) + tail;
            let mut grown = Vec::with_capacity(buf.len() + more);
            grown.extend_from_slice(&buf);
            buf = grown;
        }
        let n = match rustix::io::read(&file, rustix::buffer::spare_capacity(&mut buf)) {
            Ok(n) => n,
            Err(rustix::io::Errno::INTR) => continue,
            Err(e) => return Err(Stop::Io(e.into())),
        };
        if n == 0 || buf.len() - room >= want {
            break;
        }
    }
    let more = buf.len() - room > limit;
    buf.truncate(room + limit.min(buf.len() - room));
    Ok((buf, more))
}

/// Bytes a buffer grows by when a file is longer than its size said.
const CHUNK: usize = 64 * 1024;
