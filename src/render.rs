//! The `text` a model sees for each successful tool result.

use crate::tools::edit::EditOutput;
use crate::tools::list::ListOutput;
use crate::tools::read::ReadOutput;
use crate::tools::write::{AppendOutput, WriteOutput};
use std::borrow::Cow;
use std::fmt::Write;

/// The file's content, borrowed unless a truncation notice is added.
pub fn read(out: &ReadOutput) -> Cow<'_, str> {
    match read_notice(out) {
        None => Cow::Borrowed(&out.content),
        Some(notice) => Cow::Owned(out.content.clone() + &notice),
    }
}

/// What follows the content in a truncated read's text: a newline unless the content ends
/// with one, then the notice. `None` when the read was complete.
pub fn read_notice(out: &ReadOutput) -> Option<String> {
    if !out.truncated {
        return None;
    }
    let newline = if out.content.ends_with('\n') {
        ""
    } else {
        "\n"
    };
    Some(format!(
        "{newline}[truncated: showing the first {} of {} bytes; max_read_bytes is {}]",
        out.bytes, out.total_bytes, out.limit
    ))
}

fn bytes(n: u64) -> String {
    if n == 1 {
        "1 byte".to_string()
    } else {
        format!("{n} bytes")
    }
}

pub fn write(out: &WriteOutput) -> String {
    let how = if out.created { "created" } else { "overwrote" };
    format!("{how} {} ({})", out.path, bytes(out.bytes_written))
}

pub fn append(out: &AppendOutput) -> String {
    format!(
        "appended {} to {} (now {})",
        bytes(out.bytes_appended),
        out.path,
        bytes(out.size)
    )
}

pub fn list(out: &ListOutput) -> String {
    let noun = if out.total == 1 { "entry" } else { "entries" };
    let mut text = format!("{} ({} {noun})\n", out.path, out.total);
    for e in &out.entries {
        let _ = match e.kind {
            "dir" => writeln!(text, "{}/", e.name),
            "symlink" => writeln!(text, "{}@", e.name),
            "file" => writeln!(text, "{}  {}", e.name, bytes(e.size)),
            _ => writeln!(text, "{}  (special file)", e.name),
        };
    }
    if out.truncated {
        let _ = write!(
            text,
            "[truncated: showing the first {} of {} entries]",
            out.entries.len(),
            out.total
        );
    }
    text.trim_end().to_string()
}

pub fn edit(out: &EditOutput) -> String {
    let noun = if out.replaced == 1 {
        "occurrence"
    } else {
        "occurrences"
    };
    format!("replaced {} {noun} in {}", out.replaced, out.path)
}
