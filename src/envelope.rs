//! The JSON envelope every C function returns.

use crate::dispatch::ToolData;
use crate::error::WsfsError;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Which parts of a success envelope to build (`wsfs_call_with_options`' `output`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Output {
    #[default]
    Full,
    Text,
    Data,
}

#[derive(Serialize)]
struct Success<'a, D: Serialize> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a D>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<String>,
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

pub fn success(data: &ToolData, warnings: &[String], output: Output) -> String {
    let text = (output != Output::Data).then(|| data.text());
    encode(&Success {
        ok: true,
        data: (output != Output::Text).then_some(data),
        text,
        warnings,
    })
}

/// A success envelope for the non-tool functions (`open`, `close`), whose data is a JSON value.
pub fn success_value(data: &Value, text: String, warnings: &[String]) -> String {
    encode(&Success {
        ok: true,
        data: Some(data),
        text: Some(text),
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
    serde_json::to_string(value).unwrap_or_else(|e| {
        format!(
            r#"{{"ok":false,"error":{{"code":"io_error","message":"encoding the result failed: {}"}},"text":"io_error: encoding the result failed"}}"#,
            e.to_string().replace(['"', '\\'], "'")
        )
    })
}
