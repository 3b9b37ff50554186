//! The tool protocol: a WASI preview 1 command that reads its arguments as one JSON object on
//! stdin, writes its result as one JSON value on stdout, and exits.
//!
//! - Input: the arguments object, or a tool call `{"tool_call": {"name": "<tool>",
//!   "arguments": {...}}}` (`arguments` may be left out, for name-only calls). Either way the
//!   arguments are validated against the manifest's schema and the tool gets only them.
//! - Success: exit status 0 (or `_start` returning) with JSON on stdout.
//! - Failure: any other status. A tool that says why writes `{"error": {"code": "...",
//!   "message": "..."}}` on stdout, with one of [`GUEST_CODES`]; otherwise the failure is
//!   `tool_trap`, with the end of its stderr.

use super::schema;
use crate::error::{ErrorCode, Result, WsfsError};
use crate::tools::contract::expected_shape;
use serde_json::{Map, Value};

/// Codes a tool may give its own failure. The codes the host reserves for what it observed
/// (`timeout`, `cancelled`, `fuel_exhausted`, `memory_limit`, `tool_trap`, the load errors)
/// are not among them: a tool cannot claim those.
pub const GUEST_CODES: &[ErrorCode] = &[
    ErrorCode::InvalidArguments,
    ErrorCode::InvalidPath,
    ErrorCode::OutsideWorkspace,
    ErrorCode::PathNotFound,
    ErrorCode::PermissionDenied,
    ErrorCode::PolicyDenied,
    ErrorCode::NotAFile,
    ErrorCode::NotADirectory,
    ErrorCode::FileExists,
    ErrorCode::TooLarge,
    ErrorCode::NoSpace,
    ErrorCode::IoError,
    ErrorCode::CapabilityDenied,
    ErrorCode::GatewayError,
];

/// Longest message a tool's own error keeps.
const MAX_GUEST_MESSAGE: usize = 4096;

/// Bytes of stderr shown with a failure.
const STDERR_TAIL: usize = 1024;

fn invalid(tool: &str, why: impl std::fmt::Display, schema: &Value) -> WsfsError {
    WsfsError::new(
        ErrorCode::InvalidArguments,
        format!(
            "invalid arguments for {tool}: {why}; expected {}",
            expected_shape(schema)
        ),
    )
}

/// The bytes a tool reads on stdin: the validated arguments from `input` (see the module
/// documentation).
pub fn tool_input(tool: &str, input: &str, schema: &Value) -> Result<Vec<u8>> {
    let value: Value = serde_json::from_str(input)
        .map_err(|e| invalid(tool, format_args!("not valid JSON ({e})"), schema))?;
    let Value::Object(mut object) = value else {
        return Err(invalid(tool, "the arguments must be a JSON object", schema));
    };
    let arguments = match object.remove("tool_call") {
        None => Value::Object(object),
        Some(call) if object.is_empty() => call_arguments(tool, call, schema)?,
        Some(_) => return Err(invalid(
            tool,
            "a tool_call object must be the only field, {\"tool_call\": {\"name\", \"arguments\"}}",
            schema,
        )),
    };
    schema::validate(schema, &arguments).map_err(|why| invalid(tool, why, schema))?;
    serde_json::to_vec(&arguments).map_err(|e| WsfsError::new(ErrorCode::IoError, e.to_string()))
}

/// The arguments of `{"tool_call": {"name", "arguments"?}}`.
fn call_arguments(tool: &str, call: Value, schema: &Value) -> Result<Value> {
    let Value::Object(mut call) = call else {
        return Err(invalid(
            tool,
            "tool_call must be an object with name and arguments",
            schema,
        ));
    };
    let name = match call.remove("name") {
        Some(Value::String(name)) => name,
        _ => {
            return Err(invalid(
                tool,
                "tool_call.name must be the tool's name, a string",
                schema,
            ))
        }
    };
    if name != tool {
        let shown: String = name.chars().take(64).collect();
        return Err(invalid(
            tool,
            format_args!("tool_call names the tool {shown:?}, but this is {tool}"),
            schema,
        ));
    }
    let arguments = call
        .remove("arguments")
        .unwrap_or(Value::Object(Map::new()));
    if let Some(extra) = call.keys().next() {
        return Err(invalid(
            tool,
            format_args!("tool_call has an unknown field {extra:?} (it takes name and arguments)"),
            schema,
        ));
    }
    if !arguments.is_object() {
        return Err(invalid(
            tool,
            "tool_call.arguments must be a JSON object",
            schema,
        ));
    }
    Ok(arguments)
}

/// What a finished tool's exit status and output mean.
/// `passed_on`: the codes the host's functions answered this run with; a tool may pass those on
/// even when the host reserves them (a gateway's `timeout`), since the host said them itself.
pub fn tool_result(
    tool: &str,
    status: i32,
    stdout: &[u8],
    stderr: &[u8],
    passed_on: &[ErrorCode],
) -> Result<Value> {
    let parsed = parse_stdout(stdout);
    if status == 0 {
        return parsed.map_err(|why| {
            WsfsError::new(
                ErrorCode::ToolTrap,
                format!("{tool} exited normally but {why}{}", stderr_tail(stderr)),
            )
        });
    }
    if let Ok(value) = &parsed {
        if let Some(error) = guest_error(tool, value, passed_on) {
            return Err(error);
        }
    }
    Err(WsfsError::new(
        ErrorCode::ToolTrap,
        format!(
            "{tool} failed (exit status {status}) without saying why{}",
            stderr_tail(stderr)
        ),
    ))
}

fn parse_stdout(stdout: &[u8]) -> std::result::Result<Value, String> {
    let text = std::str::from_utf8(stdout)
        .map_err(|_| "its stdout is not UTF-8 text".to_string())?
        .trim();
    if text.is_empty() {
        return Err("wrote nothing on stdout; a tool writes its result as JSON there".into());
    }
    serde_json::from_str(text).map_err(|e| format!("its stdout is not one JSON value ({e})"))
}

/// The tool's own `{"error": {"code", "message"}}`, when its code is one a tool may give.
fn guest_error(tool: &str, value: &Value, passed_on: &[ErrorCode]) -> Option<WsfsError> {
    let error = value.get("error")?;
    let code = error.get("code")?.as_str()?;
    let code = GUEST_CODES
        .iter()
        .chain(passed_on)
        .find(|c| c.as_str() == code)?;
    let message = error.get("message").and_then(Value::as_str).unwrap_or("");
    let message: String = message.chars().take(MAX_GUEST_MESSAGE).collect();
    Some(WsfsError::new(*code, format!("{tool}: {message}")))
}

/// `; stderr: ...` with the end of what the tool wrote there, or nothing.
pub fn stderr_tail(stderr: &[u8]) -> String {
    let start = stderr.len().saturating_sub(STDERR_TAIL);
    let tail = String::from_utf8_lossy(&stderr[start..]);
    let tail = tail.trim();
    match tail.is_empty() {
        true => String::new(),
        false => format!("; stderr: {tail}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Value {
        json!({"type": "object", "additionalProperties": false, "required": ["text"],
               "properties": {"text": {"type": "string", "description": "The text"}}})
    }

    fn optional() -> Value {
        json!({"type": "object", "properties": {"n": {"type": "integer", "description": "N"}}})
    }

    #[test]
    fn plain_arguments_and_tool_calls_give_the_same_stdin() {
        let plain = tool_input("wc", r#"{"text":"a b"}"#, &schema()).unwrap();
        let call = r#"{"tool_call":{"name":"wc","arguments":{"text":"a b"}}}"#;
        assert_eq!(tool_input("wc", call, &schema()).unwrap(), plain);
        assert_eq!(plain, br#"{"text":"a b"}"#);
        // A legacy name-only call: no arguments.
        let legacy = tool_input("n", r#"{"tool_call":{"name":"n"}}"#, &optional()).unwrap();
        assert_eq!(legacy, b"{}");
    }

    #[test]
    fn malformed_input_is_invalid_arguments_with_the_expected_shape() {
        let cases = [
            ("not json", "not valid JSON"),
            ("[1]", "must be a JSON object"),
            (
                r#"{"tool_call":{"name":"other","arguments":{}}}"#,
                "names the tool \"other\"",
            ),
            (r#"{"tool_call":{"arguments":{}}}"#, "tool_call.name"),
            (r#"{"tool_call":"wc"}"#, "tool_call must be an object"),
            (
                r#"{"tool_call":{"name":"wc","arguments":[]}}"#,
                "arguments must be a JSON object",
            ),
            (
                r#"{"tool_call":{"name":"wc","args":{}}}"#,
                "unknown field \"args\"",
            ),
            (r#"{"tool_call":{"name":"wc"},"text":"x"}"#, "only field"),
            (r#"{"tool_call":{"name":"wc"}}"#, "/text is required"),
            (r#"{"text":5}"#, "/text must be a string"),
        ];
        for (input, expected) in cases {
            let e = tool_input("wc", input, &schema()).unwrap_err();
            assert_eq!(e.code, ErrorCode::InvalidArguments, "{input}");
            assert!(e.message.contains(expected), "{input}: {}", e.message);
            assert!(
                e.message.contains("expected {\"text\": string}"),
                "{}",
                e.message
            );
        }
    }

    #[test]
    fn results_and_failures() {
        assert_eq!(
            tool_result("t", 0, b" {\"n\":1}\n", b"", &[]).unwrap(),
            json!({"n": 1})
        );
        let e = tool_result("t", 0, b"", b"boom", &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolTrap);
        assert!(e.message.contains("nothing on stdout") && e.message.contains("stderr: boom"));
        let e = tool_result("t", 0, b"{\"n\":", b"", &[]).unwrap_err();
        assert!(e.message.contains("not one JSON value"), "{}", e.message);
        let own = br#"{"error":{"code":"path_not_found","message":"no input.txt"}}"#;
        let e = tool_result("t", 1, own, b"", &[]).unwrap_err();
        assert_eq!(
            (e.code, e.message.as_str()),
            (ErrorCode::PathNotFound, "t: no input.txt")
        );
        // A code the host reserves is not the tool's to give.
        let claimed = br#"{"error":{"code":"timeout","message":"retry with more time"}}"#;
        let e = tool_result("t", 1, claimed, b"", &[]).unwrap_err();
        assert_eq!(e.code, ErrorCode::ToolTrap);
        // Unless the host answered the tool with it (a gateway that timed out).
        let e = tool_result("t", 1, claimed, b"", &[ErrorCode::Timeout]).unwrap_err();
        assert_eq!(e.code, ErrorCode::Timeout);
        let e = tool_result("t", 3, b"", b"panicked at x", &[]).unwrap_err();
        assert!(e.message.contains("exit status 3") && e.message.contains("panicked at x"));
    }
}
