//! Finding where a hunk's old lines are in a file: exactly first, then ignoring trailing
//! whitespace, then ignoring leading and trailing whitespace. At each level the nearest place
//! wins; two places equally near are ambiguous, never guessed between.

use super::text::Line;
use crate::control::CallControl;
use crate::error::Result;

/// How strictly lines are compared, strictest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Level {
    Exact,
    TrailingWhitespace,
    Trimmed,
}

pub const LEVELS: [Level; 3] = [Level::Exact, Level::TrailingWhitespace, Level::Trimmed];

impl Level {
    pub fn same(self, file: &str, patch: &str) -> bool {
        match self {
            Level::Exact => file == patch,
            Level::TrailingWhitespace => file.trim_end() == patch.trim_end(),
            Level::Trimmed => file.trim() == patch.trim(),
        }
    }

    /// How a note describes a match at this level.
    pub fn describe(self) -> &'static str {
        match self {
            Level::Exact => "exactly",
            Level::TrailingWhitespace => "ignoring trailing whitespace",
            Level::Trimmed => "ignoring indentation and trailing whitespace",
        }
    }
}

/// Where the old lines were found (0-based index of the first).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Found {
    pub start: usize,
    pub level: Level,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Miss {
    /// Nowhere at any level; `nearest` is the start of the most similar place, if any.
    NotFound { nearest: Option<usize> },
    /// At several places equally near (0-based starts, first few).
    Ambiguous { starts: Vec<usize> },
}

/// Which of several places wins.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Search {
    /// The place nearest `expected` (a stated line number); equally near places on both
    /// sides are ambiguous.
    Near { expected: usize },
    /// The first place at or after `from` (the line after an `@@ anchor`).
    After { from: usize },
    /// The only place at or after `from`, else the only one before it; more than one is
    /// ambiguous (a hunk with neither line numbers nor anchors).
    Unique { from: usize },
    /// Only at `start` (`*** End of File`).
    At { start: usize },
}

/// Checks the deadline every this many candidate places.
const CHECK_EVERY: usize = 4096;
/// How many places an ambiguity reports.
const SHOWN_STARTS: usize = 5;

pub fn locate(
    lines: &[Line<'_>],
    old: &[&str],
    search: Search,
    ctl: &CallControl,
) -> Result<std::result::Result<Found, Miss>> {
    let n = old.len();
    if n == 0 || n > lines.len() {
        return Ok(Err(Miss::NotFound {
            nearest: nearest(lines, old, 0, ctl)?,
        }));
    }
    let last = lines.len() - n;
    let mut probe = Probe {
        lines,
        old,
        ctl,
        count: 0,
    };
    for level in LEVELS {
        let outcome = match search {
            Search::Near { expected } => probe.near(expected.min(last), last, level)?,
            Search::After { from } => probe.first(from, last, level)?.map(Ok),
            Search::Unique { from } => probe.unique(from.min(last + 1), last, level)?,
            Search::At { start } => (start <= last && probe.at(start, level)?).then_some(Ok(start)),
        };
        match outcome {
            Some(Ok(start)) => return Ok(Ok(Found { start, level })),
            Some(Err(starts)) => return Ok(Err(Miss::Ambiguous { starts })),
            None => {}
        }
    }
    let expected = match search {
        Search::Near { expected } => expected,
        Search::After { from } | Search::Unique { from } => from,
        Search::At { start } => start,
    };
    Ok(Err(Miss::NotFound {
        nearest: nearest(lines, old, expected, ctl)?,
    }))
}

/// `Some(Ok(start))`: found; `Some(Err(starts))`: ambiguous; `None`: not at this level.
type Outcome = Option<std::result::Result<usize, Vec<usize>>>;

struct Probe<'p, 'a> {
    lines: &'p [Line<'a>],
    old: &'p [&'p str],
    ctl: &'p CallControl,
    count: usize,
}

impl Probe<'_, '_> {
    fn at(&mut self, start: usize, level: Level) -> Result<bool> {
        self.count += 1;
        if self.count.is_multiple_of(CHECK_EVERY) {
            self.ctl.check()?;
        }
        let window = &self.lines[start..start + self.old.len()];
        Ok(window
            .iter()
            .zip(self.old)
            .all(|(line, want)| level.same(line.content, want)))
    }

    fn near(&mut self, expected: usize, last: usize, level: Level) -> Result<Outcome> {
        for d in 0..=expected.max(last - expected) {
            let below = expected.checked_sub(d);
            let above = Some(expected + d).filter(|&p| p <= last && d > 0);
            let below = match below {
                Some(p) if self.at(p, level)? => Some(p),
                _ => None,
            };
            let above = match above {
                Some(p) if self.at(p, level)? => Some(p),
                _ => None,
            };
            match (below, above) {
                (Some(a), Some(b)) => return Ok(Some(Err(vec![a, b]))),
                (Some(p), None) | (None, Some(p)) => return Ok(Some(Ok(p))),
                (None, None) => {}
            }
        }
        Ok(None)
    }

    fn first(&mut self, from: usize, last: usize, level: Level) -> Result<Option<usize>> {
        for p in from..=last {
            if self.at(p, level)? {
                return Ok(Some(p));
            }
        }
        Ok(None)
    }

    fn all(&mut self, range: std::ops::Range<usize>, level: Level) -> Result<Vec<usize>> {
        let mut found = Vec::new();
        for p in range {
            if self.at(p, level)? {
                found.push(p);
                if found.len() == SHOWN_STARTS {
                    break;
                }
            }
        }
        Ok(found)
    }

    fn unique(&mut self, from: usize, last: usize, level: Level) -> Result<Outcome> {
        for range in [from..last + 1, 0..from] {
            let found = self.all(range, level)?;
            match found.len() {
                0 => continue,
                1 => return Ok(Some(Ok(found[0]))),
                _ => return Ok(Some(Err(found))),
            }
        }
        Ok(None)
    }
}

/// The start of the place most like `old` (most lines equal ignoring surrounding
/// whitespace; ties go to the one nearest `expected`), if any line matches at all.
pub fn nearest(
    lines: &[Line<'_>],
    old: &[&str],
    expected: usize,
    ctl: &CallControl,
) -> Result<Option<usize>> {
    let mut best: Option<(usize, usize)> = None; // (score, start)
    for p in 0..lines.len() {
        if p.is_multiple_of(CHECK_EVERY) {
            ctl.check()?;
        }
        let score = old
            .iter()
            .zip(&lines[p..])
            .filter(|(want, line)| {
                Level::Trimmed.same(line.content, want) && !want.trim().is_empty()
            })
            .count();
        if score == 0 {
            continue;
        }
        let better = match best {
            None => true,
            Some((s, q)) => {
                score > s || (score == s && p.abs_diff(expected) < q.abs_diff(expected))
            }
        };
        if better {
            best = Some((score, p));
        }
    }
    Ok(best.map(|(_, p)| p))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::patch::text::FileText;
    use std::time::Duration;

    fn ctl() -> CallControl {
        CallControl::new(Duration::from_secs(10), None)
    }

    fn find(text: &str, old: &[&str], search: Search) -> std::result::Result<Found, Miss> {
        let f = FileText::parse(text);
        locate(&f.lines, old, search, &ctl()).unwrap()
    }

    #[test]
    fn exact_at_the_stated_place_first() {
        let text = "a\nb\nc\na\nb\n";
        let found = find(text, &["a", "b"], Search::Near { expected: 3 }).unwrap();
        assert_eq!((found.start, found.level), (3, Level::Exact));
        let found = find(text, &["a", "b"], Search::Near { expected: 0 }).unwrap();
        assert_eq!(found.start, 0);
    }

    #[test]
    fn outward_search_prefers_the_nearest_and_refuses_ties() {
        let text = "x\na\nx\nx\nx\na\nx\n";
        assert_eq!(
            find(text, &["a"], Search::Near { expected: 2 })
                .unwrap()
                .start,
            1
        );
        assert_eq!(
            find(text, &["a"], Search::Near { expected: 4 })
                .unwrap()
                .start,
            5
        );
        assert_eq!(
            find(text, &["a"], Search::Near { expected: 3 }),
            Err(Miss::Ambiguous { starts: vec![1, 5] })
        );
    }

    #[test]
    fn an_exact_match_far_away_beats_a_fuzzy_one_nearby() {
        let text = "a  \nz\nz\nz\na\n";
        let found = find(text, &["a"], Search::Near { expected: 0 }).unwrap();
        assert_eq!((found.start, found.level), (4, Level::Exact));
    }

    #[test]
    fn whitespace_levels_in_order() {
        let found = find("x\n  foo  \n", &["  foo"], Search::Near { expected: 0 }).unwrap();
        assert_eq!((found.start, found.level), (1, Level::TrailingWhitespace));
        let found = find("x\n\tfoo\n", &["    foo"], Search::Near { expected: 0 }).unwrap();
        assert_eq!((found.start, found.level), (1, Level::Trimmed));
        // A CRLF file matches LF patch lines exactly: endings are not content.
        let found = find("a\r\nb\r\n", &["a", "b"], Search::Near { expected: 0 }).unwrap();
        assert_eq!(found.level, Level::Exact);
    }

    #[test]
    fn unique_search_refuses_repeats_and_handles_earlier_places() {
        let text = "}\nx\n}\n";
        assert_eq!(
            find(text, &["}"], Search::Unique { from: 0 }),
            Err(Miss::Ambiguous { starts: vec![0, 2] })
        );
        // Only after the cursor counts while something is there...
        assert_eq!(
            find(text, &["}"], Search::Unique { from: 1 })
                .unwrap()
                .start,
            2
        );
        // ...and before it when nothing is (hunks given in reverse order).
        assert_eq!(
            find(text, &["x"], Search::Unique { from: 3 })
                .unwrap()
                .start,
            1
        );
    }

    #[test]
    fn after_an_anchor_the_first_place_wins() {
        let text = "fn a\n  ret\nfn b\n  ret\n";
        assert_eq!(
            find(text, &["  ret"], Search::After { from: 3 })
                .unwrap()
                .start,
            3
        );
        assert_eq!(
            find(text, &["  ret"], Search::After { from: 1 })
                .unwrap()
                .start,
            1
        );
    }

    #[test]
    fn at_end_of_file_only() {
        let text = "a\nb\na\n";
        assert_eq!(
            find(text, &["a"], Search::At { start: 2 }).unwrap().start,
            2
        );
        assert!(matches!(
            find("a\nb\n", &["a"], Search::At { start: 1 }),
            Err(Miss::NotFound { .. })
        ));
    }

    #[test]
    fn not_found_names_the_most_similar_place() {
        let text = "one\ntwo\nthree\nfour\n";
        assert_eq!(
            find(text, &["two", "THREE"], Search::Near { expected: 0 }),
            Err(Miss::NotFound { nearest: Some(1) })
        );
        assert_eq!(
            find(text, &["nothing"], Search::Near { expected: 0 }),
            Err(Miss::NotFound { nearest: None })
        );
        // Longer than the file.
        assert_eq!(
            find("two\n", &["two", "x"], Search::Near { expected: 0 }),
            Err(Miss::NotFound { nearest: Some(0) })
        );
    }

    #[test]
    fn an_expired_deadline_stops_the_search() {
        let text = "a\n".repeat(20_000);
        let f = FileText::parse(&text);
        let stopped = CallControl::new(Duration::ZERO, None);
        assert!(locate(&f.lines, &["b"], Search::Near { expected: 0 }, &stopped).is_err());
    }
}
