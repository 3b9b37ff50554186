//! Lines of text as the tools count them, and the whole-file digest the change tools take as a
//! guard.
//!
//! A line is what ends with `\n` (its terminator, `\r\n` or `\n`, belongs to it), plus a last
//! line without one if the file does not end with `\n`: `"a\nb"` and `"a\nb\n"` both have two
//! lines, `""` has none. `\n` never occurs inside a multi-byte UTF-8 sequence, so every line
//! boundary is also a character boundary, whatever the bytes around it.

use sha2::{Digest, Sha256};

/// Counts newlines and remembers the last byte seen, over bytes fed in any number of pieces.
#[derive(Debug, Default, Clone, Copy)]
pub struct LineCounter {
    newlines: u64,
    last: Option<u8>,
}

impl LineCounter {
    pub fn feed(&mut self, bytes: &[u8]) {
        if let Some(&last) = bytes.last() {
            self.newlines += memchr::memchr_iter(b'\n', bytes).count() as u64;
            self.last = Some(last);
        }
    }

    /// Lines in everything fed so far.
    pub fn lines(&self) -> u64 {
        match self.last {
            None => 0,
            Some(b'\n') => self.newlines,
            Some(_) => self.newlines + 1,
        }
    }
}

/// SHA-256 over bytes fed in pieces, as lowercase hex: the form `read_file` and
/// `get_path_info` report and the change tools accept as `file_hash`.
#[derive(Clone, Default)]
pub struct FileHash(Sha256);

impl FileHash {
    pub fn feed(&mut self, bytes: &[u8]) {
        self.0.update(bytes);
    }

    pub fn hex(self) -> String {
        hex(&self.0.finalize())
    }
}

/// [`FileHash`] of bytes already in memory.
pub fn sha256_hex(bytes: &[u8]) -> String {
    let mut hash = FileHash::default();
    hash.feed(bytes);
    hash.hex()
}

fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(DIGITS[usize::from(b >> 4)] as char);
        out.push(DIGITS[usize::from(b & 0xf)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn count_lines(bytes: &[u8]) -> u64 {
        let mut counter = LineCounter::default();
        counter.feed(bytes);
        counter.lines()
    }

    #[test]
    fn line_counts() {
        assert_eq!(count_lines(b""), 0);
        assert_eq!(count_lines(b"\n"), 1);
        assert_eq!(count_lines(b"a"), 1);
        assert_eq!(count_lines(b"a\nb"), 2);
        assert_eq!(count_lines(b"a\nb\n"), 2);
        assert_eq!(count_lines(b"a\r\nb\r\n\r\n"), 3);
        let mut pieces = LineCounter::default();
        for piece in [&b"a\n"[..], b"", b"b", b"c\n", b"d"] {
            pieces.feed(piece);
        }
        assert_eq!(pieces.lines(), 3);
    }

    #[test]
    fn sha256_is_the_standard_digest_in_lowercase_hex() {
        assert_eq!(
            FileHash::default().hex(),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
        let mut h = FileHash::default();
        h.feed(b"ab");
        h.feed(b"c");
        assert_eq!(
            h.hex(),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }
}
