//! The one layer rule the crate graph cannot hold: the file tools live in `wsfs-core` beside
//! the workspace whose operations they must use, so nothing but this scan keeps them (and the
//! Wasm guest's `/workspace`, which is held to the same rule) from taking the root's handle or
//! walking a tree themselves. Every other layer rule is a crate boundary (`crates/`).

use std::path::{Path, PathBuf};

/// What a file of the file tools (`crates/core/src/tools/`) or of a Wasm guest's
/// `/workspace` (`crates/wasm/src/fs/`) must never name: the tools reach the file system only
/// through the workspace's operations (`wsfs_core::workspace`), never through the root's
/// handle, a directory listing or a walk of their own.
const TOOLS_STAY_ABOVE: &[&str] = &[
    "root_dir",
    "open_dir_nofollow",
    "open_dir(",
    "read_dir",
    "entries()",
    "RawDir",
    "open_ambient",
    "sandbox::walk::dfs",
    "sandbox::walk::tree",
    "sandbox::walk::remove",
    "unlinkat",
    "renameat",
    ".create_dir(",
    "sandbox::create_dirs",
    "sandbox::new_dirs",
    "sandbox::state_dir",
    "Root::",
];

/// The directories held to [`TOOLS_STAY_ABOVE`], from the repository root.
const HELD_DIRS: [&str; 2] = ["crates/core/src/tools", "crates/wasm/src/fs"];

/// Every `.rs` file below `dir`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a source directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// What a file's code (comments, literals and its unit tests left out: a test may set a
/// directory up however it likes) names of [`TOOLS_STAY_ABOVE`].
fn named_handles(code: &str) -> Vec<&'static str> {
    let code = code_only(code);
    let code = match code.find("#[cfg(test)]\nmod tests") {
        Some(at) => &code[..at],
        None => &code[..],
    };
    TOOLS_STAY_ABOVE
        .iter()
        .copied()
        .filter(|word| code.contains(word))
        .collect()
}

/// `text` with comments, string and character literals blanked out (code keeps its shape).
fn code_only(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    while i < bytes.len() {
        let rest = &text[i..];
        let skip = if rest.starts_with("//") {
            rest.find('\n').unwrap_or(rest.len())
        } else if rest.starts_with("/*") {
            rest.find("*/").map_or(rest.len(), |end| end + 2)
        } else if let Some(len) = raw_string_len(rest) {
            len
        } else if rest.starts_with('"') {
            string_len(rest)
        } else if rest.starts_with('\'') {
            char_len(rest)
        } else {
            0
        };
        if skip > 0 {
            out.push(' ');
            i += skip;
            continue;
        }
        let c = rest.chars().next().expect("not at the end");
        out.push(c);
        i += c.len_utf8();
    }
    out
}

/// The length of a raw string literal (`r"..."`, `r#"..."#`, `br"..."`) at the start of `s`.
fn raw_string_len(s: &str) -> Option<usize> {
    let after_b = s.strip_prefix('b').unwrap_or(s);
    let after_r = after_b.strip_prefix('r')?;
    let hashes = after_r.len() - after_r.trim_start_matches('#').len();
    let body = after_r[hashes..].strip_prefix('"')?;
    let close = format!("\"{}", "#".repeat(hashes));
    let end = body.find(&close)?;
    Some(s.len() - body.len() + end + close.len())
}

fn string_len(s: &str) -> usize {
    let mut escaped = false;
    for (k, c) in s.char_indices().skip(1) {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return k + 1,
            _ => escaped = false,
        }
    }
    s.len()
}

/// A character literal's length, or 0 for a lifetime (`'a`), which is code.
fn char_len(s: &str) -> usize {
    let mut chars = s.char_indices().skip(1);
    match chars.next() {
        Some((_, '\\')) => s[2..].find('\'').map_or(0, |end| end + 3),
        Some((_, c)) => match chars.next() {
            Some((k, '\'')) if c != '\'' => k + 1,
            _ => 0,
        },
        None => 0,
    }
}

#[test]
fn tools_reach_the_file_system_through_the_workspace() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in HELD_DIRS {
        rust_files(&repo.join(dir), &mut files);
    }
    assert!(
        files.len() > 20,
        "the scan found only {} files",
        files.len()
    );
    let offending: Vec<String> = files
        .iter()
        .filter_map(|file| {
            let named = named_handles(&std::fs::read_to_string(file).expect("readable source"));
            (!named.is_empty()).then(|| format!("{}: {}", file.display(), named.join(", ")))
        })
        .collect();
    assert!(
        offending.is_empty(),
        "tools using handles or walks of their own instead of the workspace's operations:\n{}",
        offending.join("\n")
    );
}

#[test]
fn the_scan_sees_code_and_skips_comments_and_literals() {
    let code = "// root_dir\n/* read_dir */ let s = \"unlinkat\"; let r = r#\"RawDir\"#;\n\
                let c = 'x'; fn f<'a>() { ws.root_dir() }";
    assert_eq!(named_handles(code), ["root_dir"]);
    assert!(named_handles("let entries = dir.entries();").contains(&"entries()"));
    assert!(
        named_handles("fn f() {}\n#[cfg(test)]\nmod tests { fn t() { read_dir(); } }").is_empty()
    );
}
