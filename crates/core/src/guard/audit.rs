//! The audit log: one JSON line per call, appended and fsynced before the call returns.
//!
//! A line is `{"time", "tool", "paths", "outcome", "bytes_in", "bytes_out", "duration_us",
//! "changes"}` (see docs/security.md, "Policy and audit log"); file contents never appear in it. Each line is written
//! with a single `write(2)` on an `O_APPEND` descriptor, so lines from threads and processes
//! sharing the file never interleave (the kernel appends each write whole), and lines are
//! bounded ([`MAX_LINE_BYTES`]) by dropping the details that do not fit. Changing tools report
//! what they changed through `Call::record_change`; hashes are computed only when the log is on.
//! With `policy.audit_arguments` a line also has the call's `arguments`, each argument that
//! carries file content ([`CONTENT_ARGUMENTS`]) replaced by `{length, sha256}`.

use crate::error::{ErrorCode, Result, WsfsError};
use crate::tools::kind::FileKind;
use serde::Serialize;
use std::fs::File;
use std::io::{self, Write};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Longest line written, newline included. Paths are at most 4096 bytes (a few times that once
/// JSON-escaped), so only a call that changes many files can reach it.
pub const MAX_LINE_BYTES: usize = 64 * 1024;

/// Mode of a log file wsfs creates: it names every path the agent touched.
const LOG_MODE: u32 = 0o600;

/// An open audit log.
#[derive(Debug)]
pub struct AuditLog {
    file: File,
    /// Absolute, symlinks resolved.
    path: PathBuf,
    dev: u64,
    ino: u64,
}

impl AuditLog {
    /// Opens (creating it and its parent directories if missing) the log at `raw`: `~` is
    /// expanded and a relative path is taken from the current directory, as for the root.
    pub fn open(raw: &str) -> Result<AuditLog> {
        let path = crate::paths::absolute_path(raw, "policy.audit_log")?;
        let shown = format!("policy.audit_log {}", path.display());
        let fail = |e: io::Error| {
            let e = WsfsError::from_io(&e, &shown);
            WsfsError::new(
                e.code,
                format!("{}; the workspace was not opened", e.message),
            )
        };
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(fail)?;
        }
        let file = std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .mode(LOG_MODE)
            // Never block on a FIFO or take a terminal; the log must be a regular file.
            .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY | libc::O_CLOEXEC)
            .open(&path)
            .map_err(fail)?;
        let meta = file.metadata().map_err(fail)?;
        if !meta.is_file() {
            return Err(WsfsError::new(
                ErrorCode::NotAFile,
                format!("{shown} is not a regular file; the workspace was not opened"),
            ));
        }
        let path = path.canonicalize().map_err(fail)?;
        Ok(AuditLog {
            file,
            path,
            dev: meta.dev(),
            ino: meta.ino(),
        })
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Whether the file with this device and inode is the log.
    pub fn is_file(&self, dev: u64, ino: u64) -> bool {
        self.dev == dev && self.ino == ino
    }

    /// The log's (device, inode).
    pub fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// Appends one line with one `write(2)`, then fsyncs it. A short write (full disk) is
    /// ended with a newline, so the next line starts whole, and reported as an error.
    fn append(&self, line: &[u8]) -> io::Result<()> {
        let written = loop {
            match (&self.file).write(line) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                other => break other?,
            }
        };
        if written < line.len() {
            let _ = (&self.file).write(b"\n");
            return Err(io::Error::new(
                io::ErrorKind::StorageFull,
                format!("only {written} of {} bytes were written", line.len()),
            ));
        }
        self.file.sync_data()
    }
}

/// The argument names whose values carry file content (or text taken from files, or a
/// command line that may write it), at any depth of a call's arguments, native or a
/// profile's: `audit_arguments` records each as `{length, sha256}`, never as it is. Complete by test: `abi::specs`' test walks every
/// property of every tool's schema (native and every profile's) and fails on a string
/// property that is in neither this list nor its list of arguments that are not content.
pub const CONTENT_ARGUMENTS: &[&str] = &[
    "content",
    "new_text",
    "old_text",
    "patch",
    "diff_text",
    "replace_with",
    "expected_text",
    "replacement_text",
    // Text that is often taken from files, or writes them: a search, a command line.
    "query",
    "command",
];

/// A call's arguments as `audit_arguments` records them: the JSON with every
/// [`CONTENT_ARGUMENTS`] value replaced by `{length, sha256}` (of the string, or of the JSON
/// text of any other value), and `content` for a content buffer passed beside the JSON.
/// Arguments that are not a JSON object are recorded as `{"unparsed": {length, sha256}}`.
pub fn redacted_arguments(args_json: &str, buffer: Option<&[u8]>) -> serde_json::Value {
    use serde_json::Value;
    let mut args = match serde_json::from_str::<Value>(args_json) {
        Ok(Value::Object(map)) => Value::Object(map),
        _ => serde_json::json!({ "unparsed": digest(args_json.as_bytes()) }),
    };
    redact(&mut args);
    if let (Some(buffer), Value::Object(map)) = (buffer, &mut args) {
        map.insert("content".into(), digest(buffer));
    }
    args
}

fn redact(value: &mut serde_json::Value) {
    use serde_json::Value;
    match value {
        Value::Object(map) => {
            for (key, v) in map.iter_mut() {
                if CONTENT_ARGUMENTS.contains(&key.as_str()) {
                    let hashed = match &*v {
                        Value::String(s) => digest(s.as_bytes()),
                        other => digest(other.to_string().as_bytes()),
                    };
                    *v = hashed;
                } else {
                    redact(v);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}

fn digest(bytes: &[u8]) -> serde_json::Value {
    serde_json::json!({
        "length": bytes.len(),
        "sha256": crate::lines::sha256_hex(bytes),
    })
}

/// A file or directory a call changed, as the log records it.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// Workspace-relative, as resolved (what was changed, not the name the model used).
    pub path: String,
    /// A file or a directory.
    #[serde(rename = "type")]
    pub kind: FileKind,
    pub existed_before: bool,
    /// `null` when it did not exist, or existed but could not be read (see `existed_before`).
    pub sha256_before: Option<String>,
    /// `null` for a directory, or a file the call removed.
    pub sha256_after: Option<String>,
}

impl Change {
    pub fn dir(path: String) -> Change {
        Change {
            path,
            kind: FileKind::Dir,
            existed_before: false,
            sha256_before: None,
            sha256_after: None,
        }
    }
}

/// What the audit log records of one call while it runs.
#[derive(Debug, Default)]
pub struct Notes {
    pub paths: Vec<String>,
    pub changes: Vec<Change>,
}

/// One line of the log.
#[derive(Serialize)]
struct Line<'a> {
    time: String,
    tool: &'a str,
    paths: &'a [String],
    outcome: &'a str,
    bytes_in: u64,
    bytes_out: u64,
    duration_us: u64,
    changes: &'a [Change],
    #[serde(skip_serializing_if = "is_zero")]
    changes_omitted: usize,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    paths_cut: bool,
    /// With `audit_arguments`: the arguments, content replaced (see [`redacted_arguments`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    arguments: Option<&'a serde_json::Value>,
    /// The arguments did not fit in the line and were left out.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    arguments_omitted: bool,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// The facts of a finished call that the line reports besides its notes.
pub struct Finished<'a> {
    pub tool: &'a str,
    pub started: SystemTime,
    pub duration: Duration,
    pub outcome: &'a str,
    pub bytes_in: u64,
    pub bytes_out: u64,
    /// With `audit_arguments`: [`redacted_arguments`].
    pub arguments: Option<&'a serde_json::Value>,
}

/// Writes the line for a finished call. Errors are the log's own (it could not be written).
pub fn record(log: &AuditLog, call: &Finished<'_>, notes: &Notes) -> io::Result<()> {
    let line = render(call, notes);
    log.append(&line)
}

/// The line, newline included, at most `MAX_LINE_BYTES`: arguments that do not fit are left
/// out first, then changes are dropped from the end (and counted), then paths are cut short.
fn render(call: &Finished<'_>, notes: &Notes) -> Vec<u8> {
    let time = jiff::Timestamp::try_from(call.started)
        .map_or_else(|_| "1970-01-01T00:00:00Z".to_string(), |t| t.to_string());
    let mut paths: Vec<String> = notes.paths.clone();
    let mut kept = notes.changes.len();
    let mut paths_cut = false;
    let mut arguments = call.arguments;
    loop {
        let line = Line {
            time: time.clone(),
            tool: call.tool,
            paths: &paths,
            outcome: call.outcome,
            bytes_in: call.bytes_in,
            bytes_out: call.bytes_out,
            duration_us: u64::try_from(call.duration.as_micros()).unwrap_or(u64::MAX),
            changes: &notes.changes[..kept],
            changes_omitted: notes.changes.len() - kept,
            paths_cut,
            arguments,
            arguments_omitted: arguments.is_none() && call.arguments.is_some(),
        };
        let mut bytes = serde_json::to_vec(&line).unwrap_or_default();
        bytes.push(b'\n');
        if bytes.len() <= MAX_LINE_BYTES || (kept == 0 && paths_cut) {
            return bytes;
        }
        if arguments.is_some() {
            arguments = None;
        } else if kept > 0 {
            kept = kept.saturating_sub((kept / 2).max(1));
        } else {
            paths = paths.iter().take(16).map(|p| cut(p, 256)).collect();
            paths_cut = true;
        }
    }
}

/// `s` cut to at most `max` bytes at a character boundary, marked with `…`.
fn cut(s: &str, max: usize) -> String {
    if s.len() <= max {
        return s.to_string();
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// The message for a call whose line could not be written.
pub fn failure_note(e: &io::Error) -> String {
    format!("the workspace's audit log could not be written ({e})")
}

/// The error replacing a result that changed nothing when its line could not be written: the
/// host asked for every call to be logged, so an unlogged result is withheld.
pub fn withheld(e: &io::Error) -> WsfsError {
    WsfsError::new(
        ErrorCode::IoError,
        format!(
            "{}, so the result is withheld; nothing was changed. Tell the user: the host's \
             audit log needs attention",
            failure_note(e)
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lines::sha256_hex;

    fn finished<'a>(tool: &'a str) -> Finished<'a> {
        Finished {
            tool,
            started: SystemTime::UNIX_EPOCH + Duration::from_millis(1_700_000_000_123),
            duration: Duration::from_micros(42),
            outcome: "ok",
            bytes_in: 10,
            bytes_out: 20,
            arguments: None,
        }
    }

    #[test]
    fn arguments_keep_no_content() {
        let args = r#"{"path":"a.txt","content":"SECRET","files":[{"path":"b","patch":"@@ SECRET"}],"hunks":[{"replace_with":["x"]}],"max_lines":3}"#;
        let v = redacted_arguments(args, Some(b"BUFFER"));
        let text = v.to_string();
        assert!(
            !text.contains("SECRET") && !text.contains("BUFFER"),
            "{text}"
        );
        assert_eq!(v["path"], "a.txt");
        assert_eq!(v["max_lines"], 3);
        assert_eq!(v["content"]["length"], 6);
        assert_eq!(v["content"]["sha256"], sha256_hex(b"BUFFER"));
        assert_eq!(v["files"][0]["path"], "b");
        assert_eq!(v["files"][0]["patch"]["sha256"], sha256_hex(b"@@ SECRET"));
        assert_eq!(v["hunks"][0]["replace_with"]["length"], 5);
        let v = redacted_arguments("not json SECRET", None);
        assert_eq!(v["unparsed"]["length"], 15);
        assert!(!v.to_string().contains("SECRET"));
        // Arguments too long for a line are left out, and said so.
        let long = serde_json::json!({"paths": vec!["p".repeat(100); 1000]});
        let call = Finished {
            arguments: Some(&long),
            ..finished("read_file")
        };
        let line = render(&call, &Notes::default());
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert!(v.get("arguments").is_none());
        assert_eq!(v["arguments_omitted"], true);
    }

    #[test]
    fn a_line_has_every_field_and_rfc3339_utc_time() {
        let notes = Notes {
            paths: vec!["a.txt".into()],
            changes: vec![Change::dir("d".into())],
        };
        let line = render(&finished("write_file"), &notes);
        assert_eq!(line.last(), Some(&b'\n'));
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["time"], "2023-11-14T22:13:20.123Z");
        assert_eq!(v["tool"], "write_file");
        assert_eq!(v["paths"], serde_json::json!(["a.txt"]));
        assert_eq!(v["outcome"], "ok");
        assert_eq!(
            (v["bytes_in"].as_u64(), v["bytes_out"].as_u64()),
            (Some(10), Some(20))
        );
        assert_eq!(v["duration_us"], 42);
        assert_eq!(v["changes"][0]["type"], "dir");
        assert!(v.get("changes_omitted").is_none());
    }

    #[test]
    fn lines_are_bounded() {
        let long = "é".repeat(4000);
        let change = Change {
            path: long.clone(),
            kind: FileKind::File,
            existed_before: true,
            sha256_before: Some(sha256_hex(b"x")),
            sha256_after: Some(sha256_hex(b"y")),
        };
        let notes = Notes {
            paths: vec![long.clone(); 100],
            changes: vec![change; 1000],
        };
        let line = render(&finished("apply_patch"), &notes);
        assert!(line.len() <= MAX_LINE_BYTES, "{}", line.len());
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        assert_eq!(v["changes_omitted"], 1000);
        assert_eq!(v["paths_cut"], true);
        let few = Notes {
            paths: vec!["a".into()],
            changes: notes.changes[..30].to_vec(),
        };
        let line = render(&finished("apply_patch"), &few);
        let v: serde_json::Value = serde_json::from_slice(&line).unwrap();
        let kept = v["changes"].as_array().unwrap().len();
        assert!(kept > 0 && kept < 30, "{kept}");
        assert_eq!(v["changes_omitted"].as_u64().unwrap() as usize + kept, 30);
    }
}
