//! `read_file`: a bounded read of a regular text file.

use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::fileops::{decode_text, open_error, open_leaf_read, require_regular};
use crate::policy::Access;
use crate::tool::{Annotations, Call, Tool, ToolOutput};
use crate::workspace::{ToolPath, Workspace};
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
}

impl Tool for ReadFile {
    const NAME: &'static str = "read_file";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = ReadFileArgs;
    type Output = ReadOutput;

    fn description() -> String {
        format!("Read a UTF-8 text file from the workspace. Returns the file's text; files larger than the read limit (256 KiB by default) are cut at a character boundary and end with a '[truncated: ...]' notice. Binary files, directories, FIFOs and devices are refused. {}", super::PATHS)
    }

    fn run(call: &mut Call<'_>, args: ReadFileArgs) -> Result<(ReadOutput, Vec<String>)> {
        let path = call.path(&args.path)?;
        Ok((read_file(call.ws, &path, call.ctl)?, Vec::new()))
    }
}

#[derive(Debug, Serialize)]
pub struct ReadOutput {
    pub path: String,
    pub content: String,
    pub bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
    /// Not part of `data`: kept for the truncation notice in `text`.
    #[serde(skip)]
    pub limit: u64,
}

impl ToolOutput for ReadOutput {
    /// The file's content, borrowed unless a truncation notice is added.
    fn text(&self) -> Cow<'_, str> {
        match self.notice() {
            None => Cow::Borrowed(&self.content),
            Some(notice) => Cow::Owned(self.content.clone() + &notice),
        }
    }

    /// The content and its notice copied once, straight into `out`.
    fn push_text(&self, out: &mut String) {
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
}

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

pub fn read_file(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<ReadOutput> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, Access::READ, false, ctl)?;
    let leaf = located.file_leaf(display, false)?;
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let file = open_leaf_read(&located.dir, leaf).map_err(|e| open_error(e, display))?;
    // Checked again on the open file: the name may have been swapped since resolution.
    let meta = file.metadata().map_err(io_err)?;
    require_regular(&meta, display)?;
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
    Ok(ReadOutput {
        path: display.clone(),
        bytes: content.len() as u64,
        total_bytes: meta.len().max(content.len() as u64),
        truncated,
        content,
        limit,
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
    fn cuts_only_an_incomplete_tail() {
        let euro = "€".as_bytes(); // 3 bytes
        let mut v = b"ab".to_vec();
        v.extend_from_slice(&euro[..2]);
        assert_eq!(cut_to_char_boundary(v), b"ab");
        let invalid = vec![b'a', 0xff, b'b'];
        assert_eq!(cut_to_char_boundary(invalid.clone()), invalid);
    }
}
