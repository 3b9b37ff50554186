//! `write_file`: create or replace a whole file, atomically.

use super::write::{self, WriteOutput};
use crate::error::Result;
use crate::render;
use crate::tool::{Annotations, Call, Tool, ToolOutput};
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
}

impl Tool for WriteFile {
    const NAME: &'static str = "write_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: true,
        idempotent: true,
    };
    const CONTENT_BUFFER: bool = true;
    type Args = WriteFileArgs;
    type Output = WriteOutput;

    fn description() -> String {
        format!("Create or overwrite a text file with the given content (the whole file). Missing parent directories are created. The write is atomic: readers see the old or the new file, never a mix. An existing file's permissions are kept. Content is limited to 1 MiB by default; use append_file to add to a file, edit_file to change part of it and apply_patch for several changes or files at once (docs/patch_vs_write.md says which to use). {}", super::PATHS)
    }

    fn run(call: &mut Call<'_>, args: WriteFileArgs) -> Result<(WriteOutput, Vec<String>)> {
        let path = call.path(&args.path)?;
        let content = super::content(Self::NAME, args.content.as_deref(), call.content_buffer)?;
        write::write_file(call.ws, &path, content, call.ctl)
    }
}

impl ToolOutput for WriteOutput {
    fn text(&self) -> Cow<'_, str> {
        let how = if self.created { "created" } else { "overwrote" };
        let size = render::bytes(self.bytes_written);
        Cow::Owned(format!("{how} {} ({size})", self.path))
    }
}
