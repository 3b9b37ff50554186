//! Suggestions that tell a model its next move after `path_not_found`: the same name elsewhere
//! in the workspace (a bounded walk, with the policy's filter), then similar names from the
//! nearest existing parent directory, listed through a handle opened beneath the workspace
//! root (never outside it), with a bounded scan.

use crate::control::CallControl;
use crate::names::display_path;
use crate::sandbox::root::Anchor;
use crate::sandbox::walk::deny::StartPaths;
use crate::sandbox::walk::filter::{Candidate, WalkOptions};
use crate::sandbox::walk::names::shown as walk_shown;
use crate::sandbox::walk::Kind;
use crate::tools::walking::WalkDeny;
use crate::workspace::Flow;
use crate::workspace::Workspace;
use std::borrow::Cow;
use std::ffi::OsStr;
use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt;
use std::path::{Component, Path, PathBuf};

/// Suggestions offered at most.
const MAX_SUGGESTIONS: usize = 3;
/// Entries of the parent directory looked at, at most.
const MAX_SCANNED: usize = 10_000;
/// Names less similar than this are not suggested.
const MIN_SIMILARITY: f64 = 0.8;
/// Entries the search of the workspace for a missing name looks at, at most.
const MAX_WALKED: u64 = 20_000;

/// How a file name is shown to the model: the reversible form the tools accept back.
pub fn shown_name(name: &OsStr) -> Cow<'_, str> {
    crate::names::encode(name.as_encoded_bytes())
}

/// Whether a directory entry is left out of what the model is shown (wsfs's own temp files).
pub fn hidden_entry(name: &OsStr) -> bool {
    crate::sandbox::tempfile::is_temp_name(name.as_encoded_bytes())
}

/// "; did you mean x, y or z?" (empty for no names), to end a sentence saying what is missing.
pub fn did_you_mean(names: &[String]) -> String {
    match names {
        [] => String::new(),
        [one] => format!("; did you mean {one}?"),
        [init @ .., last] => format!("; did you mean {} or {last}?", init.join(", ")),
    }
}

/// Up to three existing paths similar to the first missing component of the tool path `rel`
/// (relative to `anchor`), shown as the tools accept them (workspace-relative, directories
/// ending in '/'). Empty when the path exists, lies outside the workspace, or nothing is
/// similar enough.
pub fn similar_paths(ws: &Workspace, anchor: Anchor, rel: &Path, ctl: &CallControl) -> Vec<String> {
    let Some(rel) = root_relative(ws, anchor, rel) else {
        return Vec::new();
    };
    let Some(nearby) = similar_nearby(ws, &rel, ctl) else {
        return Vec::new();
    };
    // The same name elsewhere comes first: `src/main.go` for a `main.go` read at the root.
    let mut names = same_name_elsewhere(ws, &rel, ctl);
    for name in nearby {
        if names.len() < MAX_SUGGESTIONS && !names.contains(&name) {
            names.push(name);
        }
    }
    names
}

/// Up to three paths in the workspace whose last name is the last name of `rel` (letter case
/// aside), those sharing more of `rel`'s trailing names first: a walk from the root that
/// leaves out what the policy denies (never entering a denied directory, never naming a
/// denied path), hidden names and what `.gitignore` ignores, and stops after
/// [`MAX_WALKED`] entries or at the call's deadline.
fn same_name_elsewhere(ws: &Workspace, rel: &Path, ctl: &CallControl) -> Vec<String> {
    let Some(Component::Normal(leaf)) = rel.components().next_back() else {
        return Vec::new();
    };
    let leaf = leaf.as_encoded_bytes();
    let wanted: Vec<&[u8]> = rel
        .components()
        .map(|c| c.as_os_str().as_encoded_bytes())
        .collect();
    let Ok(root) = ws.open_at_root(Path::new("")) else {
        return Vec::new();
    };
    let Ok(deny) = WalkDeny::new(ws, &root, StartPaths::default()) else {
        return Vec::new();
    };
    let hook = |entry: &Candidate<'_>| deny.as_ref().and_then(|d| d.skip(entry));
    let mut opts = WalkOptions::new(false, true);
    if deny.is_some() {
        opts.deny = Some(&hook);
    }
    let mut found: Vec<(usize, String)> = Vec::new();
    let mut walked = 0u64;
    // A failed walk (or the deadline) keeps what was found so far.
    let _ = ws.walk(root.as_fd(), ".", &opts, ctl, |e| {
        walked += 1;
        if walked > MAX_WALKED {
            return Ok(Flow::Stop);
        }
        if e.name.eq_ignore_ascii_case(leaf) && !hidden_entry(OsStr::from_bytes(e.name)) {
            // How many of rel's trailing names this path shares.
            let shared = e
                .rel
                .split(|&b| b == b'/')
                .rev()
                .zip(wanted.iter().rev())
                .take_while(|(a, b)| a.eq_ignore_ascii_case(b))
                .count();
            let mut shown = walk_shown(e.rel).into_owned();
            if e.kind == Kind::Dir {
                shown.push('/');
            }
            found.push((shared, shown));
        }
        Ok(Flow::Continue)
    });
    found.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
    found.truncate(MAX_SUGGESTIONS);
    found.into_iter().map(|(_, shown)| shown).collect()
}

/// Similar names from the nearest existing directory of `rel`; `None` when the path exists
/// (or something other than a missing name stopped it) or its directory is denied.
fn similar_nearby(ws: &Workspace, rel: &Path, ctl: &CallControl) -> Option<Vec<String>> {
    let components: Vec<Component<'_>> = rel.components().collect();
    // The nearest existing ancestor: the longest prefix that opens as a directory.
    for depth in (0..components.len()).rev() {
        let Component::Normal(missing) = components[depth] else {
            return None;
        };
        let parent: PathBuf = components[..depth].iter().collect();
        let Ok(dir) = ws.open_at_root(&parent) else {
            continue;
        };
        if ws.has_entry(&dir, missing) {
            // The name is there (the path exists, or something other than a missing name
            // stopped it): nothing to suggest.
            return None;
        }
        // The policy hides names from suggestions as from listings (the walks' filter, on
        // the resolved path of the directory: a symlinked parent is matched where it leads),
        // and a directory it denies is not listed at all: no tool resolution allowed it.
        let filter = match ws.walk_filter(&dir, StartPaths::default()) {
            Ok(filter) => filter,
            Err(_) => return None,
        };
        if filter.is_some() {
            match ws.resolved_rel(&dir, None) {
                Ok(rel) if !ws.dir_denied(&rel, ctl) => {}
                _ => return None,
            }
        }
        let allowed = |name: &OsStr, is_dir: bool, ino: u64| match &filter {
            Some(filter) => {
                let name = name.as_encoded_bytes();
                filter.skip(dir.as_fd(), name, name, is_dir, ino).is_none()
            }
            None => true,
        };
        let ranked = ranked_names(ws, &dir, missing, allowed, ctl)
            .into_iter()
            .map(|(name, is_dir)| {
                let shown = display_path(&parent.join(&name));
                if is_dir {
                    format!("{shown}/")
                } else {
                    shown
                }
            })
            .collect();
        return Some(ranked);
    }
    Some(Vec::new())
}

/// The path below the root, for a path that names something inside the workspace.
fn root_relative(ws: &Workspace, anchor: Anchor, rel: &Path) -> Option<PathBuf> {
    match anchor {
        Anchor::Root => Some(rel.to_path_buf()),
        // Unrestricted mode: only paths under the root get suggestions (listing elsewhere
        // would show the model directories outside the workspace).
        Anchor::Host => {
            let absolute = Path::new("/").join(rel);
            let rel = absolute.strip_prefix(ws.root()).ok()?;
            (!rel.components().any(|c| c == Component::ParentDir)).then(|| rel.to_path_buf())
        }
    }
}

/// The names in `dir` most similar to `missing`, best first, with whether each is a directory.
fn ranked_names(
    ws: &Workspace,
    dir: &cap_std::fs::Dir,
    missing: &OsStr,
    allowed: impl Fn(&OsStr, bool, u64) -> bool,
    ctl: &CallControl,
) -> Vec<(String, bool)> {
    let wanted = shown_name(missing).to_lowercase();
    let mut best: Vec<(f64, String, bool)> = Vec::new();
    let mut scanned = 0usize;
    // A failed listing (or the deadline) keeps what was ranked so far.
    let _ = ws.list(dir.as_fd(), "", ctl, |entry| {
        if scanned == MAX_SCANNED {
            return Ok(false);
        }
        scanned += 1;
        let name = OsStr::from_bytes(entry.name);
        if hidden_entry(name) {
            return Ok(true);
        }
        let shown = shown_name(name).into_owned();
        let score = similarity(&wanted, &shown.to_lowercase());
        if score < MIN_SIMILARITY {
            return Ok(true);
        }
        let is_dir = match entry.kind {
            Kind::Dir => true,
            Kind::Unknown => dir.symlink_metadata(name).is_ok_and(|m| m.is_dir()),
            _ => false,
        };
        if !allowed(name, is_dir, entry.ino) {
            return Ok(true);
        }
        best.push((score, shown, is_dir));
        // Best first; equal scores in name order, so the answer does not depend on the
        // directory's order.
        best.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.cmp(&b.1)));
        best.truncate(MAX_SUGGESTIONS);
        Ok(true)
    });
    best.into_iter().map(|(_, name, d)| (name, d)).collect()
}

/// How alike two lower-cased names are, from 0 to 1: Jaro-Winkler (typos, transpositions,
/// shared prefixes), with the same stem under another extension counted as very similar.
fn similarity(wanted: &str, name: &str) -> f64 {
    if wanted == name {
        return 1.0;
    }
    let stem = |s: &str| {
        Path::new(s)
            .file_stem()
            .map(|x| x.to_string_lossy().into_owned())
    };
    let score = strsim::jaro_winkler(wanted, name);
    match (stem(wanted), stem(name)) {
        (Some(a), Some(b)) if a == b && !a.is_empty() => score.max(0.9),
        _ => score,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn similar_names_score_above_the_threshold_and_others_below() {
        for (a, b) in [
            ("mian.rs", "main.rs"),
            ("readme", "readme.md"),
            ("config.yml", "config.yaml"),
            ("notes.txt", "notes.md"),
            ("utils", "util"),
        ] {
            assert!(similarity(a, b) >= MIN_SIMILARITY, "{a} ~ {b}");
        }
        for (a, b) in [
            ("main.rs", "zebra.go"),
            ("notes.txt", "todo.md"),
            ("a", "b"),
        ] {
            assert!(similarity(a, b) < MIN_SIMILARITY, "{a} !~ {b}");
        }
    }

    #[test]
    fn did_you_mean_lists_naturally() {
        assert_eq!(did_you_mean(&[]), "");
        assert_eq!(did_you_mean(&["a".into()]), "; did you mean a?");
        assert_eq!(
            did_you_mean(&["a".into(), "b".into(), "c".into()]),
            "; did you mean a, b or c?"
        );
    }

    #[test]
    fn only_wsfs_temp_names_are_hidden() {
        assert!(hidden_entry(OsStr::new(".wsfs-0123456789abcdef.tmp")));
        assert!(!hidden_entry(OsStr::new(".wsfs-notes.txt")));
        assert!(!hidden_entry(OsStr::new("a.tmp")));
    }
}
