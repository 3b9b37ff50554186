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
    let text = (output != Output::Data).then(|| with_warnings(data.text(), warnings));
    encode(&Success {
        ok: true,
        data: (output != Output::Text).then_some(data),
        text,
        warnings,
    })
}

/// The model sees only `text`, so warnings it could act on are appended to it. The overwrite
/// warning is left out: the text already says "overwrote".
fn with_warnings(mut text: String, warnings: &[String]) -> String {
    for warning in warnings {
        if warning != crate::tools::write::OVERWRITE_WARNING {
            text.push_str("\nwarning: ");
            text.push_str(warning);
        }
    }
    text
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
