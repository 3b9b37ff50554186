//! `apply_patch`: several changes to several files, applied together or not at all.
//!
//! The patch is parsed and applied in memory by the planning core ([`crate::patch`]), under
//! the locks of the files it changes; the result commits through [`crate::commit`].

mod diff;
mod output;
mod plan;

use crate::error::Result;
use crate::tools::contract::{Annotations, Call, Tool, Warning};
use schemars::JsonSchema;
use serde::Deserialize;

pub use output::ApplyPatchOutput;

pub struct ApplyPatch;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ApplyPatchArgs {
    /// The patch, as a unified diff ('--- a/path' and '+++ b/path' lines, then '@@ -l,n +l,n @@' hunks; '/dev/null' for added or deleted files; several files in one patch) or in the '*** Begin Patch' format ('*** Update File: path', '*** Add File: path', '*** Delete File: path', '*** Move to: path', '@@ anchor' lines, ' '/'-'/'+' lines, '*** End Patch'). Give patch or files, not both.
    #[serde(default)]
    pub patch: String,
    /// Instead of a patch: line-range replacements in files, by the line numbers read_file shows.
    #[serde(default)]
    pub files: Vec<FileEdits>,
    /// Check the patch and return the diff it would make, without writing anything. Default false.
    #[serde(default)]
    pub dry_run: bool,
    /// If true (default), any rejected hunk means nothing is written. If false, the files whose hunks all applied are written and the rest are reported.
    #[serde(default = "super::yes")]
    pub strict: bool,
}

// One file of the `files` form (a plain comment: a doc comment would become the schema's
// `items` description, which the Go input struct cannot state).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileEdits {
    /// File to change (it must exist).
    pub path: String,
    /// The file's sha256 as read_file reported it; if the file changed since, its hunks are rejected as stale. Optional.
    #[serde(default)]
    pub file_hash: String,
    /// The replacements, in any order; they must not overlap.
    pub hunks: Vec<LineRange>,
}

// One replacement of the `files` form.
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct LineRange {
    /// First line replaced, 1-based.
    pub start_line: u64,
    /// Last line replaced, inclusive; start_line - 1 replaces nothing and inserts before start_line.
    pub end_line: u64,
    /// The new lines ('' deletes the range); a final newline is optional.
    pub replace_with: String,
}

impl Tool for ApplyPatch {
    const NAME: &'static str = "apply_patch";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: false,
    };
    type Args = ApplyPatchArgs;
    type Output = ApplyPatchOutput;

    fn description() -> String {
        format!("Apply a patch: several changes to one or more files (update, add, delete, move), committed together: all files change or none do (at most {max} files per patch). Accepts a unified diff or the '*** Begin Patch' format; hunks are found by their context lines (at the stated line numbers first, then nearby, then ignoring whitespace), so copy 3 lines of context around each change exactly from the file, and add an '@@ <enclosing function or class line>' anchor when the context is not unique. A patch that does not apply returns applied: false with each rejected hunk and why, and writes nothing: read the file again and resend. Line endings, BOM and final newline are kept. For a single exact replacement edit_file is simpler, for a new or rewritten file use write_file (see docs/patch_vs_write.md). {}", super::PATHS, max = plan::MAX_PATCH_FILES)
    }

    fn run(call: &mut Call<'_>, args: ApplyPatchArgs) -> Result<(ApplyPatchOutput, Vec<Warning>)> {
        let (out, messages) = plan::apply_patch(call, args)?;
        Ok((out, crate::tools::contract::warnings(messages)))
    }
}
