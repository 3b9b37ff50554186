//! The JSON envelope every C function returns.

use crate::dispatch::ToolData;
use crate::error::WsfsError;
use crate::tools::read::ReadOutput;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::borrow::Cow;

/// Which parts of a success envelope to build (`wsfs_call_with_options`' `output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Output {
    /// `data` and `text`.
    #[default]
    Full,
    /// `text` only.
    Text,
    /// `data` only.
    Data,
    /// Neither inside the JSON: the text follows the JSON after one `\n`, unescaped.
    TextRaw,
    /// `data` only, with `read_file`'s `content` left out of it and following the JSON after
    /// one `\n`, unescaped. Other tools' results are as with `Data`.
    DataRaw,
}

#[derive(Serialize)]
struct Success<'a, D: Serialize> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a D>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    warnings: &'a [String],
}

#[derive(Serialize)]
struct Failure<'a> {
    ok: bool,
    error: ErrorBody<'a>,
    text: String,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
}

/// `read_file`'s data without its content, for `DataRaw`.
#[derive(Serialize)]
struct ReadMeta<'a> {
    path: &'a str,
    bytes: u64,
    total_bytes: u64,
    truncated: bool,
}

/// Serialized JSON never contains a raw newline (compact output escapes it inside strings),
/// so the first `\n` of a raw-mode result ends the JSON. Raw parts never contain NUL: file
/// content with NUL bytes is refused as binary, and names cannot hold one.
const RAW_SEPARATOR: char = '\n';

pub fn success(data: &ToolData, warnings: &[String], output: Output) -> String {
    if let (Output::TextRaw, ToolData::Read(read), []) = (output, data, warnings) {
        return read_text_raw(read, warnings);
    }
    let text = match output {
        Output::Data | Output::DataRaw => None,
        _ => Some(with_warnings(data.text(), warnings)),
    };
    let text = text.as_deref();
    let text_in_json = matches!(output, Output::Full | Output::Text)
        .then_some(text)
        .flatten();
    let (json, raw) = match (output, data) {
        (Output::DataRaw, ToolData::Read(read)) => {
            let meta = ReadMeta {
                path: &read.path,
                bytes: read.bytes,
                total_bytes: read.total_bytes,
                truncated: read.truncated,
            };
            (
                encode_success(Some(&meta), None, warnings),
                Some(read.content.as_str()),
            )
        }
        (Output::TextRaw, _) => (encode_success::<ToolData>(None, None, warnings), text),
        _ => {
            let include_data = output != Output::Text;
            (
                encode_success(include_data.then_some(data), text_in_json, warnings),
                None,
            )
        }
    };
    match (json, raw) {
        (Ok(mut json), Some(raw)) => {
            // One copy of the raw part, with room for the C string's NUL.
            json.reserve_exact(raw.len() + 2);
            json.push(RAW_SEPARATOR);
            json.push_str(raw);
            json
        }
        (Ok(json), None) => json,
        (Err(_), _) => encode_failed(),
    }
}

/// `read_file` in `text_raw`: the content and its notice are copied once, straight into the
/// result, without first building the text (a 256 KiB copy for a truncated read).
fn read_text_raw(read: &ReadOutput, warnings: &[String]) -> String {
    let Ok(mut json) = encode_success::<ToolData>(None, None, warnings) else {
        return encode_failed();
    };
    let notice = crate::render::read_notice(read).unwrap_or_default();
    json.reserve_exact(read.content.len() + notice.len() + 2);
    json.push(RAW_SEPARATOR);
    json.push_str(&read.content);
    json.push_str(&notice);
    json
}

fn encode_success<D: Serialize>(
    data: Option<&D>,
    text: Option<&str>,
    warnings: &[String],
) -> serde_json::Result<String> {
    serde_json::to_string(&Success {
        ok: true,
        data,
        text,
        warnings,
    })
}

/// The model sees only `text`, so warnings it could act on are appended to it. The overwrite
/// warning is left out: the text already says "overwrote".
fn with_warnings<'a>(text: Cow<'a, str>, warnings: &[String]) -> Cow<'a, str> {
    let shown: Vec<&String> = warnings
        .iter()
        .filter(|w| w.as_str() != crate::tools::write::OVERWRITE_WARNING)
        .collect();
    if shown.is_empty() {
        return text;
    }
    let mut text = text.into_owned();
    for warning in shown {
        text.push_str("\nwarning: ");
        text.push_str(warning);
    }
    Cow::Owned(text)
}

/// A success envelope for the non-tool functions (`open`, `close`), whose data is a JSON value.
pub fn success_value(data: &Value, text: String, warnings: &[String]) -> String {
    encode(&Success {
        ok: true,
        data: Some(data),
        text: Some(&text),
        warnings,
    })
}

pub fn failure(err: &WsfsError) -> String {
    encode(&Failure {
        ok: false,
        error: ErrorBody {
            code: err.code.as_str(),
            message: &err.message,
        },
        text: err.to_string(),
    })
}

fn encode<T: Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|_| encode_failed())
}

fn encode_failed() -> String {
    r#"{"ok":false,"error":{"code":"io_error","message":"encoding the result failed"},"text":"io_error: encoding the result failed"}"#.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;
    use crate::tools::write::WriteOutput;

    fn data() -> ToolData {
        ToolData::Write(WriteOutput {
            path: "a.txt".into(),
            bytes_written: 2,
            created: true,
        })
    }

    #[test]
    fn output_modes_trim_the_success_envelope() {
        let full: Value = serde_json::from_str(&success(&data(), &[], Output::Full)).unwrap();
        assert_eq!(full["ok"], true);
        assert_eq!(full["data"]["bytes_written"], 2);
        assert_eq!(full["text"], "created a.txt (2 bytes)");
        let text: Value = serde_json::from_str(&success(&data(), &[], Output::Text)).unwrap();
        assert!(text.get("data").is_none());
        assert_eq!(text["text"], "created a.txt (2 bytes)");
        let only: Value = serde_json::from_str(&success(&data(), &[], Output::Data)).unwrap();
        assert!(only.get("text").is_none());
        assert_eq!(only["data"]["path"], "a.txt");
    }

    #[test]
    fn warnings_reach_the_text_except_the_redundant_overwrite_notice() {
        let warnings = vec![
            crate::tools::write::OVERWRITE_WARNING.to_string(),
            "syncing the directory failed".to_string(),
        ];
        let v: Value = serde_json::from_str(&success(&data(), &warnings, Output::Text)).unwrap();
        assert_eq!(
            v["text"],
            "created a.txt (2 bytes)\nwarning: syncing the directory failed"
        );
        assert_eq!(v["warnings"].as_array().unwrap().len(), 2);
    }

    #[test]
    fn failure_text_is_code_colon_message() {
        let err = WsfsError::new(ErrorCode::AmbiguousEdit, "3 matches");
        let v: Value = serde_json::from_str(&failure(&err)).unwrap();
        assert_eq!(v["ok"], false);
        assert_eq!(v["error"]["code"], "ambiguous_edit");
        assert_eq!(v["text"], "ambiguous_edit: 3 matches");
    }
}
