//! The typed tools: one input and one result type per file tool, with the C ABI's field names
//! (docs/tools.md describes each field). A result type keeps the fields a host acts
//! on; `Workspace::call` returns the whole `data` of any tool.

use super::{CallOptions, Outcome, Result, Workspace};
use serde::{Deserialize, Serialize};

/// Declares each typed method on [`Workspace`] (a plain and a `_with` options form), and on
/// `AsyncWorkspace` with the feature `tokio`.
macro_rules! typed_tools {
    ($($(#[$doc:meta])* $method:ident, $with:ident: $tool:literal, $input:ty => $result:ty;)*) => {
        impl Workspace {
            $(
                $(#[$doc])*
                pub fn $method(&self, input: &$input) -> Result<Outcome<$result>> {
                    self.run($tool, input, CallOptions::default())
                }

                #[doc = concat!("`", stringify!($method), "` with a call's options.")]
                pub fn $with(&self, input: &$input, options: CallOptions<'_>) -> Result<Outcome<$result>> {
                    self.run($tool, input, options)
                }
            )*
        }

        #[cfg(feature = "tokio")]
        impl super::AsyncWorkspace {
            $(
                $(#[$doc])*
                pub async fn $method(&self, input: $input) -> Result<Outcome<$result>> {
                    self.run(move |ws, options| ws.$with(&input, options)).await
                }
            )*
        }
    };
}

typed_tools! {
    /// `read_file`: a text file, whole or a range of its lines.
    read_file, read_file_with: "read_file", ReadFileInput => ReadFileResult;
    /// `write_file`: creates or replaces a file, atomically.
    write_file, write_file_with: "write_file", WriteFileInput => WriteFileResult;
    /// `append_file`: adds text at the end of a file.
    append_file, append_file_with: "append_file", AppendFileInput => AppendFileResult;
    /// `list_dir`: a directory's entries, or a tree.
    list_dir, list_dir_with: "list_dir", ListDirInput => ListDirResult;
    /// `edit_file`: replaces exact text.
    edit_file, edit_file_with: "edit_file", EditFileInput => EditFileResult;
    /// `get_path_info`: whether a path exists, its type, size, hash.
    get_path_info, get_path_info_with: "get_path_info", GetPathInfoInput => GetPathInfoResult;
    /// `find_files`: paths matching a glob.
    find_files, find_files_with: "find_files", FindFilesInput => FindFilesResult;
    /// `search_text`: lines matching a string or regular expression.
    search_text, search_text_with: "search_text", SearchTextInput => SearchTextResult;
    /// `apply_patch`: a unified diff, or line-range replacements, over several files.
    apply_patch, apply_patch_with: "apply_patch", ApplyPatchInput => ApplyPatchResult;
    /// `create_directory`: a directory and, by default, its missing parents.
    create_directory, create_directory_with: "create_directory", CreateDirectoryInput => CreateDirectoryResult;
    /// `move_file`: renames a file, directory or symlink.
    move_file, move_file_with: "move_file", MoveFileInput => MoveFileResult;
    /// `delete_file`: a file, symlink or (with `recursive`) directory.
    delete_file, delete_file_with: "delete_file", DeleteFileInput => DeleteFileResult;
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ReadFileInput {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_line: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_lines: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line_numbers: Option<bool>,
    /// `"strict"` (the default) or `"replace"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding_errors: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ReadFileResult {
    pub path: String,
    pub content: String,
    pub bytes: u64,
    pub total_bytes: u64,
    pub truncated: bool,
    pub sha256: Option<String>,
    pub start_line: Option<u64>,
    pub end_line: Option<u64>,
    pub total_lines: Option<u64>,
    pub next_start_line: Option<u64>,
    #[serde(default)]
    pub encoding_errors: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct WriteFileInput {
    pub path: String,
    pub content: String,
    /// `"overwrite"` (the default), `"create"` or `"append"`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mode: Option<String>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct WriteFileResult {
    pub path: String,
    pub bytes_written: u64,
    pub created: bool,
    pub existed_before: bool,
    pub mode: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct AppendFileInput {
    pub path: String,
    pub content: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct AppendFileResult {
    pub path: String,
    pub bytes_appended: u64,
    pub size: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ListDirInput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub depth: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub include_hidden: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_entries: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub respect_gitignore: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DirEntry {
    pub name: String,
    /// `"file"`, `"dir"`, `"symlink"` or `"other"`.
    #[serde(rename = "type")]
    pub kind: String,
    pub size: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ListDirResult {
    pub path: String,
    /// Empty for a tree (`depth` 2 or more): `tree` holds the entries.
    pub entries: Vec<DirEntry>,
    pub total: u64,
    pub truncated: bool,
    /// The listing as a tree (`depth` 2 or more), as the library gives it.
    pub tree: Option<serde_json::Value>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct EditFileInput {
    pub path: String,
    pub old_text: String,
    pub new_text: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub replace_all: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct EditFileResult {
    pub path: String,
    pub matches: u64,
    pub replaced: u64,
    pub original_size: u64,
    pub new_size: u64,
    pub lines_changed: u64,
    pub first_changed_line: u64,
    pub last_changed_line: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct GetPathInfoInput {
    pub path: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct GetPathInfoResult {
    pub path: String,
    pub exists: bool,
    /// `"file"`, `"dir"`, `"symlink"` or `"other"`; absent when it does not exist.
    #[serde(rename = "type")]
    pub kind: Option<String>,
    pub size: Option<u64>,
    pub sha256: Option<String>,
    pub line_count: Option<u64>,
    pub symlink_target: Option<String>,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct FindFilesInput {
    pub pattern: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_results: Option<u64>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub include_hidden: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub respect_gitignore: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FindFilesResult {
    pub files: Vec<String>,
    pub truncated: bool,
    pub files_scanned: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct SearchTextInput {
    pub query: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub glob: Option<String>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub use_regex: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_sensitive: Option<bool>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_matches: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub context_lines: Option<u64>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SearchMatch {
    pub file: String,
    pub line: u64,
    pub column: u64,
    pub snippet: String,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct SearchTextResult {
    pub matches: Vec<SearchMatch>,
    pub files_searched: u64,
    pub truncated: bool,
}

/// A unified diff in `patch`; the line-range form (`files`) goes through `Workspace::call`.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ApplyPatchInput {
    pub patch: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dry_run: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strict: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct PatchFileChanged {
    pub path: String,
    /// `"update"`, `"create"`, `"delete"` or `"rename"`.
    pub action: String,
    pub added_lines: u64,
    pub removed_lines: u64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct ApplyPatchResult {
    pub applied: bool,
    pub files_changed: Vec<PatchFileChanged>,
    /// Each rejected hunk as the library describes it (path, hunk, reason, expected lines).
    pub rejected_hunks: Vec<serde_json::Value>,
    #[serde(default)]
    pub diff: String,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct CreateDirectoryInput {
    pub path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parents: Option<bool>,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct CreateDirectoryResult {
    pub path: String,
    pub created: bool,
    pub parents_created: u64,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct MoveFileInput {
    pub src: String,
    pub dst: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub overwrite: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct MoveFileResult {
    pub moved_from: String,
    pub moved_to: String,
    #[serde(rename = "type")]
    pub kind: String,
    pub replaced: bool,
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct DeleteFileInput {
    pub path: String,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub recursive: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct DeleteFileResult {
    pub path: String,
    pub deleted: bool,
    pub was_directory: bool,
    pub entries_removed: u64,
}
