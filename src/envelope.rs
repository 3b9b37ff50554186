//! The JSON envelope every C function returns.

use crate::error::WsfsError;
use crate::tools::contract::{Frame, Metrics, Output, ToolOutput, Warning};
use serde::Serialize;
use serde_json::Value;
use std::borrow::Cow;

#[derive(Serialize)]
struct Success<'a, D: Serialize + ?Sized, W: Serialize> {
    ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    data: Option<&'a D>,
    #[serde(skip_serializing_if = "Option::is_none")]
    text: Option<&'a str>,
    warnings: &'a [W],
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<&'a Metrics>,
}

#[derive(Serialize)]
struct Failure<'a> {
    ok: bool,
    error: ErrorBody<'a>,
    text: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    metrics: Option<&'a Metrics>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: &'a str,
    message: &'a str,
}

/// Serialized JSON never contains a raw newline (compact output escapes it inside strings),
/// so the first `\n` of a raw-mode result ends the JSON. Raw parts never contain NUL: file
/// content with NUL bytes is refused as binary, and names cannot hold one.
const RAW_SEPARATOR: u8 = b'\n';

/// A finished result: the JSON envelope and, in the raw modes, the raw part after it. It never
/// holds a NUL byte, which lets the C ABI hand it out as a C string without scanning it again:
/// serde_json escapes NUL inside strings, and a raw part is scanned for NUL when it is added,
/// unless it is a read's text, which was checked as it was read (`text::FileText`).
///
/// Successes are built with [`FRONT_ROOM`] free bytes in front of the result, where the C ABI
/// keeps the allocation's size, so a result becomes a C string, and is freed, without being
/// copied or scanned (see `ffi::into_c_string`).
#[derive(Debug)]
pub struct Envelope {
    buf: Vec<u8>,
    /// Where the result starts in `buf`: 0, or [`FRONT_ROOM`] when that room was kept.
    start: usize,
}

/// Bytes kept free in front of a result for the C ABI's allocation header.
pub const FRONT_ROOM: usize = 8;

/// What a framed buffer starts with: the room in front, as text (NUL is valid UTF-8; it is
/// overwritten before the result leaves the library and is never part of the result).
const FRONT: &str = "\0\0\0\0\0\0\0\0";

impl Envelope {
    /// JSON made by serde_json (or a literal without NUL).
    fn json(json: String) -> Envelope {
        Envelope {
            buf: json.into_bytes(),
            start: 0,
        }
    }

    /// `buf` holds [`FRONT_ROOM`] free bytes, then the result.
    fn framed(buf: Vec<u8>) -> Envelope {
        Envelope {
            buf,
            start: FRONT_ROOM,
        }
    }

    /// The result's bytes (UTF-8, no NUL).
    pub fn as_bytes(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// The result's bytes (UTF-8, no NUL).
    pub fn into_bytes(self) -> Vec<u8> {
        let mut buf = self.buf;
        buf.drain(..self.start);
        buf
    }

    /// The result as a Rust string (for Rust callers; the C ABI uses the bytes).
    pub fn into_string(self) -> String {
        String::from_utf8(self.into_bytes())
            .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
    }

    /// The result after [`FRONT_ROOM`] free bytes: the buffer it was built in, or, for an
    /// envelope built without that room (failures, literals), a copy.
    pub(crate) fn into_framed(self) -> Vec<u8> {
        if self.start == FRONT_ROOM {
            return self.buf;
        }
        let bytes = &self.buf[self.start..];
        let mut buf = Vec::with_capacity(FRONT_ROOM + bytes.len() + 1);
        buf.extend_from_slice(FRONT.as_bytes());
        buf.extend_from_slice(bytes);
        buf
    }
}

impl From<String> for Envelope {
    /// Any string: scanned for NUL, which becomes an error envelope.
    fn from(s: String) -> Envelope {
        if memchr::memchr(0, s.as_bytes()).is_some() {
            return Envelope::json(nul_in_result());
        }
        Envelope::json(s)
    }
}

fn nul_in_result() -> String {
    r#"{"ok":false,"error":{"code":"io_error","message":"result contained a NUL byte"},"text":"io_error: result contained a NUL byte"}"#.to_string()
}

/// How many bytes go in front of a raw part in `output` mode for a success without warnings:
/// [`FRONT_ROOM`], the JSON head (with `meta` as `data` in the `data_raw` mode) and the
/// separator. A tool that reserves exactly this room in front of its text gets the result
/// built around it in place (see `ToolOutput::take_raw`). 0 for the other modes.
pub fn raw_head_len<M: Serialize + ?Sized>(output: Output, meta: &M) -> usize {
    /// Counts what is written: the length without building the string.
    struct Count(usize);
    impl std::io::Write for Count {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.0 += bytes.len();
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut count = Count(0);
    let data = match output {
        Output::DataRaw => Some(meta),
        Output::TextRaw => None,
        _ => return 0,
    };
    let success = Success::<M, Warning> {
        ok: true,
        data,
        text: None,
        warnings: &[],
        metrics: None,
    };
    serde_json::to_writer(&mut count, &success).map_or(0, |()| FRONT_ROOM + count.0 + 1)
}

/// The envelope a result in output mode `.0` is framed in, as the tools see it.
pub struct Framing(pub Output);

impl Frame for Framing {
    fn raw_head_len(&self, meta: &dyn erased_serde::Serialize) -> usize {
        raw_head_len(self.0, meta)
    }
}

/// A tool's success envelope in output mode `output`, with `metrics` when given. The raw
/// modes' results are built around the raw part where the tool kept room for a head without
/// metrics (see `ToolOutput::take_raw`); a head with metrics is longer, and the raw part is
/// copied once behind it instead.
pub fn success(
    mut data: Box<dyn ToolOutput>,
    warnings: &[Warning],
    output: Output,
    metrics: Option<&Metrics>,
) -> Envelope {
    let encoded = match output {
        Output::Full | Output::Text => {
            let text = with_warnings(data.text(), warnings);
            let data = (output == Output::Full).then_some(data.as_ref());
            encode_framed(data, Some(&text), warnings, metrics).map(Envelope::framed)
        }
        Output::Data => {
            encode_framed(Some(data.as_ref()), None, warnings, metrics).map(Envelope::framed)
        }
        Output::DataRaw => {
            let head = data
                .raw_meta()
                .map(|meta| encode_success(Some(meta.as_ref()), None, warnings, metrics));
            match head {
                None => encode_framed(Some(data.as_ref()), None, warnings, metrics)
                    .map(Envelope::framed),
                Some(head) => {
                    head.map(
                        |head| match data.take_raw(output, FRONT_ROOM + head.len() + 1) {
                            Some(buf) => in_place(buf, &head),
                            None => {
                                let raw = data.raw_part();
                                with_raw(head, |out| out.push_str(raw), raw.len())
                            }
                        },
                    )
                }
            }
        }
        Output::TextRaw => {
            encode_success::<dyn ToolOutput>(None, None, warnings, metrics).map(|head| {
                if warnings_shown(warnings) {
                    let text = with_warnings(data.text(), warnings);
                    return with_raw(head, |out| out.push_str(&text), text.len());
                }
                match data.take_raw(output, FRONT_ROOM + head.len() + 1) {
                    Some(buf) => in_place(buf, &head),
                    None => with_raw(head, |out| data.push_text(out), 0),
                }
            })
        }
    };
    encoded.unwrap_or_else(|_| Envelope::json(encode_failed()))
}

/// The result built around a raw part that lies in `buf` after exactly the room
/// [`FRONT_ROOM`], `head` and the separator need (see `ToolOutput::take_raw`): the head is
/// written into that room, and nothing is copied.
fn in_place(mut buf: Vec<u8>, head: &str) -> Envelope {
    let end = FRONT_ROOM + head.len();
    if buf.len() <= end {
        return Envelope::json(encode_failed()); // not what take_raw promises
    }
    buf[FRONT_ROOM..end].copy_from_slice(head.as_bytes());
    buf[end] = RAW_SEPARATOR;
    Envelope::framed(buf)
}

/// `json`, the separator, then what `push` appends (with room reserved for `len` bytes and
/// the C string's NUL, so a raw part of known size is copied once). The raw part is scanned
/// for NUL: tools' texts hold none, but the C ABI relies on it.
fn with_raw(json: String, push: impl FnOnce(&mut String), len: usize) -> Envelope {
    let mut out = String::with_capacity(FRONT_ROOM + json.len() + len + 2);
    out.push_str(FRONT);
    out.push_str(&json);
    out.push(char::from(RAW_SEPARATOR));
    let raw_start = out.len();
    push(&mut out);
    if memchr::memchr(0, &out.as_bytes()[raw_start..]).is_some() {
        return Envelope::json(nul_in_result());
    }
    Envelope::framed(out.into_bytes())
}

/// [`encode_success`] after [`FRONT_ROOM`] free bytes.
fn encode_framed<D: Serialize + ?Sized>(
    data: Option<&D>,
    text: Option<&str>,
    warnings: &[Warning],
    metrics: Option<&Metrics>,
) -> serde_json::Result<Vec<u8>> {
    let mut buf = Vec::with_capacity(FRONT_ROOM + 256 + text.map_or(0, str::len));
    buf.extend_from_slice(FRONT.as_bytes());
    serde_json::to_writer(
        &mut buf,
        &Success {
            ok: true,
            data,
            text,
            warnings,
            metrics,
        },
    )?;
    Ok(buf)
}

fn encode_success<D: Serialize + ?Sized>(
    data: Option<&D>,
    text: Option<&str>,
    warnings: &[Warning],
    metrics: Option<&Metrics>,
) -> serde_json::Result<String> {
    serde_json::to_string(&Success {
        ok: true,
        data,
        text,
        warnings,
        metrics,
    })
}

/// The model sees only `text`, so warnings it could act on are appended to it (not those the
/// text already says, such as write_file's "overwrote").
fn with_warnings<'a>(text: Cow<'a, str>, warnings: &[Warning]) -> Cow<'a, str> {
    if !warnings_shown(warnings) {
        return text;
    }
    let mut text = text.into_owned();
    for warning in warnings.iter().filter(|w| w.in_text) {
        text.push_str("\nwarning: ");
        text.push_str(&warning.message);
    }
    Cow::Owned(text)
}

fn warnings_shown(warnings: &[Warning]) -> bool {
    warnings.iter().any(|w| w.in_text)
}

/// A success envelope for the non-tool functions (`open`, `close`), whose data is a JSON value.
pub fn success_value(data: &Value, text: String, warnings: &[String]) -> String {
    encode(&Success {
        ok: true,
        data: Some(data),
        text: Some(&text),
        warnings,
        metrics: None,
    })
}

/// The failure envelope of a tool call, with the call's `metrics` when it ran.
pub fn failure_envelope(err: &WsfsError, metrics: Option<&Metrics>) -> Envelope {
    Envelope::json(encode(&Failure {
        ok: false,
        error: ErrorBody {
            code: err.code.as_str(),
            message: &err.message,
        },
        text: err.to_string(),
        metrics,
    }))
}

pub fn failure(err: &WsfsError) -> String {
    encode(&Failure {
        ok: false,
        error: ErrorBody {
            code: err.code.as_str(),
            message: &err.message,
        },
        text: err.to_string(),
        metrics: None,
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
    use crate::tools::write::{WriteOutput, OVERWRITE_WARNING};

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
        let full: Value =
            serde_json::from_str(&success(Box::new(data()), &[], Output::Full, None).into_string())
                .unwrap();
        assert_eq!(full["ok"], true);
        assert_eq!(full["data"]["bytes_written"], 2);
        assert_eq!(full["text"], "created a.txt (2 bytes)");
        let text: Value =
            serde_json::from_str(&success(Box::new(data()), &[], Output::Text, None).into_string())
                .unwrap();
        assert!(text.get("data").is_none());
        assert_eq!(text["text"], "created a.txt (2 bytes)");
        let only: Value =
            serde_json::from_str(&success(Box::new(data()), &[], Output::Data, None).into_string())
                .unwrap();
        assert!(only.get("text").is_none());
        assert_eq!(only["data"]["path"], "a.txt");
    }

    #[test]
    fn warnings_reach_the_text_except_the_redundant_overwrite_notice() {
        let warnings = vec![
            Warning::said_in_text(OVERWRITE_WARNING),
            Warning::new("syncing the directory failed"),
        ];
        let v: Value = serde_json::from_str(
            &success(Box::new(data()), &warnings, Output::Text, None).into_string(),
        )
        .unwrap();
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

/// `read_file`'s room for the head, against the head this envelope writes.
#[cfg(test)]
mod read_file_room {
    use crate::config::{Config, Limits};
    use crate::envelope::{raw_head_len, Framing};
    use crate::tools::contract::{Output, ToolOutput};
    use crate::workspace::Workspace;
    use wsfs_core::control::CallControl;
    use wsfs_core::tools::read_file::read_file;

    /// The room a plain read keeps in front of its content is exactly the head the envelope
    /// writes there, or, for a cut read (whose `bytes` and `next_start_line` are known only
    /// once read), at least as much: raw results are then built in place (too little room
    /// would only cost a copy, so nothing else would notice).
    #[test]
    fn the_predicted_head_is_the_real_one() {
        let tmp = tempfile::tempdir().unwrap();
        let limits = Limits {
            max_read_bytes: 1000,
            ..Limits::default()
        };
        let config = Config {
            root: tmp.path().to_string_lossy().into_owned(),
            create_root: false,
            restrict_to_workspace: true,
            limits,
            state_dir: None,
            policy: crate::guard::policy::PolicyConfig::default(),
            profile: "wsfs".into(),
            wasm_tools: Vec::new(),
            wasm_policy: Default::default(),
            mode: Default::default(),
            session: None,
            session_refresh_ms: None,
            model_gateway: None,
        };
        let ws = Workspace::open(&config).unwrap().0;
        let ctl = CallControl::new(std::time::Duration::from_secs(10), None);
        let cases: [(&str, Vec<u8>); 9] = [
            ("nine.txt", "a\n".repeat(9).into_bytes()),
            (
                "unterminated.txt",
                "a\n"
                    .repeat(60)
                    .into_bytes()
                    .into_iter()
                    .chain(*b"end")
                    .collect(),
            ),
            ("empty.txt", vec![]),
            ("one.txt", b"x".to_vec()),
            ("q\"uote\\d.txt", vec![b'a'; 999]),
            ("exact.txt", vec![b'a'; 1000]),
            ("long.txt", vec![b'a'; 5000]),
            ("cut.txt", "é".repeat(600).into_bytes()),
            ("lines.txt", "a line\n".repeat(500).into_bytes()),
        ];
        for (name, data) in cases {
            std::fs::write(tmp.path().join(name), &data).unwrap();
            let path = ws.parse_path(name).unwrap();
            for output in [Output::DataRaw, Output::TextRaw] {
                let mut out = read_file(&ws, &path, &ctl, &Framing(output), false).unwrap();
                let head = match output {
                    Output::DataRaw => {
                        let meta = out.raw_meta().expect("a plain read has a head");
                        raw_head_len(Output::DataRaw, &*meta)
                    }
                    _ => raw_head_len(Output::TextRaw, &()),
                };
                match out.truncated && output == Output::DataRaw {
                    false => assert_eq!(out.content.room(), head, "{name} {output:?}"),
                    true => assert!(out.content.room() >= head, "{name} {output:?}"),
                }
                let raw = out.take_raw(output, head);
                assert_eq!(
                    raw.is_some(),
                    !(data.is_empty() && output == Output::TextRaw),
                    "{name}"
                );
            }
        }
    }
}
