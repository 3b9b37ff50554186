//! A shell word as safe_shell sees it: its literal value once quotes and escapes are undone,
//! or the construct that makes it more than a literal (an expansion, a substitution, a glob).

use brush_parser::word::{self, WordPiece, WordPieceWithSource};
use brush_parser::ParserOptions;

/// A grammar construct beyond plain words; the policy file's `[grammar] allow` names them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Construct {
    Variable,
    CommandSubstitution,
    Arithmetic,
    Glob,
    BraceExpansion,
    Tilde,
    AnsiCQuote,
    Background,
    Subshell,
    Compound,
    Function,
    Negation,
    Time,
    RedirectDevNull,
    RedirectWrite,
    RedirectRead,
    FdDuplicate,
    HereDocument,
    ProcessSubstitution,
    ArrayAssignment,
}

impl Construct {
    pub const ALL: &'static [Construct] = &[
        Construct::Variable,
        Construct::CommandSubstitution,
        Construct::Arithmetic,
        Construct::Glob,
        Construct::BraceExpansion,
        Construct::Tilde,
        Construct::AnsiCQuote,
        Construct::Background,
        Construct::Subshell,
        Construct::Compound,
        Construct::Function,
        Construct::Negation,
        Construct::Time,
        Construct::RedirectDevNull,
        Construct::RedirectWrite,
        Construct::RedirectRead,
        Construct::FdDuplicate,
        Construct::HereDocument,
        Construct::ProcessSubstitution,
        Construct::ArrayAssignment,
    ];

    /// The name in the policy file.
    pub fn name(self) -> &'static str {
        match self {
            Construct::Variable => "variable",
            Construct::CommandSubstitution => "command_substitution",
            Construct::Arithmetic => "arithmetic",
            Construct::Glob => "glob",
            Construct::BraceExpansion => "brace_expansion",
            Construct::Tilde => "tilde",
            Construct::AnsiCQuote => "ansi_c_quote",
            Construct::Background => "background",
            Construct::Subshell => "subshell",
            Construct::Compound => "compound",
            Construct::Function => "function",
            Construct::Negation => "negation",
            Construct::Time => "time",
            Construct::RedirectDevNull => "redirect_dev_null",
            Construct::RedirectWrite => "redirect_write",
            Construct::RedirectRead => "redirect_read",
            Construct::FdDuplicate => "fd_duplicate",
            Construct::HereDocument => "here_document",
            Construct::ProcessSubstitution => "process_substitution",
            Construct::ArrayAssignment => "array_assignment",
        }
    }

    /// What the model reads about it.
    pub fn describe(self) -> &'static str {
        match self {
            Construct::Variable => "a variable expansion ($VAR)",
            Construct::CommandSubstitution => "a command substitution ($(...) or `...`)",
            Construct::Arithmetic => "an arithmetic expansion ($((...)))",
            Construct::Glob => "a glob pattern (*, ?, [...])",
            Construct::BraceExpansion => "a brace expansion ({a,b})",
            Construct::Tilde => "a tilde expansion (~)",
            Construct::AnsiCQuote => "ANSI-C quoting ($'...')",
            Construct::Background => "a background job (&)",
            Construct::Subshell => "a subshell or group ((...) or {...})",
            Construct::Compound => "a compound command (if, for, while, case, [[...]])",
            Construct::Function => "a function definition",
            Construct::Negation => "a negated pipeline (!)",
            Construct::Time => "a timed pipeline (time)",
            Construct::RedirectDevNull => "a redirection to /dev/null",
            Construct::RedirectWrite => "an output redirection (> or >>)",
            Construct::RedirectRead => "an input redirection (<)",
            Construct::FdDuplicate => "a descriptor duplication (2>&1)",
            Construct::HereDocument => "a here-document or here-string",
            Construct::ProcessSubstitution => "a process substitution (<(...))",
            Construct::ArrayAssignment => "an array assignment",
        }
    }

    pub fn from_name(name: &str) -> Option<Construct> {
        Construct::ALL.iter().copied().find(|c| c.name() == name)
    }
}

/// A word reduced to what bash would pass: its literal value, and its source text when it
/// keeps an allowed glob (rendered as written so bash still expands it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Literal {
    pub value: String,
    pub glob_source: Option<String>,
}

/// `raw` as a literal, or the first construct that makes it more than one. Globs and braces
/// are reported only when `allow_glob` is false; an allowed glob keeps its source.
pub fn literal(raw: &str, options: &ParserOptions, allow_glob: bool) -> Result<Literal, Construct> {
    let pieces = word::parse(raw, options).map_err(|_| Construct::CommandSubstitution)?;
    let mut value = String::new();
    let mut glob = false;
    for p in &pieces {
        piece(p, false, &mut value, &mut glob)?;
    }
    if glob {
        if !allow_glob {
            return Err(Construct::Glob);
        }
        // Only plain characters around the pattern: the source is passed to bash as is.
        let plain = raw
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/*?[]+@%,:=".contains(c));
        if !plain {
            return Err(Construct::Glob);
        }
        return Ok(Literal {
            value,
            glob_source: Some(raw.to_string()),
        });
    }
    Ok(Literal {
        value,
        glob_source: None,
    })
}

fn piece(
    p: &WordPieceWithSource,
    quoted: bool,
    out: &mut String,
    glob: &mut bool,
) -> Result<(), Construct> {
    match &p.piece {
        WordPiece::Text(t) => {
            if !quoted {
                if t.contains(['*', '?', '[']) {
                    *glob = true;
                }
                if has_brace_expansion(t) {
                    return Err(Construct::BraceExpansion);
                }
            }
            out.push_str(t);
        }
        WordPiece::SingleQuotedText(t) => out.push_str(t),
        WordPiece::EscapeSequence(e) => {
            // `\x` is `x`; a backslash-newline outside quotes is nothing.
            let rest = e.strip_prefix('\\').unwrap_or(e);
            if rest != "\n" {
                out.push_str(rest);
            }
        }
        WordPiece::DoubleQuotedSequence(inner) | WordPiece::GettextDoubleQuotedSequence(inner) => {
            for q in inner {
                piece(q, true, out, glob)?;
            }
        }
        WordPiece::AnsiCQuotedText(_) => return Err(Construct::AnsiCQuote),
        WordPiece::TildePrefix(_) => return Err(Construct::Tilde),
        WordPiece::ParameterExpansion(_) => return Err(Construct::Variable),
        WordPiece::CommandSubstitution(_) | WordPiece::BackquotedCommandSubstitution(_) => {
            return Err(Construct::CommandSubstitution)
        }
        WordPiece::ArithmeticExpression(_) => return Err(Construct::Arithmetic),
    }
    Ok(())
}

/// `{a,b}` or `{1..3}` outside quotes.
fn has_brace_expansion(t: &str) -> bool {
    let Some(open) = t.find('{') else {
        return false;
    };
    let Some(close) = t[open..].find('}') else {
        return false;
    };
    let inner = &t[open + 1..open + close];
    inner.contains(',') || inner.contains("..")
}

/// `value` quoted for bash: bare when it is plain, single-quoted otherwise.
pub fn quote(value: &str) -> String {
    let plain = !value.is_empty()
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._-/=:,+@%".contains(c));
    if plain {
        value.to_string()
    } else {
        format!("'{}'", value.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(raw: &str) -> Result<String, Construct> {
        literal(raw, &ParserOptions::default(), false).map(|l| l.value)
    }

    #[test]
    fn quotes_and_escapes_are_undone() {
        assert_eq!(lit("plain"), Ok("plain".into()));
        assert_eq!(lit("'a b'"), Ok("a b".into()));
        assert_eq!(lit("\"a b\""), Ok("a b".into()));
        assert_eq!(lit("a\\ b"), Ok("a b".into()));
        assert_eq!(lit("\"say \\\"hi\\\"\""), Ok("say \"hi\"".into()));
        assert_eq!(lit("'*.py'"), Ok("*.py".into()));
        assert_eq!(lit("pre'mid'\"post\""), Ok("premidpost".into()));
    }

    #[test]
    fn constructs_are_named() {
        assert_eq!(lit("$HOME"), Err(Construct::Variable));
        assert_eq!(lit("\"$HOME\""), Err(Construct::Variable));
        assert_eq!(lit("$(id)"), Err(Construct::CommandSubstitution));
        assert_eq!(lit("`id`"), Err(Construct::CommandSubstitution));
        assert_eq!(lit("$((1+2))"), Err(Construct::Arithmetic));
        assert_eq!(lit("*.py"), Err(Construct::Glob));
        assert_eq!(lit("{a,b}"), Err(Construct::BraceExpansion));
        assert_eq!(lit("~"), Err(Construct::Tilde));
        assert_eq!(lit("$'\\x41'"), Err(Construct::AnsiCQuote));
        let g = literal("src/*.py", &ParserOptions::default(), true).unwrap();
        assert_eq!(g.glob_source.as_deref(), Some("src/*.py"));
    }

    #[test]
    fn quoting_round_trips() {
        assert_eq!(quote("abc"), "abc");
        assert_eq!(quote("a b"), "'a b'");
        assert_eq!(quote("it's"), "'it'\\''s'");
        assert_eq!(quote(""), "''");
        assert_eq!(quote("$x;rm"), "'$x;rm'");
    }
}
