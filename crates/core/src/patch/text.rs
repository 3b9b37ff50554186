//! A text file as lines with their own endings, so everything a patch does not touch is put
//! back byte for byte: each line's ending (LF or CRLF), the BOM and the final-newline state.

use std::borrow::Cow;

const BOM: char = '\u{feff}';

/// One line of a file: its content and the ending it had (`"\n"`, `"\r\n"`, or `""` for a
/// last line without one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Line<'a> {
    pub content: &'a str,
    pub ending: &'a str,
}

/// A file's text split into lines.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileText<'a> {
    pub bom: bool,
    pub lines: Vec<Line<'a>>,
    /// The ending added lines take: CRLF when most lines end with it, else LF.
    pub dominant: &'static str,
    /// Whether the file ends with a newline (an empty file counts as one that does, so lines
    /// added to it end with one).
    pub final_newline: bool,
}

impl<'a> FileText<'a> {
    pub fn parse(text: &'a str) -> FileText<'a> {
        let (bom, body) = match text.strip_prefix(BOM) {
            Some(rest) => (true, rest),
            None => (false, text),
        };
        let mut lines = Vec::new();
        let (mut crlf, mut lf) = (0usize, 0usize);
        for piece in body.split_inclusive('\n') {
            let line = if let Some(content) = piece.strip_suffix("\r\n") {
                crlf += 1;
                Line {
                    content,
                    ending: &piece[content.len()..],
                }
            } else if let Some(content) = piece.strip_suffix('\n') {
                lf += 1;
                Line {
                    content,
                    ending: &piece[content.len()..],
                }
            } else {
                Line {
                    content: piece,
                    ending: "",
                }
            };
            lines.push(line);
        }
        FileText {
            bom,
            lines,
            dominant: if crlf > lf { "\r\n" } else { "\n" },
            final_newline: body.is_empty() || body.ends_with('\n'),
        }
    }
}

/// A line of the new text: content and, for a line kept from the file, its ending.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutLine<'a> {
    pub content: Cow<'a, str>,
    /// `None` for an added line: it takes the file's dominant ending.
    pub ending: Option<&'a str>,
}

/// Joins the new lines: every line but the last ends with its own ending (or the dominant
/// one); the last ends with one only if `final_newline`.
pub fn render(bom: bool, lines: &[OutLine<'_>], dominant: &str, final_newline: bool) -> String {
    let size: usize = lines.iter().map(|l| l.content.len() + 2).sum();
    let mut out = String::with_capacity(size + 3);
    if bom {
        out.push(BOM);
    }
    let last = lines.len().saturating_sub(1);
    for (i, line) in lines.iter().enumerate() {
        out.push_str(&line.content);
        let own = line.ending.filter(|e| !e.is_empty()).unwrap_or(dominant);
        if i < last || final_newline {
            out.push_str(own);
        }
    }
    out
}

/// A patch line without its line ending: the `\n` and a `\r` before it belong to the patch
/// text, not to the line.
pub fn strip_ending(line: &str) -> &str {
    let line = line.strip_suffix('\n').unwrap_or(line);
    line.strip_suffix('\r').unwrap_or(line)
}

/// A patch line as it is compared with the file: without its ending and without a BOM
/// (the file's BOM is kept apart).
pub fn patch_line(line: &str) -> String {
    strip_ending(line).trim_start_matches(BOM).to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn roundtrip(text: &str) -> String {
        let f = FileText::parse(text);
        let lines: Vec<OutLine> = f
            .lines
            .iter()
            .map(|l| OutLine {
                content: Cow::Borrowed(l.content),
                ending: Some(l.ending),
            })
            .collect();
        render(f.bom, &lines, f.dominant, f.final_newline)
    }

    #[test]
    fn every_shape_roundtrips_byte_for_byte() {
        for text in [
            "",
            "a",
            "a\n",
            "a\r\nb\r\n",
            "a\r\nb\nc",
            "\u{feff}x\r\ny",
            "\u{feff}",
            "\n\n",
            "a\rb\n",
            "line\r\n\r\n",
        ] {
            assert_eq!(roundtrip(text), text, "{text:?}");
        }
    }

    #[test]
    fn dominant_ending_and_final_newline() {
        let f = FileText::parse("a\r\nb\r\nc\n");
        assert_eq!(f.dominant, "\r\n");
        assert!(f.final_newline);
        let f = FileText::parse("a\r\nb\nc");
        assert_eq!(f.dominant, "\n");
        assert!(!f.final_newline);
        assert_eq!(f.lines.len(), 3);
        assert_eq!(f.lines[2].ending, "");
        assert!(FileText::parse("").final_newline);
        assert!(FileText::parse("\u{feff}abc").bom);
    }

    #[test]
    fn added_lines_take_the_dominant_ending() {
        let lines = vec![
            OutLine {
                content: "a".into(),
                ending: Some("\r\n"),
            },
            OutLine {
                content: "new".into(),
                ending: None,
            },
            OutLine {
                content: "last".into(),
                ending: Some(""),
            },
        ];
        assert_eq!(render(false, &lines, "\r\n", false), "a\r\nnew\r\nlast");
        assert_eq!(
            render(true, &lines, "\r\n", true),
            "\u{feff}a\r\nnew\r\nlast\r\n"
        );
    }

    #[test]
    fn patch_lines_lose_their_ending_and_bom() {
        assert_eq!(patch_line("x\r\n"), "x");
        assert_eq!(patch_line("x\n"), "x");
        assert_eq!(patch_line("\u{feff}x"), "x");
        assert_eq!(strip_ending("a\r"), "a");
    }
}
