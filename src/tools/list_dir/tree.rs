//! `list_dir` with more than its `path`: a filtered listing of one level, or with `depth > 1`
//! a breadth-first tree (`crate::sandbox::walk::tree`).

use super::{list_filtered, ListDirArgs, ListOutput};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::render;
use crate::sandbox::root::ToolPath;
use crate::sandbox::sys;
use crate::sandbox::walk::filter::{self, Candidate, WalkOptions};
use crate::sandbox::walk::names::shown;
use crate::sandbox::walk::tree::{list_tree, Tree};
use crate::sandbox::walk::Kind;
use crate::tools::contract::Call;
use crate::tools::walking::{open_walk_dir, WalkDeny};
use ignore::gitignore::Gitignore;
use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use std::fmt::Write;
use std::os::fd::AsFd;

/// Deepest tree `list_dir` returns: a tree of 60 levels nests 123 JSON values deep in the
/// envelope, within the 128 levels common JSON parsers (serde_json) accept by default.
pub const MAX_DEPTH: u64 = 60;

pub(crate) fn run(
    call: &mut Call<'_>,
    path: &ToolPath,
    args: &ListDirArgs,
) -> Result<(ListOutput, Vec<String>)> {
    if args.depth == 0 || args.depth > MAX_DEPTH {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            format!(
                "depth must be between 1 and {MAX_DEPTH}, got {}; list a subdirectory to see deeper",
                args.depth
            ),
        ));
    }
    // Larger requests are lowered to the workspace's limit (the model cannot know it).
    let limit = call.ws.limits.max_list_entries;
    let cap = match args.max_entries {
        0 => limit,
        n => n.min(limit),
    };
    let mut opts = WalkOptions {
        include_hidden: args.include_hidden,
        respect_gitignore: args.respect_gitignore,
        max_depth: usize::try_from(args.depth).unwrap_or(usize::MAX),
        deny: None,
    };
    if args.depth == 1 {
        return list_level(call, path, &opts, cap);
    }
    let (dir, known) = open_walk_dir(call.ws, path, call.ctl, "use read_file for files")?;
    let deny = WalkDeny::new(call.ws, &dir, known)?;
    let hook = |entry: &Candidate<'_>| deny.as_ref().and_then(|d| d.skip(entry));
    if deny.is_some() {
        opts.deny = Some(&hook);
    }
    let cap_entries = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut tree = list_tree(dir.as_fd(), &path.display, &opts, cap_entries, call.ctl)?;
    let warnings = std::mem::take(&mut tree.warnings);
    let out = ListOutput {
        path: path.display.clone(),
        entries: Vec::new(),
        total: tree.shown(),
        truncated: tree.truncated,
        denied: tree.stats.denied,
        protected: tree.stats.protected,
        tree: Some(TreeOut {
            tree,
            cap,
            depth: args.depth,
        }),
    };
    Ok((out, warnings))
}

/// One level with filters: the same listing and shape as the plain one.
fn list_level(
    call: &mut Call<'_>,
    path: &ToolPath,
    opts: &WalkOptions<'_>,
    cap: u64,
) -> Result<(ListOutput, Vec<String>)> {
    let mut warnings = Vec::new();
    let mut rules: Option<Option<Gitignore>> = None;
    let out = list_filtered(call.ws, path, call.ctl, cap, |dir, name, kind| {
        let rules = rules.get_or_insert_with(|| match opts.respect_gitignore {
            true => filter::load_gitignore(dir.as_fd(), b"", &mut warnings),
            false => None,
        });
        let kind = match kind {
            Kind::Unknown => sys::lstat(dir.as_fd(), name).map_or(Kind::Other, |s| s.kind),
            k => k,
        };
        let chain = rules.iter().map(|g| (0, g));
        let candidate = Candidate {
            dir: dir.as_fd(),
            name,
            rel: name,
            kind,
            ino: 0, // the listing's own policy filter looks at the inode
        };
        filter::skip(opts, &candidate, chain).is_none()
    })?;
    Ok((out, warnings))
}

/// `data.tree` and the text of a tree listing.
#[derive(Debug)]
pub struct TreeOut {
    tree: Tree,
    cap: u64,
    depth: u64,
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

/// `{name, type, size?, children?, truncated?}`; the root's name is the listed path as given.
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
    pub(crate) fn text(&self, out: &ListOutput) -> String {
        let mut text = format!(
            "{} ({}, depth {})\n",
            out.path,
            render::count(out.total, "entry", "entries"),
            self.depth
        );
        self.write_children(&mut text, 0, 1);
        if self.tree.truncated {
            let _ = writeln!(
                text,
                "[truncated: showing {} entries, breadth-first (max_entries is {}); list a subdirectory, lower depth, or set include_hidden=false or respect_gitignore=true to see the rest]",
                out.total, self.cap
            );
        }
        super::left_out_note(&mut text, out.denied, out.protected, "shown");
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
