//! The tools, one file each, and the registry that lists them. Adding a tool: a new file here
//! implementing [`Tool`](crate::tools::contract::Tool), one `pub mod` line and one `FILE_TOOLS` line.

use crate::tools::contract::{entry, ToolEntry};

mod aliases;
pub mod append_file;
pub mod apply_patch;
pub mod contract;
pub mod create_directory;
pub mod delete_file;
pub mod edit_file;
mod entry;
pub mod fields;
pub mod find_files;
pub mod get_path_info;
mod globs;
pub mod hints;
pub mod kind;
pub mod list_dir;
pub mod move_file;
pub mod read_file;
pub mod search_text;
mod walking;
pub mod write;
pub mod write_file;

/// The file tools, in the order specs list them (the C ABI crate adds the developer tools
/// after them).
pub static FILE_TOOLS: &[ToolEntry] = &[
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

/// The file tool named `name`.
pub fn find(name: &str) -> Option<&'static ToolEntry> {
    FILE_TOOLS.iter().find(|t| t.name == name)
}
