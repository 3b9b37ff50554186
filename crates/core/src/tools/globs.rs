//! The glob patterns of `find_files` and `search_text` (`globset`).

use crate::error::{ErrorCode, Result, WsfsError};
use globset::{GlobBuilder, GlobSet, GlobSetBuilder};
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

/// Longest glob pattern accepted.
pub const MAX_GLOB_BYTES: usize = 1024;

/// A glob over `/`-separated paths: `*` and `?` stay within one component, `**` crosses
/// them. A pattern without `/` matches file names at any depth (`*.rs` is `**/*.rs`).
pub struct PathGlob {
    set: GlobSet,
    name_only: bool,
}

impl PathGlob {
    pub fn new(field: &str, pattern: &str) -> Result<PathGlob> {
        let invalid = |why: String| WsfsError::new(ErrorCode::InvalidArguments, why);
        if pattern.len() > MAX_GLOB_BYTES {
            return Err(invalid(format!(
                "{field} is {} bytes long; the limit is {MAX_GLOB_BYTES}",
                pattern.len()
            )));
        }
        let trimmed = pattern.trim_start_matches("./").trim_start_matches('/');
        if trimmed.is_empty() {
            return Err(invalid(format!(
                "{field} is empty; give a glob such as '**/*.rs' or 'src/**/test_*.py'"
            )));
        }
        let glob = GlobBuilder::new(trimmed)
            .literal_separator(true)
            .backslash_escape(true)
            .build()
            .map_err(|e| invalid(format!("{field} '{pattern}' is not a valid glob: {e}")))?;
        let set = GlobSetBuilder::new()
            .add(glob)
            .build()
            .map_err(|e| invalid(format!("{field} '{pattern}' is not a valid glob: {e}")))?;
        Ok(PathGlob {
            set,
            name_only: !trimmed.contains('/'),
        })
    }

    /// Whether an entry matches: by its name for a pattern without '/', otherwise by its
    /// workspace-relative path or its path relative to the searched directory.
    pub fn is_match(&self, ws_rel: &[u8], walk_rel: &[u8], name: &[u8]) -> bool {
        let test = |p: &[u8]| self.set.is_match(Path::new(OsStr::from_bytes(p)));
        if self.name_only {
            return test(name);
        }
        test(ws_rel) || (walk_rel.len() != ws_rel.len() && test(walk_rel))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs_match_paths_and_names() {
        let g = PathGlob::new("pattern", "src/**/test_*.py").unwrap();
        assert!(g.is_match(b"src/test_a.py", b"src/test_a.py", b"test_a.py"));
        assert!(g.is_match(b"src/x/y/test_a.py", b"x/y/test_a.py", b"test_a.py"));
        assert!(!g.is_match(b"lib/src/test_a.py", b"lib/src/test_a.py", b"test_a.py"));
        let g = PathGlob::new("pattern", "*.rs").unwrap();
        assert!(g.is_match(b"a/b/c.rs", b"a/b/c.rs", b"c.rs"));
        let g = PathGlob::new("pattern", "src/*.rs").unwrap();
        assert!(
            !g.is_match(b"src/a/b.rs", b"src/a/b.rs", b"b.rs"),
            "* stays in one component"
        );
        // Relative to the searched directory too.
        let g = PathGlob::new("pattern", "a/*.rs").unwrap();
        assert!(g.is_match(b"src/a/b.rs", b"a/b.rs", b"b.rs"));
        assert!(PathGlob::new("pattern", "a[").is_err());
        assert!(PathGlob::new("pattern", "").is_err());
    }
}
