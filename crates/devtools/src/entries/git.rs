//! `git_status`, `git_diff`, `git_commit`: hardened git at the workspace root.

use super::{control, cwd, program_paths, state};
use crate::error::Result;
use crate::git::commit::{git_commit, GitCommit, GitCommitArgs};
use crate::git::diff::{git_diff, GitDiff, GitDiffArgs};
use crate::git::status::{git_status, GitStatus, GitStatusArgs};
use crate::sandbox::gate::Access;
use crate::tools::contract::{Annotations, Call, Switch, Tool, ToolOutput, Warning};
use std::borrow::Cow;

impl ToolOutput for GitStatus {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(GitStatus::text(self))
    }
}

impl ToolOutput for GitDiff {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(GitDiff::text(self))
    }
}

impl ToolOutput for GitCommit {
    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(GitCommit::text(self))
    }
}

pub struct GitStatusTool;

impl Tool for GitStatusTool {
    const NAME: &'static str = "git_status";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    const SWITCH: Switch = Switch::Exec;
    type Args = GitStatusArgs;
    type Output = GitStatus;

    fn description() -> String {
        format!(
            "{} {}",
            "The git status of the workspace's repository as structured data: branch, upstream, \
         ahead/behind, and the staged, unstaged, untracked and conflicted files. Git runs \
         hardened: the repository's config cannot make it run code (fsmonitor, hooks, pagers, \
         filters are switched off).",
            crate::tools::fields::PATHS
        )
    }

    fn run(call: &mut Call<'_>, _args: GitStatusArgs) -> Result<(GitStatus, Vec<Warning>)> {
        let dir = cwd(call, "")?;
        let dev = state(call.ws)?;
        Ok((
            git_status(&dev.runner, &dir, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}

pub struct GitDiffTool;

impl Tool for GitDiffTool {
    const NAME: &'static str = "git_diff";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    const SWITCH: Switch = Switch::Exec;
    type Args = GitDiffArgs;
    type Output = GitDiff;

    fn description() -> String {
        format!("{} {}", "The repository's changes as a unified diff with per-file added and deleted line counts: \
         the unstaged changes by default, the staged ones with staged: true, or between \
         revisions with base_ref/target_ref; pathspec limits it to some files. Large diffs are \
         cut with a note.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, mut args: GitDiffArgs) -> Result<(GitDiff, Vec<Warning>)> {
        args.pathspec = program_paths(call, &args.pathspec, Access::READ)?;
        let dir = cwd(call, "")?;
        let dev = state(call.ws)?;
        Ok((
            git_diff(&dev.runner, &dir, &args, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}

pub struct GitCommitTool;

impl Tool for GitCommitTool {
    const NAME: &'static str = "git_commit";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
    };
    const SWITCH: Switch = Switch::Exec;
    const CONFIRMATION: Option<&'static str> = Some("git_commit changes the repository's history");
    type Args = GitCommitArgs;
    type Output = GitCommit;

    fn description() -> String {
        format!("{} {}", "Commit to the workspace's repository: stages paths first (if given), then commits what \
         is staged, with hooks and signing off. Needs confirmed: true (review with git_status \
         and git_diff first); returns the commit hash and the files committed, or \
         nothing_to_commit.", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, mut args: GitCommitArgs) -> Result<(GitCommit, Vec<Warning>)> {
        if args.confirmed {
            // Staged through the same resolver and policy as the file tools: `.git/**` stays
            // write-denied. (Unconfirmed calls are refused by the core before any of this.)
            args.paths = program_paths(call, &args.paths, Access::WRITE)?;
        }
        let dir = cwd(call, "")?;
        let dev = state(call.ws)?;
        Ok((
            git_commit(&dev.runner, &dir, &args, &control(call.ctl))?,
            Vec::new(),
        ))
    }
}
