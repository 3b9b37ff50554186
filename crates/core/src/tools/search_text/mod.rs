//! `search_text`: lines matching a literal or a regular expression, in path order, searched
//! with ripgrep's library crates on files opened beneath the workspace's handle.

mod sink;

use super::globs::PathGlob;
use super::walking::{open_target, path_prefix, Target, WalkDeny};
use crate::control::CallControl;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::render;
use crate::sandbox::sys;
use crate::sandbox::walk::filter::Candidate;
use crate::sandbox::walk::names::shown;
use crate::sandbox::walk::{Kind, WalkOptions, WalkStats};
use crate::tools::contract::{Annotations, Call, Metrics, Tool, ToolOutput, Warning};
use crate::workspace::Flow;
use grep_regex::{RegexMatcher, RegexMatcherBuilder};
use grep_searcher::{BinaryDetection, Searcher, SearcherBuilder};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use sink::{Collected, FileSink, TextMatch};
use std::borrow::Cow;
use std::fmt::Write;
use std::io::Read;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;

/// Longest query accepted, in bytes.
pub const MAX_QUERY_BYTES: usize = 4096;
/// Most matches one call returns.
pub const MAX_MATCHES: u64 = 1000;
/// Most context lines before and after a match.
pub const MAX_CONTEXT_LINES: u64 = 10;
/// Compiled regex and its lazy DFA are each bounded by this many bytes.
const REGEX_SIZE_LIMIT: usize = 8 << 20;
/// A line longer than this makes its file skipped (counted in `files_skipped`).
pub const MAX_LINE_BYTES: usize = 2 << 20;

pub struct SearchText;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct SearchTextArgs {
    /// Text to find within one line: a literal string, or a regular expression (Rust regex syntax) with use_regex.
    pub query: String,
    /// Directory (searched recursively) or file to search; defaults to '.', the workspace root.
    #[serde(default = "crate::tools::fields::dot")]
    pub path: String,
    /// Search only files matching this glob, e.g. '*.go' or 'src/**/*.rs' (a pattern without '/' matches file names at any depth).
    #[serde(default)]
    pub glob: String,
    /// Treat query as a regular expression. Default false (a literal string).
    #[serde(default)]
    pub use_regex: bool,
    /// Match letter case exactly. Default true.
    #[serde(default = "yes")]
    pub case_sensitive: bool,
    /// Most matching lines to return (default 50, at most 1000).
    #[serde(default = "default_max_matches")]
    pub max_matches: u64,
    /// Lines of context to show before and after each match (default 0, at most 10).
    #[serde(default)]
    pub context_lines: u64,
    /// Search files and directories whose names start with '.'. Default false.
    #[serde(default)]
    pub include_hidden: bool,
    /// Skip what .gitignore files ignore. Default true.
    #[serde(default = "yes")]
    pub respect_gitignore: bool,
}

fn yes() -> bool {
    true
}

fn default_max_matches() -> u64 {
    50
}

#[derive(Debug, Serialize)]
pub struct SearchOutput {
    /// One entry per matching line, in path order then line order.
    pub matches: Vec<TextMatch>,
    /// Text files searched.
    pub files_searched: u64,
    /// Files not searched because they are binary (a NUL byte); matches before it are kept.
    pub binary_files_skipped: u64,
    /// Files that could not be searched: unreadable, replaced during the search, a line
    /// longer than the limit; plus directories that could not be entered.
    pub files_skipped: u64,
    /// Entries left out because the workspace policy denies reading them.
    pub denied: u64,
    /// Protected system locations left out (unrestricted mode); absent when 0.
    #[serde(skip_serializing_if = "crate::tools::walking::is_zero")]
    pub protected: u64,
    pub truncated: bool,
    #[serde(skip)]
    meta: SearchMeta,
}

#[derive(Debug, Default)]
struct SearchMeta {
    query: String,
    path: String,
    max: u64,
    stats: WalkStats,
    include_hidden: bool,
    respect_gitignore: bool,
    files_with_matches: u64,
    /// A literal query without matches: the regular-expression characters it holds.
    regex_syntax: Option<String>,
    /// A case-sensitive search without matches: the first line matching with case ignored.
    ignoring_case: Option<String>,
}

impl Tool for SearchText {
    const NAME: &'static str = "search_text";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = SearchTextArgs;
    type Output = SearchOutput;

    fn description() -> String {
        format!("Search file contents for a literal string (or a regular expression with use_regex), like grep. Returns matching lines as 'path:line:column: text', sorted by path then line (at most max_matches, 50 by default), optionally with context lines. Searches a directory recursively or a single file; skips binary files, hidden files and what .gitignore ignores unless asked; symlinks are never followed. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: SearchTextArgs) -> Result<(SearchOutput, Vec<Warning>)> {
        let (mut out, warnings) = search(call, &args)?;
        if out.matches.is_empty() {
            out.meta.regex_syntax = (!args.use_regex)
                .then(|| regex_syntax(&args.query))
                .flatten();
            if args.case_sensitive && has_letter_case(&args.query) {
                out.meta.ignoring_case = ignoring_case(call, &args)?;
            }
        }
        Ok((out, warnings))
    }
}

/// The regular-expression characters a literal query holds, as the text names them
/// (`None` when it holds none).
fn regex_syntax(query: &str) -> Option<String> {
    let mut found: Vec<char> = Vec::new();
    for c in query.chars() {
        if "\\.*+?()[]{}|^$".contains(c) && !found.contains(&c) {
            found.push(c);
        }
    }
    (!found.is_empty()).then(|| {
        found
            .iter()
            .map(|c| format!("'{c}'"))
            .collect::<Vec<_>>()
            .join(" ")
    })
}

fn has_letter_case(query: &str) -> bool {
    query.chars().any(|c| c.is_lowercase() || c.is_uppercase())
}

/// After a case-sensitive search found nothing: the first line the same search finds with
/// letter case ignored (`path:line`), if any. The second search is the first one again
/// (same path, glob, filters, deadline), stopping at its first match.
fn ignoring_case(call: &mut Call<'_>, args: &SearchTextArgs) -> Result<Option<String>> {
    let again = SearchTextArgs {
        query: args.query.clone(),
        path: args.path.clone(),
        glob: args.glob.clone(),
        use_regex: args.use_regex,
        case_sensitive: false,
        max_matches: 1,
        context_lines: 0,
        include_hidden: args.include_hidden,
        respect_gitignore: args.respect_gitignore,
    };
    // The path is the one already recorded for the trace and the audit log.
    let logged = call.logged_paths.len();
    let audited = call.audit.as_ref().map(|n| n.paths.len());
    let found = search(call, &again);
    call.logged_paths.truncate(logged);
    if let (Some(notes), Some(len)) = (call.audit.as_mut(), audited) {
        notes.paths.truncate(len);
    }
    let (out, _) = found?;
    Ok(out
        .matches
        .first()
        .map(|m| format!("{}:{}", m.file, m.line)))
}

/// One search: the tool's run, without the hints about what a miss means.
fn search(call: &mut Call<'_>, args: &SearchTextArgs) -> Result<(SearchOutput, Vec<Warning>)> {
    {
        let path = call.path(&args.path)?;
        check_args(args)?;
        let matcher = build_matcher(args)?;
        let glob = match args.glob.is_empty() {
            true => None,
            false => Some(PathGlob::new("glob", &args.glob)?),
        };
        let context = args.context_lines as usize;
        let mut searcher = SearcherBuilder::new()
            .line_number(true)
            .binary_detection(BinaryDetection::quit(0))
            .heap_limit(Some(MAX_LINE_BYTES))
            .before_context(context)
            .after_context(context)
            .build();
        let mut run = Run {
            matcher: &matcher,
            searcher: &mut searcher,
            ctl: call.ctl,
            out: Collected {
                matches: Vec::new(),
                max: args.max_matches.min(MAX_MATCHES) as usize,
                context,
                truncated: false,
            },
            files_searched: 0,
            binary: 0,
            skipped: 0,
            with_matches: 0,
        };
        let mut stats = WalkStats::default();
        let mut warnings = Vec::new();
        match open_target(call.ws, &path, call.ctl)? {
            Target::File(dir, leaf) => {
                run.search_file(dir.as_fd(), leaf.as_bytes(), &path.display)?;
            }
            Target::Dir(dir, known) => {
                let mut opts = WalkOptions::new(args.include_hidden, args.respect_gitignore);
                let deny = WalkDeny::new(call.ws, &dir, known)?;
                let hook = |entry: &Candidate<'_>| deny.as_ref().and_then(|d| d.skip(entry));
                if deny.is_some() {
                    opts.deny = Some(&hook);
                }
                let prefix = path_prefix(&path.display);
                let mut full = prefix.clone().into_bytes();
                let walked = call
                    .ws
                    .walk(dir.as_fd(), &path.display, &opts, call.ctl, |e| {
                        if e.kind != Kind::File {
                            return Ok(Flow::Continue);
                        }
                        full.truncate(prefix.len());
                        full.extend_from_slice(e.rel);
                        if glob
                            .as_ref()
                            .is_some_and(|g| !g.is_match(&full, e.rel, e.name))
                        {
                            return Ok(Flow::Continue);
                        }
                        let shown_path = shown(&full);
                        run.search_file(e.dir, e.name, &shown_path)?;
                        Ok(match run.out.truncated {
                            true => Flow::Stop,
                            false => Flow::Continue,
                        })
                    })?;
                stats = walked.stats;
                warnings = walked.warnings;
            }
        }
        let out = SearchOutput {
            files_searched: run.files_searched,
            binary_files_skipped: run.binary,
            files_skipped: run.skipped + stats.refused,
            denied: stats.denied,
            protected: stats.protected,
            truncated: run.out.truncated,
            meta: SearchMeta {
                query: args.query.clone(),
                path: path.display.clone(),
                max: run.out.max as u64,
                stats,
                include_hidden: args.include_hidden,
                respect_gitignore: args.respect_gitignore,
                files_with_matches: run.with_matches,
                ..SearchMeta::default()
            },
            matches: run.out.matches,
        };
        Ok((out, crate::tools::contract::warnings(warnings)))
    }
}

fn check_args(args: &SearchTextArgs) -> Result<()> {
    let invalid = |m: String| Err(WsfsError::new(ErrorCode::InvalidArguments, m));
    if args.query.is_empty() {
        return invalid("query is empty; give the text to search for".into());
    }
    if args.query.len() > MAX_QUERY_BYTES {
        return invalid(format!(
            "query is {} bytes long; the limit is {MAX_QUERY_BYTES}",
            args.query.len()
        ));
    }
    if args.query.contains('\n') {
        return invalid(
            "query contains a line break; search_text matches within one line, so search for one line of the text".into(),
        );
    }
    if args.max_matches == 0 {
        return invalid("max_matches must be at least 1".into());
    }
    if args.context_lines > MAX_CONTEXT_LINES {
        return invalid(format!(
            "context_lines is at most {MAX_CONTEXT_LINES}, got {}; use read_file with a line range for more",
            args.context_lines
        ));
    }
    Ok(())
}

fn build_matcher(args: &SearchTextArgs) -> Result<RegexMatcher> {
    let invalid = |e: &dyn std::fmt::Display| {
        WsfsError::new(
            ErrorCode::InvalidRegex,
            format!(
                "query is not a valid regular expression: {e}\nFix it, or set use_regex=false to search for the literal text."
            ),
        )
    };
    if args.use_regex {
        // The parser's own message, about the query as given (the matcher wraps it).
        regex_syntax::ParserBuilder::new()
            .utf8(false)
            .build()
            .parse(&args.query)
            .map_err(|e| invalid(&e))?;
    }
    RegexMatcherBuilder::new()
        .fixed_strings(!args.use_regex)
        .case_insensitive(!args.case_sensitive)
        .size_limit(REGEX_SIZE_LIMIT)
        .dfa_size_limit(REGEX_SIZE_LIMIT)
        .line_terminator(Some(b'\n'))
        .build(&args.query)
        .map_err(|e| invalid(&e))
}

struct Run<'a> {
    matcher: &'a RegexMatcher,
    searcher: &'a mut Searcher,
    ctl: &'a CallControl,
    out: Collected,
    files_searched: u64,
    binary: u64,
    skipped: u64,
    with_matches: u64,
}

impl Run<'_> {
    /// Searches the regular file `name` in `dir`; `shown_path` is how matches name it.
    fn search_file(
        &mut self,
        dir: std::os::fd::BorrowedFd<'_>,
        name: &[u8],
        shown_path: &str,
    ) -> Result<()> {
        let Ok(file) = sys::open_file(dir, name) else {
            // Gone, replaced (by a symlink, a FIFO, ...) or unreadable since it was listed.
            self.skipped += 1;
            return Ok(());
        };
        let mut reader = DeadlineReader {
            file,
            ctl: self.ctl,
            stopped: None,
        };
        let before = self.out.matches.len();
        let mut sink = FileSink::new(&mut self.out, self.matcher, shown_path);
        let searched = self
            .searcher
            .search_reader(self.matcher, &mut reader, &mut sink);
        let binary = sink.binary;
        if let Some(stop) = reader.stopped {
            return Err(stop);
        }
        match (searched, binary) {
            (Err(_), _) => self.skipped += 1,
            (Ok(()), true) => self.binary += 1,
            (Ok(()), false) => self.files_searched += 1,
        }
        if self.out.matches.len() > before {
            self.with_matches += 1;
        }
        Ok(())
    }
}

/// Reads a file, checking the call's deadline before every read.
struct DeadlineReader<'a> {
    file: std::fs::File,
    ctl: &'a CallControl,
    stopped: Option<crate::error::WsfsError>,
}

impl Read for DeadlineReader<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Err(e) = self.ctl.check() {
            self.stopped = Some(e);
            return Err(std::io::Error::other("the call was stopped"));
        }
        self.file.read(buf)
    }
}

impl ToolOutput for SearchOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.matches = Some(self.matches.len() as u64);
        m.files_searched = Some(self.files_searched);
        m.truncated = Some(self.truncated);
    }

    fn text(&self) -> Cow<'_, str> {
        let m = &self.meta;
        let mut text = String::new();
        let with_context = self
            .matches
            .iter()
            .any(|x| !x.before.is_empty() || !x.after.is_empty());
        for (i, x) in self.matches.iter().enumerate() {
            if with_context && i > 0 {
                text.push_str("--\n");
            }
            let first = x.line - x.before.len() as u64;
            for (k, line) in x.before.iter().enumerate() {
                let _ = writeln!(text, "{}-{}- {line}", x.file, first + k as u64);
            }
            let _ = writeln!(
                text,
                "{}:{}:{}: {}{}{}",
                x.file,
                x.line,
                x.column,
                if x.cut.0 { "…" } else { "" },
                x.snippet,
                if x.cut.1 { "…" } else { "" }
            );
            for (k, line) in x.after.iter().enumerate() {
                let _ = writeln!(text, "{}-{}- {line}", x.file, x.line + 1 + k as u64);
            }
        }
        if self.matches.is_empty() {
            let _ = writeln!(
                text,
                "no matches for '{}' under {} ({} searched)",
                m.query,
                m.path,
                render::count(self.files_searched, "file", "files")
            );
            if let Some(chars) = &m.regex_syntax {
                let _ = writeln!(
                    text,
                    "[the query was searched as literal text, and it contains regular-expression syntax ({chars}): to search it as a regular expression, set use_regex: true]"
                );
            }
            if let Some(at) = &m.ignoring_case {
                let _ = writeln!(
                    text,
                    "[with letter case ignored the query matches, e.g. at {at}: set case_sensitive: false]"
                );
            }
            crate::tools::walking::skipped_hint(
                &mut text,
                &m.stats,
                m.include_hidden,
                m.respect_gitignore,
            );
        } else {
            let _ = writeln!(
                text,
                "[{} in {} ({} searched)]",
                render::count(self.matches.len() as u64, "matching line", "matching lines"),
                render::count(m.files_with_matches, "file", "files"),
                render::count(self.files_searched, "file", "files")
            );
        }
        crate::tools::walking::left_out_note(&mut text, self.denied, self.protected, "searched");
        if self.truncated {
            let _ = writeln!(
                text,
                "[truncated: showing the first {} matching lines in path order; narrow the query, path or glob, or raise max_matches (at most {MAX_MATCHES})]",
                m.max
            );
        }
        if self.binary_files_skipped > 0 {
            let _ = writeln!(
                text,
                "[{} skipped as binary]",
                render::count(self.binary_files_skipped, "file", "files")
            );
        }
        if self.files_skipped > 0 {
            let _ = writeln!(
                text,
                "[{} could not be searched (unreadable, changed during the search, or a line longer than {MAX_LINE_BYTES} bytes)]",
                render::count(self.files_skipped, "file or directory", "files or directories")
            );
        }
        text.truncate(text.trim_end().len());
        Cow::Owned(text)
    }
}
