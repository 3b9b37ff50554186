//! ask_model: an example Wasm tool with the `model_access` capability. It reaches a model only
//! through the host's model gateway (the `wsfs` import `model_generate`), never a network.
//! Its arguments (`{"prompt": "..."}`, checked by the host) are the gateway request as they
//! are; the gateway's JSON answer is the result. When the host refuses (no capability) or the
//! gateway fails, the host leaves `{"error": {"code", "message"}}` pending: the tool writes it
//! on stdout and exits with status 1, so the caller gets that code (`capability_denied`,
//! `gateway_error`, `timeout`, ...).

use std::io::{Read, Write};

// The host functions (docs/TOOL_AUTHORING.md, "The host functions"): pointers and lengths are
// offsets and sizes in this module's own linear memory.
#[link(wasm_import_module = "wsfs")]
extern "C" {
    /// Sends `len` bytes at `ptr` (a JSON object) to the model gateway; 0 or an error status.
    fn model_generate(ptr: *const u8, len: usize) -> i32;
    /// The length of the response the last call left pending.
    fn response_len() -> usize;
    /// Copies up to `len` bytes of the pending response to `ptr`; returns how many.
    fn response_read(ptr: *mut u8, len: usize) -> usize;
}

fn main() {
    let mut request = Vec::new();
    if std::io::stdin().read_to_end(&mut request).is_err() {
        print!(r#"{{"error":{{"code":"io_error","message":"ask_model could not read its arguments"}}}}"#);
        std::process::exit(1);
    }
    // SAFETY: the host reads `request.len()` bytes of our memory at `request.as_ptr()`, a
    // live buffer of that length, and keeps no reference to it after the call.
    let status = unsafe { model_generate(request.as_ptr(), request.len()) };
    // SAFETY: no arguments; the host answers from its own state.
    let len = unsafe { response_len() };
    let mut response = vec![0u8; len];
    // SAFETY: the host writes at most `response.len()` bytes into this buffer, which we own.
    let copied = unsafe { response_read(response.as_mut_ptr(), response.len()) };
    response.truncate(copied);
    let _ = std::io::stdout().write_all(&response);
    if status != 0 {
        std::process::exit(1);
    }
}
