//! `find_files`: files whose path matches a glob, in path order, found by a walk beneath the
//! workspace's handle.

use super::globs::PathGlob;
use super::walking::{open_walk_dir, skipped_hint, WalkDeny};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::render;
use crate::sandbox::walk::filter::Candidate;
use crate::sandbox::walk::names::shown;
use crate::sandbox::walk::{Kind, WalkOptions, WalkStats};
use crate::tools::contract::{Annotations, Call, Metrics, Tool, ToolOutput, Warning};
use crate::workspace::Flow;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::fmt::Write;
use std::os::fd::AsFd;

/// Most results one call returns.
pub const MAX_RESULTS: u64 = 10_000;

pub struct FindFiles;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FindFilesArgs {
    /// Glob to match, e.g. '**/*.rs' or 'src/**/test_*.py'. '*' stays within one directory, '**' crosses directories; a pattern without '/' matches file names at any depth.
    pub pattern: String,
    /// Directory to search; defaults to '.', the workspace root.
    #[serde(default = "crate::tools::fields::dot")]
    pub path: String,
    /// Most files to return (default 200, at most 10000).
    #[serde(default = "default_max_results")]
    pub max_results: u64,
    /// Include names starting with '.'. Default false.
    #[serde(default)]
    pub include_hidden: bool,
    /// Leave out what .gitignore files ignore. Default true.
    #[serde(default = "yes")]
    pub respect_gitignore: bool,
}

fn default_max_results() -> u64 {
    200
}

fn yes() -> bool {
    true
}

#[derive(Debug, Serialize)]
pub struct FindOutput {
    /// Workspace-relative paths, in path order.
    pub files: Vec<String>,
    pub truncated: bool,
    /// Files tested against the pattern.
    pub files_scanned: u64,
    /// Entries left out because the workspace policy denies reading them.
    pub denied: u64,
    /// Protected system locations left out (unrestricted mode); absent when 0.
    #[serde(skip_serializing_if = "crate::tools::walking::is_zero")]
    pub protected: u64,
    #[serde(skip)]
    meta: FindMeta,
}

#[derive(Debug)]
struct FindMeta {
    pattern: String,
    path: String,
    max: u64,
    stats: WalkStats,
    include_hidden: bool,
    respect_gitignore: bool,
}

impl Tool for FindFiles {
    const NAME: &'static str = "find_files";
    const ANNOTATIONS: Annotations = Annotations::READ_ONLY;
    type Args = FindFilesArgs;
    type Output = FindOutput;

    fn description() -> String {
        format!("Find files by glob pattern, e.g. '**/*.rs' or 'src/**/test_*.py'. Returns workspace-relative paths sorted by path (at most max_results, 200 by default). Hidden files and what .gitignore ignores are skipped unless asked; symlinks are listed by their own path and never followed; '.git' is not entered. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: FindFilesArgs) -> Result<(FindOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        if args.max_results == 0 {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                "max_results must be at least 1",
            ));
        }
        let max = args.max_results.min(MAX_RESULTS);
        let glob = PathGlob::new("pattern", &args.pattern)?;
        let (dir, known) = open_walk_dir(
            call.ws,
            &path,
            call.ctl,
            "find_files searches a directory; give its parent",
        )?;
        let mut opts = WalkOptions::new(args.include_hidden, args.respect_gitignore);
        let deny = WalkDeny::new(call.ws, &dir, known)?;
        let hook = |entry: &Candidate<'_>| deny.as_ref().and_then(|d| d.skip(entry));
        if deny.is_some() {
            opts.deny = Some(&hook);
        }
        let prefix = crate::tools::walking::path_prefix(&path.display);
        let mut full = prefix.clone().into_bytes();
        let mut files = Vec::new();
        let mut scanned = 0u64;
        let mut truncated = false;
        let walked = call
            .ws
            .walk(dir.as_fd(), &path.display, &opts, call.ctl, |e| {
                if e.kind == Kind::Dir {
                    return Ok(Flow::Continue);
                }
                scanned += 1;
                if !matches!(e.kind, Kind::File | Kind::Symlink) {
                    return Ok(Flow::Continue);
                }
                full.truncate(prefix.len());
                full.extend_from_slice(e.rel);
                if !glob.is_match(&full, e.rel, e.name) {
                    return Ok(Flow::Continue);
                }
                if files.len() as u64 >= max {
                    truncated = true;
                    return Ok(Flow::Stop);
                }
                files.push(shown(&full).into_owned());
                Ok(Flow::Continue)
            })?;
        let out = FindOutput {
            files,
            truncated,
            files_scanned: scanned,
            denied: walked.stats.denied,
            protected: walked.stats.protected,
            meta: FindMeta {
                pattern: args.pattern,
                path: path.display.clone(),
                max,
                stats: walked.stats,
                include_hidden: args.include_hidden,
                respect_gitignore: args.respect_gitignore,
            },
        };
        Ok((out, crate::tools::contract::warnings(walked.warnings)))
    }
}

impl ToolOutput for FindOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.matches = Some(self.files.len() as u64);
        m.files_searched = Some(self.files_scanned);
        m.truncated = Some(self.truncated);
    }

    fn text(&self) -> Cow<'_, str> {
        let m = &self.meta;
        let mut text = String::new();
        if self.files.is_empty() {
            let _ = writeln!(
                text,
                "no files match '{}' under {} ({} scanned)",
                m.pattern,
                m.path,
                render::count(self.files_scanned, "file", "files")
            );
            skipped_hint(&mut text, &m.stats, m.include_hidden, m.respect_gitignore);
        } else {
            for f in &self.files {
                text.push_str(f);
                text.push('\n');
            }
            let _ = writeln!(
                text,
                "[{} matching '{}' ({} scanned)]",
                render::count(self.files.len() as u64, "file", "files"),
                m.pattern,
                render::count(self.files_scanned, "file", "files")
            );
        }
        if self.truncated {
            let _ = writeln!(
                text,
                "[truncated: showing the first {} matches in path order; narrow the pattern or path, or raise max_results (at most {MAX_RESULTS})]",
                m.max
            );
        }
        refused_note(&mut text, &m.stats);
        text.truncate(text.trim_end().len());
        Cow::Owned(text)
    }
}

/// Directories the walk could not enter, and entries the workspace policy left out.
pub fn refused_note(text: &mut String, stats: &WalkStats) {
    crate::tools::walking::left_out_note(text, stats.denied, stats.protected, "shown");
    if stats.refused > 0 {
        let _ = writeln!(
            text,
            "[{} could not be read (unreadable, or changed during the search) and {} skipped]",
            render::count(stats.refused, "directory", "directories"),
            if stats.refused == 1 { "was" } else { "were" }
        );
    }
}
