//! `list_dir`: one directory level, sorted by name, links reported and never followed; with
//! `depth > 1` a breadth-first tree (`tree`).

mod level;
mod output;
mod tree;

use crate::error::{ErrorCode, Result, WsfsError};
use crate::sandbox::root::ToolPath;
use crate::sandbox::walk::WalkOptions;
use crate::tools::contract::{self, Annotations, Call, Tool, Warning};
use schemars::JsonSchema;
use serde::Deserialize;

pub use level::list_dir;
pub use output::{Entry, ListOutput, MAX_DEPTH};

pub struct ListDir;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ListDirArgs {
    /// Directory to list; defaults to '.', the workspace root.
    #[serde(default = "crate::tools::fields::dot")]
    pub path: String,
    /// Levels to list: 1 (default) lists the directory itself; 2 or more returns a tree, breadth-first (at most 60).
    #[serde(default = "one")]
    pub depth: u64,
    /// Show names starting with '.'. Default true.
    #[serde(default = "yes")]
    pub include_hidden: bool,
    /// Most entries to return; 0 or absent means the workspace's max_list_entries (500 by default), which is also the most allowed.
    #[serde(default)]
    pub max_entries: u64,
    /// Leave out what .gitignore files in the listed directories ignore. Default: true for a tree (depth 2 or more), false for one level.
    #[serde(default)]
    #[schemars(with = "bool")]
    pub respect_gitignore: Option<bool>,
    /// Show entries that are not directories (files, symlinks, special files). Default true.
    #[serde(default = "yes")]
    pub include_files: bool,
    /// Show directories (a tree then enters none of them). Default true; at least one of include_files and include_dirs must be true.
    #[serde(default = "yes")]
    pub include_dirs: bool,
}

fn one() -> u64 {
    1
}

fn yes() -> bool {
    true
}

impl ListDirArgs {
    /// Only `path` given: today's listing, on its fast path.
    fn is_plain(&self) -> bool {
        self.depth == 1
            && self.include_hidden
            && self.include_files
            && self.include_dirs
            && self.max_entries == 0
            && !self.gitignore()
    }

    /// Whether .gitignore rules apply: as asked, else for trees only (a tree of a real
    /// repository would otherwise enter `node_modules`, `target`, ...).
    fn gitignore(&self) -> bool {
        self.respect_gitignore.unwrap_or(self.depth > 1)
    }
}

impl Tool for ListDir {
    const NAME: &'static str = "list_dir";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = ListDirArgs;
    type Output = ListOutput;

    fn description() -> String {
        format!("List a directory, sorted by name. Each entry shows its type: directories end with '/', symlinks with '@' (they are not followed); files show their size. With depth 2 or more, returns an indented tree (breadth-first; '.git' is not entered, and what .gitignore ignores is left out and counted unless respect_gitignore is false). At most 500 entries by default, with a '[truncated: ...]' notice beyond that. {}", super::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: ListDirArgs) -> Result<(ListOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        if args.is_plain() {
            return Ok((level::list_dir(call.ws, &path, call.ctl)?, Vec::new()));
        }
        let (out, messages) = list(call, &path, &args)?;
        Ok((out, contract::warnings(messages)))
    }
}

/// `list_dir` with more than its `path`: a filtered listing of one level, or a tree.
fn list(
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
    if !args.include_files && !args.include_dirs {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "include_files and include_dirs are both false, which would list nothing; set one \
             of them to true (both default to true)",
        ));
    }
    // Larger requests are lowered to the workspace's limit (the model cannot know it).
    let limit = call.ws.limits.max_list_entries;
    let cap = match args.max_entries {
        0 => limit,
        n => n.min(limit),
    };
    let opts = WalkOptions {
        include_hidden: args.include_hidden,
        respect_gitignore: args.gitignore(),
        max_depth: usize::try_from(args.depth).unwrap_or(usize::MAX),
        include_files: args.include_files,
        include_dirs: args.include_dirs,
        deny: None,
    };
    match args.depth {
        1 => level::list_level(call, path, &opts, cap),
        _ => tree::list(call, path, &opts, cap),
    }
}
