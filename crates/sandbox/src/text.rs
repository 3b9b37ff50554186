//! Text a model can read: UTF-8 without NUL bytes, checked in one pass.
//!
//! A read's bytes are checked block by block, each block small enough to stay in the L1
//! cache while it is searched for NUL (`memchr`) and validated as UTF-8 (`simdutf8`), both
//! with SIMD: one pass over memory, at a few bytes per cycle.

use crate::error::{ErrorCode, WsfsError};

/// Bytes checked per step: well within a core's L1 data cache.
const BLOCK: usize = 16 * 1024;

/// Why bytes are not text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotText {
    Nul,
    Utf8,
}

/// Checks that `bytes` are UTF-8 without NUL. With `cut_tail` (a read that stopped at a byte
/// limit), a UTF-8 sequence cut short at the very end is dropped rather than refused. Returns
/// the length of the text: `bytes.len()`, or less by the cut sequence.
pub fn check(bytes: &[u8], cut_tail: bool) -> Result<usize, NotText> {
    check_blocks(bytes, cut_tail, false).map(|(len, _)| len)
}

/// [`check`], also counting the text's `\n` bytes in the same pass: each block is counted
/// while it is still in L1 after its check. Returns the length and the count.
pub fn check_counting(bytes: &[u8], cut_tail: bool) -> Result<(usize, u64), NotText> {
    check_blocks(bytes, cut_tail, true)
}

fn check_blocks(bytes: &[u8], cut_tail: bool, count: bool) -> Result<(usize, u64), NotText> {
    let newlines_in = |block: &[u8]| match count {
        true => count_newlines(block),
        false => 0,
    };
    let mut newlines = 0;
    let mut start = 0;
    while start < bytes.len() {
        let mut end = (start + BLOCK).min(bytes.len());
        if end < bytes.len() {
            // End the block at a character boundary (at most 3 continuation bytes back), so
            // that blocks are valid exactly when the whole is.
            let back = bytes[end - 3..=end]
                .iter()
                .rev()
                .position(|&b| !is_continuation(b));
            end -= back.unwrap_or(0);
        }
        let block = &bytes[start..end];
        if memchr::memchr(0, block).is_some() {
            return Err(NotText::Nul);
        }
        if simdutf8::basic::from_utf8(block).is_err() {
            // Rare: find out where, and whether it is only a sequence cut at the end.
            return match simdutf8::compat::from_utf8(block) {
                Err(e) if cut_tail && end == bytes.len() && e.error_len().is_none() => {
                    let valid = e.valid_up_to();
                    Ok((start + valid, newlines + newlines_in(&block[..valid])))
                }
                _ => Err(NotText::Utf8),
            };
        }
        newlines += newlines_in(block);
        start = end;
    }
    Ok((bytes.len(), newlines))
}

/// `bytes` as text with every invalid UTF-8 sequence replaced by U+FFFD, and whether one was;
/// NUL still means binary. With `cut_tail`, a sequence cut short at the very end (a read that
/// stopped at a byte limit) is dropped, not replaced.
pub fn lossy(bytes: &[u8], cut_tail: bool) -> Result<(String, bool), NotText> {
    if memchr::memchr(0, bytes).is_some() {
        return Err(NotText::Nul);
    }
    let mut end = bytes.len();
    if cut_tail {
        let back = bytes
            .iter()
            .rev()
            .take(4)
            .position(|&b| !is_continuation(b));
        if let Some(back) = back {
            let lead = end - 1 - back;
            let width = match bytes[lead] {
                0xf0.. => 4,
                0xe0.. => 3,
                0xc0.. => 2,
                _ => 1,
            };
            if lead + width > end {
                end = lead;
            }
        }
    }
    let text = String::from_utf8_lossy(&bytes[..end]);
    let replaced = matches!(text, std::borrow::Cow::Owned(_));
    Ok((text.into_owned(), replaced))
}

/// The `\n` bytes in `bytes`. Counted into a byte per 255 input bytes, which the compiler
/// turns into SIMD compares and byte adds (about 40 bytes per nanosecond measured on 200 KiB
/// of source-like text; a match iterator such as `memchr_iter` pays per newline, and
/// `filter().count()` widens every byte: both several times slower on text with short
/// lines).
pub fn count_newlines(bytes: &[u8]) -> u64 {
    bytes
        .chunks(255)
        .map(|chunk| {
            let n = chunk
                .iter()
                .fold(0u8, |n, &b| n.wrapping_add(u8::from(b == b'\n')));
            u64::from(n)
        })
        .sum()
}

fn is_continuation(b: u8) -> bool {
    b & 0xc0 == 0x80
}

/// The error for bytes that are not text.
pub fn not_text(display: &str) -> WsfsError {
    WsfsError::new(
        ErrorCode::IoError,
        format!("{display} is binary or not UTF-8; only text files can be read or edited"),
    )
}

/// A file's text in a buffer that may hold other bytes in front of it: `buf[start..]` is UTF-8
/// without NUL (checked when it was made). Reads keep room in front for the envelope's JSON, so
/// a raw-mode result is built around the text without copying it (see `envelope`).
#[derive(Debug, Default)]
pub struct FileText {
    buf: Vec<u8>,
    start: usize,
}

impl FileText {
    /// `buf[start..]`, checked (see [`check`]); with `cut_tail`, a sequence cut at the end is
    /// dropped from `buf`.
    pub fn new(
        mut buf: Vec<u8>,
        start: usize,
        cut_tail: bool,
    ) -> std::result::Result<FileText, NotText> {
        let start = start.min(buf.len());
        let len = check(&buf[start..], cut_tail)?;
        buf.truncate(start + len);
        Ok(FileText { buf, start })
    }

    /// [`FileText::new`], also counting the text's `\n` bytes in the same pass
    /// ([`check_counting`]), and giving the buffer back when it is not text.
    pub fn new_counting_or_back(
        mut buf: Vec<u8>,
        start: usize,
        cut_tail: bool,
    ) -> std::result::Result<(FileText, u64), (NotText, Vec<u8>)> {
        let start = start.min(buf.len());
        match check_counting(&buf[start..], cut_tail) {
            Ok((len, newlines)) => {
                buf.truncate(start + len);
                Ok((FileText { buf, start }, newlines))
            }
            Err(e) => Err((e, buf)),
        }
    }

    /// Text that is already a string.
    pub fn from_string(text: String) -> FileText {
        FileText {
            buf: text.into_bytes(),
            start: 0,
        }
    }

    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The text as a string. It was checked when made; this checks again (at SIMD speed)
    /// rather than trust an invariant with `unsafe`, and only the envelope modes that escape
    /// the text into JSON (far slower than the check) ask for it.
    pub fn as_str(&self) -> &str {
        simdutf8::basic::from_utf8(self.as_bytes()).unwrap_or_default()
    }

    /// The bytes in front of the text.
    pub fn room(&self) -> usize {
        self.start
    }

    pub fn len(&self) -> usize {
        self.buf.len() - self.start
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    pub fn ends_with_newline(&self) -> bool {
        self.as_bytes().last() == Some(&b'\n')
    }

    /// Keeps the first `len` bytes of the text (`len` must be a character boundary, such as
    /// just after a `\n`).
    pub fn truncate(&mut self, len: usize) {
        if len < self.len()
            && self
                .as_bytes()
                .get(len)
                .is_some_and(|&b| !is_continuation(b))
        {
            self.buf.truncate(self.start + len);
        }
    }

    /// Moves the text back so that `room` bytes are in front of it (at most the room it has):
    /// a move within the buffer, never an allocation.
    pub fn shrink_room(&mut self, room: usize) {
        if room < self.start {
            self.buf.copy_within(self.start.., room);
            self.buf.truncate(room + self.len());
            self.start = room;
        }
    }

    /// The buffer and where the text starts in it.
    pub fn into_parts(self) -> (Vec<u8>, usize) {
        (self.buf, self.start)
    }
}

impl serde::Serialize for FileText {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The count made in the check's pass is every `\n` of the text, across block boundaries
    /// and without the dropped tail of a cut sequence.
    #[test]
    fn the_check_counts_newlines_in_its_pass() {
        let text = "é line\n".repeat(10_000); // spans several blocks
        let bytes = text.as_bytes();
        assert_eq!(check_counting(bytes, false), Ok((bytes.len(), 10_000)));
        assert_eq!(check_counting(b"", false), Ok((0, 0)));
        assert_eq!(check_counting(b"no newline", false), Ok((10, 0)));
        let mut cut = bytes.to_vec();
        cut.extend_from_slice("\n\né".as_bytes());
        cut.pop(); // a cut sequence at the end
        assert_eq!(check_counting(&cut, true), Ok((bytes.len() + 2, 10_002)));
        assert_eq!(check_counting(b"a\n\0", false), Err(NotText::Nul));
        let (text, newlines) = FileText::new_counting_or_back(b"  a\nb\n".to_vec(), 2, false)
            .unwrap_or_else(|_| panic!("text"));
        assert_eq!((text.as_str(), newlines), ("a\nb\n", 2));
    }

    #[test]
    fn text_passes_and_binary_does_not() {
        assert_eq!(check(b"", false), Ok(0));
        assert_eq!(check("héllo\n".as_bytes(), false), Ok(7));
        assert_eq!(check(b"a\0b", false), Err(NotText::Nul));
        assert_eq!(check(b"a\xffb", false), Err(NotText::Utf8));
        // A lone continuation byte, an overlong form, a surrogate.
        for bad in [&b"\x80"[..], b"\xc0\xaf", b"\xed\xa0\x80"] {
            assert_eq!(check(bad, false), Err(NotText::Utf8), "{bad:?}");
            assert_eq!(check(bad, true), Err(NotText::Utf8), "{bad:?}");
        }
    }

    #[test]
    fn only_a_sequence_cut_at_the_end_is_dropped() {
        let euro = "€".as_bytes(); // 3 bytes
        let mut cut = b"ab".to_vec();
        cut.extend_from_slice(&euro[..2]);
        assert_eq!(check(&cut, true), Ok(2));
        assert_eq!(check(&cut, false), Err(NotText::Utf8));
        // Invalid (not merely incomplete) at the end is refused even when cut.
        assert_eq!(check(b"ab\xe2\x28", true), Err(NotText::Utf8));
    }

    /// Blocks split at character boundaries: every multi-byte character across every block
    /// boundary passes, and a NUL or bad byte anywhere is found.
    #[test]
    fn block_boundaries_split_no_character() {
        for ch in ["é", "€", "😀"] {
            for shift in 0..4 {
                let mut text = "a".repeat(BLOCK - shift);
                while text.len() < 3 * BLOCK {
                    text.push_str(ch);
                }
                assert_eq!(
                    check(text.as_bytes(), false),
                    Ok(text.len()),
                    "{ch} {shift}"
                );
                for at in [BLOCK - 1, BLOCK, BLOCK + 1, 2 * BLOCK + 2, text.len() - 1] {
                    // A NUL in place of a continuation byte also breaks the UTF-8 before it:
                    // either finding refuses the text.
                    let mut bad = text.clone().into_bytes();
                    bad[at] = 0;
                    assert!(check(&bad, false).is_err(), "{ch} {shift} {at}");
                    bad[at] = 0xff;
                    assert_eq!(check(&bad, false), Err(NotText::Utf8), "{ch} {shift} {at}");
                }
                let mut nul = text.clone().into_bytes();
                nul.insert(BLOCK + 1, 0);
                nul.insert(0, b'a'); // ASCII before the NUL: it is the first problem
                assert_eq!(check(&nul, false).map_err(|_| ()), Err(()), "{ch} {shift}");
                let cut = &text.as_bytes()[..text.len() - 1];
                let whole = text.len() - ch.len();
                assert_eq!(check(cut, true), Ok(whole), "{ch} {shift}");
            }
        }
    }

    #[test]
    fn file_text_keeps_the_room_in_front() {
        let mut buf = b"HEAD".to_vec();
        buf.extend_from_slice("hé".as_bytes());
        buf.push(0xe2); // cut
        let t = FileText::new(buf, 4, true).unwrap();
        assert_eq!(t.as_str(), "hé");
        assert_eq!(t.len(), 3);
        let (buf, start) = t.into_parts();
        assert_eq!((&buf[..start], start), (&b"HEAD"[..], 4));
        assert_eq!(
            FileText::new(b"x\0".to_vec(), 0, false).unwrap_err(),
            NotText::Nul
        );
    }
}
