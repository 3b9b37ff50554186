//! inventory: an example Wasm tool that reads and writes the workspace (capability
//! `filesystem: write`). It lists the workspace's top directory through `/workspace`, writes
//! the names, sorted, one per line, to INVENTORY.txt (created or replaced atomically when the
//! file is closed), and returns `{"written": "INVENTORY.txt", "entries": N}`.
//!
//! `/workspace` is not a host directory: every listing, open and write goes through wsfs's
//! resolver and the workspace's policy, so a `deny_write` rule on INVENTORY.txt or a read-only
//! workspace makes it fail with the workspace's refusal.

use std::io::Write;

const OUT: &str = "INVENTORY.txt";

/// A JSON string's content: quotes, backslashes and control characters escaped.
fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out
}

/// Writes the tool's error on stdout and exits with status 1.
fn fail(what: &str, e: std::io::Error) -> ! {
    let code = match e.kind() {
        std::io::ErrorKind::PermissionDenied => "permission_denied",
        std::io::ErrorKind::NotFound => "path_not_found",
        _ => "io_error",
    };
    print!(
        r#"{{"error":{{"code":"{code}","message":"{}"}}}}"#,
        escape(&format!("inventory could not {what}: {e}"))
    );
    std::process::exit(1);
}

fn main() {
    let entries = std::fs::read_dir("/workspace").unwrap_or_else(|e| fail("list /workspace", e));
    let mut names = Vec::new();
    for entry in entries {
        let entry = entry.unwrap_or_else(|e| fail("list /workspace", e));
        names.push(entry.file_name().to_string_lossy().into_owned());
    }
    names.sort();
    let mut text = String::new();
    for name in &names {
        text.push_str(name);
        text.push('\n');
    }
    let path = format!("/workspace/{OUT}");
    let mut file = std::fs::File::create(&path).unwrap_or_else(|e| fail("create INVENTORY.txt", e));
    file.write_all(text.as_bytes())
        .unwrap_or_else(|e| fail("write INVENTORY.txt", e));
    // Closing commits the file; a refusal then is the call's error (the host reports it).
    drop(file);
    print!(r#"{{"written":"{OUT}","entries":{}}}"#, names.len());
}
