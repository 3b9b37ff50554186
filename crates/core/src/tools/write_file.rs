//! `write_file`: create or replace a whole file atomically, create one only if new, or append.

use super::write::{self, WriteMode, WriteOutput};
use crate::error::Result;
use crate::render;
use crate::tools::contract::{Annotations, Call, Metrics, Tool, ToolOutput, Warning};
use schemars::JsonSchema;
use serde::Deserialize;
use std::borrow::Cow;

pub struct WriteFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct WriteFileArgs {
    /// File to write, e.g. 'notes/todo.md'.
    pub path: String,
    /// The complete new content of the file.
    #[schemars(required, with = "String")]
    pub content: Option<String>,
    /// 'overwrite' (default) creates the file or replaces it; 'create' only creates it and fails with file_exists if the name is taken; 'append' adds the content to the end, like append_file.
    #[serde(default)]
    pub mode: WriteMode,
}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        // Mode 'append' adds again on every call.
        idempotent: false,
    };
    const CONTENT_BUFFER: bool = true;
    type Args = WriteFileArgs;
    type Output = WriteOutput;

    fn description() -> String {
        format!("Create or overwrite a text file with the given content (the whole file). Missing parent directories are created. The write is atomic: readers see the old or the new file, never a mix. An existing file's permissions are kept. With mode 'create' an existing file is never replaced (the call fails with file_exists instead), even if another writer creates it at the same moment. Content is limited to 1 MiB by default. Use it for new files and complete rewrites; to change part of a file use edit_file (one exact snippet) or apply_patch (several places or files at once), which send only the change; to add at the end, append_file (or mode 'append'). {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: WriteFileArgs) -> Result<(WriteOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        let content = crate::tools::fields::content(
            Self::NAME,
            args.content.as_deref(),
            call.content_buffer,
        )?;
        write::write_file(call, &path, content, args.mode)
    }
}

impl ToolOutput for WriteOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.bytes_written = Some(self.bytes_written);
    }

    fn text(&self) -> Cow<'_, str> {
        let size = render::bytes(self.bytes_written);
        Cow::Owned(match (self.mode, self.created) {
            (WriteMode::Append, true) => format!("created {} and appended {size}", self.path),
            (WriteMode::Append, false) => format!("appended {size} to {}", self.path),
            (_, true) => format!("created {} ({size})", self.path),
            (_, false) => format!("overwrote {} ({size})", self.path),
        })
    }
}
