//! `git_status`: `git status --porcelain=v2 --branch -z`, git's machine format (stable across
//! versions, NUL-separated so no name needs quoting), as structured JSON.

use super::Git;
use crate::error::{ErrorCode, WsfsError};
use crate::exec::runner::{Control, Runner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// Entries reported in all (staged, unstaged, untracked, conflicted); the rest are counted.
pub const MAX_ENTRIES: usize = 2000;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitStatusArgs {}

#[derive(Debug, Default, Clone, Serialize, PartialEq, Eq)]
pub struct GitStatus {
    /// The checked-out branch; null when HEAD is detached.
    pub branch: Option<String>,
    pub detached: bool,
    /// HEAD's commit; null before the first commit.
    pub commit: Option<String>,
    pub upstream: Option<String>,
    pub ahead: u64,
    pub behind: u64,
    pub staged: Vec<Change>,
    pub unstaged: Vec<Change>,
    pub untracked: Vec<String>,
    pub conflicted: Vec<String>,
    pub clean: bool,
    /// Entries left out past the first 2000.
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Change {
    /// Relative to the repository's root.
    pub path: String,
    /// modified, added, deleted, renamed, copied, type_changed.
    pub change: &'static str,
    /// The old name of a renamed or copied file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub from: Option<String>,
}

/// Runs hardened `git status` in `dir` and parses it.
pub fn git_status(runner: &Runner, dir: &Path, ctl: &Control) -> Result<GitStatus, WsfsError> {
    let git = Git::open(runner, dir, ctl)?;
    let out = git.run(
        &[
            "status",
            "--porcelain=v2",
            "--branch",
            "-z",
            "--ignore-submodules=none",
        ],
        Some(64 << 20),
    )?;
    if out.exit_code != Some(0) {
        return Err(git.failure("reading the status", &out));
    }
    let bytes = out.stdout.complete().ok_or_else(|| {
        WsfsError::new(
            ErrorCode::TooLarge,
            "git status printed more than 64 MiB; run git_diff with a pathspec instead",
        )
    })?;
    parse(bytes).map_err(|e| WsfsError::new(ErrorCode::IoError, format!("git status: {e}")))
}

fn change(code: u8) -> Option<&'static str> {
    Some(match code {
        b'M' => "modified",
        b'A' => "added",
        b'D' => "deleted",
        b'R' => "renamed",
        b'C' => "copied",
        b'T' => "type_changed",
        _ => return None,
    })
}

/// Parses porcelain v2 with `--branch -z`.
pub fn parse(bytes: &[u8]) -> Result<GitStatus, String> {
    let mut st = GitStatus::default();
    let mut entries = 0usize;
    let mut fields = bytes.split(|b| *b == 0).filter(|f| !f.is_empty());
    let text = |b: &[u8]| String::from_utf8_lossy(b).into_owned();
    let mut room = |st: &mut GitStatus| {
        entries += 1;
        if entries > MAX_ENTRIES {
            st.omitted += 1;
            false
        } else {
            true
        }
    };
    while let Some(field) = fields.next() {
        let line = text(field);
        if let Some(header) = line.strip_prefix("# ") {
            let (key, value) = header.split_once(' ').unwrap_or((header, ""));
            match key {
                "branch.oid" if value != "(initial)" => st.commit = Some(value.to_string()),
                "branch.head" if value == "(detached)" => st.detached = true,
                "branch.head" => st.branch = Some(value.to_string()),
                "branch.upstream" => st.upstream = Some(value.to_string()),
                "branch.ab" => {
                    let mut parts = value.split(' ');
                    st.ahead = number(parts.next(), '+')?;
                    st.behind = number(parts.next(), '-')?;
                }
                _ => {}
            }
            continue;
        }
        let kind = line.as_bytes().first().copied();
        match kind {
            Some(b'1') | Some(b'2') => {
                // 1 XY sub mH mI mW hH hI path; 2 adds X<score> before the path, and the
                // original path follows as its own NUL-terminated field.
                let n = if kind == Some(b'1') { 8 } else { 9 };
                let parts: Vec<&str> = line.splitn(n + 1, ' ').collect();
                let (Some(xy), Some(path)) = (parts.get(1), parts.get(n)) else {
                    return Err(format!("unexpected entry {line:?}"));
                };
                let from = if kind == Some(b'2') {
                    Some(text(
                        fields.next().ok_or("a rename without its original name")?,
                    ))
                } else {
                    None
                };
                let xy = xy.as_bytes();
                if xy.len() != 2 {
                    return Err(format!("unexpected status {line:?}"));
                }
                if let Some(c) = change(xy[0]) {
                    if room(&mut st) {
                        st.staged.push(Change {
                            path: path.to_string(),
                            change: c,
                            from: from.clone(),
                        });
                    }
                }
                if let Some(c) = change(xy[1]) {
                    if room(&mut st) {
                        st.unstaged.push(Change {
                            path: path.to_string(),
                            change: c,
                            from: None,
                        });
                    }
                }
            }
            Some(b'u') => {
                let path = line
                    .splitn(11, ' ')
                    .nth(10)
                    .ok_or_else(|| format!("unexpected entry {line:?}"))?;
                if room(&mut st) {
                    st.conflicted.push(path.to_string());
                }
            }
            Some(b'?') => {
                if room(&mut st) {
                    st.untracked.push(line[2..].to_string());
                }
            }
            Some(b'!') => {}
            _ => return Err(format!("unexpected entry {line:?}")),
        }
    }
    st.clean = entries == 0;
    Ok(st)
}

fn number(field: Option<&str>, sign: char) -> Result<u64, String> {
    field
        .and_then(|f| f.strip_prefix(sign))
        .and_then(|n| n.parse().ok())
        .ok_or_else(|| format!("unexpected ahead/behind {field:?}"))
}

impl GitStatus {
    /// What the model reads.
    pub fn text(&self) -> String {
        let mut s = match (&self.branch, self.detached) {
            (Some(b), _) => format!("On branch {b}"),
            (None, true) => "HEAD detached".to_string(),
            (None, false) => "No branch".to_string(),
        };
        if self.commit.is_none() {
            s.push_str(" (no commits yet)");
        }
        if let Some(up) = &self.upstream {
            s.push_str(&format!(
                ", tracking {up} (ahead {}, behind {})",
                self.ahead, self.behind
            ));
        }
        s.push('\n');
        let list = |s: &mut String, title: &str, items: Vec<String>| {
            if !items.is_empty() {
                s.push_str(&format!("{title} ({}):\n", items.len()));
                for i in items {
                    s.push_str(&format!("  {i}\n"));
                }
            }
        };
        let changes = |v: &[Change]| {
            v.iter()
                .map(|c| match &c.from {
                    Some(from) => format!("{}: {from} -> {}", c.change, c.path),
                    None => format!("{}: {}", c.change, c.path),
                })
                .collect()
        };
        list(&mut s, "Conflicted", self.conflicted.clone());
        list(&mut s, "Staged", changes(&self.staged));
        list(&mut s, "Unstaged", changes(&self.unstaged));
        list(&mut s, "Untracked", self.untracked.clone());
        if self.clean {
            s.push_str("Nothing to commit, working tree clean\n");
        }
        if self.omitted > 0 {
            s.push_str(&format!("[{} more entries not shown]\n", self.omitted));
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_entry_kind_parses() {
        let raw = "# branch.oid 1234abcd\0# branch.head main\0# branch.upstream origin/main\0# branch.ab +2 -1\0\
1 M. N... 100644 100644 100644 aaa bbb staged.txt\0\
1 .M N... 100644 100644 100644 aaa aaa work tree.txt\0\
1 MD N... 100644 100644 000000 aaa bbb both.txt\0\
2 R. N... 100644 100644 100644 aaa aaa R100 new name.txt\0old name.txt\0\
u UU N... 100644 100644 100644 100644 a b c conflict.txt\0\
? untracked file.txt\0! ignored.o\0";
        let st = parse(raw.as_bytes()).unwrap();
        assert_eq!(st.branch.as_deref(), Some("main"));
        assert_eq!(st.commit.as_deref(), Some("1234abcd"));
        assert_eq!(st.upstream.as_deref(), Some("origin/main"));
        assert_eq!((st.ahead, st.behind), (2, 1));
        let staged: Vec<_> = st
            .staged
            .iter()
            .map(|c| (c.path.as_str(), c.change))
            .collect();
        assert_eq!(
            staged,
            [
                ("staged.txt", "modified"),
                ("both.txt", "modified"),
                ("new name.txt", "renamed")
            ]
        );
        assert_eq!(st.staged[2].from.as_deref(), Some("old name.txt"));
        let unstaged: Vec<_> = st
            .unstaged
            .iter()
            .map(|c| (c.path.as_str(), c.change))
            .collect();
        assert_eq!(
            unstaged,
            [("work tree.txt", "modified"), ("both.txt", "deleted")]
        );
        assert_eq!(st.conflicted, ["conflict.txt"]);
        assert_eq!(st.untracked, ["untracked file.txt"]);
        assert!(!st.clean);
        assert!(st.text().contains("renamed: old name.txt -> new name.txt"));
    }

    #[test]
    fn a_new_repository_and_a_detached_head() {
        let st = parse(b"# branch.oid (initial)\0# branch.head master\0").unwrap();
        assert_eq!(st.commit, None);
        assert!(st.clean);
        assert!(st.text().contains("no commits yet"));
        let st = parse(b"# branch.oid abc\0# branch.head (detached)\0").unwrap();
        assert!(st.detached && st.branch.is_none());
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        for bad in [
            &b"1 M\0"[..],
            b"2 R. N... 1 1 1 a a R100 x\0",
            b"zzz\0",
            b"# branch.ab 3 4\0",
        ] {
            assert!(parse(bad).is_err(), "{:?}", String::from_utf8_lossy(bad));
        }
    }

    #[test]
    fn entries_past_the_cap_are_counted() {
        let mut raw = String::new();
        for i in 0..MAX_ENTRIES + 5 {
            raw.push_str(&format!("? f{i}\0"));
        }
        let st = parse(raw.as_bytes()).unwrap();
        assert_eq!(st.untracked.len(), MAX_ENTRIES);
        assert_eq!(st.omitted, 5);
    }
}
