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

use super::compile::ProfileTool;

#[derive(Debug, Default, Clone)]
pub struct Rewrites(Vec<(String, String)>);

impl Rewrites {
    /// Every native tool a profile tool runs, as the profile names it. A native tool run by
    /// two profile tools is left alone (neither name would be right).
    pub fn tool_names(tools: &[ProfileTool]) -> Rewrites {
        let mut pairs: Vec<(String, String)> = Vec::new();
        let mut ambiguous: Vec<String> = Vec::new();
        for tool in tools {
            for (key, op) in &tool.ops {
                if op.native == tool.name && tool.selector.is_none() {
                    continue;
                }
                let public = match &tool.selector {
                    Some(sel) => format!("{} ({sel} \"{key}\")", tool.name),
                    None => tool.name.clone(),
                };
                if pairs.iter().any(|(n, _)| *n == op.native) {
                    ambiguous.push(op.native.clone());
                }
                pairs.push((op.native.clone(), public));
            }
        }
        pairs.retain(|(n, _)| !ambiguous.contains(n));
        Rewrites(pairs)
    }

    /// These rewrites plus `tool`'s own renamed arguments (nested ones included).
    pub fn with_args(&self, tool: &ProfileTool) -> Rewrites {
        let mut pairs = self.0.clone();
        let mut add = |public: &str, native: Option<&str>| {
            if let Some(native) = native.filter(|n| *n != public && n.contains('_')) {
                if !pairs.iter().any(|(n, _)| n == native) {
                    pairs.push((native.to_string(), public.to_string()));
                }
            }
        };
        fn walk(
            args: &super::format::Ordered<super::format::ArgData>,
            add: &mut dyn FnMut(&str, Option<&str>),
        ) {
            for (public, arg) in args.iter() {
                add(public, arg.native.as_deref());
                if let Some(items) = &arg.items {
                    walk(items, add);
                }
            }
        }
        walk(&tool.args, &mut add);
        // Longest first, so a name is never replaced inside a longer one it starts.
        pairs.sort_by_key(|p| std::cmp::Reverse(p.0.len()));
        Rewrites(pairs)
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
