//! One tool call: arguments, deadline, the tool itself, the envelope and its trace event.

use crate::control::{token_flag, CallControl};
use crate::envelope::{self, Output};
use crate::error::{ErrorCode, Result, WsfsError};
use crate::registry;
use crate::tools::{edit, list, read, write};
use crate::workspace::Workspace;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::time::Duration;

/// Options of `wsfs_call_with_options`.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CallOptions {
    pub timeout_ms: Option<u64>,
    pub cancel_token: Option<u64>,
    #[serde(default)]
    pub output: Output,
}

impl CallOptions {
    pub fn from_json(json: Option<&str>) -> Result<CallOptions> {
        match json.map(str::trim) {
            None | Some("") | Some("null") => Ok(CallOptions::default()),
            Some(json) => crate::json::parse_object(json).map_err(|e| {
                WsfsError::new(
                    ErrorCode::InvalidArguments,
                    format!("invalid call options: {e}"),
                )
            }),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PathArgs {
    path: String,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ListArgs {
    path: Option<String>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ContentArgs {
    path: String,
    /// Absent when the content comes as a separate buffer (`wsfs_call_with_content`).
    content: Option<String>,
}

impl ContentArgs {
    /// The content from the JSON or from the separate buffer: exactly one of them.
    fn content<'a>(&'a self, tool: &str, buffer: Option<&'a [u8]>) -> Result<&'a str> {
        let invalid = |m: &str| WsfsError::new(ErrorCode::InvalidArguments, format!("{tool}: {m}"));
        match (&self.content, buffer) {
            (Some(content), None) => Ok(content),
            (None, Some(bytes)) => std::str::from_utf8(bytes)
                .map_err(|_| invalid("the content buffer is not valid UTF-8")),
            (Some(_), Some(_)) => Err(invalid(
                "content was given both in the arguments and as a separate buffer; give it once",
            )),
            (None, None) => Err(invalid(
                "missing field `content`; expected {\"path\": string, \"content\": string}",
            )),
        }
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct EditArgs {
    path: String,
    old_text: String,
    new_text: String,
    replace_all: Option<bool>,
}

/// A tool's typed result, serialized as the envelope's `data`.
#[derive(Debug, Serialize)]
#[serde(untagged)]
pub enum ToolData {
    Read(read::ReadOutput),
    Write(write::WriteOutput),
    Append(write::AppendOutput),
    List(list::ListOutput),
    Edit(edit::EditOutput),
}

impl ToolData {
    /// What the model sees; borrowed from the data where it is the file's content.
    pub fn text(&self) -> Cow<'_, str> {
        use crate::render;
        match self {
            ToolData::Read(o) => render::read(o),
            ToolData::Write(o) => render::write(o).into(),
            ToolData::Append(o) => render::append(o).into(),
            ToolData::List(o) => render::list(o).into(),
            ToolData::Edit(o) => render::edit(o).into(),
        }
    }
}

/// One call's inputs: the tool, its JSON arguments and, for `write_file`/`append_file`, the
/// content as a separate buffer instead of a JSON string.
pub struct Request<'a> {
    pub tool: &'a str,
    pub args_json: &'a str,
    pub content: Option<&'a [u8]>,
}

/// Runs a request on workspace `id` and returns the envelope. Never panics on bad input.
pub fn call(id: u64, req: &Request<'_>, options: &CallOptions) -> String {
    let mut path_for_log = String::new();
    let tool = req.tool;
    let outcome = registry::get(id).and_then(|ws| {
        let ctl = control(&ws, options)?;
        let result = run(&ws, req, &ctl, &mut path_for_log);
        trace(tool, &path_for_log, &result, &ctl);
        result
    });
    match outcome {
        Ok((data, warnings)) => envelope::success(&data, &warnings, options.output),
        Err(e) => envelope::failure(&e),
    }
}

fn control(ws: &Workspace, options: &CallOptions) -> Result<CallControl> {
    let configured = ws.limits.operation_timeout_ms;
    let timeout_ms = options.timeout_ms.map_or(configured, |t| t.min(configured));
    let cancel = match options.cancel_token {
        None | Some(0) => None,
        Some(token) => Some(token_flag(token).ok_or_else(|| {
            WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("cancel_token {token} is unknown or freed"),
            )
        })?),
    };
    Ok(CallControl::new(Duration::from_millis(timeout_ms), cancel))
}

/// Runs a tool on an open workspace without the handle registry or the envelope: the core
/// that the C ABI wraps (used directly by Rust callers and the core benchmarks).
pub fn run_tool(
    ws: &Workspace,
    tool: &str,
    args_json: &str,
    ctl: &CallControl,
) -> Result<(ToolData, Vec<String>)> {
    let req = Request {
        tool,
        args_json,
        content: None,
    };
    run(ws, &req, ctl, &mut String::new())
}

fn run(
    ws: &Workspace,
    req: &Request<'_>,
    ctl: &CallControl,
    path_for_log: &mut String,
) -> Result<(ToolData, Vec<String>)> {
    let (tool, args_json) = (req.tool, req.args_json);
    check_args_size(ws, tool, args_json.len())?;
    if let Some(content) = req.content {
        if !matches!(tool, "write_file" | "append_file") {
            return Err(WsfsError::new(
                ErrorCode::InvalidArguments,
                format!("{tool} takes no content buffer; only write_file and append_file do"),
            ));
        }
        write::check_write_size(ws, content.len() as u64, "content", write::SPLIT_HINT)?;
    }
    ctl.check()?;
    let mut parse_path = |raw: &str| {
        let parsed = ws.parse_path(raw);
        *path_for_log = match &parsed {
            Ok(p) => p.display.clone(),
            Err(_) => String::from("<invalid>"),
        };
        parsed
    };
    match tool {
        "read_file" => {
            let args: PathArgs = parse_args(tool, args_json)?;
            let path = parse_path(&args.path)?;
            Ok((ToolData::Read(read::read_file(ws, &path, ctl)?), Vec::new()))
        }
        "write_file" => {
            let args: ContentArgs = parse_args(tool, args_json)?;
            let path = parse_path(&args.path)?;
            let content = args.content(tool, req.content)?;
            let (out, warnings) = write::write_file(ws, &path, content, ctl)?;
            Ok((ToolData::Write(out), warnings))
        }
        "append_file" => {
            let args: ContentArgs = parse_args(tool, args_json)?;
            let path = parse_path(&args.path)?;
            let content = args.content(tool, req.content)?;
            let (out, warnings) = write::append_file(ws, &path, content, ctl)?;
            Ok((ToolData::Append(out), warnings))
        }
        "list_dir" => {
            let args: ListArgs = parse_args(tool, args_json)?;
            let path = parse_path(args.path.as_deref().unwrap_or("."))?;
            Ok((ToolData::List(list::list_dir(ws, &path, ctl)?), Vec::new()))
        }
        "edit_file" => {
            let args: EditArgs = parse_args(tool, args_json)?;
            let path = parse_path(&args.path)?;
            let req = edit::EditRequest {
                old_text: &args.old_text,
                new_text: &args.new_text,
                replace_all: args.replace_all.unwrap_or(false),
            };
            let (out, warnings) = edit::edit_file(ws, &path, &req, ctl)?;
            Ok((ToolData::Edit(out), warnings))
        }
        _ => Err(unknown_tool(tool)),
    }
}

pub fn unknown_tool(tool: &str) -> WsfsError {
    let shown: String = tool.chars().take(64).collect();
    WsfsError::new(
        ErrorCode::UnknownTool,
        format!(
            "there is no tool named '{shown}'; the tools are {}",
            crate::specs::TOOL_NAMES.join(", ")
        ),
    )
}

/// Refuses argument JSON too large to hold any valid call before parsing it: content may be
/// escaped to 6 bytes per byte, plus room for a maximal path.
fn check_args_size(ws: &Workspace, tool: &str, len: usize) -> Result<()> {
    let max = (ws.limits.max_write_bytes as usize)
        .saturating_mul(6)
        .saturating_add(1 << 20)
        .max(16 << 20);
    if len > max {
        return Err(WsfsError::new(
            ErrorCode::TooLarge,
            format!(
                "the {tool} arguments are {len} bytes of JSON; the limit is {max} (content is limited to max_write_bytes = {})",
                ws.limits.max_write_bytes
            ),
        ));
    }
    Ok(())
}

fn parse_args<T: DeserializeOwned>(tool: &str, json: &str) -> Result<T> {
    crate::json::parse_object(json).map_err(|e| {
        let expected = match tool {
            "read_file" => "{\"path\": string}",
            "write_file" | "append_file" => "{\"path\": string, \"content\": string}",
            "list_dir" => "{\"path\"?: string}",
            _ => "{\"path\": string, \"old_text\": string, \"new_text\": string, \"replace_all\"?: bool}",
        };
        WsfsError::new(
            ErrorCode::InvalidArguments,
            format!("invalid arguments for {tool}: {e}; expected {expected}"),
        )
    })
}

fn trace(tool: &str, path: &str, result: &Result<(ToolData, Vec<String>)>, ctl: &CallControl) {
    let outcome = match result {
        Ok(_) => "ok",
        Err(e) => e.code.as_str(),
    };
    tracing::info!(
        target: "wsfs",
        tool,
        path,
        outcome,
        duration_us = ctl.elapsed().as_micros() as u64,
        "tool call"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_parse_and_refuse_unknown_fields() {
        let o = CallOptions::from_json(Some(r#"{"timeout_ms":5,"output":"text"}"#)).unwrap();
        assert_eq!(o.timeout_ms, Some(5));
        assert_eq!(o.output, Output::Text);
        assert!(CallOptions::from_json(None).unwrap().timeout_ms.is_none());
        assert!(CallOptions::from_json(Some("null")).is_ok());
        let e = CallOptions::from_json(Some(r#"{"timeout":5}"#)).unwrap_err();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(CallOptions::from_json(Some(r#"{"output":"xml"}"#)).is_err());
    }

    #[test]
    fn argument_errors_name_the_tool_and_the_expected_shape() {
        let e =
            parse_args::<EditArgs>("edit_file", r#"{"path":"a","old-text":"x","new_text":"y"}"#)
                .err()
                .unwrap();
        assert_eq!(e.code, ErrorCode::InvalidArguments);
        assert!(
            e.message.contains("old-text") && e.message.contains("old_text"),
            "{}",
            e.message
        );
        assert!(unknown_tool("rm").message.contains("read_file"));
    }
}
