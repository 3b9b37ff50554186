//! `read_file`: a bounded read of a regular text file.

use crate::control::CallControl;
use crate::error::{Result, WsfsError};
use crate::fileops::{decode_text, open_error, open_leaf_read, require_regular};
use crate::workspace::{ToolPath, Workspace};
use serde::Serialize;
use std::io::Read;

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

/// Bytes read per step between cancellation checks.
const CHUNK: usize = 64 * 1024;

pub fn read_file(ws: &Workspace, path: &ToolPath, ctl: &CallControl) -> Result<ReadOutput> {
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let located = ws.resolve(path, false, ctl)?;
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
