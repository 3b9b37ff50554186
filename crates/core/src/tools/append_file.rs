//! `append_file`: add to the end of a file with one `O_APPEND` write.

use super::write::{self, AppendOutput};
use crate::error::Result;
use crate::render;
use crate::tools::contract::{Annotations, Call, Metrics, Tool, ToolOutput, Warning};
use schemars::JsonSchema;
use serde::Deserialize;
use std::borrow::Cow;

pub struct AppendFile;

#[derive(Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AppendFileArgs {
    /// File to append to, e.g. 'log.txt'.
    pub path: String,
    /// Text to add at the end of the file.
    #[schemars(required, with = "String")]
    pub content: Option<String>,
}

impl Tool for AppendFile {
    const NAME: &'static str = "append_file";
    const ANNOTATIONS: Annotations = Annotations {
        read_only: false,
        destructive: false,
        idempotent: false,
    };
    const CONTENT_BUFFER: bool = true;
    type Args = AppendFileArgs;
    type Output = AppendOutput;

    fn description() -> String {
        format!("Append text to the end of a file, creating it (and its parent directories) if missing. Nothing is added between the old content and yours: include a leading newline if you need one. {}", crate::tools::fields::PATHS)
    }

    fn run(call: &mut Call<'_>, args: AppendFileArgs) -> Result<(AppendOutput, Vec<Warning>)> {
        let path = call.path(&args.path)?;
        let content = crate::tools::fields::content(
            Self::NAME,
            args.content.as_deref(),
            call.content_buffer,
        )?;
        let (out, messages) = write::append_file(call, &path, content)?;
        Ok((out, crate::tools::contract::warnings(messages)))
    }
}

impl ToolOutput for AppendOutput {
    fn add_metrics(&self, m: &mut Metrics) {
        m.bytes_written = Some(self.bytes_appended);
    }

    fn text(&self) -> Cow<'_, str> {
        Cow::Owned(format!(
            "appended {} to {} (now {})",
            render::bytes(self.bytes_appended),
            self.path,
            render::bytes(self.size)
        ))
    }
}
