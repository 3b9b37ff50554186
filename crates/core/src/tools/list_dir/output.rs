//! `list_dir`'s result: one level's entries, or a tree (`data.tree`), and the text a model
//! reads.

use crate::render;
use crate::sandbox::walk::names::shown;
use crate::sandbox::walk::Kind;
use crate::tools::contract::{Metrics, ToolOutput};
use crate::tools::kind::FileKind;
use crate::tools::walking::{is_zero, left_out_note};
use crate::workspace::{Tree, Unlisted};
use serde::ser::{SerializeMap, SerializeSeq, Serializer};
use serde::Serialize;
use std::borrow::Cow;
use std::fmt::Write;

/// Deepest tree `list_dir` returns: a tree of 60 levels nests 123 JSON values deep in the
/// envelope, within the 128 levels common JSON parsers (serde_json) accept by default.
pub const MAX_DEPTH: u64 = 60;

#[derive(Debug, Serialize)]
pub struct Entry {
    /// The name as `names::encode` shows it: as is, or with `\xNN` escapes if not UTF-8.
    pub name: String,
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub size: u64,
}

#[derive(Debug, Serialize)]
pub struct ListOutput {
    pub path: String,
    /// The directory's entries; in tree mode empty (the tree holds them).
    pub entries: Vec<Entry>,
    /// Entries in the directory (after the filters); in tree mode, entries in the tree.
    pub total: u64,
    pub truncated: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tree: Option<TreeOut>,
    /// Entries left out because the workspace policy denies reading them (not in `total`).
    pub denied: u64,
    /// Protected system locations left out (unrestricted mode; not in `total`); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub protected: u64,
    /// Names starting with '.' left out (`include_hidden: false`; not in `total`); absent
    /// when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub hidden: u64,
    /// Entries a `.gitignore` rule left out (not in `total`); absent when 0.
    #[serde(skip_serializing_if = "is_zero")]
    pub ignored: u64,
}

impl ListOutput {
    /// The lines counting what the filters left out, and how to see it.
    fn filtered_note(&self, text: &mut String) {
        let stats = crate::sandbox::walk::WalkStats {
            hidden: self.hidden,
            ignored: self.ignored,
            ..Default::default()
        };
        crate::tools::walking::skipped_hint(text, &stats, self.hidden == 0, self.ignored > 0);
    }
}

impl ToolOutput for ListOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        let shown = self
            .tree
            .as_ref()
            .map_or(self.entries.len() as u64, |t| t.tree.shown());
        m.entries = Some(shown);
        m.truncated = Some(self.truncated);
    }

    fn text(&self) -> Cow<'_, str> {
        if let Some(tree) = &self.tree {
            return Cow::Owned(tree.text(self));
        }
        let mut text = format!(
            "{} ({})\n",
            self.path,
            render::count(self.total, "entry", "entries")
        );
        for e in &self.entries {
            let _ = match e.kind {
                FileKind::Dir => writeln!(text, "{}/", e.name),
                FileKind::Symlink => writeln!(text, "{}@", e.name),
                FileKind::File => writeln!(text, "{}  {}", e.name, render::bytes(e.size)),
                FileKind::Other => writeln!(text, "{}  (special file)", e.name),
            };
        }
        if self.truncated {
            let _ = writeln!(
                text,
                "[truncated: showing the first {} of {} entries]",
                self.entries.len(),
                self.total
            );
        }
        left_out_note(&mut text, self.denied, self.protected, "shown");
        self.filtered_note(&mut text);
        text.truncate(text.trim_end().len());
        Cow::Owned(text)
    }
}

/// `data.tree` and the text of a tree listing.
#[derive(Debug)]
pub struct TreeOut {
    pub(super) tree: Tree,
    pub(super) cap: u64,
    pub(super) depth: u64,
}

impl Serialize for TreeOut {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        NodeView {
            tree: &self.tree,
            idx: 0,
        }
        .serialize(s)
    }
}

/// `{name, type, size?, children?, truncated?, listed?}`; the root's name is the listed path
/// as given.
struct NodeView<'a> {
    tree: &'a Tree,
    idx: usize,
}

impl Serialize for NodeView<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let node = &self.tree.nodes[self.idx];
        let mut map = s.serialize_map(None)?;
        if self.idx == 0 {
            map.serialize_entry("name", ".")?;
        } else {
            map.serialize_entry("name", &shown(&node.name))?;
        }
        map.serialize_entry("type", node.kind.wire())?;
        if let Some(size) = node.size {
            map.serialize_entry("size", &size)?;
        }
        if let Some(children) = &node.children {
            map.serialize_entry(
                "children",
                &Children {
                    tree: self.tree,
                    idx: children,
                },
            )?;
        }
        if node.truncated || node.more > 0 {
            map.serialize_entry("truncated", &true)?;
        }
        // A directory whose entries are not in the tree (depth limit, .git, entry cap,
        // unreadable) is never mistaken for an empty one.
        if node.kind == Kind::Dir && node.children.is_none() {
            map.serialize_entry("listed", &false)?;
        }
        map.end()
    }
}

struct Children<'a> {
    tree: &'a Tree,
    idx: &'a [usize],
}

impl Serialize for Children<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        let mut seq = s.serialize_seq(Some(self.idx.len()))?;
        for &idx in self.idx {
            seq.serialize_element(&NodeView {
                tree: self.tree,
                idx,
            })?;
        }
        seq.end()
    }
}

impl TreeOut {
    /// An indented tree, two spaces per level, in the flat listing's notation.
    pub fn text(&self, out: &ListOutput) -> String {
        let mut text = format!(
            "{} ({}, depth {})\n",
            out.path,
            render::count(out.total, "entry", "entries"),
            self.depth
        );
        self.write_children(&mut text, 0, 1);
        let at_limit = self
            .tree
            .nodes
            .iter()
            .filter(|n| n.unlisted == Some(Unlisted::Depth))
            .count() as u64;
        if at_limit > 0 {
            let (what, its, them) = match at_limit {
                1 => ("1 directory at the depth limit ({}) is", "its", "it"),
                _ => (
                    "{} directories at the depth limit ({}) are",
                    "their",
                    "one of them",
                ),
            };
            let what = match at_limit {
                1 => what.replace("{}", &self.depth.to_string()),
                n => what.replacen("{}", &n.to_string(), 1).replacen(
                    "{}",
                    &self.depth.to_string(),
                    1,
                ),
            };
            let _ = writeln!(
                text,
                "[{what} marked '…': {its} entries are not listed; list {them}, or raise depth (at most {MAX_DEPTH}), to see deeper]"
            );
        }
        if self.tree.truncated {
            let _ = writeln!(
                text,
                "[truncated: showing {} entries, breadth-first (max_entries is {}); list a subdirectory, lower depth, or set include_hidden=false or respect_gitignore=true to see the rest]",
                out.total, self.cap
            );
        }
        left_out_note(&mut text, out.denied, out.protected, "shown");
        out.filtered_note(&mut text);
        let refused = self.tree.stats.refused;
        if refused > 0 {
            let _ = writeln!(
                text,
                "[{} could not be listed (unreadable, or changed during the listing)]",
                render::count(refused, "directory", "directories")
            );
        }
        text.truncate(text.trim_end().len());
        text
    }

    fn write_children(&self, text: &mut String, idx: usize, level: usize) {
        let Some(children) = &self.tree.nodes[idx].children else {
            return;
        };
        let indent = "  ".repeat(level);
        for &child in children {
            let node = &self.tree.nodes[child];
            let name = shown(&node.name);
            let _ = match node.kind {
                Kind::Dir if node.truncated && node.children.is_none() => {
                    writeln!(text, "{indent}{name}/ (not listed: max_entries reached)")
                }
                Kind::Dir if node.children.is_none() => match node.unlisted {
                    Some(Unlisted::Depth) => writeln!(text, "{indent}{name}/ …"),
                    Some(Unlisted::Git) => writeln!(
                        text,
                        "{indent}{name}/ (not entered; list it by its path to see inside)"
                    ),
                    _ => writeln!(text, "{indent}{name}/ (could not be listed)"),
                },
                Kind::Dir => writeln!(text, "{indent}{name}/"),
                Kind::Symlink => writeln!(text, "{indent}{name}@"),
                Kind::File => writeln!(
                    text,
                    "{indent}{name}  {}",
                    render::bytes(node.size.unwrap_or(0))
                ),
                _ => writeln!(text, "{indent}{name}  (special file)"),
            };
            self.write_children(text, child, level + 1);
        }
        let more = self.tree.nodes[idx].more;
        if more > 0 {
            let _ = writeln!(
                text,
                "{indent}... {more} more {} (max_entries reached)",
                if more == 1 { "entry" } else { "entries" }
            );
        }
    }
}
