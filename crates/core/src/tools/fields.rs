//! What the tools' arguments share: how paths are read (said once, where the host presents
//! the tools, and as one clause in each tool's description), serde defaults, and the content
//! of the tools that take a separate buffer.

use crate::error::{ErrorCode, Result, WsfsError};

/// The clause every tool's description ends with; [`INSTRUCTIONS`] says the rest, once.
pub const PATHS: &str = "Paths are relative to the workspace root.";

/// What a host tells the model once, beside the tools (`wsfs_tool_instructions`: the MCP
/// server's instructions, a system prompt): the rules every path argument follows.
pub const INSTRUCTIONS: &str = "The workspace tools work on files inside one workspace directory. Paths are relative to the workspace root ('.' is the root); absolute paths are accepted only inside the workspace. '..' above the root and symlinks leading outside the workspace are refused.";

pub fn yes() -> bool {
    true
}

pub fn dot() -> String {
    ".".to_string()
}

/// The content of a tool with `CONTENT_BUFFER`: from the JSON arguments or from the separate
/// buffer, exactly one of them.
pub fn content<'a>(
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
