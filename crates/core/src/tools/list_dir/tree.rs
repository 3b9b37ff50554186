//! `list_dir` with `depth > 1`: a breadth-first tree (`crate::sandbox::walk::tree`).

use super::output::{ListOutput, TreeOut};
use crate::error::Result;
use crate::sandbox::root::ToolPath;
use crate::sandbox::walk::filter::{Candidate, WalkOptions};
use crate::tools::contract::Call;
use crate::tools::walking::{open_walk_dir, WalkDeny};
use std::os::fd::AsFd;

/// A tree of `opts.max_depth` levels below `path`, breadth-first, at most `cap` entries.
pub(super) fn list(
    call: &mut Call<'_>,
    path: &ToolPath,
    asked: &WalkOptions<'_>,
    cap: u64,
) -> Result<(ListOutput, Vec<String>)> {
    let mut opts = WalkOptions::new(asked.include_hidden, asked.respect_gitignore);
    opts.max_depth = asked.max_depth;
    opts.include_files = asked.include_files;
    opts.include_dirs = asked.include_dirs;
    let (dir, known) = open_walk_dir(call.ws, path, call.ctl, "use read_file for files")?;
    let deny = WalkDeny::new(call.ws, &dir, known)?;
    let hook = |entry: &Candidate<'_>| deny.as_ref().and_then(|d| d.skip(entry));
    if deny.is_some() {
        opts.deny = Some(&hook);
    }
    let cap_entries = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut tree = call
        .ws
        .list_tree(dir.as_fd(), &path.display, &opts, cap_entries, call.ctl)?;
    let warnings = std::mem::take(&mut tree.warnings);
    let out = ListOutput {
        path: path.display.clone(),
        entries: Vec::new(),
        total: tree.shown(),
        truncated: tree.truncated,
        denied: tree.stats.denied,
        protected: tree.stats.protected,
        // wsfs's own temp files count as hidden in the stats; they are never mentioned.
        hidden: if opts.include_hidden {
            0
        } else {
            tree.stats.hidden
        },
        ignored: tree.stats.ignored,
        tree: Some(TreeOut {
            tree,
            cap,
            depth: opts.max_depth as u64,
        }),
    };
    Ok((out, warnings))
}
