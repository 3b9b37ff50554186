//! The tool call a model API hands its host, in each form `wsfs_dispatch` takes
//! (docs/dispatch.md): `{"tool_call": {"name", "arguments"}}`, the bare `{"name", "arguments"}`,
//! and the legacy name-only call of those (no `arguments`). `arguments` is an object or a JSON
//! string holding one (OpenAI sends the string); absent or `null`, it is `{}`.
//!
//! The arguments are borrowed from the call's text, never re-encoded: a `write_file` call's
//! content is parsed once, by the tool.

use crate::error::{ErrorCode, Result, WsfsError};
use serde::Deserialize;
use serde_json::value::RawValue;
use std::borrow::Cow;

/// A parsed tool call: the tool's name and its arguments as the JSON text of an object.
#[derive(Debug, PartialEq, Eq)]
pub struct ToolCall<'a> {
    pub name: String,
    pub arguments: Cow<'a, str>,
}

/// What every error says the call should look like.
const SHAPE: &str =
    "a tool call is {\"tool_call\": {\"name\": string, \"arguments\"?: object}} or \
                     {\"name\": string, \"arguments\"?: object}; arguments may also be a JSON \
                     string holding an object, and is {} when left out";

fn invalid(why: impl std::fmt::Display) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!("invalid tool call: {why}; {SHAPE}"),
    )
}

/// The top level: one form or the other (serde refuses any other key, and a key given twice).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Outer<'a> {
    #[serde(borrow)]
    tool_call: Option<&'a RawValue>,
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// The object inside `tool_call`.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Inner<'a> {
    #[serde(borrow)]
    name: Option<&'a RawValue>,
    #[serde(borrow)]
    arguments: Option<&'a RawValue>,
}

/// Parses `call_json` (see the module documentation).
pub fn parse(call_json: &str) -> Result<ToolCall<'_>> {
    let outer: Outer<'_> = object(call_json, "the call")?;
    let (name, arguments, within) = match outer.tool_call {
        Some(_) if outer.name.is_some() || outer.arguments.is_some() => {
            return Err(invalid(
                "it has both forms at once (tool_call beside a top-level name or arguments); \
                 give one",
            ))
        }
        Some(call) => {
            let inner: Inner<'_> = object(call.get(), "tool_call")?;
            (inner.name, inner.arguments, "tool_call.")
        }
        None => (outer.name, outer.arguments, ""),
    };
    let Some(name) = name else {
        return Err(invalid(format_args!("{within}name is missing")));
    };
    let name: String = serde_json::from_str(name.get()).map_err(|_| {
        invalid(format_args!(
            "{within}name must be the tool's name as a string, got {}",
            kind(name.get())
        ))
    })?;
    if name.is_empty() {
        return Err(invalid(format_args!("{within}name is empty")));
    }
    let arguments = match arguments {
        None => Cow::Borrowed("{}"),
        Some(raw) => arguments_text(raw.get(), within)?,
    };
    Ok(ToolCall { name, arguments })
}

/// The arguments as the text of a JSON object: the object itself, or the string holding one.
fn arguments_text<'a>(raw: &'a str, within: &str) -> Result<Cow<'a, str>> {
    match raw.as_bytes().first() {
        Some(b'{') => Ok(Cow::Borrowed(raw)),
        Some(b'"') => {
            let text: String = serde_json::from_str(raw)
                .map_err(|e| invalid(format_args!("{within}arguments: {e}")))?;
            match serde_json::from_str::<&RawValue>(&text) {
                Ok(value) if value.get().starts_with('{') => Ok(Cow::Owned(text)),
                Ok(value) => Err(invalid(format_args!(
                    "{within}arguments is a string holding {}, not an object",
                    kind(value.get())
                ))),
                Err(e) => Err(invalid(format_args!(
                    "{within}arguments is a string that is not valid JSON ({e})"
                ))),
            }
        }
        _ => Err(invalid(format_args!(
            "{within}arguments must be an object, got {}",
            kind(raw)
        ))),
    }
}

/// Decodes `json` into `T`, which must be a JSON object; `what` names it in the error.
fn object<'a, T: Deserialize<'a>>(json: &'a str, what: &str) -> Result<T> {
    let json = json.trim();
    if !json.starts_with('{') {
        return Err(invalid(format_args!(
            "{what} must be a JSON object, got {}",
            kind(json)
        )));
    }
    serde_json::from_str(json).map_err(|e| invalid(format_args!("{what}: {e}")))
}

/// What a JSON text is, for an error message.
fn kind(json: &str) -> &'static str {
    match json.trim_start().as_bytes().first() {
        None => "nothing",
        Some(b'{') => "an object",
        Some(b'[') => "an array",
        Some(b'"') => "a string",
        Some(b'n') => "null",
        Some(b't' | b'f') => "a boolean",
        Some(b'-' | b'0'..=b'9') => "a number",
        Some(_) => "text that is not JSON",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ok(json: &str) -> (String, String) {
        let call = parse(json).unwrap_or_else(|e| panic!("{json}: {}", e.message));
        (call.name, call.arguments.into_owned())
    }

    #[test]
    fn every_form_gives_the_same_call() {
        let want = ("read_file".to_string(), r#"{"path":"a"}"#.to_string());
        for json in [
            r#"{"tool_call":{"name":"read_file","arguments":{"path":"a"}}}"#,
            r#"{"name":"read_file","arguments":{"path":"a"}}"#,
            r#"{"name":"read_file","arguments":"{\"path\":\"a\"}"}"#,
            r#"{"tool_call":{"arguments":"{\"path\":\"a\"}","name":"read_file"}}"#,
            " {\"name\" : \"read_file\", \"arguments\":{\"path\":\"a\"}} \n",
        ] {
            assert_eq!(ok(json), want, "{json}");
        }
    }

    #[test]
    fn a_name_only_call_has_empty_arguments() {
        for json in [
            r#"{"tool_call":{"name":"time.now"}}"#,
            r#"{"name":"time.now"}"#,
            r#"{"name":"time.now","arguments":null}"#,
        ] {
            assert_eq!(ok(json), ("time.now".into(), "{}".into()), "{json}");
        }
    }

    #[test]
    fn the_object_arguments_are_borrowed_not_copied() {
        let call = parse(r#"{"name":"x","arguments":{"a":1}}"#).unwrap();
        assert!(matches!(call.arguments, Cow::Borrowed(r#"{"a":1}"#)));
    }

    #[test]
    fn malformed_calls_name_what_is_wrong() {
        let cases = [
            ("", "the call must be a JSON object, got nothing"),
            ("[1]", "the call must be a JSON object, got an array"),
            (r#""read_file""#, "got a string"),
            ("{", "the call: EOF"),
            ("{}", "name is missing"),
            (r#"{"arguments":{}}"#, "name is missing"),
            (
                r#"{"tool_call":{"arguments":{}}}"#,
                "tool_call.name is missing",
            ),
            (
                r#"{"name":7}"#,
                "name must be the tool's name as a string, got a number",
            ),
            (r#"{"name":""}"#, "name is empty"),
            (
                r#"{"tool_call":"read_file"}"#,
                "tool_call must be a JSON object, got a string",
            ),
            (
                r#"{"name":"a","arguments":[]}"#,
                "arguments must be an object, got an array",
            ),
            (
                r#"{"name":"a","arguments":"[]"}"#,
                "a string holding an array, not an object",
            ),
            (
                r#"{"name":"a","arguments":"{nope"}"#,
                "a string that is not valid JSON",
            ),
            (r#"{"name":"a","args":{}}"#, "unknown field `args`"),
            (
                r#"{"tool_call":{"name":"a","id":"1"}}"#,
                "tool_call: unknown field `id`",
            ),
            (r#"{"name":"a","name":"b"}"#, "duplicate field `name`"),
            (
                r#"{"tool_call":{"name":"a"},"name":"a"}"#,
                "both forms at once",
            ),
            (
                r#"{"tool_call":{"name":"a"},"arguments":{}}"#,
                "both forms at once",
            ),
        ];
        for (json, want) in cases {
            let e = parse(json).expect_err(json);
            assert_eq!(e.code, ErrorCode::InvalidArguments, "{json}");
            assert!(e.message.contains(want), "{json}: {}", e.message);
            assert!(e.message.contains("\"tool_call\""), "{}", e.message);
        }
    }
}
