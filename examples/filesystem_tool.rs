//! Seed 001's `filesystem` tool (one tool, `operation` read / write / list) behind that
//! design's own `Tool` trait, implemented on wsfs's async host API instead of canonicalize()
//! and a list of blocked system paths: the kernel confines every path to the workspace.
//! Runs the story's acceptance checks and exits 1 on the first wrong outcome.
//!
//! `cargo run --features tokio --example filesystem_tool` (make test runs it).

use serde_json::{json, Value};
use std::collections::HashMap;
use wsfs::host::{
    AsyncWorkspace, ErrorCode, GetPathInfoInput, ListDirInput, ReadFileInput, WriteFileInput,
};

/// The story's error kinds.
#[derive(Debug, PartialEq)]
enum ToolError {
    InvalidArguments(String),
    ExecutionFailed(String),
    PermissionDenied(String),
    NotFound(String),
}

/// The story's `Tool` trait, as its architecture document writes it.
trait Tool: Send + Sync {
    fn name(&self) -> &str;
    fn description(&self) -> &str;
    fn parameters(&self) -> Value;
    async fn execute(&self, args: HashMap<String, Value>) -> Result<String, ToolError>;
}

struct FilesystemTool {
    ws: AsyncWorkspace,
}

fn string_arg(args: &HashMap<String, Value>, name: &str) -> Result<String, ToolError> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s.clone()),
        _ => Err(ToolError::InvalidArguments(format!(
            "missing string parameter: {name}"
        ))),
    }
}

/// wsfs's stable codes as the story's error kinds and messages.
fn story_error(e: wsfs::host::Error, path: &str) -> ToolError {
    match e.code {
        ErrorCode::PathNotFound => ToolError::NotFound(format!("File not found: {path}")),
        ErrorCode::NotADirectory => ToolError::InvalidArguments("Path is not a directory".into()),
        ErrorCode::OutsideWorkspace | ErrorCode::InvalidPath | ErrorCode::PolicyDenied => {
            ToolError::PermissionDenied(format!("Access denied: {path} ({})", e.message))
        }
        ErrorCode::InvalidArguments | ErrorCode::NotAFile => ToolError::InvalidArguments(e.message),
        _ => ToolError::ExecutionFailed(e.to_string()),
    }
}

impl Tool for FilesystemTool {
    fn name(&self) -> &str {
        "filesystem"
    }

    fn description(&self) -> &str {
        "Read, write and list files in the workspace"
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "operation": {"type": "string", "enum": ["read", "write", "list"]},
                "path": {"type": "string"},
                "content": {"type": "string"}
            },
            "required": ["operation", "path"]
        })
    }

    async fn execute(&self, args: HashMap<String, Value>) -> Result<String, ToolError> {
        let operation = string_arg(&args, "operation")?;
        let path = string_arg(&args, "path")?;
        match operation.as_str() {
            "read" => {
                let input = ReadFileInput {
                    path: path.clone(),
                    ..Default::default()
                };
                let read = self.ws.read_file(input).await;
                Ok(read.map_err(|e| story_error(e, &path))?.data.content)
            }
            "write" => {
                let content = string_arg(&args, "content")?;
                let input = WriteFileInput {
                    path: path.clone(),
                    content,
                    mode: None,
                };
                let wrote = self.ws.write_file(input).await;
                let wrote = wrote.map_err(|e| story_error(e, &path))?;
                let mut reply = String::new();
                if wrote.data.existed_before {
                    reply.push_str("File exists, overwriting\n");
                }
                let bytes = wrote.data.bytes_written;
                reply.push_str(&format!("Wrote {bytes} bytes to {}", wrote.data.path));
                Ok(reply)
            }
            "list" => {
                let input = ListDirInput {
                    path: Some(path.clone()),
                    ..Default::default()
                };
                let listed = self.ws.list_dir(input).await;
                let listed = listed.map_err(|e| story_error(e, &path))?;
                let entries: Vec<Value> = (listed.data.entries.iter())
                    .map(|e| json!({"name": e.name, "type": e.kind}))
                    .collect();
                Ok(Value::Array(entries).to_string())
            }
            other => Err(ToolError::InvalidArguments(format!(
                "unknown operation: {other} (read, write or list)"
            ))),
        }
    }
}

fn call(args: Value) -> HashMap<String, Value> {
    serde_json::from_value(args).unwrap_or_default()
}

/// Each acceptance check: the outcome, or a message saying what was wrong.
async fn checks(tool: &FilesystemTool) -> Result<(), String> {
    let expect = |what: &str, ok: bool, got: &dyn std::fmt::Debug| match ok {
        true => Ok(()),
        false => Err(format!("{what}: got {got:?}")),
    };
    let got = tool
        .execute(call(
            json!({"operation": "write", "path": "notes/todo.md", "content": "milk\n"}),
        ))
        .await;
    expect(
        "write creates parent directories",
        got == Ok("Wrote 5 bytes to notes/todo.md".into()),
        &got,
    )?;
    let got = tool
        .execute(call(
            json!({"operation": "write", "path": "notes/todo.md", "content": "bread\n"}),
        ))
        .await;
    let warned = got
        .as_deref()
        .is_ok_and(|r| r.starts_with("File exists, overwriting"));
    expect("overwrite warns", warned, &got)?;
    let got = tool
        .execute(call(json!({"operation": "read", "path": "notes/todo.md"})))
        .await;
    expect(
        "read returns the content",
        got == Ok("bread\n".into()),
        &got,
    )?;
    let got = tool
        .execute(call(json!({"operation": "read", "path": "nope.md"})))
        .await;
    let missing = ToolError::NotFound("File not found: nope.md".into());
    expect("read of a missing file", got == Err(missing), &got)?;
    let got = tool
        .execute(call(json!({"operation": "list", "path": "."})))
        .await;
    let listed = got.as_deref().map(serde_json::from_str::<Value>);
    let want = json!([{"name": "notes", "type": "dir"}]);
    expect(
        "list names and types",
        matches!(&listed, Ok(Ok(v)) if *v == want),
        &got,
    )?;
    let got = tool
        .execute(call(json!({"operation": "list", "path": "notes/todo.md"})))
        .await;
    let not_dir = ToolError::InvalidArguments("Path is not a directory".into());
    expect("list of a file", got == Err(not_dir), &got)?;
    for path in ["../../../etc/passwd", "/etc/hosts", "notes/../../x"] {
        let got = tool
            .execute(call(json!({"operation": "read", "path": path})))
            .await;
        let denied = matches!(got, Err(ToolError::PermissionDenied(_)));
        expect(&format!("{path} is refused"), denied, &got)?;
    }
    let got = tool
        .execute(call(json!({"operation": "delete", "path": "x"})))
        .await;
    expect(
        "an unknown operation",
        matches!(got, Err(ToolError::InvalidArguments(_))),
        &got,
    )?;
    // Nothing outside was touched: the workspace holds only what the tool wrote.
    let outside = tool
        .ws
        .get_path_info(GetPathInfoInput {
            path: "../x".into(),
        })
        .await;
    expect(
        "nothing is reachable outside",
        outside
            .as_ref()
            .is_err_and(|e| e.code == ErrorCode::OutsideWorkspace),
        &outside,
    )
}

fn main() {
    let dir = match tempfile::tempdir() {
        Ok(dir) => dir,
        Err(e) => fail(&format!("no temporary directory: {e}")),
    };
    let ws = match wsfs::host::Workspace::open(dir.path()) {
        Ok(ws) => AsyncWorkspace::new(ws),
        Err(e) => fail(&format!("open: {e}")),
    };
    let tool = FilesystemTool { ws };
    let schema = tool.parameters();
    if tool.name() != "filesystem" || schema["required"] != json!(["operation", "path"]) {
        fail("the tool's name or schema is not the story's");
    }
    let runtime = tokio::runtime::Builder::new_current_thread().build();
    let runtime = runtime.unwrap_or_else(|e| fail(&format!("tokio runtime: {e}")));
    match runtime.block_on(checks(&tool)) {
        Ok(()) => println!(
            "filesystem_tool: every acceptance check passed ({})",
            tool.description()
        ),
        Err(what) => fail(&what),
    }
}

fn fail(what: &str) -> ! {
    eprintln!("filesystem_tool: FAILED: {what}");
    std::process::exit(1)
}
