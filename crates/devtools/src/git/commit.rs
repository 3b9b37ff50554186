//! `git_commit`: stage the given paths, refuse an empty commit, commit with hooks and signing
//! off, report the new commit.
//!
//! `confirmed: true` is a soft gate: it makes the model say it means to commit, nothing more.
//! It is not a human's approval; a host that wants one asks its user before the call.

use super::Git;
use crate::error::{ErrorCode, WsfsError};
use crate::exec::runner::{Control, Runner};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::path::Path;

/// The identity of commits in a repository whose config names none (the host's global
/// config is never read); a host passes its own through `GIT_AUTHOR_*` in `exec_env_allow`.
const FALLBACK_NAME: &str = "wsfs agent";
const FALLBACK_EMAIL: &str = "agent@wsfs.invalid";
const MAX_LISTED: usize = 1000;

#[derive(Debug, Default, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct GitCommitArgs {
    /// The commit message (first line a short summary).
    pub message: String,
    /// Files or directories to stage before committing (workspace paths; deletions are staged too). Without paths, what is already staged is committed.
    #[serde(default)]
    pub paths: Vec<String>,
    /// Add a Signed-off-by line. Default false.
    #[serde(default)]
    pub signoff: bool,
    /// Must be true: says you mean to commit. A soft gate, not a human's approval.
    #[serde(default)]
    pub confirmed: bool,
}

#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct GitCommit {
    /// Always true: a commit that does not happen is an error, never this result. Kept
    /// because the capability plan (seed 004) names it.
    pub committed: bool,
    pub commit_hash: String,
    /// Relative to the repository's root.
    pub files_committed: Vec<String>,
    pub message: String,
    #[serde(skip_serializing_if = "is_zero")]
    pub omitted_files: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Commits in `dir`. `paths` are repository paths the caller resolved through the workspace's
/// resolver and write policy (`.git` stays unreachable).
pub fn git_commit(
    runner: &Runner,
    dir: &Path,
    args: &GitCommitArgs,
    ctl: &Control,
) -> Result<GitCommit, WsfsError> {
    if !args.confirmed {
        return Err(WsfsError::new(
            ErrorCode::ConfirmationRequired,
            "git_commit changes the repository's history: call it again with confirmed: true \
             once you mean to commit (review with git_status and git_diff first)",
        ));
    }
    if args.message.trim().is_empty() {
        return Err(WsfsError::new(
            ErrorCode::InvalidArguments,
            "message is empty: say what the commit changes",
        ));
    }
    let git = Git::open(runner, dir, ctl)?;
    if !args.paths.is_empty() {
        let mut argv = vec!["add", "--all", "--"];
        argv.extend(args.paths.iter().map(String::as_str));
        let mut req = git.request(&argv);
        req.env.push(("GIT_LITERAL_PATHSPECS".into(), "1".into()));
        let out = git.run_request(&req, None)?;
        if out.exit_code != Some(0) {
            return Err(git.failure("staging the paths", &out));
        }
    }
    let staged = git.run(
        &["diff", "--cached", "--name-only", "-z", "--no-ext-diff"],
        Some(16 << 20),
    )?;
    if staged.exit_code != Some(0) {
        return Err(git.failure("listing the staged changes", &staged));
    }
    if staged.stdout.text().trim_matches('\0').is_empty() {
        return Err(WsfsError::new(
            ErrorCode::NothingToCommit,
            if args.paths.is_empty() {
                "nothing is staged: pass paths to stage and commit them, or check git_status"
            } else {
                "the paths have no changes to commit; check git_status"
            },
        ));
    }
    let message = format!("--message={}", args.message);
    let mut argv = vec!["commit", "--no-verify", "--no-gpg-sign", message.as_str()];
    if args.signoff {
        argv.push("--signoff");
    }
    let mut req = git.request(&argv);
    if !git.has_identity {
        for (k, v) in [
            ("GIT_AUTHOR_NAME", FALLBACK_NAME),
            ("GIT_AUTHOR_EMAIL", FALLBACK_EMAIL),
            ("GIT_COMMITTER_NAME", FALLBACK_NAME),
            ("GIT_COMMITTER_EMAIL", FALLBACK_EMAIL),
        ] {
            let from_host =
                runner.policy().env_allow.iter().any(|a| a == k) && std::env::var_os(k).is_some();
            if !from_host {
                req.env.push((k.into(), v.into()));
            }
        }
    }
    let out = git.run_request(&req, None)?;
    if out.exit_code != Some(0) {
        return Err(git.failure("committing", &out));
    }
    let head = git.run(&["rev-parse", "--verify", "HEAD"], None)?;
    let files = git.run(
        &[
            "diff-tree",
            "--no-commit-id",
            "--name-only",
            "-r",
            "-z",
            "--root",
            "--no-ext-diff",
            "HEAD",
        ],
        Some(16 << 20),
    )?;
    let mut files_committed: Vec<String> = files
        .stdout
        .text()
        .split('\0')
        .filter(|s| !s.is_empty())
        .map(str::to_string)
        .collect();
    let omitted = files_committed.len().saturating_sub(MAX_LISTED) as u64;
    files_committed.truncate(MAX_LISTED);
    Ok(GitCommit {
        committed: true,
        commit_hash: head.stdout.text().trim().to_string(),
        files_committed,
        message: args.message.clone(),
        omitted_files: omitted,
    })
}

impl GitCommit {
    pub fn text(&self) -> String {
        let short = self.commit_hash.get(..12).unwrap_or(&self.commit_hash);
        let summary = self.message.lines().next().unwrap_or_default();
        format!(
            "Committed {short} \"{summary}\": {} file(s): {}",
            self.files_committed.len() as u64 + self.omitted_files,
            self.files_committed.join(", ")
        )
    }
}
