//! A tool's `command` argument (`pytest -x tests/a.py`, `ruff check src`): split into words
//! when it is one plain command, so the tool can add the flags of the machine format it parses;
//! anything more (pipes, `&&`, expansions) runs as it is through `bash -c` and is parsed as
//! text.

use brush_parser::ast::{Command, CommandPrefixOrSuffixItem};
use brush_parser::{Parser, ParserOptions, SourceInfo};

/// The words of `command` if it is a single simple command of literal words.
pub fn plain_words(command: &str) -> Option<Vec<String>> {
    let options = ParserOptions {
        enable_extended_globbing: false,
        ..ParserOptions::default()
    };
    let program = std::panic::catch_unwind(|| {
        Parser::new(
            std::io::Cursor::new(command),
            &options,
            &SourceInfo::default(),
        )
        .parse_program()
    })
    .ok()?
    .ok()?;
    let [list] = program.complete_commands.as_slice() else {
        return None;
    };
    let [item] = list.0.as_slice() else {
        return None;
    };
    if !item.0.additional.is_empty()
        || item.0.first.seq.len() != 1
        || item.0.first.bang
        || item.0.first.timed.is_some()
        || matches!(item.1, brush_parser::ast::SeparatorOperator::Async)
    {
        return None;
    }
    let Command::Simple(simple) = &item.0.first.seq[0] else {
        return None;
    };
    if simple.prefix.is_some() {
        return None;
    }
    let mut words = Vec::new();
    let name = simple.word_or_name.as_ref()?;
    words.push(literal(&name.value, &options)?);
    for item in simple.suffix.iter().flat_map(|s| s.0.iter()) {
        match item {
            CommandPrefixOrSuffixItem::Word(w) => words.push(literal(&w.value, &options)?),
            _ => return None,
        }
    }
    Some(words)
}

fn literal(raw: &str, options: &ParserOptions) -> Option<String> {
    crate::exec::shell::words::literal(raw, options, false)
        .ok()
        .map(|l| l.value)
}

/// Whether `words` run the Python module or program `name` (`pytest`, `python -m pytest`).
pub fn runs_python_tool(words: &[String], name: &str) -> bool {
    let base = |s: &str| s.rsplit('/').next().unwrap_or(s).to_string();
    match words.first().map(|w| base(w)) {
        Some(p) if p == name => true,
        Some(p) if p.starts_with("python") => {
            words.get(1).is_some_and(|a| a == "-m") && words.get(2).is_some_and(|m| m == name)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_commands_split_and_others_do_not() {
        assert_eq!(
            plain_words("pytest -x 'tests/a b.py'"),
            Some(vec!["pytest".into(), "-x".into(), "tests/a b.py".into()])
        );
        for complex in [
            "pytest | tee x",
            "a && b",
            "X=1 pytest",
            "pytest $ARGS",
            "pytest > x",
            "pytest &",
        ] {
            assert_eq!(plain_words(complex), None, "{complex}");
        }
        let w = plain_words("python3 -m pytest -q").unwrap();
        assert!(runs_python_tool(&w, "pytest"));
        assert!(!runs_python_tool(&w, "mypy"));
    }
}
