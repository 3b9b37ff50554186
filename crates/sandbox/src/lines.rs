//! Lines of text as the tools count them, and the whole-file digest the change tools take as a
//! guard.
//!
//! A line is what ends with `\n` (its terminator, `\r\n` or `\n`, belongs to it), plus a last
//! line without one if the file does not end with `\n`: `"a\nb"` and `"a\nb\n"` both have two
//! lines, `""` has none. `\n` never occurs inside a multi-byte UTF-8 sequence, so every line
//! boundary is also a character boundary, whatever the bytes around it.

use crate::control::CallControl;
use crate::error::Result;
use sha2::{Digest, Sha256};
use std::fs::File;
use std::io::{self, Read};

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

    /// The hash of the bytes so far.
    pub fn hex(&self) -> String {
        hex(&self.0.clone().finalize())
    }

    /// The hash of the bytes so far followed by `more` (an append's after, from its before).
    pub fn hex_with(mut self, more: &[u8]) -> String {
        self.feed(more);
        hex(&self.0.finalize())
    }

    /// Hashes what `file` holds from its current offset to its end, checking the deadline
    /// between chunks. `Ok(None)`: it could not be read (the audit log then says so).
    pub fn of(file: &mut File, ctl: &CallControl) -> Result<Option<FileHash>> {
        const CHUNK: usize = 1 << 20;
        let mut hash = FileHash::default();
        let mut buf = vec![0u8; CHUNK];
        loop {
            ctl.check()?;
            match file.read(&mut buf) {
                Ok(0) => return Ok(Some(hash)),
                Ok(n) => hash.feed(&buf[..n]),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Ok(None),
            }
        }
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
    use std::time::Duration;

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

    #[test]
    fn sha256_is_the_standard_digest() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let tmp = tempfile::tempdir().unwrap();
        let p = tmp.path().join("f");
        std::fs::write(&p, b"ab").unwrap();
        let ctl = CallControl::new(Duration::from_secs(10), None);
        let h = FileHash::of(&mut File::open(&p).unwrap(), &ctl)
            .unwrap()
            .unwrap();
        assert_eq!(h.hex(), sha256_hex(b"ab"));
        assert_eq!(h.hex_with(b"c"), sha256_hex(b"abc"));
    }
}
