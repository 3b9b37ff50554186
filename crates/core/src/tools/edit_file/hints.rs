//! What `edit_file`'s errors tell the model: for `edit_not_found`, the closest text in the file
//! (line numbers and the lines, whitespace made visible) and the kind of difference that
//! explains the miss when one does; for `ambiguous_edit`, where the first matches are.
//!
//! Hints only explain: `edit_file` still replaces exact bytes and nothing else. The work is
//! bounded (the file is at most `max_write_bytes`; lines, comparisons and edit-distance cells
//! are capped), so a 1 MiB file with a long `old_text` stays fast; the search also gives up
//! when the call's deadline passes (`stop`), leaving the plain message.

use std::collections::HashMap;
use std::fmt::Write;

/// File lines looked at.
const MAX_FILE_LINES: usize = 100_000;
/// Lines of `old_text` used to locate the closest text.
const MAX_OLD_LINES: usize = 400;
/// Line comparisons per kind of difference tried.
const COMPARE_BUDGET: usize = 2_000_000;
/// File lines with the same content that still vote for a position (more say nothing).
const MAX_VOTERS: usize = 64;
/// Characters of a line compared by edit distance, and edit-distance cells in all.
const FUZZY_CHARS: usize = 200;
const FUZZY_BUDGET: usize = 20_000_000;
/// Below this similarity no line is "closest".
const FUZZY_MIN: f64 = 0.5;
/// Lines of the closest text shown, and characters per line.
const SHOWN_LINES: usize = 8;
const SHOWN_CHARS: usize = 160;
/// Deadline checks happen every this many lines.
const CHECK_EVERY: usize = 4096;
/// Match positions named by `ambiguous_edit`.
const SHOWN_MATCHES: usize = 5;

/// A kind of difference between `old_text` and the file that explains a miss.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Difference {
    CrlfInFile,
    LfInFile,
    TrailingWhitespace,
    TabsInFile,
    SpacesInFile,
    Indentation,
    /// Whitespace inside lines (the columns are in [`Region::detail`]).
    Spacing,
    LetterCase,
}

impl Difference {
    fn describe(self) -> &'static str {
        match self {
            Difference::CrlfInFile => {
                "line endings: the file's lines end with CRLF (\\r\\n) where old_text has LF (\\n)"
            }
            Difference::LfInFile => {
                "line endings: the file's lines end with LF (\\n) where old_text has CRLF (\\r\\n)"
            }
            Difference::TrailingWhitespace => "trailing whitespace at the ends of lines",
            Difference::TabsInFile => {
                "indentation: the file indents with tabs where old_text has spaces"
            }
            Difference::SpacesInFile => {
                "indentation: the file indents with spaces where old_text has tabs"
            }
            Difference::Indentation => "indentation (the amount of leading whitespace)",
            Difference::Spacing => "spacing inside lines",
            Difference::LetterCase => "letter case",
        }
    }
}

/// Where the closest text is: `len` lines from line index `start` (0-based).
#[derive(Debug, PartialEq, Eq)]
pub struct Region {
    pub start: usize,
    pub len: usize,
    pub difference: Option<Difference>,
    /// Where exactly the difference is, when it is known (spacing: the columns).
    pub detail: Option<String>,
}

/// old_text and new_text with the file's line endings, when old_text differs from the file
/// only in them (`apply_patch` matches line endings the same way: the file keeps its own).
pub struct InFileEndings {
    pub old: String,
    pub new: String,
    /// The endings old_text was sent with, and the file's: "LF" or "CRLF".
    pub sent: &'static str,
    pub file: &'static str,
}

/// See [`InFileEndings`]: `None` unless old_text, its line endings made the file's, occurs
/// in `text`.
pub fn in_file_endings(text: &str, old: &str, new: &str) -> Option<InFileEndings> {
    let (_, difference) = line_ending_match(text, old)?;
    let lf = |s: &str| s.replace("\r\n", "\n");
    Some(match difference {
        Difference::CrlfInFile => InFileEndings {
            old: lf(old).replace('\n', "\r\n"),
            new: lf(new).replace('\n', "\r\n"),
            sent: "LF",
            file: "CRLF",
        },
        _ => InFileEndings {
            old: lf(old),
            new: lf(new),
            sent: "CRLF",
            file: "LF",
        },
    })
}

/// Where new_text already is, when the edit looks applied already (sent twice): `(first line,
/// last line)`, 1-based. new_text must say something (3 non-blank bytes or more) and must not
/// be inside old_text (then finding it means nothing).
fn already_applied(text: &str, old: &str, new: &str) -> Option<(usize, usize)> {
    let new = new.trim_matches(['\n', '\r']);
    if new.trim().len() < 3 || old.contains(new) {
        return None;
    }
    let offset = text
        .find(new)
        .or_else(|| text.find(&new.replace('\n', "\r\n")))?;
    let first = line_of(text, offset) + 1;
    Some((first, first + new.matches('\n').count()))
}

/// The `edit_not_found` message. `stop` says when to give up looking (the call's deadline).
pub fn not_found_message(
    display: &str,
    text: &str,
    old: &str,
    new: &str,
    stop: &dyn Fn() -> bool,
) -> String {
    let head = format!("old_text was not found in {display}");
    if let Some((first, last)) = already_applied(text, old, new) {
        let span = match first == last {
            true => format!("line {first}"),
            false => format!("lines {first}-{last}"),
        };
        return format!(
            "{head}, but new_text is already there, at {span}: the edit looks applied already (an earlier call made it?). Nothing was changed; read_file with start_line={first} shows those lines."
        );
    }
    let lines: Vec<&str> = text.split_inclusive('\n').take(MAX_FILE_LINES).collect();
    let Some(region) = closest_region(text, &lines, old, stop) else {
        return format!(
            "{head}; read the file and copy the exact text, including whitespace and line endings"
        );
    };
    let end = (region.start + region.len).min(lines.len());
    let (first, last) = (region.start + 1, end);
    let span = if first == last {
        format!("line {first}")
    } else {
        format!("lines {first}-{last}")
    };
    let mut msg = match region.difference {
        Some(d) => format!(
            "{head}. The text at {span} matches it except for {}:\n",
            d.describe()
        ),
        None => format!("{head}. The closest text is at {span}:\n"),
    };
    if let Some(detail) = &region.detail {
        let _ = writeln!(msg, "{detail}");
    }
    let mut marked = false;
    for (n, line) in (first..).zip(&lines[region.start..end]).take(SHOWN_LINES) {
        let (shown, has_marks) = visible(line);
        marked |= has_marks;
        let _ = writeln!(msg, "{n}| {shown}");
    }
    if end - region.start > SHOWN_LINES {
        let _ = writeln!(msg, "... ({} more lines)", end - region.start - SHOWN_LINES);
    }
    if marked {
        msg.push_str("(→ is a tab, · a trailing space, ␍ a carriage return)\n");
    }
    let _ = write!(
        msg,
        "Copy old_text exactly from the file (read_file with start_line={first} shows these lines) and try again."
    );
    msg
}

/// The `ambiguous_edit` message, naming the lines of the first matches.
pub fn ambiguous_message(display: &str, text: &str, old: &str, count: u64) -> String {
    let mut at: Vec<String> = Vec::new();
    let (mut line, mut scanned) = (1usize, 0usize);
    for (offset, _) in text.match_indices(old).take(SHOWN_MATCHES) {
        line += memchr::memchr_iter(b'\n', &text.as_bytes()[scanned..offset]).count();
        scanned = offset;
        let shown = line.to_string();
        if at.last() != Some(&shown) {
            at.push(shown);
        }
    }
    let more = if count > SHOWN_MATCHES as u64 {
        ", ..."
    } else {
        ""
    };
    let where_ = match at.as_slice() {
        [] => String::new(),
        [one] => format!(" (at line {one})"),
        [init @ .., last] if more.is_empty() => {
            format!(" (at lines {} and {last})", init.join(", "))
        }
        all => format!(" (at lines {}{more})", all.join(", ")),
    };
    format!("old_text occurs {count} times in {display}{where_}; add surrounding lines to make it unique, or set replace_all to true")
}

/// The closest text to `old` in the file (`text`, split into `lines`), and the difference
/// that explains the miss when one of the known kinds does.
pub fn closest_region(
    text: &str,
    lines: &[&str],
    old: &str,
    stop: &dyn Fn() -> bool,
) -> Option<Region> {
    let old_lines: Vec<&str> = old.split_inclusive('\n').take(MAX_OLD_LINES).collect();
    let len = old_lines.len().max(1);
    let region = |start, difference| Region {
        start,
        len,
        difference: Some(difference),
        detail: None,
    };
    if let Some((start, d)) = line_ending_match(text, old) {
        return Some(region(start, d));
    }
    if let Some(start) = window_match(lines, &old_lines, |l| l.trim_end(), stop) {
        return Some(region(start, Difference::TrailingWhitespace));
    }
    if let Some(start) = window_match(lines, &old_lines, |l| l.trim_start(), stop) {
        let d = indentation_kind(&lines[start..], &old_lines);
        return Some(region(start, d));
    }
    if stop() {
        return None;
    }
    if let Some((start, detail)) = spacing_match(lines, &old_lines, stop) {
        return Some(Region {
            detail: Some(detail),
            ..region(start, Difference::Spacing)
        });
    }
    let lowered = text.to_ascii_lowercase();
    if let Some(offset) = lowered.find(&old.to_ascii_lowercase()) {
        return Some(region(line_of(text, offset), Difference::LetterCase));
    }
    if stop() {
        return None;
    }
    let start = voted_start(lines, &old_lines).or_else(|| fuzzy_start(lines, &old_lines, stop))?;
    Some(Region {
        start,
        len,
        difference: None,
        detail: None,
    })
}

fn is_space(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// A line without its terminator and without spaces and tabs.
fn squashed(line: &str) -> String {
    bare(line).chars().filter(|&c| !is_space(c)).collect()
}

/// Most spacing differences named.
const SHOWN_SPACINGS: usize = 3;

/// old_text found once spaces and tabs are left out of both sides (the window rules of
/// [`window_match`]), and only the whitespace inside lines differs: the start, and where
/// (`line 12, column 9: the file has 1 space where old_text has none`).
fn spacing_match(
    lines: &[&str],
    old_lines: &[&str],
    stop: &dyn Fn() -> bool,
) -> Option<(usize, String)> {
    let old: Vec<String> = old_lines.iter().map(|l| squashed(l)).collect();
    if old.iter().all(String::is_empty) || old.len() > lines.len() {
        return None;
    }
    let m = old.len();
    let file: Vec<String> = lines.iter().map(|l| squashed(l)).collect();
    let mut budget = COMPARE_BUDGET;
    for start in 0..=lines.len() - m {
        if start % CHECK_EVERY == 0 && stop() {
            return None;
        }
        let mut offsets = Vec::with_capacity(m);
        for (j, want) in old.iter().enumerate() {
            if budget == 0 {
                return None;
            }
            budget -= 1;
            let have = &file[start + j];
            // Where (in the squashed file line) the old line starts.
            let at = match (m, j) {
                (1, _) => have.find(want.as_str()),
                (_, 0) => have
                    .ends_with(want.as_str())
                    .then(|| have.len() - want.len()),
                (_, j) if j == m - 1 => have.starts_with(want.as_str()).then_some(0),
                _ => (have == want).then_some(0),
            };
            let Some(at) = at else { break };
            offsets.push(at);
        }
        if offsets.len() < m {
            continue;
        }
        let mut said = Vec::new();
        let mut count = 0usize;
        for (j, at) in offsets.into_iter().enumerate() {
            for (column, have, want) in spacing_differences(lines[start + j], old_lines[j], at) {
                count += 1;
                if said.len() < SHOWN_SPACINGS {
                    said.push(format!(
                        "line {}, column {column}: the file has {} where old_text has {}",
                        start + j + 1,
                        describe_space(&have),
                        describe_space(&want)
                    ));
                }
            }
        }
        if count == 0 {
            // Equal but for leading or trailing whitespace: the earlier checks name those.
            return None;
        }
        if count > said.len() {
            said.push(format!("and {} more", count - said.len()));
        }
        return Some((start, said.join("; ")));
    }
    None
}

/// The whitespace runs that differ between a file line and an old_text line that are equal
/// without spaces and tabs, `at` being where the old line starts in the squashed file line:
/// `(1-based column in the file line, the file's run, old_text's run)`. Runs before the
/// first and after the last compared character are not looked at.
fn spacing_differences(file_line: &str, old_line: &str, at: usize) -> Vec<(usize, String, String)> {
    let file: Vec<char> = bare(file_line).chars().collect();
    let old: Vec<char> = bare(old_line).chars().collect();
    // The file's position of squashed character `at`.
    let mut f = 0;
    let mut seen = 0;
    while f < file.len() {
        if !is_space(file[f]) {
            if seen == at {
                break;
            }
            seen += file[f].len_utf8();
        }
        f += 1;
    }
    let mut o = old.iter().position(|&c| !is_space(c)).unwrap_or(old.len());
    let mut out = Vec::new();
    while f < file.len() && o < old.len() {
        // Both at a non-space character, equal by construction.
        f += 1;
        o += 1;
        let (fs, os) = (f, o);
        while f < file.len() && is_space(file[f]) {
            f += 1;
        }
        while o < old.len() && is_space(old[o]) {
            o += 1;
        }
        if o == old.len() || f == file.len() {
            break;
        }
        let (have, want): (String, String) =
            (file[fs..f].iter().collect(), old[os..o].iter().collect());
        if have != want {
            out.push((fs + 1, have, want));
        }
    }
    out
}

/// A run of spaces and tabs in words: `none`, `1 space`, `2 tabs`, `'→·'`.
fn describe_space(run: &str) -> String {
    let n = run.chars().count();
    match run {
        "" => "none".to_string(),
        _ if run.chars().all(|c| c == ' ') => {
            format!("{n} space{}", if n == 1 { "" } else { "s" })
        }
        _ if run.chars().all(|c| c == '\t') => {
            format!("{n} tab{}", if n == 1 { "" } else { "s" })
        }
        _ => format!("'{}'", run.replace('\t', "→").replace(' ', "·")),
    }
}

/// The 0-based line of byte `offset`.
fn line_of(text: &str, offset: usize) -> usize {
    memchr::memchr_iter(b'\n', &text.as_bytes()[..offset]).count()
}

/// `old` found once its line endings are those of the file.
fn line_ending_match(text: &str, old: &str) -> Option<(usize, Difference)> {
    if !old.contains('\n') {
        return None;
    }
    let (candidate, difference) = if old.contains("\r\n") {
        (old.replace("\r\n", "\n"), Difference::LfInFile)
    } else {
        (old.replace('\n', "\r\n"), Difference::CrlfInFile)
    };
    let offset = text.find(&candidate)?;
    Some((line_of(text, offset), difference))
}

/// A line without its terminator.
fn bare(line: &str) -> &str {
    line.trim_end_matches(['\n', '\r'])
}

/// The first file line from which `old_lines` match once both sides go through `norm`: the
/// first old line ends a file line (old_text may start mid-line), the last begins one, the
/// others are equal; a single line is contained in one.
fn window_match(
    lines: &[&str],
    old_lines: &[&str],
    norm: impl Fn(&str) -> &str,
    stop: &dyn Fn() -> bool,
) -> Option<usize> {
    let old: Vec<&str> = old_lines.iter().map(|l| norm(bare(l))).collect();
    if old.iter().all(|l| l.is_empty()) || old.len() > lines.len() {
        return None;
    }
    let m = old.len();
    let mut budget = COMPARE_BUDGET;
    for start in 0..=lines.len() - m {
        if start % CHECK_EVERY == 0 && stop() {
            return None;
        }
        for (j, want) in old.iter().enumerate() {
            if budget == 0 {
                return None;
            }
            budget -= 1;
            let have = norm(bare(lines[start + j]));
            let fits = match (m, j) {
                (1, _) => have.contains(want),
                (_, 0) => have.ends_with(want),
                (_, j) if j == m - 1 => have.starts_with(want),
                _ => have == *want,
            };
            if !fits {
                break;
            }
            if j == m - 1 {
                return Some(start);
            }
        }
    }
    None
}

/// Which indentation difference separates the file's lines from old_text's: the first line
/// whose leading whitespace differs decides (the first old line is skipped when it has none,
/// as old_text may start mid-line).
fn indentation_kind(file: &[&str], old_lines: &[&str]) -> Difference {
    fn lead(line: &str) -> &str {
        let l = bare(line);
        &l[..l.len() - l.trim_start().len()]
    }
    for (j, (have, want)) in file.iter().zip(old_lines).enumerate() {
        let (have, want) = (lead(have), lead(want));
        if have == want || (j == 0 && want.is_empty()) {
            continue;
        }
        return match (have.contains('\t'), want.contains('\t')) {
            (true, false) => Difference::TabsInFile,
            (false, true) => Difference::SpacesInFile,
            _ => Difference::Indentation,
        };
    }
    Difference::Indentation
}

/// The start where most old lines, trimmed, equal file lines at the same offset.
fn voted_start(lines: &[&str], old_lines: &[&str]) -> Option<usize> {
    let mut at: HashMap<&str, Vec<usize>> = HashMap::new();
    for (i, line) in lines.iter().enumerate() {
        let t = line.trim();
        if !t.is_empty() {
            at.entry(t).or_default().push(i);
        }
    }
    let mut votes: HashMap<usize, u32> = HashMap::new();
    for (j, line) in old_lines.iter().enumerate() {
        let Some(found) = at.get(line.trim()) else {
            continue;
        };
        if found.len() > MAX_VOTERS {
            continue;
        }
        for &i in found.iter().filter(|&&i| i >= j) {
            *votes.entry(i - j).or_default() += 1;
        }
    }
    votes
        .into_iter()
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.cmp(&a.0)))
        .map(|(start, _)| start)
}

/// The start aligning old_text's longest line with the most similar file line (normalized
/// edit distance), within a budget of edit-distance cells.
fn fuzzy_start(lines: &[&str], old_lines: &[&str], stop: &dyn Fn() -> bool) -> Option<usize> {
    let clip = |s: &str| -> String { s.trim().chars().take(FUZZY_CHARS).collect() };
    let (probe_at, probe) = old_lines
        .iter()
        .enumerate()
        .map(|(j, l)| (j, clip(l)))
        .max_by_key(|(_, l)| l.chars().count())?;
    let probe_len = probe.chars().count();
    if probe_len == 0 {
        return None;
    }
    let mut budget = FUZZY_BUDGET;
    let mut best: Option<(f64, usize)> = None;
    for (i, line) in lines.iter().enumerate() {
        if i % CHECK_EVERY == 0 && stop() {
            break;
        }
        let candidate = clip(line);
        let len = candidate.chars().count();
        let longer = probe_len.max(len) as f64;
        // Edit distance is at least the difference in length: skip lines that cannot win.
        let ceiling = 1.0 - probe_len.abs_diff(len) as f64 / longer;
        if ceiling < FUZZY_MIN || best.is_some_and(|(s, _)| ceiling <= s) {
            continue;
        }
        let cost = probe_len * len;
        if cost > budget {
            break;
        }
        budget -= cost;
        let score = strsim::normalized_levenshtein(&probe, &candidate);
        if score >= FUZZY_MIN && best.is_none_or(|(s, _)| score > s) {
            best = Some((score, i));
        }
    }
    best.map(|(_, i)| i.saturating_sub(probe_at))
}

/// A line with its whitespace made visible: tabs as `→`, trailing spaces as `·`, a carriage
/// return as `␍`; long lines are cut. Also says whether any mark was used.
pub fn visible(line: &str) -> (String, bool) {
    let body = line.strip_suffix('\n').unwrap_or(line);
    let (body, cr) = match body.strip_suffix('\r') {
        Some(b) => (b, true),
        None => (body, false),
    };
    let trailing_from = body.trim_end_matches([' ', '\t']).len();
    let mut out = String::with_capacity(body.len() + 8);
    let mut marked = cr;
    for (n, (i, c)) in body.char_indices().enumerate() {
        if n == SHOWN_CHARS {
            out.push('…');
            break;
        }
        match c {
            '\t' => {
                out.push('→');
                marked = true;
            }
            ' ' if i >= trailing_from => {
                out.push('·');
                marked = true;
            }
            c => out.push(c),
        }
    }
    if cr {
        out.push('␍');
    }
    (out, marked)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn region(text: &str, old: &str) -> Option<Region> {
        let lines: Vec<&str> = text.split_inclusive('\n').collect();
        closest_region(text, &lines, old, &|| false)
    }

    fn diff(text: &str, old: &str) -> Option<Difference> {
        region(text, old).and_then(|r| r.difference)
    }

    #[test]
    fn names_the_kind_of_difference() {
        let crlf = "a\r\nfn main() {\r\n    x();\r\n}\r\n";
        assert_eq!(
            diff(crlf, "fn main() {\n    x();\n"),
            Some(Difference::CrlfInFile)
        );
        let lf = "a\nfn main() {\n    x();\n}\n";
        assert_eq!(
            diff(lf, "fn main() {\r\n    x();\r\n"),
            Some(Difference::LfInFile)
        );
        let trailing = "a\nlet x = 1;  \nlet y = 2;\n";
        assert_eq!(
            diff(trailing, "let x = 1;\nlet y = 2;"),
            Some(Difference::TrailingWhitespace)
        );
        let tabs = "fn f() {\n\tif x {\n\t\ty();\n\t}\n}\n";
        assert_eq!(
            diff(tabs, "    if x {\n        y();\n    }"),
            Some(Difference::TabsInFile)
        );
        let spaces = "fn f() {\n    if x {\n        y();\n    }\n}\n";
        assert_eq!(
            diff(spaces, "\tif x {\n\t\ty();"),
            Some(Difference::SpacesInFile)
        );
        assert_eq!(
            diff(spaces, "  if x {\n      y();"),
            Some(Difference::Indentation)
        );
        assert_eq!(
            diff("Hello World\n", "hello world"),
            Some(Difference::LetterCase)
        );
    }

    #[test]
    fn finds_the_closest_region_when_nothing_explains_the_miss() {
        let text = "one\ntwo\nthree\nfour\nfive\n";
        let r = region(text, "three\nFOUR!\nfive").unwrap();
        assert_eq!((r.start, r.len, r.difference), (2, 3, None));
        let r = region("alpha\nbeta gamma delta\nomega\n", "beta gamma delts").unwrap();
        assert_eq!((r.start, r.difference), (1, None));
        assert_eq!(region("alpha\nbeta\n", "zzzzzzzzzzzzzzzzzzzzzz"), None);
    }

    #[test]
    fn a_passed_deadline_leaves_the_plain_message() {
        let msg = not_found_message("f", "Hello\n", "hello", "bye", &|| true);
        assert!(
            msg.ends_with("including whitespace and line endings"),
            "{msg}"
        );
    }

    #[test]
    fn whitespace_is_made_visible() {
        assert_eq!(visible("\tx = 1;  \r\n"), ("→x = 1;··␍".to_string(), true));
        assert_eq!(visible("a b\n"), ("a b".to_string(), false));
    }

    #[test]
    fn ambiguous_names_the_first_lines() {
        let text = "x\na x\nb\nx x\n";
        let msg = ambiguous_message("f", text, "x", 4);
        assert!(
            msg.contains("occurs 4 times in f (at lines 1, 2 and 4);"),
            "{msg}"
        );
        let many = "x\n".repeat(7);
        let msg = ambiguous_message("f", &many, "x", 7);
        assert!(msg.contains("(at lines 1, 2, 3, 4, 5, ...)"), "{msg}");
    }

    #[test]
    fn a_large_file_with_a_long_old_text_stays_fast() {
        let text: String = (0..30_000)
            .map(|i| format!("line {i} of some fairly ordinary source text here;\n"))
            .collect();
        let old: String = (0..2_000)
            .map(|i| format!("a line {i} that is nowhere in the file at all, really\n"))
            .collect();
        let t = std::time::Instant::now();
        let _ = not_found_message("f", &text, &old, "zzz", &|| false);
        assert!(
            t.elapsed() < std::time::Duration::from_secs(2),
            "{:?}",
            t.elapsed()
        );
    }
}
