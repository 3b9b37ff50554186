//! The C ABI. This module only converts pointers and strings and catches panics; the work is
//! done in [`crate::api`]. It is the only module with `unsafe` code.
//!
//! Every function returning `char *` returns a NUL-terminated UTF-8 JSON string that the
//! caller owns and must free exactly once with `wsfs_string_free`; none returns NULL. Every
//! function is thread-safe.

// The C boundary cannot be written without raw pointers; every block says why it is sound.
#![allow(unsafe_code)]

use crate::api;
use crate::approval::{ApprovalHandler, Verdict};
use crate::control;
use crate::envelope::{Envelope, FRONT_ROOM};
#[cfg(feature = "wasm")]
use crate::error::ErrorCode;
use crate::session::{self, SessionOp};
#[cfg(feature = "wasm")]
use crate::wasm::host::gateway::{GatewayFailure, ModelGateway};
use std::ffi::{c_char, c_void, CStr};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
#[cfg(feature = "wasm")]
use std::time::Instant;

/// Runs `body`, turning a panic into an `io_error` envelope, and hands the result to C.
fn guard<R: Into<Envelope>>(body: impl FnOnce() -> R) -> *mut c_char {
    guard_sized(body).0
}

/// [`guard`], also returning the length of the result (without its NUL).
fn guard_sized<R: Into<Envelope>>(body: impl FnOnce() -> R) -> (*mut c_char, usize) {
    let result = catch_unwind(AssertUnwindSafe(|| body().into()))
        .unwrap_or_else(|_| Envelope::from(api::internal_error()));
    into_c_string(result)
}

/// The result as a C string and its length, without scanning it for NUL again: an
/// [`Envelope`] never holds one (strings become envelopes through `From<String>`, which scans
/// them; a read's content was scanned while it was checked as text).
///
/// The string is the envelope's own buffer, neither copied nor shrunk: the C string starts
/// [`FRONT_ROOM`] bytes into it, and those bytes hold the buffer's capacity, which is all
/// [`wsfs_string_free`] needs to free it (no `strlen` over a large result, as
/// `CString::from_raw` would make). A buffer with room for the NUL (a read's) is not grown.
fn into_c_string(result: Envelope) -> (*mut c_char, usize) {
    let mut buf = result.into_framed();
    let len = buf.len() - FRONT_ROOM;
    debug_assert!(memchr::memchr(0, &buf[FRONT_ROOM..]).is_none());
    buf.push(0);
    let capacity = buf.capacity() as u64;
    buf[..FRONT_ROOM].copy_from_slice(&capacity.to_ne_bytes());
    let mut buf = std::mem::ManuallyDrop::new(buf);
    // SAFETY: the buffer is at least FRONT_ROOM + 1 bytes long, so the pointer stays inside it.
    let s = unsafe { buf.as_mut_ptr().add(FRONT_ROOM) };
    (s.cast::<c_char>(), len)
}

/// Borrows a C string argument as UTF-8, or returns the error envelope naming `param`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that stays valid for the call.
unsafe fn borrow_str<'a>(ptr: *const c_char, param: &str) -> Result<&'a str, String> {
    if ptr.is_null() {
        return Err(api::bad_input(param, "is NULL"));
    }
    // SAFETY: non-NULL, and the caller guarantees a NUL-terminated string valid for the call.
    let bytes = unsafe { CStr::from_ptr(ptr) }.to_bytes();
    std::str::from_utf8(bytes).map_err(|_| api::bad_input(param, "is not valid UTF-8"))
}

/// [`borrow_str`] for an optional argument: NULL is `None`.
///
/// # Safety
/// `ptr` must be NULL or point to a NUL-terminated string that stays valid for the call.
unsafe fn borrow_opt_str<'a>(ptr: *const c_char, param: &str) -> Result<Option<&'a str>, String> {
    if ptr.is_null() {
        return Ok(None);
    }
    // SAFETY: non-NULL, forwarded from this function's contract.
    unsafe { borrow_str(ptr, param) }.map(Some)
}

/// The C ABI's version: a host compiled against this header checks it against the `"abi"` of
/// `wsfs_version()` at run time (the library it loads may be another build). It changes when a
/// function's signature or ownership rule changes; `WSFS_VERSION` is the release's version.
pub const WSFS_ABI_VERSION: u32 = 1;

/// Returns `{"version":"x.y.z","abi":N}`: the release (`WSFS_VERSION` in the header this library
/// was built with) and the C ABI (`WSFS_ABI_VERSION`). The caller frees the result with
/// `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_version() -> *mut c_char {
    guard(api::version)
}

/// Returns the tool specs: a JSON array of `{"name","description","parameters"}`, where
/// `parameters` is a JSON Schema object. The caller frees the result with `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_tool_specs() -> *mut c_char {
    guard(api::tool_specs)
}

/// Returns what a host tells the model once, beside the tool specs (in a system prompt, or as
/// an MCP server's instructions): how every path argument is read. Each spec's description
/// keeps only the clause "Paths are relative to the workspace root."; this is the rest. Plain
/// text, not JSON. The caller frees the result with `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_tool_instructions() -> *mut c_char {
    guard(api::tool_instructions)
}

/// Opens a workspace. `config_json` is `{"root": str, "create_root": bool = false,
/// "restrict_to_workspace": bool = true,
/// "limits": {"max_read_bytes", "max_write_bytes", "max_list_entries", "operation_timeout_ms"},
/// "state_dir": str (optional; outside the root), "policy": {"writes_enabled": bool = true,
/// "deny_read": [glob] = [], "deny_write": [glob], "audit_log": path, "audit_arguments": bool =
/// false (audit lines record the arguments, content as {length, sha256}), "allow_tools": [name],
/// "deny_tools": [name] = [], "exec_enabled": bool = false, "shell_enabled": bool = false,
/// "exec_require_sandbox": bool = true, "exec_network": bool = false, "exec_read_paths":
/// [absolute path or "auto"] = [], "exec_env_allow": [name or prefix*] = [], "exec_timeout_sec":
/// 1..86400 = 60}, "profile": str = "wsfs"}`. `profile` chooses the tools as one host expects
/// them (see docs/profiles.md): "wsfs" (the native tools), "miniclaw",
/// "filesystem-tool", "agent-base" or "capability-plan"; an unknown name is
/// `invalid_arguments` listing the known ones. Every tool call on a workspace with another
/// profile than "wsfs" takes that profile's tool and argument names and returns that
/// profile's envelope instead of the native one (the typed functions below included:
/// `wsfs_read_file` runs the profile's `read_file`, if it has one); `wsfs_workspace_tool_specs`
/// lists its tools. A root that does not exist is `path_not_found` naming it, unless
/// `create_root` is true (then it is made with its parents; a failure says so); a root this
/// process may not list or enter is `permission_denied` naming the permission. Opening also undoes
/// or finishes any multi-file `apply_patch` commit a crash interrupted. `writes_enabled:
/// false` makes every changing tool return `writes_disabled`; the deny lists are
/// gitignore-style globs matched on the resolved workspace-relative path (`policy_denied`;
/// `deny_write` defaults to everything under the root's `.git`); `audit_log` gets one JSON
/// line per call, fsynced before the call returns, and is unreachable by the tools;
/// `allow_tools` / `deny_tools` name the only tools offered / tools not offered (by the
/// profile's names, or under "wsfs" the native and Wasm tools' names; a name it has not is
/// `invalid_arguments`), whose calls are `policy_denied`.
/// `exec_enabled` turns on the developer tools (`workspace_info`, `git_status`, `git_diff`,
/// `git_commit`, `run_tests`, `run_lint`, `typecheck`, `safe_shell`; `shell` needs
/// `shell_enabled` too), which run programs under a kernel sandbox confined to the workspace
/// (docs/devtools.md); off, they return `exec_disabled`.
/// `exec_enabled` with `deny_read` rules, `deny_write` rules other than the default one on
/// `.git`, or an audit log inside the workspace is `invalid_arguments`: programs could not
/// honour them.
/// `"wasm_tools": [folder]` (host paths) loads Wasm tools, each a folder with `manifest.json`
/// beside `module.wasm` or `module.wat`, or a folder of such folders; `"wasm_policy":
/// {"timeout_ms", "memory_mb", "fuel", "allow_direct_network" = false, "allow_model_access" =
/// true, "filesystem": "none"|"read"|"write", "allowed_env": [name], "engine": "wasmi" |
/// "wasmtime"}` is the most any of them may have and the engine that runs them (`wasmtime`
/// only in a library built with the cargo feature `wasmtime`; otherwise `feature_not_built`). A tool that does not load (`manifest_invalid`, `module_mismatch`,
/// `capability_denied`) fails the open. Loaded tools are called by name like the built-in
/// ones (see `wsfs_workspace_tool_specs`). On success `data.workspace` is the handle (never
/// 0), `data.root` the absolute root with symlinks resolved, `data.policy` the effective
/// policy, `data.profile` the profile and `data.wasm_tools` the names of the loaded Wasm tools
/// (offered only under the "wsfs" profile; another profile gets a warning). The caller frees
/// the result with
/// `wsfs_string_free`.
///
/// # Safety
/// `config_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_workspace_open(config_json: *const c_char) -> *mut c_char {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        match unsafe { borrow_str(config_json, "config_json") } {
            Ok(config) => api::workspace_open(config),
            Err(envelope) => envelope,
        }
    })
}

/// Returns the tools workspace `workspace` offers, as it offers them, as an envelope whose
/// `data` is `{"profile", "tools"}`: `tools` is an array like `wsfs_tool_specs`' under the
/// profile's tool names, descriptions and schemas. Under "wsfs" these are the built-in tools
/// followed by the Wasm tools the workspace loaded (its config's `wasm_tools`, each with its
/// manifest's description and input schema); another profile offers no Wasm tools. Left out
/// are the tools the policy refuses whatever the arguments: every changing tool when
/// `writes_enabled` is false, the developer tools while `exec_enabled` (for `shell`, also
/// `shell_enabled`) is off, and what `allow_tools` / `deny_tools` exclude. Each `parameters` is a JSON
/// Schema object. An unknown or closed handle is `invalid_workspace`. The result is the
/// caller's, freed once with `wsfs_string_free`; the function is thread-safe (it only reads
/// the workspace, and may run while calls on it are in flight).
#[no_mangle]
pub extern "C" fn wsfs_workspace_tool_specs(workspace: u64) -> *mut c_char {
    guard(|| api::workspace_tool_specs(workspace))
}

/// Closes a workspace handle. Calls in flight on it finish normally; later calls get
/// `invalid_workspace`. Closing an unknown or closed handle returns `invalid_workspace`.
/// The caller frees the result with `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_workspace_close(workspace: u64) -> *mut c_char {
    guard(|| api::workspace_close(workspace))
}

/// The one entry of every tool function (each public one is a shim over it): borrows the
/// inputs, runs the call and hands out the envelope, storing its length in `*result_len`
/// when that is not NULL. A NULL `content` is no buffer.
///
/// # Safety
/// `tool`, `args_json` and `options_json` must be NULL or NUL-terminated strings valid for the
/// duration of the call; `content` NULL or `content_len` readable bytes valid for the call;
/// `result_len` NULL or a writable `size_t`.
unsafe fn call_entry(
    workspace: u64,
    tool: *const c_char,
    args_json: *const c_char,
    options_json: *const c_char,
    content: *const c_char,
    content_len: usize,
    result_len: *mut usize,
) -> *mut c_char {
    let (result, len) = guard_sized(|| -> Envelope {
        let content = if content.is_null() {
            None
        } else if content_len > isize::MAX as usize {
            return api::bad_input("content_len", "is larger than any buffer can be").into();
        } else {
            // SAFETY: non-NULL, and the caller guarantees `content_len` readable bytes that
            // stay valid and unmodified for the duration of the call.
            Some(unsafe { std::slice::from_raw_parts(content.cast::<u8>(), content_len) })
        };
        // SAFETY: forwarded from this function's contract.
        let tool = match unsafe { borrow_str(tool, "tool_name") } {
            Ok(tool) => tool,
            Err(envelope) => return envelope.into(),
        };
        // SAFETY: forwarded from this function's contract.
        let args = match unsafe { borrow_str(args_json, "args_json") } {
            Ok(args) => args,
            Err(envelope) => return envelope.into(),
        };
        // SAFETY: forwarded from this function's contract.
        let options = match unsafe { borrow_opt_str(options_json, "options_json") } {
            Ok(options) => options,
            Err(envelope) => return envelope.into(),
        };
        api::call_envelope(workspace, tool, args, options, content)
    });
    if !result_len.is_null() {
        // SAFETY: non-NULL, and the caller guarantees it points to a writable size_t.
        unsafe { result_len.write(len) };
    }
    result
}

/// [`call_entry`] for a named tool with only its arguments.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
unsafe fn call_named(
    workspace: u64,
    tool: &std::ffi::CStr,
    args_json: *const c_char,
) -> *mut c_char {
    let null = std::ptr::null();
    // SAFETY: a static C string, and `args_json` is forwarded from this function's contract.
    unsafe {
        call_entry(
            workspace,
            tool.as_ptr(),
            args_json,
            null,
            null,
            0,
            std::ptr::null_mut(),
        )
    }
}

/// `read_file {path, start_line?, max_lines? = 2000, line_numbers? = false}` -> `data: {path,
/// content, bytes, total_bytes, truncated}`. With only `path`, the whole file up to
/// `max_read_bytes`; a cut read ends at a line boundary (unless line 1 alone is longer than the
/// limit), adds `next_start_line`, and its `text` ends with a notice naming that next call. With `start_line`, `max_lines` (at most 10000) or `line_numbers`, a range of
/// lines (still within `max_read_bytes`, cut at a line boundary), and `data` adds `start_line`,
/// `end_line`, `total_lines` (when the file was scanned whole), `next_start_line` (absent at the
/// end) and `sha256` (of the whole file, lowercase hex, when it is at most `max_write_bytes`);
/// `text` ends with a hint such as `[lines 1-2000 of 9120; continue with start_line=2001]`
/// (repeating `max_lines` and `line_numbers` when the call gave them).
/// A `start_line` past the end is `line_out_of_range`. `encoding_errors: "replace"` reads a
/// file that is not UTF-8 with U+FFFD for each invalid sequence and adds `encoding_errors:
/// true` to `data` (the default, "strict", refuses it; a NUL byte is binary either way).
/// This returns the full envelope, which carries the content twice (`data.content` and
/// `text`); to read without that cost, call `wsfs_call_with_options(workspace, "read_file",
/// args_json, "{\"output\":\"data_raw\"}")`: the content then follows the JSON after one
/// newline, unescaped.
/// The caller frees the result with `wsfs_string_free`.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_read_file(workspace: u64, args_json: *const c_char) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { call_named(workspace, c"read_file", args_json) }
}

/// `write_file {path, content, mode = "overwrite"}` -> `data: {path, bytes_written, created,
/// existed_before, mode}` (`mode`: the mode used). `mode` is "overwrite" (create or replace atomically), "create" (fails with
/// `file_exists` if the name is taken, decided by an exclusive link) or "append".
/// The caller frees the result with `wsfs_string_free`.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_write_file(workspace: u64, args_json: *const c_char) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { call_named(workspace, c"write_file", args_json) }
}

/// `append_file {path, content}` -> `data: {path, bytes_appended, size}`.
/// The caller frees the result with `wsfs_string_free`.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_append_file(workspace: u64, args_json: *const c_char) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { call_named(workspace, c"append_file", args_json) }
}

/// `list_dir {path = ".", depth = 1, include_hidden = true, max_entries?, respect_gitignore?
/// (default: true for a tree, false for one level)}` -> `data: {path, entries: [{name, type,
/// size}], total, truncated, hidden?, ignored?}` (`hidden` and `ignored`: what the filters left
/// out); with `depth > 1` also `tree: {name, type, size?, children?, truncated?, listed?}` (then
/// `entries` is empty and `total` counts the tree's entries; `listed: false` marks a directory
/// whose entries are not in the tree, such as one at the depth limit). The caller frees the
/// result with `wsfs_string_free`.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_list_dir(workspace: u64, args_json: *const c_char) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { call_named(workspace, c"list_dir", args_json) }
}

/// `edit_file {path, old_text, new_text, replace_all = false}` -> `data: {path, matches,
/// replaced, original_size, new_size, lines_changed, first_changed_line, last_changed_line}`
/// (sizes in bytes; the lines of the original the replaced text touched; the lines of the new
/// file from the first replacement to the last, 1-based). An `old_text` that differs from the
/// file only in line endings is matched with the file's (which it keeps), with a warning
/// saying so. The caller frees the result with `wsfs_string_free`.
///
/// # Safety
/// `args_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_edit_file(workspace: u64, args_json: *const c_char) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { call_named(workspace, c"edit_file", args_json) }
}

/// Runs the tool named `tool_name` (`unknown_tool` if there is none): any tool that
/// `wsfs_tool_specs` lists, the five above and those without a function of their own
/// (`get_path_info`, `find_files`, `search_text`, `apply_patch`, `create_directory`,
/// `move_file`, `delete_file`, and the developer tools from `workspace_info` to `shell`, which
/// the policy's `exec_enabled` turns on). Each tool's arguments are its spec's JSON Schema; its
/// `data` is described in docs/tools.md. The caller frees the result with
/// `wsfs_string_free`.
///
/// # Safety
/// `tool_name` and `args_json` must be NULL or NUL-terminated strings valid for the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_call(
    workspace: u64,
    tool_name: *const c_char,
    args_json: *const c_char,
) -> *mut c_char {
    let null = std::ptr::null();
    // SAFETY: forwarded from this function's contract.
    unsafe {
        call_entry(
            workspace,
            tool_name,
            args_json,
            null,
            null,
            0,
            std::ptr::null_mut(),
        )
    }
}

/// Like `wsfs_call`, with `options_json` (NULL for none): `{"timeout_ms": N, "cancel_token": T,
/// "output": "full"|"text"|"data"|"text_raw"|"data_raw", "metrics": bool}`. `metrics` (default:
/// true but in the raw modes; a profile's envelope only with true) adds the call's figures (tool,
/// path, duration_us, lines and bytes read ...; docs/c-abi.md, "Metrics"). `timeout_ms` can only shorten the
/// workspace's `operation_timeout_ms` (the developer tools': `exec_timeout_sec`; 0 has
/// already expired); `cancel_token` comes from
/// `wsfs_cancel_token_new`; `output` omits `data` ("text") or `text` ("data") from a success
/// envelope. The raw modes keep large strings out of the JSON: on success, "text_raw" returns
/// `{"ok":true,"warnings":[...]}`, a newline, then the text unescaped; "data_raw" returns the
/// "data" envelope with `read_file`'s `data.content` left out and the content after a newline
/// (other tools: as "data", no newline). The JSON part never contains a raw newline and the
/// raw part never a NUL byte; failures are always plain JSON envelopes. A call stopped by its deadline
/// or token returns `timeout` or `cancelled` and has changed nothing; a call that passed its
/// commit point completes and returns success. The caller frees the result with
/// `wsfs_string_free`.
///
/// # Safety
/// Each pointer must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_call_with_options(
    workspace: u64,
    tool_name: *const c_char,
    args_json: *const c_char,
    options_json: *const c_char,
) -> *mut c_char {
    let (content, result_len) = (std::ptr::null(), std::ptr::null_mut());
    // SAFETY: forwarded from this function's contract.
    unsafe {
        call_entry(
            workspace,
            tool_name,
            args_json,
            options_json,
            content,
            0,
            result_len,
        )
    }
}

/// Like `wsfs_call_with_options`, for `write_file` and `append_file`, with the content passed
/// as a buffer of `content_len` bytes (UTF-8, need not be NUL-terminated) instead of as the
/// `content` field of `args_json`, which must then be absent: large content is neither
/// escaped by the caller nor parsed by the library. A NULL `content` means no buffer (then
/// `args_json` carries `content` as usual). The buffer is only read during the call. Other
/// tools refuse a buffer with `invalid_arguments`. The caller frees the result with
/// `wsfs_string_free`.
///
/// # Safety
/// `tool_name`, `args_json` and `options_json` must be NULL or NUL-terminated strings valid
/// for the duration of the call; `content` must be NULL or point to `content_len` readable
/// bytes valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_call_with_content(
    workspace: u64,
    tool_name: *const c_char,
    args_json: *const c_char,
    options_json: *const c_char,
    content: *const c_char,
    content_len: usize,
) -> *mut c_char {
    let result_len = std::ptr::null_mut();
    // SAFETY: forwarded from this function's contract.
    unsafe {
        call_entry(
            workspace,
            tool_name,
            args_json,
            options_json,
            content,
            content_len,
            result_len,
        )
    }
}

/// Like `wsfs_call_with_content` (a NULL `content` means no buffer, as there), and also stores
/// the result's length in bytes, without its terminating NUL, in `*result_len` (when
/// `result_len` is not NULL), so a caller that copies the result need not scan it for its end
/// first. The result is the same NUL-terminated string as `wsfs_call_with_content`'s; the
/// caller frees it with `wsfs_string_free`.
///
/// # Safety
/// As `wsfs_call_with_content`; `result_len` must be NULL or point to a writable `size_t`.
#[no_mangle]
pub unsafe extern "C" fn wsfs_call_sized(
    workspace: u64,
    tool_name: *const c_char,
    args_json: *const c_char,
    options_json: *const c_char,
    content: *const c_char,
    content_len: usize,
    result_len: *mut usize,
) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe {
        call_entry(
            workspace,
            tool_name,
            args_json,
            options_json,
            content,
            content_len,
            result_len,
        )
    }
}

/// Runs a tool call as a model API gives it: `call_json` is `{"tool_call": {"name",
/// "arguments"}}`, the bare `{"name", "arguments"}`, or either without `arguments` (the legacy
/// name-only call); `arguments` is an object or a JSON string holding one (absent or null:
/// `{}`). The named tool runs exactly as `wsfs_call_with_options(workspace, name, arguments,
/// options_json)` runs it: built-in and Wasm tools alike, under the workspace's profile names
/// and envelope, with the same policy, audit, approval, metrics, deadline and cancel token
/// (`options_json` is that function's, NULL for none). A malformed call (not an object, no
/// name, a name that is not a string, arguments that are not an object, an unknown key, both
/// forms at once) is `invalid_arguments` naming what is wrong, and nothing runs. See
/// docs/dispatch.md. The caller frees the result with `wsfs_string_free`.
///
/// # Safety
/// `call_json` and `options_json` must be NULL or NUL-terminated strings valid for the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_dispatch(
    workspace: u64,
    call_json: *const c_char,
    options_json: *const c_char,
) -> *mut c_char {
    guard(|| -> Envelope {
        // SAFETY: forwarded from this function's contract.
        let call = match unsafe { borrow_str(call_json, "call_json") } {
            Ok(call) => call,
            Err(envelope) => return envelope.into(),
        };
        // SAFETY: forwarded from this function's contract.
        let options = match unsafe { borrow_opt_str(options_json, "options_json") } {
            Ok(options) => options,
            Err(envelope) => return envelope.into(),
        };
        api::dispatch_envelope(workspace, call, options)
    })
}

/// Creates a cancel token (never 0) for `wsfs_call_with_options`. Free it with
/// `wsfs_cancel_token_free` once no call uses it.
#[no_mangle]
pub extern "C" fn wsfs_cancel_token_new() -> u64 {
    catch_unwind(control::token_new).unwrap_or(0)
}

/// Cancels every call using `token`, now and later: each stops at its next check with
/// `cancelled`. Callable from any thread; unknown tokens are ignored.
#[no_mangle]
pub extern "C" fn wsfs_cancel_token_cancel(token: u64) {
    let _ = catch_unwind(|| control::token_cancel(token));
}

/// Releases `token`. Calls already running with it keep their view of it; unknown tokens
/// are ignored.
#[no_mangle]
pub extern "C" fn wsfs_cancel_token_free(token: u64) {
    let _ = catch_unwind(|| control::token_free(token));
}

/// Shared body of the session functions: `options_json` may be NULL (no options).
///
/// # Safety
/// `options_json` must be NULL or a NUL-terminated string valid for the duration of the call.
unsafe fn session_call(workspace: u64, op: SessionOp, options_json: *const c_char) -> *mut c_char {
    guard(|| {
        // SAFETY: forwarded from this function's contract.
        match unsafe { borrow_opt_str(options_json, "options_json") } {
            Ok(options) => session::session(workspace, op, options),
            Err(envelope) => envelope,
        }
    })
}

/// Overlay mode: the session's changes against the base. `options_json` (NULL: none) is
/// `{"paths": [path] (only these; a directory: everything below it), "max_bytes": n (bound of
/// the unified text, default 262144), "include_ignored": false}`. `data` is `{"changes":
/// [{"path", "status": "A"|"M"|"D", "type", "binary", "bytes_before", "bytes_after", "hunks":
/// [{"id", "old_start", "old_lines", "new_start", "new_lines"}]}], "unified", "truncated",
/// "ignored"}`: deletions are listed first and always in full; a file copied into the session
/// but unchanged is not a change. Changes the workspace's `.gitignore` files or the built-in
/// cache list ignore are left out and counted in `ignored` (they stay in the session;
/// `include_ignored` lists them). A git repository's changes are one entry, `"type":
/// "git_repository"` at its `.git` path, with `"changed_paths"` and `"commits": [{"hash",
/// "subject"}]` (the commits the session made). docs/overlay-sessions.md has the rules. A workspace
/// in host mode gets `no_session`. Waits for the tool calls in flight on the workspace. The
/// result is the caller's, freed once with `wsfs_string_free`; thread-safe.
///
/// # Safety
/// `options_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_session_diff(
    workspace: u64,
    options_json: *const c_char,
) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { session_call(workspace, SessionOp::Diff, options_json) }
}

/// Overlay mode: commits the session's changes to the base. `options_json` (NULL: all) is
/// `{"paths": [path], "hunks": {path: [hunk id]}, "force": false, "merge": false,
/// "include_ignored": false}`: all changes, some paths, or some hunks of a file (the base
/// gets base + those hunks; the rest stays in the session). Ignored changes (as in
/// `wsfs_session_diff`) stay in the session unless `include_ignored`; `data.ignored` counts
/// them. A git repository is committed whole: select its `.git` path (a path inside it is
/// `invalid_arguments`). Before anything is written every affected path's base must still be
/// what the session first saw; otherwise `data` is `{"committed": false, "conflicts": [{"path",
/// "base_changed", "session_changed", "mergeable"}]}` and nothing changes, unless `force`, or
/// `merge` and a three-way merge of the text succeeds. Files are replaced atomically under a
/// journal (a crash is rolled back at the next open); a reader of the base may see some files
/// new and others not yet. `data` on success: `{"committed": true, "files", "merged"?}`. The
/// workspace's policy applies to every base path (with `exec_enabled`, less its `deny_write`
/// rule on `.git`: git run by the developer tools writes `.git` in the session, as it would in
/// the workspace in host mode). Waits for the tool calls in flight, then
/// shows the new base. `no_session` in host mode. The result is the caller's, freed once with
/// `wsfs_string_free`; thread-safe.
///
/// # Safety
/// `options_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_session_commit(
    workspace: u64,
    options_json: *const c_char,
) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { session_call(workspace, SessionOp::Commit, options_json) }
}

/// Overlay mode: records a checkpoint of the session. `options_json` (NULL: none) is
/// `{"label": str}`; `data` is `{"id"}`. Its cost follows what changed since the previous
/// checkpoint, never the tree. `no_session` in host mode. The result is the caller's, freed
/// once with `wsfs_string_free`; thread-safe.
///
/// # Safety
/// `options_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_session_checkpoint(
    workspace: u64,
    options_json: *const c_char,
) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { session_call(workspace, SessionOp::Checkpoint, options_json) }
}

/// Overlay mode: brings the session back to checkpoint `{"id": str}` (`options_json`, required)
/// and removes the newer checkpoints; the base is not touched. A crash part-way is finished at
/// the next open. Waits for the tool calls in flight. An unknown id is `invalid_arguments`;
/// `no_session` in host mode. The result is the caller's, freed once with `wsfs_string_free`;
/// thread-safe.
///
/// # Safety
/// `options_json` must be NULL or a NUL-terminated string valid for the duration of the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_session_rewind(
    workspace: u64,
    options_json: *const c_char,
) -> *mut c_char {
    // SAFETY: forwarded from this function's contract.
    unsafe { session_call(workspace, SessionOp::Rewind, options_json) }
}

/// Overlay mode: the session's checkpoints, oldest first: `data` is `{"checkpoints": [{"id",
/// "label", "time", "paths"}]}` (`time` RFC 3339 UTC; `paths` changed since the checkpoint
/// before it). `no_session` in host mode. The result is the caller's,
/// freed once with `wsfs_string_free`; thread-safe.
#[no_mangle]
pub extern "C" fn wsfs_session_checkpoints(workspace: u64) -> *mut c_char {
    // SAFETY: a NULL options pointer is allowed.
    unsafe { session_call(workspace, SessionOp::Checkpoints, std::ptr::null()) }
}

/// Overlay mode: drops every change and checkpoint of the session (its state is removed) and
/// goes on in a new, empty session of the same name: the workspace shows the base. Waits for
/// the tool calls in flight. `no_session` in host mode. The result is the caller's, freed once
/// with `wsfs_string_free`; thread-safe.
#[no_mangle]
pub extern "C" fn wsfs_session_discard(workspace: u64) -> *mut c_char {
    // SAFETY: a NULL options pointer is allowed.
    unsafe { session_call(workspace, SessionOp::Discard, std::ptr::null()) }
}

/// Overlay mode: shows the base as it is now. The view (a kernel overlay mount) caches the
/// base's names; a host that changed the base itself calls this before the next tool call
/// (changes made outside show within about a second on their own, and a change is never
/// based on a stale view). `no_session` in host mode. The result is the caller's, freed once
/// with `wsfs_string_free`; thread-safe.
#[no_mangle]
pub extern "C" fn wsfs_session_refresh(workspace: u64) -> *mut c_char {
    // SAFETY: a NULL options pointer is allowed.
    unsafe { session_call(workspace, SessionOp::Refresh, std::ptr::null()) }
}

/// Frees a string returned by any wsfs function. NULL is a no-op. Freeing a string twice, or
/// one not returned by wsfs, is undefined behaviour.
///
/// # Safety
/// `s` must be NULL or a pointer returned by a wsfs function and not yet freed.
#[no_mangle]
pub unsafe extern "C" fn wsfs_string_free(s: *mut c_char) {
    if s.is_null() {
        return;
    }
    // SAFETY: `s` came from `into_c_string`, FRONT_ROOM bytes into a Vec<u8> allocation whose
    // capacity those bytes hold, and is freed only once.
    unsafe {
        let base = s.cast::<u8>().sub(FRONT_ROOM);
        let capacity = u64::from_ne_bytes(base.cast::<[u8; FRONT_ROOM]>().read());
        drop(Vec::from_raw_parts(base, 0, capacity as usize));
    }
}

/// Where a model gateway callback puts its answer: valid only during the callback, and only
/// through `wsfs_gateway_respond`.
#[allow(non_camel_case_types)]
pub struct wsfs_gateway_response {
    text: Option<String>,
}

/// The host's model gateway (see `wsfs_set_model_gateway`). Called with the host's
/// `userdata`, the tool's request (a NUL-terminated JSON object, valid during the call only),
/// the milliseconds left before the tool's deadline, and the response to fill with
/// `wsfs_gateway_respond`. Returns `WSFS_GATEWAY_OK` with the answer (JSON) as the response, or
/// another `WSFS_GATEWAY_*` status with a message as the response.
#[allow(non_camel_case_types)]
pub type wsfs_model_gateway_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request_json: *const c_char,
        timeout_ms: u64,
        response: *mut wsfs_gateway_response,
    ) -> i32,
>;

/// The gateway answered; the response is its JSON.
pub const WSFS_GATEWAY_OK: i32 = 0;
/// The gateway failed (provider error, bad answer); the tool gets `gateway_error`.
pub const WSFS_GATEWAY_ERROR: i32 = 1;
/// The model did not answer in time; the tool gets `timeout`.
pub const WSFS_GATEWAY_TIMEOUT: i32 = 2;
/// The gateway refuses the request as malformed; the tool gets `invalid_arguments`.
pub const WSFS_GATEWAY_INVALID_REQUEST: i32 = 3;

/// A C callback as the Wasm runtime's [`ModelGateway`].
#[cfg(feature = "wasm")]
struct CGateway {
    callback:
        unsafe extern "C" fn(*mut c_void, *const c_char, u64, *mut wsfs_gateway_response) -> i32,
    userdata: usize,
}

// SAFETY: `wsfs_set_model_gateway`'s contract makes the callback and its userdata callable from
// any thread, concurrently, for as long as the gateway is set.
#[cfg(feature = "wasm")]
unsafe impl Send for CGateway {}
// SAFETY: as above.
#[cfg(feature = "wasm")]
unsafe impl Sync for CGateway {}

#[cfg(feature = "wasm")]
impl ModelGateway for CGateway {
    fn generate(&self, request_json: &str, deadline: Instant) -> Result<String, GatewayFailure> {
        let request = std::ffi::CString::new(request_json).map_err(|_| {
            GatewayFailure::new(ErrorCode::InvalidArguments, "the request holds a NUL byte")
        })?;
        let timeout_ms = deadline
            .saturating_duration_since(Instant::now())
            .as_millis()
            .min(u64::MAX as u128) as u64;
        let mut response = wsfs_gateway_response { text: None };
        let status = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the host's callback, called as its contract says: the request is a valid
            // NUL-terminated string and the response a valid pointer, both for this call only.
            unsafe {
                (self.callback)(
                    self.userdata as *mut c_void,
                    request.as_ptr(),
                    timeout_ms,
                    &mut response,
                )
            }
        }))
        .unwrap_or(WSFS_GATEWAY_ERROR);
        let text = response.text.unwrap_or_default();
        let failed = |code, what: &str| {
            let message = match text.is_empty() {
                true => what.to_string(),
                false => text.clone(),
            };
            Err(GatewayFailure::new(code, message))
        };
        match status {
            WSFS_GATEWAY_OK => Ok(text),
            WSFS_GATEWAY_TIMEOUT => failed(ErrorCode::Timeout, "the model did not answer in time"),
            WSFS_GATEWAY_INVALID_REQUEST => failed(
                ErrorCode::InvalidArguments,
                "the gateway refused the request",
            ),
            _ => failed(ErrorCode::GatewayError, "the model gateway failed"),
        }
    }
}

/// Sets the model gateway of workspace `workspace`: the host's callback that the `wsfs`
/// `model_generate` import of its Wasm tools (those with the `model_access` capability) reaches
/// the model through. NULL `callback` removes it (tools then get `gateway_error`). Returns an
/// envelope: `data` `{"workspace": id, "gateway": bool}`, or `invalid_workspace`.
///
/// Threads: the callback is called from the threads that run tool calls, possibly from several
/// at once, so it and `userdata` must be thread-safe. Ownership: `userdata` stays the host's;
/// it must stay valid until the gateway is replaced or removed and every call started before
/// has returned, or until the workspace is closed and its calls have returned. The callback
/// borrows `request_json` for the call only,
/// and answers by calling `wsfs_gateway_respond` on `response` (which copies the text) before
/// returning one of the `WSFS_GATEWAY_*` statuses; `timeout_ms` is what is left of the tool's
/// deadline, and an answer after it makes the tool's call `timeout`. A panic or unknown status
/// is a gateway error. In a library built without Wasm tools (cargo feature `wasm`) it returns
/// `feature_not_built`. The caller frees the result with `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_set_model_gateway(
    workspace: u64,
    callback: wsfs_model_gateway_fn,
    userdata: *mut c_void,
) -> *mut c_char {
    #[cfg(feature = "wasm")]
    let gateway = callback.map(|callback| {
        Arc::new(CGateway {
            callback,
            userdata: userdata as usize,
        }) as Arc<dyn ModelGateway>
    });
    #[cfg(not(feature = "wasm"))]
    let gateway = callback.map(|_| userdata);
    guard(|| api::set_model_gateway(workspace, gateway))
}

/// Gives a model gateway callback's answer (or, with a failing status, its message): `text`
/// (NUL-terminated UTF-8) is copied. Call it at most once per callback, with the `response` the
/// callback got, during the callback. Returns 0, or -1 when `response` or `text` is NULL or
/// `text` is not UTF-8.
///
/// # Safety
/// `response` must be the pointer the callback got, during that callback; `text` must be NULL
/// or a NUL-terminated string valid for the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_gateway_respond(
    response: *mut wsfs_gateway_response,
    text: *const c_char,
) -> i32 {
    if response.is_null() || text.is_null() {
        return -1;
    }
    // SAFETY: non-NULL, NUL-terminated and valid for the call by this function's contract.
    let bytes = unsafe { CStr::from_ptr(text) }.to_bytes();
    let Ok(text) = std::str::from_utf8(bytes) else {
        return -1;
    };
    // SAFETY: the callback's own response, alive for the callback (this function's contract).
    unsafe { (*response).text = Some(text.to_string()) };
    0
}

/// Where an approval handler puts its reason: valid only during the callback, and only
/// through `wsfs_approval_respond`.
#[allow(non_camel_case_types)]
pub struct wsfs_approval_response {
    reason: Option<String>,
}

/// The host's approval handler (see `wsfs_set_approval_handler`). Called with the host's
/// `userdata`, the request (a NUL-terminated JSON object `{"tool", "arguments", "why"}`, valid
/// during the call only), the milliseconds left before the call's deadline, and the response
/// to give a reason in with `wsfs_approval_respond`. Returns one of the `WSFS_APPROVAL_*`
/// statuses.
#[allow(non_camel_case_types)]
pub type wsfs_approval_handler_fn = Option<
    unsafe extern "C" fn(
        userdata: *mut c_void,
        request_json: *const c_char,
        timeout_ms: u64,
        response: *mut wsfs_approval_response,
    ) -> i32,
>;

/// The host approves the call: it runs, whatever its `confirmed` says.
pub const WSFS_APPROVAL_APPROVE: i32 = 0;
/// The host denies the call: it gets `approval_denied` with the response's reason.
pub const WSFS_APPROVAL_DENY: i32 = 1;
/// The handler could not decide (its own failure): the call gets `approval_denied`.
pub const WSFS_APPROVAL_ERROR: i32 = 2;

/// A C callback as the workspace's [`ApprovalHandler`].
struct CApproval {
    callback:
        unsafe extern "C" fn(*mut c_void, *const c_char, u64, *mut wsfs_approval_response) -> i32,
    userdata: usize,
}

// SAFETY: `wsfs_set_approval_handler`'s contract makes the callback and its userdata callable
// from any thread, concurrently, for as long as the handler is set.
unsafe impl Send for CApproval {}
// SAFETY: as above.
unsafe impl Sync for CApproval {}

impl ApprovalHandler for CApproval {
    fn decide(&self, request_json: &str, deadline: std::time::Instant) -> Verdict {
        let Ok(request) = std::ffi::CString::new(request_json) else {
            return Verdict::Failed("the request holds a NUL byte".into());
        };
        let timeout_ms = deadline
            .saturating_duration_since(std::time::Instant::now())
            .as_millis()
            .min(u64::MAX as u128) as u64;
        let mut response = wsfs_approval_response { reason: None };
        let status = catch_unwind(AssertUnwindSafe(|| {
            // SAFETY: the host's callback, called as its contract says: the request is a valid
            // NUL-terminated string and the response a valid pointer, both for this call only.
            unsafe {
                (self.callback)(
                    self.userdata as *mut c_void,
                    request.as_ptr(),
                    timeout_ms,
                    &mut response,
                )
            }
        }));
        let reason = response.reason.unwrap_or_default();
        match status {
            Ok(WSFS_APPROVAL_APPROVE) => Verdict::Approve,
            Ok(WSFS_APPROVAL_DENY) => Verdict::Deny(reason),
            Ok(WSFS_APPROVAL_ERROR) if reason.is_empty() => {
                Verdict::Failed("it reported an error without saying why".into())
            }
            Ok(WSFS_APPROVAL_ERROR) => Verdict::Failed(reason),
            Ok(status) => Verdict::Failed(format!("it returned the unknown status {status}")),
            Err(_) => Verdict::Failed("it panicked".into()),
        }
    }
}

/// Sets the approval handler of workspace `workspace`: the host's callback that decides each
/// call needing confirmation (`git_commit`) instead of the model's `confirmed: true`, and the
/// calls no model confirms (every `shell` command, a recursive `delete_file`). It is
/// asked before the call runs; `WSFS_APPROVAL_APPROVE` runs it (as if confirmed), any other
/// answer, a panic, or an answer after the call's deadline gives the call `approval_denied`
/// (with the reason given through `wsfs_approval_respond`). NULL `callback` removes it, and
/// `confirmed: true` is the gate again. Returns an envelope: `data` `{"workspace": id,
/// "approval_handler": bool, "tools": [names of the tools that ask it now]}`, or
/// `invalid_workspace`.
///
/// Threads: the callback is called from the threads that run tool calls, possibly from several
/// at once, so it and `userdata` must be thread-safe; it blocks its call until it returns.
/// Ownership: `userdata` stays the host's; it must stay valid until the handler is replaced or
/// removed and every call started before has returned, or until the workspace is closed and
/// its calls have returned. The callback borrows `request_json` for the call only and gives a
/// reason (optional) by calling `wsfs_approval_respond` on `response` before returning;
/// `timeout_ms` is what is left of the call's deadline. Cancelling the call does not interrupt
/// the callback; the call is `cancelled` once it returns. The caller frees the result with
/// `wsfs_string_free`.
#[no_mangle]
pub extern "C" fn wsfs_set_approval_handler(
    workspace: u64,
    callback: wsfs_approval_handler_fn,
    userdata: *mut c_void,
) -> *mut c_char {
    let handler = callback.map(|callback| {
        Arc::new(CApproval {
            callback,
            userdata: userdata as usize,
        }) as Arc<dyn ApprovalHandler>
    });
    guard(|| api::set_approval_handler(workspace, handler))
}

/// Gives an approval handler's reason (for a denial, or a failure): `reason` (NUL-terminated
/// UTF-8) is copied. Call it at most once per callback, with the `response` the callback got,
/// during the callback. Returns 0, or -1 when `response` or `reason` is NULL or `reason` is not
/// UTF-8.
///
/// # Safety
/// `response` must be the pointer the callback got, during that callback; `reason` must be
/// NULL or a NUL-terminated string valid for the call.
#[no_mangle]
pub unsafe extern "C" fn wsfs_approval_respond(
    response: *mut wsfs_approval_response,
    reason: *const c_char,
) -> i32 {
    if response.is_null() || reason.is_null() {
        return -1;
    }
    // SAFETY: non-NULL, NUL-terminated and valid for the call by this function's contract.
    let bytes = unsafe { CStr::from_ptr(reason) }.to_bytes();
    let Ok(reason) = std::str::from_utf8(bytes) else {
        return -1;
    };
    // SAFETY: the callback's own response, alive for the callback (this function's contract).
    unsafe { (*response).reason = Some(reason.to_string()) };
    0
}
