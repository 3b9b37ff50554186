//! `miniclaw` (000) against the real native tools.

use super::Ws;
use serde_json::json;

const P: &str = "miniclaw";

#[test]
fn the_five_tools_round_trip_with_the_plans_texts() {
    let ws = Ws::open();
    let r = ws.call(
        P,
        "write_file",
        json!({"path": "notes/a.md", "content": "one\n"}),
    );
    assert_eq!(r["ok"], true, "{r}");
    assert_eq!(r["text"], "ok: wrote 4 bytes to notes/a.md");
    assert_eq!(r["data"]["created"], true);
    let r = ws.call(
        P,
        "write_file",
        json!({"path": "notes/a.md", "content": "two\n"}),
    );
    assert_eq!(
        r["text"],
        "ok: wrote 4 bytes to notes/a.md (replaced the existing file)"
    );
    assert_eq!(r["warnings"], json!(["file exists, overwriting"]));
    let r = ws.call(
        P,
        "append_file",
        json!({"path": "notes/a.md", "content": "three\n"}),
    );
    assert_eq!(
        r["text"],
        "ok: appended 6 bytes to notes/a.md (now 10 bytes)"
    );
    let r = ws.call(P, "read_file", json!({"path": "notes/a.md"}));
    assert_eq!(r["text"], "two\nthree\n");
    assert_eq!(r["data"]["content"], "two\nthree\n");
    let r = ws.call(
        P,
        "edit_file",
        json!({"path": "notes/a.md", "old_text": "two", "new_text": "2"}),
    );
    assert_eq!(r["text"], "ok: edited notes/a.md: 1 match(es), 1 replaced");
    assert_eq!(ws.read("notes/a.md").as_deref(), Some("2\nthree\n"));
    let r = ws.call(P, "list_dir", json!({}));
    assert_eq!(r["text"], ". (1 entry)\nnotes/");
    assert_eq!(r["data"]["entries"][0]["name"], "notes");
}

#[test]
fn errors_carry_the_category_and_the_plans_phrase() {
    let ws = Ws::open();
    ws.write("a.txt", "x x\n");
    ws.write("bin.dat", b"\x00\x01");
    let cases = [
        (
            "read_file",
            json!({"path": ""}),
            "invalid_path",
            "path must not be empty",
        ),
        (
            "read_file",
            json!({"path": "../etc/passwd"}),
            "outside_workspace",
            "resolved path escapes workspace",
        ),
        (
            "read_file",
            json!({"path": "/etc/passwd"}),
            "outside_workspace",
            "resolved path escapes workspace",
        ),
        (
            "read_file",
            json!({"path": "nope.txt"}),
            "path_not_found",
            "file does not exist",
        ),
        (
            "read_file",
            json!({"path": "bin.dat"}),
            "io_error",
            "file appears to be binary or invalid utf-8",
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_text": "y", "new_text": "z"}),
            "edit_not_found",
            "old_text not found",
        ),
        (
            "edit_file",
            json!({"path": "a.txt", "old_text": "x", "new_text": "z"}),
            "ambiguous_edit",
            "old_text matched multiple locations",
        ),
    ];
    for (tool, args, code, phrase) in cases {
        let r = ws.call(P, tool, args.clone());
        assert_eq!(r["ok"], false, "{tool} {args}: {r}");
        assert_eq!(r["error"]["code"], code, "{tool} {args}: {r}");
        let text = r["text"].as_str().expect("text");
        assert!(
            text.starts_with(&format!("{code}: {phrase}")),
            "{tool} {args}: {text}"
        );
    }
}

#[test]
fn only_the_plans_arguments_are_accepted() {
    let ws = Ws::open();
    ws.write("a.txt", "1\n2\n");
    let r = ws.call(P, "read_file", json!({"path": "a.txt", "start_line": 2}));
    assert_eq!(r["error"]["code"], "invalid_arguments");
    assert!(
        r["text"]
            .as_str()
            .unwrap()
            .contains("unknown field `start_line`"),
        "{r}"
    );
    let r = ws.call(
        P,
        "write_file",
        json!({"path": "a.txt", "content": "x", "mode": "create"}),
    );
    assert_eq!(r["error"]["code"], "invalid_arguments");
    let r = ws.call(P, "list_dir", json!({"depth": 3}));
    assert_eq!(r["error"]["code"], "invalid_arguments");
    let r = ws.call(P, "delete_file", json!({"path": "a.txt"}));
    assert_eq!(r["error"]["code"], "unknown_tool");
    assert!(r["text"]
        .as_str()
        .unwrap()
        .ends_with("read_file, write_file, append_file, list_dir, edit_file"));
    assert!(ws.read("a.txt").is_some());
}
