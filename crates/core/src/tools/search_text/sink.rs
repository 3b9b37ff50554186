//! Collecting `search_text`'s matches from `grep-searcher`: one entry per matching line, with
//! its context lines, snippets cut at a character boundary.

use grep_matcher::Matcher;
use grep_regex::RegexMatcher;
use grep_searcher::{Searcher, Sink, SinkContext, SinkMatch};
use serde::Serialize;
use std::collections::VecDeque;
use std::io;

/// Characters of a line shown around a match (and of a context line).
pub const SNIPPET_CHARS: usize = 200;

/// One matching line.
#[derive(Debug, Serialize)]
pub struct TextMatch {
    /// Workspace-relative path.
    pub file: String,
    /// 1-based line number.
    pub line: u64,
    /// 1-based column of the first match in the line, in characters.
    pub column: u64,
    /// The line (without its line ending), cut to at most 200 characters around the match.
    pub snippet: String,
    /// The first match in the line, as character offsets into `snippet` (end exclusive).
    pub match_start: u64,
    pub match_end: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub before: Vec<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub after: Vec<String>,
    /// The snippet leaves out the start / the end of the line (for the text).
    #[serde(skip)]
    pub cut: (bool, bool),
}

/// What one search run collects across files.
pub struct Collected {
    pub matches: Vec<TextMatch>,
    pub max: usize,
    pub context: usize,
    /// A match beyond `max` was found.
    pub truncated: bool,
}

/// The sink of one file's search.
pub struct FileSink<'a> {
    pub out: &'a mut Collected,
    pub matcher: &'a RegexMatcher,
    pub file: &'a str,
    /// Lines just before the current one (line number, text), for before-context.
    pub recent: VecDeque<(u64, String)>,
    /// Matches of this file still collecting after-context.
    pub pending: Vec<usize>,
    pub binary: bool,
}

impl<'a> FileSink<'a> {
    pub fn new(out: &'a mut Collected, matcher: &'a RegexMatcher, file: &'a str) -> Self {
        FileSink {
            out,
            matcher,
            file,
            recent: VecDeque::new(),
            pending: Vec::new(),
            binary: false,
        }
    }

    /// A line seen (matched or context): after-context of earlier matches, and remembered
    /// as before-context of later ones.
    fn saw_line(&mut self, number: u64, line: &[u8]) {
        let context = self.out.context as u64;
        if context == 0 {
            return;
        }
        let mut text = None;
        let matches = &mut self.out.matches;
        self.pending.retain(|&i| {
            let m = &mut matches[i];
            if number > m.line && number <= m.line + context {
                m.after
                    .push(text.get_or_insert_with(|| context_text(line)).clone());
            }
            number < m.line + context
        });
        if self.recent.len() == self.out.context {
            self.recent.pop_front();
        }
        let text = text.unwrap_or_else(|| context_text(line));
        self.recent.push_back((number, text));
    }
}

impl Sink for FileSink<'_> {
    type Error = io::Error;

    fn matched(&mut self, _: &Searcher, m: &SinkMatch<'_>) -> Result<bool, io::Error> {
        let first = m.line_number().unwrap_or(0);
        for (number, line) in (first..).zip(m.lines()) {
            let line = strip_eol(line);
            if self.out.matches.len() >= self.out.max {
                self.saw_line(number, line);
                self.out.truncated = true;
                return Ok(false);
            }
            let (start, end) = match self.matcher.find(line) {
                Ok(Some(found)) => (found.start(), found.end()),
                _ => (0, 0),
            };
            let before = self
                .recent
                .iter()
                .filter(|(n, _)| *n + self.out.context as u64 >= number && *n < number)
                .map(|(_, t)| t.clone())
                .collect();
            let mut found = snippet(line, start, end);
            found.file = self.file.to_string();
            found.line = number;
            found.before = before;
            self.saw_line(number, line);
            if self.out.context > 0 {
                self.pending.push(self.out.matches.len());
            }
            self.out.matches.push(found);
        }
        Ok(true)
    }

    fn context(&mut self, _: &Searcher, c: &SinkContext<'_>) -> Result<bool, io::Error> {
        let number = c.line_number().unwrap_or(0);
        self.saw_line(number, strip_eol(c.bytes()));
        Ok(true)
    }

    fn binary_data(&mut self, _: &Searcher, _offset: u64) -> Result<bool, io::Error> {
        self.binary = true;
        Ok(false)
    }
}

fn strip_eol(line: &[u8]) -> &[u8] {
    let line = line.strip_suffix(b"\n").unwrap_or(line);
    line.strip_suffix(b"\r").unwrap_or(line)
}

fn is_char_start(b: u8) -> bool {
    (b as i8) >= -0x40
}

/// Characters in `bytes` (UTF-8 leading bytes; each invalid byte counts as one).
fn chars(bytes: &[u8]) -> usize {
    bytes.iter().filter(|&&b| is_char_start(b)).count()
}

/// At most `n` characters from the start of `bytes`, as text.
fn head(bytes: &[u8], n: usize) -> (String, bool) {
    let window = &bytes[..bytes.len().min(n * 4)];
    let text = String::from_utf8_lossy(window);
    match text.char_indices().nth(n) {
        Some((cut, _)) => (text[..cut].to_string(), true),
        None => (text.into_owned(), window.len() < bytes.len()),
    }
}

/// At most `n` characters from the end of `bytes`, as text.
fn tail(bytes: &[u8], n: usize) -> (String, bool) {
    let mut from = bytes.len().saturating_sub(n * 4);
    while from > 0 && from < bytes.len() && !is_char_start(bytes[from]) {
        from += 1;
    }
    let text = String::from_utf8_lossy(&bytes[from..]);
    let count = text.chars().count();
    if count <= n {
        return (text.into_owned(), from > 0);
    }
    let skip = text.char_indices().nth(count - n).map_or(0, |(i, _)| i);
    (text[skip..].to_string(), true)
}

fn context_text(line: &[u8]) -> String {
    head(line, SNIPPET_CHARS).0
}

/// The snippet of a line around the match `start..end` (bytes), cut to SNIPPET_CHARS
/// characters: as much before the match as after it when the line is too long.
pub fn snippet(line: &[u8], start: usize, end: usize) -> TextMatch {
    let start = start.min(line.len());
    let end = end.clamp(start, line.len());
    let (pre, mid, post) = (&line[..start], &line[start..end], &line[end..]);
    let column = chars(pre) as u64 + 1;
    let (mid_text, mid_cut) = head(mid, SNIPPET_CHARS);
    let mid_len = mid_text.chars().count();
    let room = SNIPPET_CHARS - mid_len;
    let post_chars = chars(post);
    // Half the room before the match; what the end of the line does not use goes before too.
    let before_room = (room - room / 2).max(room.saturating_sub(post_chars));
    let (pre_text, cut_start) = tail(pre, before_room);
    let pre_len = pre_text.chars().count();
    let (post_text, cut_end) = head(post, room - pre_len);
    TextMatch {
        file: String::new(),
        line: 0,
        column,
        snippet: format!("{pre_text}{mid_text}{post_text}"),
        match_start: pre_len as u64,
        match_end: (pre_len + mid_len) as u64,
        before: Vec::new(),
        after: Vec::new(),
        cut: (cut_start, cut_end || mid_cut),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_lines_are_whole() {
        let m = snippet("let é = foo();".as_bytes(), 9, 12);
        assert_eq!(m.snippet, "let é = foo();");
        assert_eq!(m.column, 9);
        let s: String = m
            .snippet
            .chars()
            .skip(m.match_start as usize)
            .take((m.match_end - m.match_start) as usize)
            .collect();
        assert_eq!(s, "foo");
        assert_eq!(m.cut, (false, false));
    }

    #[test]
    fn long_lines_are_cut_around_the_match_on_char_boundaries() {
        let line = format!("{}NEEDLE{}", "é".repeat(500), "ü".repeat(500));
        let start = "é".len() * 500;
        let m = snippet(line.as_bytes(), start, start + 6);
        assert_eq!(m.snippet.chars().count(), SNIPPET_CHARS);
        assert_eq!(m.column, 501);
        let s: String = m
            .snippet
            .chars()
            .skip(m.match_start as usize)
            .take(6)
            .collect();
        assert_eq!(s, "NEEDLE");
        assert_eq!(m.cut, (true, true));
        // Near the end of the line, the room goes before the match.
        let line = format!("{}NEEDLE!", "a".repeat(1000));
        let m = snippet(line.as_bytes(), 1000, 1006);
        assert_eq!(m.snippet.chars().count(), SNIPPET_CHARS);
        assert!(m.snippet.ends_with("NEEDLE!"));
        assert_eq!(m.cut, (true, false));
    }
}
