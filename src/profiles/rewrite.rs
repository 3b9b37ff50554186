//! Native messages tell the model its next move in native words ("use list_dir to see what
//! exists", "old_text is empty"). Under a profile those names mean nothing, so error messages
//! and warnings get the profile's: each native tool a profile tool runs becomes that tool
//! (`filesystem (operation "list")` for an operation), and each renamed argument of the tool
//! that failed becomes its public name.
//!
//! Only names with an underscore are replaced (every native tool name has one): a plain word
//! such as `patch` or `path` is English too. A name is replaced only where it stands alone,
//! not inside a path or file name (`notes/list_dir.md` stays as it is). The text of a success
//! is never rewritten: it holds file contents and names.

#[derive(Debug, Default, Clone)]
pub struct Rewrites(Vec<(String, String)>);

impl Rewrites {
    /// `(native, public)` pairs; the longest native name must come first where one starts
    /// another (see `compile.rs`).
    pub fn new(pairs: Vec<(String, String)>) -> Rewrites {
        Rewrites(pairs)
    }

    pub fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    pub fn apply(&self, text: &str) -> String {
        let mut out = text.to_string();
        for (native, public) in &self.0 {
            out = replace_standalone(&out, native, public);
        }
        out
    }
}

/// Replaces `word` where it stands alone: not next to a name character, a path separator or
/// a dash, and not followed by a dot that continues a name (`x.md`).
fn replace_standalone(text: &str, word: &str, with: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut last = 0;
    let mut from = 0;
    while let Some(found) = text[from..].find(word) {
        let start = from + found;
        let end = start + word.len();
        let before_ok = start == 0 || !joins(bytes[start - 1]);
        let after_ok = match bytes.get(end) {
            None => true,
            Some(b'.') => !bytes
                .get(end + 1)
                .is_some_and(|b| b.is_ascii_alphanumeric()),
            Some(&b) => !joins(b),
        };
        if before_ok && after_ok {
            out.push_str(&text[last..start]);
            out.push_str(with);
            last = end;
        }
        from = end;
    }
    out.push_str(&text[last..]);
    out
}

fn joins(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'/' | b'\\' | b'-' | b'.')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_only_standalone_names() {
        let r = |t: &str| replace_standalone(t, "list_dir", "list_directory");
        assert_eq!(
            r("x does not exist; use list_dir to see what exists"),
            "x does not exist; use list_directory to see what exists"
        );
        assert_eq!(r("use list_dir."), "use list_directory.");
        assert_eq!(r("(list_dir)"), "(list_directory)");
        assert_eq!(
            r("notes/list_dir.md is missing"),
            "notes/list_dir.md is missing"
        );
        assert_eq!(r("list_dir.md"), "list_dir.md");
        assert_eq!(r("my_list_dir"), "my_list_dir");
        assert_eq!(r("list_dirs"), "list_dirs");
        assert_eq!(r("list_dir/x"), "list_dir/x");
        assert_eq!(
            r("list_dir and list_dir"),
            "list_directory and list_directory"
        );
    }
}
