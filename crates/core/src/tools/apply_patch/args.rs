//! `apply_patch`'s arguments: a patch, or line-range replacements in files.

use schemars::JsonSchema;
use serde::Deserialize;

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
    #[serde(default = "crate::tools::fields::yes")]
    pub strict: bool,
}

// One file of the `files` form (a plain comment: a doc comment would become the schema's
// `items` description, which the Go input struct cannot state).
#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct FileEdits {
    /// File to change (it must exist).
    pub path: String,
    /// The file's sha256 as get_path_info shows it (read_file's data.sha256 also has it); if the file changed since, its hunks are rejected as stale. Optional.
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
