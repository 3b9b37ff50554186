//! How file names that are not UTF-8 are shown to the model, and read back from tool paths.
//!
//! Tool arguments and results are JSON strings (UTF-8), but a Linux file name is any bytes
//! except `/` and NUL. The rule, which every tool and walker uses for every name it reports:
//!
//! - A name is shown as it is when it is UTF-8 and does not look like the escaped form of
//!   another name.
//! - Otherwise it is shown escaped: each byte that is not part of valid UTF-8 becomes `\xNN`
//!   (two lowercase hex digits) and each `\` becomes `\\`; everything else is kept.
//! - A name "looks escaped" when unescaping it (`\\` to `\`, `\xNN` to the byte NN, and no other
//!   backslash in it), repeated while the result is UTF-8 and still has a backslash, ends in
//!   bytes that are not UTF-8. So `caf\xe9` (a valid name, literally) is shown as `caf\\xe9`,
//!   and `caf\\xe9` as `caf\\\\xe9`, while `C:\Users` or `a\\b` are shown as they are.
//!
//! A path component given to a tool is read back with the same test: if it looks escaped, it is
//! unescaped once (`\xNN` may use either case); otherwise it is taken literally. Showing is
//! one-to-one and reading back inverts it, so no two names are ever shown alike and every shown
//! name names its own file.

use std::borrow::Cow;
use std::fmt::Write;
use std::path::{Component, Path};

/// The name as shown to the model (see the module documentation).
pub fn encode(name: &[u8]) -> Cow<'_, str> {
    if let Ok(text) = std::str::from_utf8(name) {
        if shown_literally(text.as_bytes()) {
            return Cow::Borrowed(text);
        }
    }
    let mut out = String::with_capacity(name.len() + 8);
    for chunk in name.utf8_chunks() {
        for c in chunk.valid().chars() {
            if c == '\\' {
                out.push_str("\\\\");
            } else {
                out.push(c);
            }
        }
        for byte in chunk.invalid() {
            let _ = write!(out, "\\x{byte:02x}");
        }
    }
    Cow::Owned(out)
}

/// Why a path component cannot be read back as a name.
#[derive(Debug, PartialEq, Eq)]
pub struct BadEscape;

/// The name bytes a path component given to a tool stands for. Fails only when an escaped
/// component decodes to a `/` or NUL byte, which no file name can hold.
pub fn decode(component: &str) -> Result<Cow<'_, [u8]>, BadEscape> {
    let bytes = component.as_bytes();
    if shown_literally(bytes) {
        return Ok(Cow::Borrowed(bytes));
    }
    match unescape(bytes) {
        Some(name) if !name.contains(&b'/') && !name.contains(&0) => Ok(Cow::Owned(name)),
        // Not shown literally implies it unescapes; refuse rather than guess otherwise.
        _ => Err(BadEscape),
    }
}

/// A path with every name shown as [`encode`] shows it, `/`-separated; `.` for an empty path.
pub fn display_path(path: &Path) -> String {
    use std::os::unix::ffi::OsStrExt;
    let mut out = String::new();
    for component in path.components() {
        let part: Cow<'_, str> = match component {
            Component::RootDir => {
                out.push('/');
                continue;
            }
            Component::CurDir => ".".into(),
            Component::ParentDir => "..".into(),
            Component::Normal(name) => encode(name.as_bytes()),
            Component::Prefix(_) => continue,
        };
        if !out.is_empty() && !out.ends_with('/') {
            out.push('/');
        }
        out.push_str(&part);
    }
    if out.is_empty() {
        out.push('.');
    }
    out
}

/// Whether UTF-8 `text` is shown as itself: unless repeated unescaping ends in non-UTF-8 bytes.
fn shown_literally(text: &[u8]) -> bool {
    let mut current = Cow::Borrowed(text);
    loop {
        if !current.contains(&b'\\') {
            return true;
        }
        // Each round removes at least one escape, so this ends within len/2 rounds.
        match unescape(&current) {
            None => return true,
            Some(bytes) if std::str::from_utf8(&bytes).is_err() => return false,
            Some(bytes) => current = Cow::Owned(bytes),
        }
    }
}

/// `\\` is `\` and `\xNN` is the byte NN; `None` if any other backslash occurs.
fn unescape(text: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(text.len());
    let mut rest = text;
    while let Some((&first, tail)) = rest.split_first() {
        if first != b'\\' {
            out.push(first);
            rest = tail;
            continue;
        }
        match tail {
            [b'\\', after @ ..] => {
                out.push(b'\\');
                rest = after;
            }
            [b'x', hi, lo, after @ ..] => {
                out.push((hex(*hi)? << 4) | hex(*lo)?);
                rest = after;
            }
            _ => return None,
        }
    }
    Some(out)
}

fn hex(digit: u8) -> Option<u8> {
    char::from(digit).to_digit(16).map(|d| d as u8)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn the_issue_example_lists_two_distinct_names() {
        assert_eq!(encode(b"caf\xe9.txt"), "caf\\xe9.txt");
        assert_eq!(encode(b"caf\xe8.txt"), "caf\\xe8.txt");
        assert_eq!(decode("caf\\xe9.txt").unwrap().as_ref(), b"caf\xe9.txt");
        assert_eq!(decode("caf\\xE9.txt").unwrap().as_ref(), b"caf\xe9.txt");
    }

    #[test]
    fn ordinary_names_stay_literal() {
        for name in [
            "a.txt",
            "C:\\Users\\x",
            "a\\\\b",
            "a\\x41",
            "caf\\xc3\\xa9",
            "é",
            "\\",
        ] {
            assert_eq!(encode(name.as_bytes()), name, "{name}");
            assert_eq!(decode(name).unwrap().as_ref(), name.as_bytes(), "{name}");
        }
    }

    #[test]
    fn names_that_look_escaped_are_escaped_themselves() {
        // The literal (valid UTF-8) name `caf\xe9` must not be confused with caf + byte E9.
        assert_eq!(encode(b"caf\\xe9"), "caf\\\\xe9");
        assert_eq!(decode("caf\\\\xe9").unwrap().as_ref(), b"caf\\xe9");
        assert_eq!(encode(b"caf\\\\xe9"), "caf\\\\\\\\xe9");
        // A backslash in a non-UTF-8 name is doubled.
        assert_eq!(encode(b"a\\b\xff"), "a\\\\b\\xff");
        assert_eq!(decode("a\\\\b\\xff").unwrap().as_ref(), b"a\\b\xff");
    }

    #[test]
    fn escapes_cannot_smuggle_a_slash_or_nul() {
        assert_eq!(decode("\\xff\\x2f"), Err(BadEscape));
        assert_eq!(decode("\\xff\\x00"), Err(BadEscape));
        // `\x2e\x2e` is valid UTF-8 once decoded, so it is the literal name, not `..`.
        assert_eq!(decode("\\x2e\\x2e").unwrap().as_ref(), b"\\x2e\\x2e");
    }

    /// Every name over a small alphabet of troublemakers, up to five bytes: showing is
    /// one-to-one, and reading back gives the name.
    #[test]
    fn shown_names_are_unique_and_read_back_exactly() {
        let alphabet: [u8; 8] = [b'a', b'\\', b'x', b'e', b'9', 0xe9, 0xc3, 0xa9];
        let mut seen: HashMap<String, Vec<u8>> = HashMap::new();
        let mut names: Vec<Vec<u8>> = vec![vec![]];
        for _ in 0..5 {
            let mut longer = Vec::new();
            for name in &names {
                for &b in &alphabet {
                    let mut n = name.clone();
                    n.push(b);
                    longer.push(n);
                }
            }
            for name in &longer {
                let shown = encode(name).into_owned();
                assert_eq!(decode(&shown).unwrap().as_ref(), name.as_slice(), "{shown}");
                if let Some(other) = seen.insert(shown.clone(), name.clone()) {
                    panic!("{other:?} and {name:?} are both shown as {shown}");
                }
            }
            names = longer;
        }
    }

    #[test]
    fn paths_are_shown_component_by_component() {
        use std::ffi::OsStr;
        use std::os::unix::ffi::OsStrExt;
        let p = Path::new("/etc")
            .join(OsStr::from_bytes(b"d\xff"))
            .join("x/");
        assert_eq!(display_path(&p), "/etc/d\\xff/x");
        assert_eq!(display_path(Path::new("")), ".");
        assert_eq!(display_path(Path::new("a/../b")), "a/../b");
    }
}
