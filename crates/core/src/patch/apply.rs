//! Applies one file's hunks to its text, in memory: every hunk is located first, overlaps
//! are refused, and only when all of them fit is the new text built. A hunk that does not fit
//! is never dropped: it becomes a [`Rejection`] saying why.

use super::locate::{locate, Found, Level, Miss, Search, LEVELS};
use super::model::{Hunk, LineOp, LinesHunk, RangeHunk, Reason, Rejection};
use super::text::{render, FileText, Line, OutLine};
use crate::control::CallControl;
use crate::error::Result;
use std::borrow::Cow;

/// A file's new text and what changed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Patched {
    pub text: String,
    pub added: u64,
    pub removed: u64,
    /// Hunks that only matched loosely, for the model to check.
    pub notes: Vec<String>,
}

/// Where a hunk goes: it replaces `len` lines from `start` (0-based).
#[derive(Debug, Clone, Copy)]
struct Placement {
    hunk: usize,
    start: usize,
    len: usize,
}

impl Placement {
    fn end(&self) -> usize {
        self.start + self.len
    }

    fn overlaps(&self, other: &Placement) -> bool {
        match (self.len, other.len) {
            (0, 0) => false,
            (0, _) => other.start < self.start && self.start < other.end(),
            (_, 0) => self.start < other.start && other.start < self.end(),
            _ => self.start < other.end() && other.start < self.end(),
        }
    }
}

/// Applies `hunks` to `original`. `Ok(Err(rejections))` when any hunk does not fit (then
/// nothing of this file is changed); `Err` only when the deadline passes.
pub fn apply_hunks(
    path: &str,
    original: &str,
    hunks: &[Hunk],
    ctl: &CallControl,
) -> Result<std::result::Result<Patched, Vec<Rejection>>> {
    let file = FileText::parse(original);
    let mut placer = Placer {
        path,
        lines: &file.lines,
        ctl,
        cursor: 0,
        drift: 0,
        rejections: Vec::new(),
        notes: Vec::new(),
    };
    let mut placed = Vec::new();
    for (i, hunk) in hunks.iter().enumerate() {
        ctl.check()?;
        let placement = match hunk {
            Hunk::Lines(h) => placer.place_lines(i, h)?,
            Hunk::Range(r) => placer.place_range(i, r),
        };
        let Some(p) = placement else { continue };
        if let Some(other) = placed.iter().find(|q: &&Placement| p.overlaps(q)) {
            placer.reject(
                i,
                Reason::Overlap,
                hunk.expected(),
                Some(p.start),
                format!(
                    "it overlaps hunk {} (lines {}-{}); merge the two hunks into one",
                    other.hunk + 1,
                    other.start + 1,
                    other.end().max(other.start + 1)
                ),
            );
            continue;
        }
        placed.push(p);
    }
    if !placer.rejections.is_empty() {
        return Ok(Err(placer.rejections));
    }
    let notes = std::mem::take(&mut placer.notes);
    Ok(Ok(build(&file, hunks, placed, notes)))
}

struct Placer<'p, 'a> {
    path: &'p str,
    lines: &'p [Line<'a>],
    ctl: &'p CallControl,
    /// Just after the previous hunk's old lines: where a hunk without line numbers is
    /// looked for first.
    cursor: usize,
    /// How far the previous hunk was from where it said it was: the next one is probably
    /// off by as much.
    drift: isize,
    rejections: Vec<Rejection>,
    notes: Vec<String>,
}

impl Placer<'_, '_> {
    fn reject(
        &mut self,
        hunk: usize,
        reason: Reason,
        expected: Vec<String>,
        nearest: Option<usize>,
        detail: String,
    ) {
        self.rejections.push(Rejection {
            path: self.path.to_string(),
            hunk: hunk + 1,
            reason,
            expected,
            nearest_line: nearest.map(|n| n as u64 + 1),
            detail,
            file_lines: Vec::new(),
        });
    }

    fn place_range(&mut self, i: usize, r: &RangeHunk) -> Option<Placement> {
        let total = self.lines.len() as u64;
        let valid = r.start_line >= 1
            && r.start_line <= total + 1
            && r.end_line + 1 >= r.start_line
            && r.end_line <= total;
        if !valid {
            self.reject(
                i,
                Reason::OutOfRange,
                Vec::new(),
                None,
                format!(
                    "start_line {} / end_line {} is not a range of {} ({total} lines); lines are 1-based and inclusive, end_line = start_line - 1 inserts before start_line",
                    r.start_line, r.end_line, self.path
                ),
            );
            return None;
        }
        Some(Placement {
            hunk: i,
            start: (r.start_line - 1) as usize,
            len: (r.end_line + 1 - r.start_line) as usize,
        })
    }

    fn place_lines(&mut self, i: usize, h: &LinesHunk) -> Result<Option<Placement>> {
        let total = self.lines.len();
        let mut from = self.cursor;
        for anchor in &h.anchors {
            match find_anchor(self.lines, anchor, from) {
                Some(at) => from = at + 1,
                None => {
                    self.reject(
                        i,
                        Reason::ContextNotFound,
                        vec![anchor.clone()],
                        None,
                        format!("the anchor line '@@ {anchor}' is not in the file"),
                    );
                    return Ok(None);
                }
            }
        }
        let old = h.old_lines();
        let expected = h
            .stated_index
            .map(|s| s.saturating_add_signed(self.drift).min(total));
        let start = if old.is_empty() {
            let at = match (h.at_eof, expected) {
                (true, _) => total,
                (false, Some(at)) => at,
                (false, None) => from,
            };
            if h.stated_index.is_some_and(|s| s > total) {
                self.reject(
                    i,
                    Reason::OutOfRange,
                    Vec::new(),
                    None,
                    format!(
                        "it inserts after line {} but the file has {total} lines",
                        h.stated_index.unwrap_or(0)
                    ),
                );
                return Ok(None);
            }
            at
        } else {
            let search = if h.at_eof {
                Search::At {
                    start: total.saturating_sub(old.len()),
                }
            } else if let Some(expected) = expected {
                Search::Near { expected }
            } else if !h.anchors.is_empty() {
                Search::After { from }
            } else {
                Search::Unique { from }
            };
            match locate(self.lines, &old, search, self.ctl)? {
                Ok(Found { start, level }) => {
                    if level != Level::Exact {
                        self.notes.push(format!(
                            "{}: hunk {} matched at line {} only {}; check the result",
                            self.path,
                            i + 1,
                            start + 1,
                            level.describe()
                        ));
                    }
                    start
                }
                Err(miss) => {
                    self.reject_miss(i, h, miss)?;
                    return Ok(None);
                }
            }
        };
        if let Some(stated) = h.stated_index {
            self.drift = start as isize - stated as isize;
        }
        self.cursor = start + old.len();
        Ok(Some(Placement {
            hunk: i,
            start,
            len: old.len(),
        }))
    }

    fn reject_miss(&mut self, i: usize, h: &LinesHunk, miss: Miss) -> Result<()> {
        let expected: Vec<String> = h.old_lines().into_iter().map(str::to_string).collect();
        match miss {
            Miss::NotFound { nearest } => {
                // Sent twice? The hunk's result (its context and added lines) is there.
                let new = h.new_lines();
                let old = h.old_lines();
                if !new.is_empty() && new != old {
                    let search = Search::After { from: 0 };
                    if let Ok(Found { start, level }) = locate(self.lines, &new, search, self.ctl)?
                    {
                        let how = match level {
                            Level::Exact => String::new(),
                            level => format!(" ({})", level.describe()),
                        };
                        let detail = format!(
                            "its old lines are not in the file, but its result is, at line {}{how}: the patch looks applied already (an earlier call made it?); leave this hunk out",
                            start + 1
                        );
                        self.reject(i, Reason::ContextNotFound, expected, Some(start), detail);
                        return Ok(());
                    }
                }
                let where_ = if h.at_eof {
                    " at the end of the file"
                } else {
                    ""
                };
                let near = match nearest {
                    Some(n) => format!(
                        "; the most similar place starts at line {}, shown below",
                        n + 1
                    ),
                    None => String::new(),
                };
                let detail = format!(
                    "its {} context/removed lines are not in the file{where_}, not even ignoring whitespace{near}",
                    expected.len()
                );
                let shown = expected.len().max(1);
                self.reject(i, Reason::ContextNotFound, expected, nearest, detail);
                if let (Some(n), Some(r)) = (nearest, self.rejections.last_mut()) {
                    r.file_lines = self.lines[n..(n + shown).min(self.lines.len())]
                        .iter()
                        .map(|l| format!("{}{}", l.content, l.ending))
                        .collect();
                }
            }
            Miss::Ambiguous { starts } => {
                let shown: Vec<String> = starts.iter().map(|s| (s + 1).to_string()).collect();
                let detail = format!(
                    "its lines occur at lines {} and it does not say which; add more context lines or an '@@ ' line naming the enclosing function or class",
                    shown.join(", ")
                );
                let first = starts.first().copied();
                self.reject(i, Reason::Ambiguous, expected, first, detail);
            }
        }
        Ok(())
    }
}

/// The first line at or after `from` (else before it) that is `anchor`, at the strictest
/// level that finds one.
fn find_anchor(lines: &[Line<'_>], anchor: &str, from: usize) -> Option<usize> {
    LEVELS.iter().find_map(|level| {
        let hit = |l: &Line<'_>| level.same(l.content, anchor);
        let after = lines.get(from..)?.iter().position(hit).map(|p| p + from);
        after.or_else(|| lines[..from.min(lines.len())].iter().position(hit))
    })
}

fn kept<'a>(l: &Line<'a>) -> OutLine<'a> {
    OutLine {
        content: Cow::Borrowed(l.content),
        ending: Some(l.ending),
    }
}

fn build<'a>(
    file: &FileText<'a>,
    hunks: &'a [Hunk],
    mut placed: Vec<Placement>,
    notes: Vec<String>,
) -> Patched {
    placed.sort_by_key(|p| (p.start, p.len > 0, p.hunk));
    let lines = &file.lines;
    let mut out: Vec<OutLine<'a>> = Vec::with_capacity(lines.len() + 16);
    let (mut added, mut removed) = (0u64, 0u64);
    let mut final_newline = file.final_newline;
    let mut pos = 0;
    for p in &placed {
        out.extend(lines[pos..p.start].iter().map(kept));
        pos = p.start;
        match &hunks[p.hunk] {
            Hunk::Lines(h) => {
                for op in &h.ops {
                    match op {
                        LineOp::Context(_) => {
                            out.push(kept(&lines[pos]));
                            pos += 1;
                        }
                        LineOp::Delete(_) => {
                            pos += 1;
                            removed += 1;
                        }
                        LineOp::Insert(text) => {
                            out.push(OutLine {
                                content: Cow::Borrowed(text.as_str()),
                                ending: None,
                            });
                            added += 1;
                        }
                    }
                }
                // A unified diff may say explicitly that the file's last line gains or
                // loses its newline; otherwise the file's final-newline state is kept.
                if p.end() == lines.len() && h.old_missing_newline != h.new_missing_newline {
                    final_newline = !h.new_missing_newline;
                }
            }
            Hunk::Range(r) => {
                pos += p.len;
                removed += p.len as u64;
                out.extend(r.replace_with.iter().map(|t| OutLine {
                    content: Cow::Borrowed(t.as_str()),
                    ending: None,
                }));
                added += r.replace_with.len() as u64;
            }
        }
    }
    out.extend(lines[pos..].iter().map(kept));
    Patched {
        text: render(file.bom, &out, file.dominant, final_newline),
        added,
        removed,
        notes,
    }
}
