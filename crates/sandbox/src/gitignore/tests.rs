//! This module against ripgrep's `ignore` crate (a dev-dependency), whose gitignore matcher
//! it replaces: the same answer, naming the same pattern, for every pattern, path, kind and
//! case mode below, and for generated patterns.

use super::*;
use ignore::gitignore::GitignoreBuilder as Reference;

const PATTERNS: &[&str] = &[
    "*.log",
    "/build",
    "build/",
    "!keep.log",
    "**/foo",
    "foo/**",
    "a/**/b",
    "\\#hash",
    "\\!bang",
    "trailing\\ ",
    "trailing  ",
    "[abc",
    "[a-c]x",
    "a/b/",
    "*",
    "**",
    "/",
    "dir/*.txt",
    ".env*",
    "foo\\/",
    "!/anchored",
    "src/**/*.rs",
    "**/",
    "!",
    "a?c",
    "\\*star",
    "x/**/",
    "/a/b",
    "#comment",
    "",
    "   ",
    "*.[Tt][Xx][Tt]",
    "{a,b}",
    "{a,b",
    "a\\",
    "secrets/",
    "!secrets/ok",
    "**/node_modules/**",
    "/*.md",
    "docs/**/index.html",
    "Ünïcode",
    "a//b",
    "./x",
    "!!double",
];

const PATHS: &[&str] = &[
    "a.log",
    "x/a.log",
    "build",
    "x/build",
    "build/out",
    "keep.log",
    "foo",
    "x/foo",
    "foo/bar",
    "foo/bar/baz",
    "a/b",
    "a/x/y/b",
    "a/b/c",
    "#hash",
    "!bang",
    "trailing ",
    "trailing",
    "[abc",
    "bx",
    "dir/t.txt",
    "dir/x/t.txt",
    ".env",
    ".env.local",
    "x/.env",
    "foo/",
    "anchored",
    "x/anchored",
    "src/lib.rs",
    "src/a/b/c.rs",
    "abc",
    "*star",
    "x/y",
    "x/y/z",
    "a",
    "A.LOG",
    "notes.TXT",
    "secrets",
    "secrets/ok",
    "secrets/key",
    "node_modules/x",
    "y/node_modules/z/w",
    "README.md",
    "d/README.md",
    "docs/index.html",
    "docs/a/index.html",
    "ünïcode",
    "ÜNÏCODE",
    "a//b",
    "x",
    "./x",
    "!double",
    "a\\",
];

fn ours(lines: &[&str], fold: bool) -> Gitignore {
    let mut b = GitignoreBuilder::new();
    b.case_insensitive(fold);
    for line in lines {
        let _ = b.add_line(line);
    }
    b.build().unwrap()
}

fn reference(lines: &[&str], fold: bool) -> ignore::gitignore::Gitignore {
    let mut b = Reference::new(".");
    b.case_insensitive(fold).unwrap();
    for line in lines {
        let _ = b.add_line(None, line);
    }
    b.build().unwrap()
}

/// The answer as (kind, pattern), comparable across the two implementations.
fn ours_says(m: Match<'_>) -> (u8, Option<String>) {
    match m {
        Match::None => (0, None),
        Match::Ignored(p) => (1, Some(p.original().to_string())),
        Match::Included(p) => (2, Some(p.original().to_string())),
    }
}

fn reference_says(m: ignore::Match<&ignore::gitignore::Glob>) -> (u8, Option<String>) {
    match m {
        ignore::Match::None => (0, None),
        ignore::Match::Ignore(g) => (1, Some(g.original().to_string())),
        ignore::Match::Whitelist(g) => (2, Some(g.original().to_string())),
    }
}

/// Compares the two on `lines` for every path; returns how many answers were compared.
fn compare(lines: &[&str], paths: &[&str]) -> usize {
    let mut compared = 0;
    for fold in [false, true] {
        let (a, b) = (ours(lines, fold), reference(lines, fold));
        for path in paths {
            for is_dir in [false, true] {
                let p = Path::new(path);
                let (mine, theirs) = (
                    ours_says(a.matched(p, is_dir)),
                    reference_says(b.matched(p, is_dir)),
                );
                assert_eq!(
                    mine, theirs,
                    "rules {lines:?}, path {path:?}, dir {is_dir}, fold {fold}"
                );
                compared += 1;
            }
        }
    }
    compared
}

#[test]
fn each_pattern_alone_answers_as_ignore_does() {
    let mut compared = 0;
    for pattern in PATTERNS {
        compared += compare(&[pattern], PATHS);
    }
    assert_eq!(compared, PATTERNS.len() * PATHS.len() * 4);
}

#[test]
fn the_last_matching_pattern_decides_as_in_ignore() {
    compare(PATTERNS, PATHS);
    let mut reversed = PATTERNS.to_vec();
    reversed.reverse();
    compare(&reversed, PATHS);
    compare(
        &["secrets/", "!secrets/ok", "*.log", "!keep.log", "keep.log/"],
        PATHS,
    );
}

/// Patterns built from the pieces gitignore gives meaning to, from a fixed seed.
#[test]
fn generated_patterns_answer_as_ignore_does() {
    const PIECES: &[&str] = &[
        "a", "b", "x", ".", "*", "**", "?", "/", "!", "\\", "[a-b]", "[!a]", "{a,b}", " ", "#", "ü",
    ];
    const NAMES: &[&str] = &[
        "a", "b", "x", "ab", "a.b", "a/b", "b/a", "x/a/b", "a/x/b", "ü", "a b", "#a", "!a",
        "a/b/x/a", ".a", "*", "?",
    ];
    let mut seed: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = |n: usize| {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed % n as u64) as usize
    };
    let mut lines = Vec::new();
    for _ in 0..600 {
        let len = 1 + next(5);
        let line: String = (0..len).map(|_| PIECES[next(PIECES.len())]).collect();
        lines.push(line);
    }
    let mut compared = 0;
    for line in &lines {
        compared += compare(&[line.as_str()], NAMES);
    }
    for group in lines.chunks(7) {
        let group: Vec<&str> = group.iter().map(String::as_str).collect();
        compared += compare(&group, NAMES);
    }
    let groups = lines.len().div_ceil(7);
    assert_eq!(compared, (lines.len() + groups) * NAMES.len() * 4);
}

#[test]
fn a_bad_pattern_is_an_error_naming_it() {
    let err = GitignoreBuilder::new().add_line("a{b").err().unwrap();
    assert_eq!(err.pattern, "a{b");
    assert!(err.to_string().contains("'a{b'"), "{err}");
}
