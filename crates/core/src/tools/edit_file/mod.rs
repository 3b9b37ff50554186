//! `edit_file`: exact text replacement, written back atomically under the file's lock.

mod hints;

pub use hints::visible;

use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::lines::{sha256_hex, FileHash};
use crate::render;
use crate::sandbox::fileops::{atomic_replace_pieces, lock_current, open_error, open_leaf_read};
use crate::sandbox::gate::Access;
use crate::sandbox::root::ToolPath;
use crate::text;
use crate::tools::contract::{Annotations, Call, Metrics, Tool, ToolOutput, Warning};
use crate::tools::write::record_file;
use memchr::memmem;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::io::Read;

pub struct EditFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct EditFileArgs {
    /// File to edit.
    pub path: String,
    /// The exact text to find; must not be empty.
    pub old_text: String,
    /// The text to put in its place (may be empty to delete).
    pub new_text: String,
    /// Replace every occurrence instead of requiring exactly one. Default false.
    #[serde(default)]
    pub replace_all: bool,
}

impl Tool for EditFile {
    const NAME: &'static str = "edit_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
    };
    type Args = EditFileArgs;
    type Output = EditOutput;

    fn description() -> String {
        format!("Replace exact text in a file. old_text must match the file byte for byte (whitespace, indentation and line endings included) and, unless replace_all is true, occur exactly once: otherwise nothing changes and the error says how many matches there were. Everything else in the file is kept exactly. Read the file first to copy old_text. For several places in a file, or files that change together, use apply_patch; for a new or rewritten file, write_file. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: EditFileArgs) -> Result<(EditOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        let req = EditRequest {
            old_text: &args.old_text,
            new_text: &args.new_text,
            replace_all: args.replace_all,
        };
        let (out, messages) = edit_file(call, &path, &req)?;
        Ok((out, crate::tools::contract::warnings(messages)))
    }
}

impl ToolOutput for EditOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.matches = Some(self.replaced);
        m.bytes_written = Some(self.new_size);
    }

    fn text(&self) -> Cow<'_, str> {
        let what = render::count(self.replaced, "occurrence", "occurrences");
        Cow::Owned(format!("replaced {what} in {}", self.path))
    }
}

#[derive(Debug, Serialize)]
pub struct EditOutput {
    pub path: String,
    pub matches: u64,
    pub replaced: u64,
    /// The file's size in bytes before and after the edit.
    pub original_size: u64,
    pub new_size: u64,
    /// Lines of the original file the replaced text touched (each counted once).
    pub lines_changed: u64,
    /// The lines of the new file from the first replacement's start to the last one's end
    /// (1-based, inclusive; a deletion's is the line where the text was).
    pub first_changed_line: u64,
    pub last_changed_line: u64,
}

pub struct EditRequest<'a> {
    pub old_text: &'a str,
    pub new_text: &'a str,
    pub replace_all: bool,
}

const TOO_BIG_TO_EDIT: &str =
    "edit_file rewrites the whole file, so it only edits files within that limit";

pub fn edit_file(
    call: &mut Call<'_>,
    path: &ToolPath,
    req: &EditRequest<'_>,
) -> Result<(EditOutput, Vec<String>)> {
    let (ws, ctl) = (call.ws, call.ctl);
    if req.old_text.is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "old_text is empty; give the exact text to replace (use write_file or append_file to add text)",
        ));
    }
    if req.old_text == req.new_text {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "old_text and new_text are the same, so there is no change to make; give the new text in new_text",
        ));
    }
    let display = &path.display;
    path.refuse_trailing_slash()?;
    let io_err = |e: std::io::Error| WsfsError::from_io(&e, display);
    let located = ws.resolve(path, Access::READ_WRITE, false, ctl)?;
    let leaf = located.file_leaf(display, false)?;
    let file = open_leaf_read(&located.dir, leaf).map_err(|e| open_error(e, display))?;
    let reopen = || open_leaf_read(&located.dir, leaf);
    let mut locked = lock_current(&located.dir, leaf, file, reopen, display, ctl)?;
    let size = locked.meta.len();
    ws.limits.check_write(size, display, TOO_BIG_TO_EDIT)?;
    ctl.check()?;
    let bytes =
        read_checked(&mut locked.file, ws.limits.max_write_bytes + 1, size, ctl).map_err(|e| {
            match e {
                Stop::Io(e) => io_err(e),
                Stop::Call(e) => e,
            }
        })?;
    ws.limits
        .check_write(bytes.len() as u64, display, TOO_BIG_TO_EDIT)?;
    // The text is checked (no NUL, UTF-8) and searched as bytes, with SIMD: a UTF-8 needle
    // only ever matches a UTF-8 text at character boundaries, so replacing bytes is
    // replacing text. The hints of a failure take the text as a `str`.
    text::check(&bytes, false).map_err(|_| text::not_text(display))?;
    let as_str = || simdutf8::basic::from_utf8(&bytes).map_err(|_| text::not_text(display));
    let mut finder = memmem::Finder::new(req.old_text.as_bytes());
    let mut matches = finder.find_iter(&bytes).count() as u64;
    // old_text and new_text in the file's line endings, when only those made the miss.
    let converted = match matches {
        0 => hints::in_file_endings(as_str()?, req.old_text, req.new_text),
        _ => None,
    };
    let mut new_text = req.new_text;
    let mut warnings = Vec::new();
    if let Some(c) = &converted {
        finder = memmem::Finder::new(c.old.as_bytes());
        matches = finder.find_iter(&bytes).count() as u64;
        new_text = &c.new;
        warnings.push(format!(
            "old_text and new_text have {} line endings and the file has {}: they were matched and written with the file's, which it keeps",
            c.sent, c.file
        ));
    }
    match (matches, req.replace_all) {
        (0, _) => {
            return Err(WsfsError::new(
                ErrorCode::EditNotFound,
                hints::not_found_message(display, as_str()?, req.old_text, req.new_text, &|| {
                    ctl.check().is_err()
                }),
            ))
        }
        (1, _) | (_, true) => {}
        (n, false) => {
            return Err(WsfsError::new(
                ErrorCode::AmbiguousEdit,
                hints::ambiguous_message(
                    display,
                    as_str()?,
                    converted.as_ref().map_or(req.old_text, |c| &c.old),
                    n,
                ),
            ))
        }
    }
    // Refused before the new content is built.
    let new_len = replaced_len(bytes.len(), matches, finder.needle().len(), new_text.len());
    ws.limits
        .check_write(new_len, "the edited file", "Replace less text")?;
    let (pieces, changes) = replace(&bytes, &finder, new_text.as_bytes());
    // A few pieces are written as they are; many (a replace_all of a frequent text) are
    // joined first, so the file is not written in thousands of small writes.
    let joined: Vec<u8>;
    let pieces = if pieces.len() > MAX_PIECES {
        joined = pieces.concat();
        vec![joined.as_slice()]
    } else {
        pieces
    };
    let written = atomic_replace_pieces(
        &located.dir,
        leaf,
        &pieces,
        Some(&locked.meta),
        display,
        ctl,
    )?;
    warnings.extend(written);
    drop(locked);
    if call.audits() {
        let mut after = FileHash::default();
        pieces.iter().for_each(|p| after.feed(p));
        let hashes = (sha256_hex(&bytes), after.hex());
        record_file(
            call,
            &located,
            display,
            Some(Some(hashes.0)),
            Some(hashes.1),
        );
    }
    Ok((
        EditOutput {
            path: display.clone(),
            matches,
            replaced: matches,
            original_size: bytes.len() as u64,
            new_size: new_len,
            lines_changed: changes.lines_changed,
            first_changed_line: changes.first_line,
            last_changed_line: changes.last_line,
        },
        warnings,
    ))
}

/// The length of `len` bytes once `matches` matches of `old` bytes each become `new` bytes
/// (saturating: a result that large is refused anyway).
fn replaced_len(len: usize, matches: u64, old: usize, new: usize) -> u64 {
    (len as u64)
        .saturating_sub(matches.saturating_mul(old as u64))
        .saturating_add(matches.saturating_mul(new as u64))
}

/// Where an edit changed the file (see [`EditOutput`]).
#[derive(Debug, Default, PartialEq, Eq)]
struct Changes {
    lines_changed: u64,
    first_line: u64,
    last_line: u64,
}

/// Pieces an edit writes as they are (see `replace`): at most 16 replacements.
const MAX_PIECES: usize = 33;

/// `bytes` with every match of `finder` (non-overlapping, left to right, as `str::replace`
/// finds them) replaced by `new`, as the pieces of the result in order (the kept parts of
/// `bytes` and `new`: nothing is copied), and where. One pass over the file: the lines of
/// the result are worked out from the counts of the original's, not counted in the result.
fn replace<'a>(
    bytes: &'a [u8],
    finder: &memmem::Finder<'_>,
    new: &'a [u8],
) -> (Vec<&'a [u8]>, Changes) {
    let newlines = text::count_newlines;
    let old_len = finder.needle().len();
    // Each replacement moves the lines after it by this much.
    let shift = newlines(new) as i64 - newlines(finder.needle()) as i64;
    // Lines the new text's last line is below its first (a trailing newline ends a line).
    let new_span = newlines(&new[..new.len().saturating_sub(1)]);
    let mut pieces = Vec::new();
    let mut changes = Changes::default();
    let (mut from, mut line, mut counted) = (0, 1, 0);
    for (replaced, at) in finder.find_iter(bytes).enumerate() {
        line += newlines(&bytes[from..at]);
        let end_line = line + newlines(&bytes[at..at + old_len.saturating_sub(1)]);
        let low = line.max(counted + 1);
        if end_line >= low {
            changes.lines_changed += end_line - low + 1;
        }
        counted = counted.max(end_line);
        // This replacement's first line in the result.
        let start_line = (line as i64 + replaced as i64 * shift) as u64;
        if replaced == 0 {
            changes.first_line = start_line;
        }
        changes.last_line = start_line + new_span;
        line += newlines(&bytes[at..at + old_len]);
        pieces.extend([&bytes[from..at], new]);
        from = at + old_len;
    }
    pieces.push(&bytes[from..]);
    pieces.retain(|p| !p.is_empty());
    (pieces, changes)
}

enum Stop {
    Io(std::io::Error),
    Call(WsfsError),
}

/// Reads at most `limit` bytes, checking the deadline between chunks.
fn read_checked(
    file: &mut std::fs::File,
    limit: u64,
    size_hint: u64,
    ctl: &CallControl,
) -> std::result::Result<Vec<u8>, Stop> {
    const CHUNK: u64 = 1 << 20;
    let mut bytes = Vec::with_capacity(usize::try_from(size_hint.min(limit)).unwrap_or(0));
    let mut reader = file.take(limit);
    loop {
        ctl.check().map_err(Stop::Call)?;
        let n = (&mut reader)
            .take(CHUNK)
            .read_to_end(&mut bytes)
            .map_err(Stop::Io)?;
        if (n as u64) < CHUNK {
            return Ok(bytes);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Counting and replacing with `memmem` on bytes is `str::matches` and `str::replace`.
    #[test]
    fn byte_replacement_is_str_replace() {
        let cases = [
            ("aaaa", "aa", "b"),
            ("aaaaa", "aa", "aab"),
            ("abcabc", "abc", ""),
            ("xabcx", "abc", "ünï"),
            ("ünïcödé ünï", "ünï", "u"),
            ("line1\r\nline2\r\n", "\r\n", "\n"),
            ("no match here", "zzz", "y"),
            ("€€€", "€", "e"),
            ("a€a€", "a€", "€a"),
        ];
        for (text, old, new) in cases {
            let finder = memmem::Finder::new(old.as_bytes());
            let matches = finder.find_iter(text.as_bytes()).count() as u64;
            assert_eq!(
                matches,
                text.matches(old).count() as u64,
                "{text:?} {old:?}"
            );
            let len = replaced_len(text.len(), matches, old.len(), new.len());
            let (pieces, _) = replace(text.as_bytes(), &finder, new.as_bytes());
            let out = pieces.concat();
            assert_eq!(out, text.replace(old, new).into_bytes(), "{text:?} {old:?}");
            assert_eq!(out.len() as u64, len);
        }
    }

    /// The first and last changed lines, counted naively in the result: where the first
    /// replacement starts, and where the last one ends (its start for an empty new text).
    fn lines_by_recounting(text: &str, old: &str, new: &str) -> (u64, u64) {
        let out = text.replace(old, new);
        let starts: Vec<usize> = {
            // The replacements' starts in `out`, from their starts in `text`.
            let mut v = Vec::new();
            let grow = new.len() as i64 - old.len() as i64;
            for (k, (at, _)) in text.match_indices(old).enumerate() {
                v.push((at as i64 + k as i64 * grow) as usize);
            }
            v
        };
        let line_at =
            |i: usize| 1 + out.as_bytes()[..i].iter().filter(|&&b| b == b'\n').count() as u64;
        let (first, last) = (starts[0], *starts.last().unwrap_or(&0));
        let end = if new.is_empty() {
            last
        } else {
            last + new.len() - 1
        };
        (line_at(first), line_at(end))
    }

    /// The changed lines, worked out in one pass, are those a recount of the result gives:
    /// with the new text adding lines, removing them, ending in a newline or empty.
    #[test]
    fn changed_lines_match_a_recount_of_the_result() {
        let text = "a\nb x\nc\nx d\ne\n\nx\nf x x\ng\n";
        let olds = ["x", "x\n", "\nx", "b x\nc", "\n"];
        let news = ["", "y", "y\n", "\ny", "1\n2\n3", "1\n2\n3\n", "\n\n"];
        for old in olds {
            for new in news {
                if old == new {
                    continue;
                }
                let finder = memmem::Finder::new(old.as_bytes());
                let matches = finder.find_iter(text.as_bytes()).count() as u64;
                let len = replaced_len(text.len(), matches, old.len(), new.len());
                let (pieces, changes) = replace(text.as_bytes(), &finder, new.as_bytes());
                assert_eq!(pieces.concat().len() as u64, len);
                assert_eq!(
                    (changes.first_line, changes.last_line),
                    lines_by_recounting(text, old, new),
                    "{old:?} -> {new:?}"
                );
            }
        }
    }
}
