//! A program's stdout or stderr, kept within a byte cap: the head and the tail, with a note of
//! how much was cut from the middle. Test runners print what matters at both ends (the
//! collection errors first, the summary last), so neither half alone would do.

use std::collections::VecDeque;

/// Collects a stream as it arrives; never holds more than `cap` bytes.
#[derive(Debug)]
pub struct HeadTail {
    head_cap: usize,
    tail_cap: usize,
    head: Vec<u8>,
    tail: VecDeque<u8>,
    total: u64,
}

impl HeadTail {
    pub fn new(cap: usize) -> Self {
        let head_cap = cap / 2;
        HeadTail {
            head_cap,
            tail_cap: cap - head_cap,
            head: Vec::new(),
            tail: VecDeque::new(),
            total: 0,
        }
    }

    pub fn push(&mut self, mut bytes: &[u8]) {
        self.total += bytes.len() as u64;
        let room = self.head_cap - self.head.len();
        if room > 0 {
            let take = room.min(bytes.len());
            self.head.extend_from_slice(&bytes[..take]);
            bytes = &bytes[take..];
        }
        if bytes.len() >= self.tail_cap {
            self.tail.clear();
            self.tail
                .extend(bytes[bytes.len() - self.tail_cap..].iter().copied());
            return;
        }
        let overflow = (self.tail.len() + bytes.len()).saturating_sub(self.tail_cap);
        self.tail.drain(..overflow);
        self.tail.extend(bytes.iter().copied());
    }

    pub fn finish(self) -> Captured {
        let kept = (self.head.len() + self.tail.len()) as u64;
        let omitted = self.total - kept;
        let mut bytes = self.head;
        let head_len = bytes.len();
        bytes.extend(self.tail);
        Captured {
            bytes,
            head_len,
            total_bytes: self.total,
            omitted_bytes: omitted,
        }
    }
}

/// What was kept of one stream.
#[derive(Debug, Clone, Default)]
pub struct Captured {
    /// The head followed by the tail (all of it when nothing was cut).
    bytes: Vec<u8>,
    head_len: usize,
    pub total_bytes: u64,
    pub omitted_bytes: u64,
}

impl Captured {
    /// Every byte the program wrote, or `None` when the cap cut some: a parser of a machine
    /// format must not read a stream with a hole in it.
    pub fn complete(&self) -> Option<&[u8]> {
        (self.omitted_bytes == 0).then_some(self.bytes.as_slice())
    }

    /// The stream as text for a model: invalid UTF-8 replaced, the cut marked where it was.
    pub fn text(&self) -> String {
        if self.omitted_bytes == 0 {
            return String::from_utf8_lossy(&self.bytes).into_owned();
        }
        let (head, tail) = self.bytes.split_at(self.head_len);
        format!(
            "{}\n[... {} bytes cut from the middle; {} bytes in all ...]\n{}",
            String::from_utf8_lossy(head),
            self.omitted_bytes,
            self.total_bytes,
            String::from_utf8_lossy(tail)
        )
    }

    /// The last `max` bytes of the text, for a short error message.
    pub fn tail_text(&self, max: usize) -> String {
        let text = self.text();
        if text.len() <= max {
            return text;
        }
        let mut start = text.len() - max;
        while !text.is_char_boundary(start) {
            start += 1;
        }
        format!("...{}", &text[start..])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn under_the_cap_everything_is_kept() {
        let mut c = HeadTail::new(100);
        c.push(b"hello ");
        c.push(b"world");
        let out = c.finish();
        assert_eq!(out.complete(), Some(&b"hello world"[..]));
        assert_eq!(out.text(), "hello world");
    }

    #[test]
    fn over_the_cap_head_and_tail_are_kept_with_a_note() {
        let mut c = HeadTail::new(10);
        for chunk in [&b"0123"[..], b"456789", b"abcdefghij", b"XYZ"] {
            c.push(chunk);
        }
        let out = c.finish();
        assert_eq!(out.total_bytes, 23);
        assert_eq!(out.omitted_bytes, 13);
        assert!(out.complete().is_none());
        let text = out.text();
        assert!(text.starts_with("01234\n[... 13 bytes cut"), "{text}");
        assert!(text.ends_with("in all ...]\nijXYZ"), "{text}");
    }

    #[test]
    fn the_tail_is_the_last_bytes_whatever_the_chunking() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i % 251) as u8).collect();
        for chunk in [1, 3, 7, 64, 999, 1000] {
            let mut c = HeadTail::new(100);
            for part in data.chunks(chunk) {
                c.push(part);
            }
            let out = c.finish();
            let (head, tail) = out.bytes.split_at(out.head_len);
            assert_eq!(head, &data[..50], "chunk {chunk}");
            assert_eq!(tail, &data[950..], "chunk {chunk}");
        }
    }

    #[test]
    fn a_cut_inside_a_character_is_still_text() {
        let mut c = HeadTail::new(5);
        c.push("ééééééé".as_bytes());
        assert!(c.finish().text().contains('\u{FFFD}'));
    }
}
