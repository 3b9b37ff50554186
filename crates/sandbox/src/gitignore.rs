//! gitignore patterns, matched against paths relative to the directory whose rules they are:
//! the `.gitignore` files a walk honours and the policy's `deny_read` / `deny_write` rules.
//!
//! The semantics are gitignore(5) as ripgrep's `ignore` crate implements them, which wsfs
//! used until it became crates: a pattern without a slash matches at any depth, a leading `/`
//! anchors it, a trailing `/` matches directories only, `!` re-includes, `\#` and `\!` escape,
//! `**` crosses directories, and the last matching pattern decides. The patterns compile to
//! one `globset` set, as in `ignore`. Why not `ignore` itself: its gitignore matcher is not
//! published apart from its parallel directory walker, which wsfs never used and which cost
//! the default library six crates (docs/decisions/dependencies.md). The tests hold this module
//! to `ignore`'s answers pattern by pattern.

use globset::{Candidate, GlobBuilder, GlobSet, GlobSetBuilder};
use std::fmt;
use std::path::Path;

/// One pattern as written, with what its prefix and suffix said.
#[derive(Clone, Debug)]
pub struct Pattern {
    original: String,
    negated: bool,
    only_dirs: bool,
}

impl Pattern {
    /// The pattern as it was given (trailing spaces trimmed).
    pub fn original(&self) -> &str {
        &self.original
    }

    /// Whether the pattern began with `!` (it re-includes what it matches).
    pub fn is_negated(&self) -> bool {
        self.negated
    }
}

/// What the last matching pattern says of a path.
#[derive(Clone, Copy, Debug)]
pub enum Match<'a> {
    None,
    Ignored(&'a Pattern),
    /// Matched by a `!` pattern: included again.
    Included(&'a Pattern),
}

impl Match<'_> {
    pub fn is_none(&self) -> bool {
        matches!(self, Match::None)
    }
}

/// A pattern that does not compile, e.g. `a{b` (an unclosed alternation).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PatternError {
    pub pattern: String,
    pub reason: String,
}

impl fmt::Display for PatternError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "error parsing glob '{}': {}", self.pattern, self.reason)
    }
}

impl std::error::Error for PatternError {}

/// The patterns of one directory (or of one policy field), in order.
#[derive(Clone, Debug)]
pub struct Gitignore {
    set: GlobSet,
    patterns: Vec<Pattern>,
}

impl Gitignore {
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// Whether any pattern begins with `!`.
    pub fn has_negations(&self) -> bool {
        self.patterns.iter().any(|p| p.negated)
    }

    /// What the last pattern matching `path` says. `path` is relative to the rules'
    /// directory (a leading `./` is ignored); `is_dir` tells whether it names a directory,
    /// which only patterns ending in `/` care about.
    pub fn matched(&self, path: &Path, is_dir: bool) -> Match<'_> {
        if self.is_empty() {
            return Match::None;
        }
        let path = path.strip_prefix("./").unwrap_or(path);
        let candidate = Candidate::new(path);
        // Most paths match nothing: answer those without collecting the matches.
        if !self.set.is_match_candidate(&candidate) {
            return Match::None;
        }
        let found = self.set.matches_candidate(&candidate);
        for &i in found.iter().rev() {
            let pattern = &self.patterns[i];
            if !pattern.only_dirs || is_dir {
                return match pattern.negated {
                    true => Match::Included(pattern),
                    false => Match::Ignored(pattern),
                };
            }
        }
        Match::None
    }
}

/// Collects patterns, then compiles them into a [`Gitignore`].
pub struct GitignoreBuilder {
    set: GlobSetBuilder,
    patterns: Vec<Pattern>,
    case_insensitive: bool,
}

impl Default for GitignoreBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl GitignoreBuilder {
    pub fn new() -> GitignoreBuilder {
        GitignoreBuilder {
            set: GlobSetBuilder::new(),
            patterns: Vec::new(),
            case_insensitive: false,
        }
    }

    /// Whether the patterns added from now on ignore letter case.
    pub fn case_insensitive(&mut self, yes: bool) -> &mut GitignoreBuilder {
        self.case_insensitive = yes;
        self
    }

    /// Adds one line of a gitignore file. Comments and blank lines add nothing; a line that
    /// is not a valid glob is an error (git skips such lines; the caller chooses).
    pub fn add_line(&mut self, line: &str) -> Result<&mut GitignoreBuilder, PatternError> {
        if line.starts_with('#') {
            return Ok(self);
        }
        // Trailing spaces are dropped unless the last one is escaped.
        let line = if line.ends_with("\\ ") {
            line
        } else {
            line.trim_end()
        };
        if line.is_empty() {
            return Ok(self);
        }
        let (glob, pattern) = parse(line);
        let compiled = GlobBuilder::new(&glob)
            .literal_separator(true)
            .case_insensitive(self.case_insensitive)
            .backslash_escape(true)
            .allow_unclosed_class(true)
            .build()
            .map_err(|e| PatternError {
                pattern: line.to_string(),
                reason: e.kind().to_string(),
            })?;
        self.set.add(compiled);
        self.patterns.push(pattern);
        Ok(self)
    }

    pub fn build(&self) -> Result<Gitignore, PatternError> {
        let set = self.set.build().map_err(|e| PatternError {
            pattern: String::new(),
            reason: e.to_string(),
        })?;
        Ok(Gitignore {
            set,
            patterns: self.patterns.clone(),
        })
    }
}

/// The glob a gitignore line compiles to, and the pattern it records.
fn parse(line: &str) -> (String, Pattern) {
    let mut pattern = Pattern {
        original: line.to_string(),
        negated: false,
        only_dirs: false,
    };
    let mut rest = line;
    let mut anchored = false;
    if rest.starts_with("\\!") || rest.starts_with("\\#") {
        rest = &rest[1..]; // a literal `!` or `#`
    } else {
        if let Some(after) = rest.strip_prefix('!') {
            pattern.negated = true;
            rest = after;
        }
        if let Some(after) = rest.strip_prefix('/') {
            // Anchored to the rules' directory: wildcards never cross `/`, so stripping the
            // slash and not prefixing `**/` is enough.
            anchored = true;
            rest = after;
        }
    }
    if let Some(before) = rest.strip_suffix('/') {
        pattern.only_dirs = true;
        // An escaped trailing slash (`foo\/`) is still the directory-only marker.
        rest = before.strip_suffix('\\').unwrap_or(before);
    }
    let mut glob = rest.to_string();
    // Without a slash a pattern matches a name at any depth.
    let at_any_depth = !anchored && !rest.contains('/');
    if at_any_depth && !glob.starts_with("**/") && glob != "**" {
        glob.insert_str(0, "**/");
    }
    // `dir/**` matches everything inside `dir`, not `dir` itself.
    if glob.ends_with("/**") {
        glob.push_str("/*");
    }
    (glob, pattern)
}

#[cfg(test)]
mod tests;
