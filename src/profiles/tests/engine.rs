//! The engine's mechanisms one by one, on the real profiles, with synthetic native results:
//! what the native call becomes, and what a native result becomes.

use super::super::request::{Prepared, RefusedBy};
use super::super::{Context, NativeResult, Profile};
use super::profile_named;
use serde_json::{json, Map, Value};

fn prepare(profile: &str, tool: &str, args: Value) -> (String, Value) {
    let p = profile_named(profile);
    match p.prepare(tool, &args.to_string()) {
        Ok(call) => (call.op.native.clone(), Value::Object(call.native_args)),
        Err(refused) => panic!("refused: {:?}", refused.error),
    }
}

/// The envelope of a call refused before the native tool.
fn refused(profile: &str, tool: &str, args: &str) -> Value {
    let p = profile_named(profile);
    match p.prepare(tool, args) {
        Ok(call) => panic!("not refused: {:?}", call.native_args),
        Err(r) => p.refused(&r).envelope,
    }
}

fn ok(data: Value, text: &str, warnings: &[&str]) -> NativeResult {
    NativeResult::Success {
        data,
        text: text.to_string(),
        warnings: warnings.iter().map(|w| w.to_string()).collect(),
    }
}

fn fail(code: &str, message: &str) -> NativeResult {
    NativeResult::Failure {
        code: code.into(),
        message: message.into(),
    }
}

fn finish(profile: &str, tool: &str, args: Value, native: NativeResult) -> Value {
    let p: &Profile = profile_named(profile);
    let call: Prepared<'_> = p.prepare(tool, &args.to_string()).expect("prepared");
    let limits = wsfs_core::config::Limits::default();
    let cx = Context {
        root: "/ws",
        limits: &limits,
    };
    p.finish(&call, native, &cx)
}

#[test]
fn arguments_are_renamed_defaulted_and_fixed() {
    let (tool, args) = prepare(
        "agent-base",
        "apply_text_edit",
        json!({"path": "a.py", "expected_text": "x", "replacement_text": "y"}),
    );
    assert_eq!(tool, "edit_file");
    assert_eq!(
        args,
        json!({"path": "a.py", "old_text": "x", "new_text": "y", "replace_all": false})
    );
    let (_, args) = prepare(
        "agent-base",
        "write_file",
        json!({"path": "a", "content": "c"}),
    );
    assert_eq!(
        args["mode"], "create",
        "Agent Base's write_file creates by default"
    );
    let (_, args) = prepare(
        "miniclaw",
        "write_file",
        json!({"path": "a", "content": "c"}),
    );
    assert_eq!(args["mode"], "overwrite");
    let (_, args) = prepare("miniclaw", "list_dir", json!({}));
    assert_eq!(args, json!({"path": ".", "depth": 1}));
}

#[test]
fn values_are_mapped_and_capped() {
    let (tool, args) = prepare(
        "agent-base",
        "list_directory",
        json!({"recursive": true, "max_entries": 9000}),
    );
    assert_eq!(tool, "list_dir");
    assert_eq!(
        args,
        json!({"path": ".", "depth": 60, "max_entries": 500, "include_hidden": false})
    );
    let (_, args) = prepare("agent-base", "list_directory", json!({}));
    assert_eq!(args["depth"], 1);
    assert_eq!(args["max_entries"], 200);
    let (_, args) = prepare(
        "agent-base",
        "read_file",
        json!({"path": "a", "max_lines": 5000}),
    );
    assert_eq!(args["max_lines"], 1000);
    assert_eq!(args["start_line"], 1);
}

#[test]
fn native_arguments_that_were_pending_are_sent() {
    // read_file's encoding_errors is native now (issue 18 gap 1): the fixed value is sent.
    let (_, args) = prepare("agent-base", "read_file", json!({"path": "a"}));
    assert_eq!(args["encoding_errors"], "replace", "{args}");
    let (_, args) = prepare(
        "capability-plan",
        "file_list",
        json!({"path": ".", "include_files": false}),
    );
    // list_dir's include_files / include_dirs are native now (issue 18 gap 5).
    assert_eq!(
        args,
        json!({"path": ".", "depth": 2, "include_hidden": false, "include_files": false, "include_dirs": true})
    );
}

#[test]
fn nested_arguments_are_renamed() {
    let (tool, args) = prepare(
        "capability-plan",
        "file_patch",
        json!({"patches": [{"path": "a.py", "file_hash": "ab",
            "hunks": [{"start": 2, "end": 3, "replace_with": "x\n"}]}]}),
    );
    assert_eq!(tool, "apply_patch");
    assert_eq!(
        args,
        json!({"files": [{"path": "a.py", "file_hash": "ab",
            "hunks": [{"start_line": 2, "end_line": 3, "replace_with": "x\n"}]}]})
    );
    let (_, args) = prepare(
        "capability-plan",
        "file_patch",
        json!({"diff_text": "--- a"}),
    );
    assert_eq!(args, json!({"patch": "--- a"}));
}

#[test]
fn a_selector_picks_the_native_tool() {
    let (tool, args) = prepare(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "write", "path": "a", "content": "c"}),
    );
    assert_eq!(tool, "write_file");
    assert_eq!(
        args,
        json!({"path": "a", "content": "c", "mode": "overwrite"})
    );
    let (tool, args) = prepare(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "read", "path": "a"}),
    );
    assert_eq!((tool.as_str(), args), ("read_file", json!({"path": "a"})));

    let e = refused(
        "filesystem-tool",
        "filesystem",
        r#"{"operation": "write", "path": "a"}"#,
    );
    assert_eq!(e["error"], "invalid_arguments");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("content is required for operation \"write\""),
        "{e}"
    );
    let e = refused(
        "filesystem-tool",
        "filesystem",
        r#"{"operation": "read", "path": "a", "content": "x"}"#,
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("content is not used by operation \"read\""),
        "{e}"
    );
    let e = refused(
        "filesystem-tool",
        "filesystem",
        r#"{"operation": "delete", "path": "a"}"#,
    );
    assert_eq!(e["error"], "invalid_arguments");
    assert!(
        e["message"].as_str().unwrap().contains("read, write, list"),
        "{e}"
    );
}

#[test]
fn argument_mistakes_are_named_in_the_profiles_words() {
    let e = refused(
        "agent-base",
        "apply_text_edit",
        r#"{"path": "a", "old_text": "x", "new_text": "y"}"#,
    );
    assert_eq!(e["success"], false);
    assert_eq!(e["error"], "invalid_arguments");
    let m = e["message"].as_str().unwrap();
    assert!(m.contains("unknown field `old_text`"), "{m}");
    assert!(m.contains("\"expected_text\": string"), "{m}");
    let e = refused("agent-base", "read_file", r#"{"path": 3}"#);
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("path must be a string"),
        "{e}"
    );
    let e = refused(
        "agent-base",
        "read_file",
        r#"{"path": "a", "start_line": 0}"#,
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("start_line must be at least 1"),
        "{e}"
    );
    let e = refused("agent-base", "read_file", "[]");
    assert_eq!(e["error"], "invalid_arguments");
    let e = refused(
        "capability-plan",
        "file_patch",
        r#"{"patches": [{"path": "a", "hunks": [{"start_line": 1, "end": 1, "replace_with": ""}]}]}"#,
    );
    assert_eq!(e["error_code"], "INVALID_ARGUMENTS");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("unknown field `patches[0].hunks[0].start_line`"),
        "{e}"
    );
    let e = refused(
        "capability-plan",
        "file_patch",
        r#"{"diff_text": "x", "patches": []}"#,
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("exactly one of diff_text or patches"),
        "{e}"
    );
    let e = refused("capability-plan", "file_patch", "{}");
    assert!(e["message"].as_str().unwrap().contains("(got 0)"), "{e}");
}

#[test]
fn unknown_tools_list_the_profiles_tools() {
    let e = refused("agent-base", "list_dir", "{}");
    assert_eq!(e["error"], "unknown_tool");
    assert!(
        e["message"].as_str().unwrap().contains("list_directory"),
        "{e}"
    );
    let e = refused("filesystem-tool", "read_file", "{}");
    assert_eq!(
        e["error"], "invalid_arguments",
        "the story's ToolError has no unknown_tool"
    );
    let e = refused("capability-plan", "apply_patch", "{}");
    assert_eq!(e["error_code"], "UNKNOWN_TOOL");
}

#[test]
fn the_profile_refuses_dotdot_and_its_own_cases_with_its_codes() {
    for path in ["../x", "a/../b", "a/..", "..", "a/b/../../.."] {
        let e = refused(
            "agent-base",
            "read_file",
            &json!({"path": path}).to_string(),
        );
        assert_eq!(e["error"], "path_traversal_attempt", "{path}");
        assert!(
            e["message"].as_str().unwrap().contains("without '..'"),
            "{e}"
        );
    }
    let (_, args) = prepare("agent-base", "read_file", json!({"path": "..a/b..c"}));
    assert_eq!(
        args["path"], "..a/b..c",
        "names that only start with dots are names"
    );
    let e = refused(
        "agent-base",
        "write_file",
        r#"{"path": "a", "content": "", "mode": "replace"}"#,
    );
    assert_eq!(e["error"], "invalid_mode");
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .contains("create, overwrite, append"),
        "{e}"
    );
    let e = refused(
        "agent-base",
        "apply_text_edit",
        r#"{"path": "a", "expected_text": "", "replacement_text": "y"}"#,
    );
    assert_eq!(e["error"], "empty_expected_text");
    // Other profiles keep the native answer to '..' (resolved by the kernel).
    let (_, args) = prepare("miniclaw", "read_file", json!({"path": "a/../b"}));
    assert_eq!(args["path"], "a/../b");
}

#[test]
fn errors_get_the_profiles_codes_and_messages() {
    let e = finish(
        "agent-base",
        "read_file",
        json!({"path": "nope.py"}),
        fail(
            "path_not_found",
            "nope.py does not exist; use list_dir to see what exists; did you mean no.py?",
        ),
    );
    assert_eq!(
        e,
        json!({"success": false, "error": "not_found",
            "message": "nope.py does not exist; use list_directory to see what exists; did you mean no.py?"})
    );
    let e = finish(
        "agent-base",
        "read_file",
        json!({"path": "b.bin"}),
        fail(
            "io_error",
            "b.bin is binary or not UTF-8; only text files can be read or edited",
        ),
    );
    assert_eq!(e["error"], "is_binary");
    let e = finish(
        "agent-base",
        "read_file",
        json!({"path": "b"}),
        fail("io_error", "disk on fire"),
    );
    assert_eq!(e["error"], "io_error", "message_contains narrows the rule");
    let e = finish(
        "agent-base",
        "apply_text_edit",
        json!({"path": "a", "expected_text": "x", "replacement_text": "y"}),
        fail("invalid_arguments", "old_text and new_text are equal"),
    );
    assert_eq!(e["message"], "expected_text and replacement_text are equal");
    let e = finish(
        "agent-base",
        "write_file",
        json!({"path": "a", "content": ""}),
        fail("writes_disabled", "write_file is disabled"),
    );
    assert!(
        e["message"]
            .as_str()
            .unwrap()
            .starts_with("write_file is not available"),
        "{e}"
    );

    let e = finish(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "read", "path": "gone.txt"}),
        fail(
            "path_not_found",
            "gone.txt does not exist; use list_dir to see what exists; did you mean gone.md?",
        ),
    );
    assert_eq!(
        e,
        json!({"ok": false, "error": "not_found", "message": "File not found: gone.txt; did you mean gone.md?"})
    );
    let e = finish(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "list", "path": "a.txt"}),
        fail("not_a_directory", "a.txt is not a directory"),
    );
    assert_eq!(
        e,
        json!({"ok": false, "error": "execution_failed", "message": "Path is not a directory"})
    );
    let e = finish(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "read", "path": "d"}),
        fail("not_a_file", "d is a directory, not a file; use list_dir"),
    );
    assert_eq!(e["error"], "execution_failed");
    assert_eq!(
        e["message"],
        "d is a directory, not a file; use filesystem (operation \"list\")"
    );

    let e = finish(
        "capability-plan",
        "file_delete",
        json!({"path": "d"}),
        fail("recursive_required", "d is a directory with 2 entries"),
    );
    assert_eq!(
        e,
        json!({"ok": false, "error_code": "RECURSIVE_REQUIRED", "message": "d is a directory with 2 entries",
            "data": {}, "warnings": [], "artifacts": []})
    );

    let e = finish(
        "miniclaw",
        "edit_file",
        json!({"path": "a", "old_text": "x", "new_text": "y"}),
        fail("ambiguous_edit", "old_text occurs 3 times"),
    );
    assert_eq!(
        e,
        json!({"ok": false, "error": {"code": "ambiguous_edit",
            "message": "old_text matched multiple locations: old_text occurs 3 times"},
            "text": "ambiguous_edit: old_text matched multiple locations: old_text occurs 3 times"})
    );
}

#[test]
fn results_are_selected_renamed_and_converted() {
    let info = json!({"path": "src/a.py", "exists": true, "type": "file", "size": 12,
        "modified": "2024-05-01T12:34:56Z", "mode": "0644", "readable": true, "writable": false,
        "line_count": 1, "sha256": "ab"});
    let r = finish(
        "agent-base",
        "get_path_info",
        json!({"path": "src/a.py"}),
        ok(info, "t", &[]),
    );
    assert_eq!(
        r["result"],
        json!({"exists": true, "type": "file", "size": 12, "modified": 1714566896.0,
            "is_readable": true, "is_writable": false, "absolute_path": "/ws/src/a.py"})
    );
    let dir = json!({"path": ".", "exists": true, "type": "dir", "size": 4096,
        "modified": "2024-05-01T12:34:56Z", "mode": "0755", "readable": true, "writable": true});
    let r = finish("agent-base", "get_path_info", json!({}), ok(dir, "t", &[]));
    assert_eq!(r["result"]["type"], "directory");
    assert_eq!(r["result"]["size"], Value::Null, "size is for files only");
    assert_eq!(r["result"]["absolute_path"], "/ws");
    let link = json!({"path": "l", "exists": true, "type": "symlink", "size": 5, "mode": "0777",
        "readable": true, "writable": true, "symlink_target": "docs/x.md"});
    let r = finish(
        "agent-base",
        "get_path_info",
        json!({"path": "l"}),
        ok(link, "t", &[]),
    );
    assert_eq!(
        r["result"]["absolute_path"], "/ws/docs/x.md",
        "resolved, as Path.resolve()"
    );
    let r = finish(
        "agent-base",
        "get_path_info",
        json!({"path": "gone"}),
        ok(
            json!({"path": "gone", "exists": false}),
            "gone does not exist",
            &[],
        ),
    );
    assert_eq!(
        r["result"],
        json!({"exists": false, "type": null, "size": null, "modified": null,
            "is_readable": false, "is_writable": false, "absolute_path": "/ws/gone"})
    );
}

#[test]
fn texts_follow_the_profile() {
    let write =
        json!({"path": "a.txt", "bytes_written": 5, "created": false, "existed_before": true});
    let r = finish(
        "miniclaw",
        "write_file",
        json!({"path": "a.txt", "content": "hello"}),
        ok(
            write.clone(),
            "overwrote a.txt (5 bytes)",
            &["file exists, overwriting", "slow fsync"],
        ),
    );
    assert_eq!(
        r["text"],
        "ok: wrote 5 bytes to a.txt (replaced the existing file)\nwarning: slow fsync"
    );
    assert_eq!(
        r["warnings"],
        json!(["file exists, overwriting", "slow fsync"])
    );
    assert_eq!(r["data"], write);

    let r = finish(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "write", "path": "a.txt", "content": "hello"}),
        ok(
            write,
            "overwrote a.txt (5 bytes)",
            &["file exists, overwriting"],
        ),
    );
    assert_eq!(
        r,
        json!({"ok": true, "result": "File exists, overwriting. Wrote 5 bytes to a.txt",
            "warnings": ["File exists, overwriting"]})
    );

    let list = json!({"path": ".", "entries": [{"name": "a", "type": "file", "size": 1},
        {"name": "d", "type": "dir", "size": 4096}, {"name": "l", "type": "symlink", "size": 1}],
        "total": 4, "truncated": true, "denied": 0});
    let r = finish(
        "filesystem-tool",
        "filesystem",
        json!({"operation": "list", "path": "."}),
        ok(
            list,
            ". (4 entries)\na  1 B\nd/\nl@\n[truncated: showing the first 3 of 4 entries]",
            &[],
        ),
    );
    let listing: Value = serde_json::from_str(r["result"].as_str().unwrap()).unwrap();
    assert_eq!(
        listing,
        json!([{"name": "a", "type": "file"}, {"name": "d", "type": "dir"}, {"name": "l", "type": "other"}])
    );
    assert_eq!(
        r["warnings"],
        json!(["truncated: showing the first 3 of 4 entries"])
    );

    let read = json!({"path": "a.py", "content": "x = 1\n", "bytes": 6, "total_bytes": 6,
        "truncated": false, "start_line": 1, "end_line": 1, "total_lines": 1});
    let r = finish(
        "agent-base",
        "read_file",
        json!({"path": "a.py"}),
        ok(read, "x = 1\n[lines 1-1 of 1; end of file]", &[]),
    );
    assert_eq!(r["message"], "read a.py: [lines 1-1 of 1; end of file]");
    assert_eq!(r["result"]["content"], "x = 1\n");
    assert_eq!(r["result"]["truncated"], false);
    assert_eq!(r["result"]["next_start_line"], Value::Null);
    assert_eq!(r["result"]["encoding_errors"], false);
}

#[test]
fn artifacts_and_the_tool_result_envelope() {
    let patch = json!({"applied": true, "files_changed": [
        {"path": "a.py", "action": "update", "added_lines": 1, "removed_lines": 1}],
        "rejected_hunks": [], "diff": "--- a/a.py"});
    let r = finish(
        "capability-plan",
        "file_patch",
        json!({"diff_text": "--- a/a.py"}),
        ok(patch, "patched a.py", &[]),
    );
    assert_eq!(
        r,
        json!({"ok": true, "error_code": null, "message": "patched a.py",
            "data": {"applied": true, "files_changed": ["a.py"], "rejected_hunks": []},
            "warnings": [],
            "artifacts": [{"type": "file", "path": "a.py", "description": "changed by file_patch"}]})
    );
    let rejected = json!({"applied": false, "files_changed": [], "rejected_hunks": [
        {"path": "a.py", "hunk": 1, "reason": "context_not_found", "expected": ["x"]}], "diff": ""});
    let r = finish(
        "capability-plan",
        "file_patch",
        json!({"diff_text": "--- a/a.py"}),
        ok(rejected, "PATCH NOT APPLIED", &[]),
    );
    assert_eq!(r["ok"], true);
    assert_eq!(
        r["data"]["rejected_hunks"][0]["reason"],
        "context_not_found"
    );
    assert_eq!(r["artifacts"], json!([]));
    let moved = json!({"moved_from": "a", "moved_to": "b/a", "type": "dir", "replaced": false,
        "dirs_created": ["b"]});
    let r = finish(
        "capability-plan",
        "file_move",
        json!({"src": "a", "dst": "b/a"}),
        ok(moved, "moved", &[]),
    );
    assert_eq!(
        r["data"],
        json!({"moved_from": "a", "moved_to": "b/a", "dirs_created": ["b"]})
    );
    assert_eq!(
        r["artifacts"],
        json!([{"type": "dir", "path": "b/a", "description": "moved from a"}])
    );
}

#[test]
fn refusals_by_the_profile_skip_the_error_map() {
    let p = profile_named("agent-base");
    let r = p
        .prepare("read_file", r#"{"path": "../x"}"#)
        .expect_err("refused");
    assert!(
        matches!(&r.error, RefusedBy::Profile { code, .. } if code == "path_traversal_attempt")
    );
    let args: Map<String, Value> = r.args.clone();
    assert!(args.is_empty() || args.contains_key("path"));
}
