//! The tools, one file each, and the registry that lists them. Adding a tool: a new file here
//! implementing [`Tool`](crate::tools::contract::Tool), one `pub mod` line and one `REGISTRY` line.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::tools::contract::{entry, ToolEntry};

pub mod append_file;
pub mod apply_patch;
pub mod contract;
pub mod create_directory;
pub mod delete_file;
pub mod edit_file;
mod entry;
pub mod find_files;
pub mod get_path_info;
mod globs;
pub mod hints;
pub mod list_dir;
pub mod move_file;
pub mod read_file;
pub mod search_text;
mod walking;
pub mod write;
pub mod write_file;

/// Every tool, in the order specs list them.
pub static REGISTRY: &[ToolEntry] = &[
    entry::<read_file::ReadFile>(),
    entry::<write_file::WriteFile>(),
    entry::<append_file::AppendFile>(),
    entry::<list_dir::ListDir>(),
    entry::<edit_file::EditFile>(),
    entry::<get_path_info::GetPathInfo>(),
    entry::<find_files::FindFiles>(),
    entry::<search_text::SearchText>(),
    entry::<apply_patch::ApplyPatch>(),
    entry::<create_directory::CreateDirectory>(),
    entry::<move_file::MoveFile>(),
    entry::<delete_file::DeleteFile>(),
];

/// The registry entry named `name`.
pub fn find(name: &str) -> Option<&'static ToolEntry> {
    REGISTRY.iter().find(|t| t.name == name)
}

/// Said of every path argument in tool descriptions.
pub(crate) const PATHS: &str = "Paths are relative to the workspace root ('.' is the root); absolute paths are accepted only inside the workspace. '..', absolute symlinks and symlinks leading outside the workspace are refused.";

pub(crate) fn yes() -> bool {
    true
}

pub(crate) fn dot() -> String {
    ".".to_string()
}

/// The content of a tool with `CONTENT_BUFFER`: from the JSON arguments or from the separate
/// buffer, exactly one of them.
pub(crate) fn content<'a>(
    tool: &str,
    in_args: Option<&'a str>,
    buffer: Option<&'a [u8]>,
) -> Result<&'a str> {
    let invalid = |m: &str| WsfsError::new(ErrorCode::InvalidArguments, format!("{tool}: {m}"));
    match (in_args, buffer) {
        (Some(content), None) => Ok(content),
        (None, Some(bytes)) => simdutf8::basic::from_utf8(bytes)
            .map_err(|_| invalid("the content buffer is not valid UTF-8")),
        (Some(_), Some(_)) => Err(invalid(
            "content was given both in the arguments and as a separate buffer; give it once",
        )),
        (None, None) => Err(invalid(
            "missing field `content`; expected {\"path\": string, \"content\": string}",
        )),
    }
}
