//! The JSON envelope every C function returns.

use crate::error::WsfsError;
use crate::tool::ToolOutput;
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
struct Success<'a, D: Serialize + ?Sized> {
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

/// Serialized JSON never contains a raw newline (compact output escapes it inside strings),
/// so the first `\n` of a raw-mode result ends the JSON. Raw parts never contain NUL: file
/// content with NUL bytes is refused as binary, and names cannot hold one.
const RAW_SEPARATOR: char = '\n';

pub fn success(data: &dyn ToolOutput, warnings: &[String], output: Output) -> String {
    let encoded = match output {
        Output::Full | Output::Text => {
            let text = with_warnings(data.text(), warnings);
            let data = (output == Output::Full).then_some(data);
            encode_success(data, Some(&text), warnings)
        }
        Output::Data => encode_success(Some(data), None, warnings),
        Output::DataRaw => match data.split_raw() {
            Some((meta, raw)) => encode_success(Some(meta.as_ref()), None, warnings)
                .map(|json| with_raw(json, |out| out.push_str(raw), raw.len())),
            None => encode_success(Some(data), None, warnings),
        },
        Output::TextRaw => encode_success::<dyn ToolOutput>(None, None, warnings).map(|json| {
            if warnings_shown(warnings) {
                let text = with_warnings(data.text(), warnings);
                with_raw(json, |out| out.push_str(&text), text.len())
            } else {
                with_raw(json, |out| data.push_text(out), 0)
            }
        }),
    };
    encoded.unwrap_or_else(|_| encode_failed())
}

/// `json`, the separator, then what `push` appends (with room reserved for `len` bytes and
/// the C string's NUL, so a raw part of known size is copied once).
fn with_raw(mut json: String, push: impl FnOnce(&mut String), len: usize) -> String {
    json.reserve_exact(len + 2);
    json.push(RAW_SEPARATOR);
    push(&mut json);
    json
}

fn encode_success<D: Serialize + ?Sized>(
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
    if !warnings_shown(warnings) {
        return text;
    }
    let mut text = text.into_owned();
    for warning in warnings.iter().filter(|w| shown(w)) {
        text.push_str("\nwarning: ");
        text.push_str(warning);
    }
    Cow::Owned(text)
}

fn shown(warning: &str) -> bool {
    warning != crate::tools::write::OVERWRITE_WARNING
}

fn warnings_shown(warnings: &[String]) -> bool {
    warnings.iter().any(|w| shown(w))
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

    fn data() -> WriteOutput {
        WriteOutput {
            path: "a.txt".into(),
            bytes_written: 2,
            created: true,
            existed_before: false,
            mode: Default::default(),
        }
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
