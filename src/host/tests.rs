use super::*;
use serde_json::json;

fn open() -> (tempfile::TempDir, Workspace) {
    let tmp = tempfile::tempdir().unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    (tmp, ws)
}

fn text(path: &str, content: &str) -> WriteFileInput {
    WriteFileInput {
        path: path.into(),
        content: content.into(),
        mode: None,
    }
}

#[test]
fn a_workspace_is_send_and_sync() {
    fn shared<T: Send + Sync + 'static>() {}
    shared::<Workspace>();
    shared::<Error>();
}

#[test]
fn the_file_tools_return_typed_results() {
    let (tmp, ws) = open();
    let wrote = ws.write_file(&text("notes/a.txt", "one\ntwo\n")).unwrap();
    assert_eq!(wrote.data.bytes_written, 8);
    assert!(wrote.data.created && !wrote.data.existed_before);
    assert_eq!(wrote.data.mode, "overwrite");
    let read = ws
        .read_file(&ReadFileInput {
            path: "notes/a.txt".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(read.data.content, "one\ntwo\n");
    assert_eq!(read.data.total_bytes, 8);
    assert!(read.text.contains("one"), "{}", read.text);
    let appended = ws
        .append_file(&AppendFileInput {
            path: "notes/a.txt".into(),
            content: "three\n".into(),
        })
        .unwrap();
    assert_eq!(appended.data.size, 14);
    let edited = ws
        .edit_file(&EditFileInput {
            path: "notes/a.txt".into(),
            old_text: "two".into(),
            new_text: "2".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(
        (edited.data.replaced, edited.data.first_changed_line),
        (1, 2)
    );
    let listed = ws
        .list_dir(&ListDirInput {
            path: Some("notes".into()),
            ..Default::default()
        })
        .unwrap();
    let names: Vec<(&str, &str)> = (listed.data.entries.iter())
        .map(|e| (e.name.as_str(), e.kind.as_str()))
        .collect();
    assert_eq!(names, [("a.txt", "file")]);
    let info = ws
        .get_path_info(&GetPathInfoInput {
            path: "notes/a.txt".into(),
        })
        .unwrap();
    assert_eq!(
        (info.data.kind.as_deref(), info.data.size),
        (Some("file"), Some(12))
    );
    let found = ws
        .find_files(&FindFilesInput {
            pattern: "**/*.txt".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(found.data.files, ["notes/a.txt"]);
    let searched = ws
        .search_text(&SearchTextInput {
            query: "three".into(),
            ..Default::default()
        })
        .unwrap();
    assert_eq!(searched.data.matches[0].line, 3);
    let patch = "--- a/notes/a.txt\n+++ b/notes/a.txt\n@@ -1,3 +1,3 @@\n one\n-2\n+two\n three\n";
    let patched = ws
        .apply_patch(&ApplyPatchInput {
            patch: patch.into(),
            ..Default::default()
        })
        .unwrap();
    assert!(patched.data.applied);
    assert_eq!(patched.data.files_changed[0].added_lines, 1);
    let made = ws
        .create_directory(&CreateDirectoryInput {
            path: "old/deep".into(),
            parents: None,
        })
        .unwrap();
    assert_eq!((made.data.created, made.data.parents_created), (true, 1));
    let moved = ws
        .move_file(&MoveFileInput {
            src: "notes/a.txt".into(),
            dst: "old/a.txt".into(),
            overwrite: false,
        })
        .unwrap();
    assert_eq!(moved.data.moved_to, "old/a.txt");
    let deleted = ws
        .delete_file(&DeleteFileInput {
            path: "old".into(),
            recursive: true,
        })
        .unwrap();
    assert!(deleted.data.deleted && deleted.data.was_directory);
    assert!(!tmp.path().join("old").exists());
    assert!(tmp.path().join("notes").is_dir());
}

#[test]
fn failures_carry_the_stable_code() {
    let (tmp, ws) = open();
    let read = |path: &str| {
        ws.read_file(&ReadFileInput {
            path: path.into(),
            ..Default::default()
        })
        .unwrap_err()
    };
    assert_eq!(read("missing.txt").code, ErrorCode::PathNotFound);
    assert_eq!(read("../outside").code, ErrorCode::OutsideWorkspace);
    let e = ws.write_file(&text("a.txt", "x")).and_then(|_| {
        ws.write_file(&WriteFileInput {
            mode: Some("create".into()),
            ..text("a.txt", "y")
        })
    });
    let e = e.unwrap_err();
    assert_eq!(e.code, ErrorCode::FileExists);
    assert!(e.to_string().starts_with("file_exists: "), "{e}");
    let file = tmp.path().join("a.txt");
    let e = Workspace::open(&file).unwrap_err();
    assert_eq!(e.code, ErrorCode::NotADirectory, "{e}");
    let e = Workspace::open_config(&json!({"root": tmp.path(), "profile": "nope"})).unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArguments, "{e}");
}

#[test]
fn options_bound_and_cancel_a_call() {
    let (tmp, ws) = open();
    let token = CancelToken::new();
    token.cancel();
    let options = CallOptions {
        cancel: Some(&token),
        ..Default::default()
    };
    let e = ws
        .write_file_with(&text("a.txt", "x"), options)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Cancelled);
    let expired = CallOptions {
        timeout: Some(Duration::ZERO),
        ..Default::default()
    };
    let e = ws
        .write_file_with(&text("a.txt", "x"), expired)
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::Timeout);
    assert!(!tmp.path().join("a.txt").exists());
}

#[test]
fn untyped_calls_dispatch_and_profiles() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(tmp.path().join("a.txt"), "hi").unwrap();
    let ws = Workspace::open(tmp.path()).unwrap();
    let got = ws
        .call(
            "get_path_info",
            &json!({"path": "a.txt"}),
            CallOptions::default(),
        )
        .unwrap();
    assert_eq!(got.data["size"], 2);
    let env = ws.dispatch(
        r#"{"tool_call":{"name":"read_file","arguments":"{\"path\":\"a.txt\"}"}}"#,
        CallOptions::default(),
    );
    assert!(env.contains(r#""content":"hi""#), "{env}");
    let plan =
        Workspace::open_config(&json!({"root": tmp.path(), "profile": "capability-plan"})).unwrap();
    assert_eq!(plan.profile(), "capability-plan");
    let e = plan
        .read_file(&ReadFileInput {
            path: "a.txt".into(),
            ..Default::default()
        })
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArguments);
    assert!(e.message.contains("dispatch"), "{e}");
    let env = plan.dispatch(
        r#"{"name":"file_read","arguments":{"path":"a.txt"}}"#,
        CallOptions::default(),
    );
    assert!(env.contains(r#""error_code":null"#), "{env}");
}

#[cfg(feature = "tokio")]
mod async_face {
    use super::*;
    use std::future::Future;
    use std::sync::mpsc;
    use std::task::{Context, Waker};

    fn runtime() -> ::tokio::runtime::Runtime {
        ::tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
    }

    #[test]
    fn async_calls_run_on_the_blocking_pool() {
        let (tmp, ws) = open();
        let ws = AsyncWorkspace::new(ws);
        let rt = runtime();
        let read = rt.block_on(async {
            ws.write_file(text("a.txt", "x")).await?;
            ws.read_file(ReadFileInput {
                path: "a.txt".into(),
                ..Default::default()
            })
            .await
        });
        assert_eq!(read.unwrap().data.content, "x");
        let e = rt.block_on(ws.read_file(ReadFileInput {
            path: "nope".into(),
            ..Default::default()
        }));
        assert_eq!(e.unwrap_err().code, ErrorCode::PathNotFound);
        assert!(tmp.path().join("a.txt").exists());
    }

    /// The call starts on the blocking pool; its future is dropped before it goes on; the call
    /// then finds its token cancelled and writes nothing.
    #[test]
    fn dropping_the_future_cancels_the_call() {
        let (tmp, ws) = open();
        let ws = AsyncWorkspace::new(ws);
        let rt = runtime();
        let _entered = rt.enter();
        let (go, wait) = mpsc::channel::<()>();
        let (done, result) = mpsc::channel();
        let mut call = Box::pin(ws.run(move |ws, options| {
            let _ = wait.recv();
            let r = ws.write_file_with(&text("late.txt", "x"), options);
            let _ = done.send(r.as_ref().map(|_| ()).map_err(|e| e.code));
            r
        }));
        let mut cx = Context::from_waker(Waker::noop());
        assert!(call.as_mut().poll(&mut cx).is_pending());
        drop(call);
        go.send(()).unwrap();
        let got = result
            .recv_timeout(Duration::from_secs(30))
            .expect("the blocking call never ran");
        assert_eq!(got, Err(ErrorCode::Cancelled));
        assert!(!tmp.path().join("late.txt").exists());
    }
}
