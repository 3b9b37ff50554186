"""Every tool through its typed method, the generic calls, and read_file's fast path."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
from pathlib import Path

import pytest

import wsfs

from conftest import write


def test_workspace_open_reports_root_and_limits(root):
    with wsfs.Workspace(root, limits=wsfs.Limits(max_read_bytes=1000)) as ws:
        assert ws.root == str(root)
        assert ws.restrict_to_workspace is True
        assert ws.limits.max_read_bytes == 1000
        assert ws.limits.max_write_bytes == 1048576  # the library's default, filled in
        assert ws.handle > 0 and not ws.closed
        assert ws.info["workspace"] == ws.handle
    assert ws.closed
    ws.close()  # idempotent


def test_limits_mapping_and_from_config(root):
    with wsfs.Workspace(root, limits={"max_list_entries": 7}) as ws:
        assert ws.limits.max_list_entries == 7
    with wsfs.Workspace.from_config({"root": str(root), "limits": {"max_read_bytes": 5}}) as ws:
        assert ws.limits.max_read_bytes == 5


def test_config_keys_pass_through_to_the_library(root):
    # An unknown key reaches the library, which refuses it today: policy and state_dir are
    # passed the same way and will work once the library accepts them.
    with pytest.raises(wsfs.InvalidArguments, match="no_such_key"):
        wsfs.Workspace(root, config={"no_such_key": 1})
    with pytest.raises(ValueError, match="limits"):
        wsfs.Workspace(root, config={"limits": {}})


def test_write_read_append_edit(ws, root):
    r = ws.write_file("dir/a.txt", "hello\r\nworld")
    assert r == wsfs.WriteFileResult(
        text=r.text, warnings=(), path="dir/a.txt", bytes_written=12, created=True
    )
    assert "dir/a.txt" in r.text
    r = ws.write_file(Path("dir/a.txt"), "hello\r\nworld")  # os.PathLike paths work too
    assert r.created is False and r.warnings == ("file exists, overwriting",)
    r = ws.append_file("dir/a.txt", "\n")
    assert (r.bytes_appended, r.size) == (1, 13)
    r = ws.edit_file("dir/a.txt", "world", "wsfs")
    assert (r.matches, r.replaced) == (1, 1)
    r = ws.read_file("dir/a.txt")
    on_disk = (root / "dir" / "a.txt").read_bytes()
    assert on_disk == b"hello\r\nwsfs\n"
    assert r.content == r.text == "hello\r\nwsfs\n"
    assert (r.bytes, r.total_bytes, r.truncated) == (12, 12, False)
    assert r.sha256 == hashlib.sha256(on_disk).hexdigest()
    assert r.start_line is None and r.warnings == ()


def test_results_are_frozen(ws):
    r = ws.write_file("a.txt", "x")
    with pytest.raises(dataclasses.FrozenInstanceError):
        r.path = "b.txt"  # type: ignore[misc]


def test_content_is_passed_as_utf8_bytes(ws, root):
    text = 'quote " backslash \\ newline \n tab \t ünïcödé 🎉 \u2028'
    assert ws.write_file("u.txt", text).bytes_written == len(text.encode())
    assert (root / "u.txt").read_bytes().decode("utf-8") == text
    assert ws.read_file("u.txt").content == text
    with pytest.raises(wsfs.InvalidArguments, match="UTF-8"):
        ws.write_file("s.txt", "lone \udc80 surrogate")
    assert not (root / "s.txt").exists()


def test_read_range(ws, root):
    write(root / "lines.txt", "".join(f"line {i}\r\n" for i in range(1, 201)))
    r = ws.read_file("lines.txt", start_line=10, max_lines=2, line_numbers=True)
    assert r.content == "line 10\r\nline 11\r\n"
    assert (r.start_line, r.end_line, r.total_lines, r.next_start_line) == (10, 11, 200, 12)
    assert r.text == "10| line 10\r\n11| line 11\r\n[lines 10-11 of 200; continue with start_line=12, max_lines=2, line_numbers=true]"
    with pytest.raises(wsfs.LineOutOfRange, match="200"):
        ws.read_file("lines.txt", start_line=201)


@pytest.mark.parametrize(
    "content",
    ["plain text\n", "", "é" * 600, "é" * 600 + "\n" + "x" * 100, "ab\n" * 400],
    ids=["small", "empty", "cut-mid-line", "cut-after-newline", "cut-at-newline"],
)
def test_fast_read_text_matches_the_library(root, content):
    """The typed read takes "data_raw" and rebuilds the text; the library renders it in a
    full envelope (call_json). They must agree, truncation notice included."""
    with wsfs.Workspace(root, limits={"max_read_bytes": 1000}) as ws:
        write(root / "f.txt", content)
        fast = ws.read_file("f.txt")
        full = ws.call_json("read_file", '{"path": "f.txt"}')
        assert full["ok"] is True
        assert fast.text == full["text"]
        assert fast.content == full["data"]["content"]
        assert dataclasses.asdict(fast) == dataclasses.asdict(
            wsfs.ReadFileResult.from_data(full["data"], full["text"], tuple(full["warnings"]))
        )
        fast_envelope = ws.call("read_file", path="f.txt")  # call() takes the fast path too
        for envelope in (fast_envelope, full):  # the same figures; each call took its own time
            assert envelope["metrics"].pop("duration_us") >= 0
        assert fast_envelope == full


def test_list_dir_flat_and_tree(ws, root):
    write(root / "d" / "b.txt", "bb")
    write(root / "d" / "sub" / "c.py", "c")
    (root / "d" / "link").symlink_to("b.txt")
    r = ws.list_dir("d")
    assert r.entries == (
        wsfs.DirEntry("b.txt", "file", 2),
        wsfs.DirEntry("link", "symlink", 5),
        wsfs.DirEntry("sub", "dir", r.entries[2].size),
    )
    assert (r.total, r.truncated, r.tree) == (3, False, None)
    r = ws.list_dir("d", depth=3)
    assert r.entries == () and r.total == 4
    assert r.tree == wsfs.TreeNode(
        ".",
        "dir",
        children=(
            wsfs.TreeNode("b.txt", "file", size=2),
            wsfs.TreeNode("link", "symlink"),
            wsfs.TreeNode("sub", "dir", children=(wsfs.TreeNode("c.py", "file", size=1),)),
        ),
    )
    assert "sub/" in r.text


def test_get_path_info(ws, root):
    write(root / "f.txt", "one\ntwo\n")
    r = ws.get_path_info("f.txt")
    assert (r.exists, r.type, r.size, r.line_count) == (True, "file", 8, 2)
    assert r.mode == "%04o" % (os.stat(root / "f.txt").st_mode & 0o7777)
    assert r.modified.endswith("Z") and r.readable is True and r.writable is True
    assert r.sha256 == hashlib.sha256(b"one\ntwo\n").hexdigest()
    missing = ws.get_path_info("f.tx")
    assert (missing.exists, missing.type, missing.size) == (False, None, None)
    assert "did you mean f.txt?" in missing.text


def test_find_files_and_search_text(ws, root):
    write(root / "src" / "a.py", "import os\nneedle = 'ü'\n")
    write(root / "src" / "b.rs", "fn main() {}\n")
    write(root / ".hidden" / "c.py", "needle\n")
    r = ws.find_files("*.py")
    assert (r.files, r.truncated) == (("src/a.py",), False)
    assert ws.find_files("*.py", include_hidden=True).files == (".hidden/c.py", "src/a.py")
    r = ws.search_text("NEEDLE", case_sensitive=False, context_lines=1)
    assert r.matches == (wsfs.TextMatch("src/a.py", 2, 1, "needle = 'ü'", 0, 6, before=("import os",)),)
    assert (r.files_searched, r.binary_files_skipped, r.files_skipped, r.truncated) == (2, 0, 0, False)
    r = ws.search_text(r"fn \w+", use_regex=True, glob="*.rs")
    assert [m.file for m in r.matches] == ["src/b.rs"]


def test_apply_patch_forms_rejections_and_dry_run(ws, root):
    write(root / "a.txt", "one\ntwo\nthree\n")
    write(root / "b.txt", "alpha\r\nbeta\r\n")
    patch = (
        "--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n"
        "--- a/b.txt\n+++ b/b.txt\n@@ -1,2 +1,3 @@\n alpha\n beta\n+gamma\n"
    )
    dry = ws.apply_patch(patch=patch, dry_run=True)
    assert dry.applied and (root / "a.txt").read_text() == "one\ntwo\nthree\n"
    r = ws.apply_patch(patch=patch)
    assert r.applied and r.rejected_hunks == ()
    assert [(c.path, c.action, c.added_lines, c.removed_lines) for c in r.files_changed] == [
        ("a.txt", "update", 1, 1),
        ("b.txt", "update", 1, 0),
    ]
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    # Added lines take the file's CRLF line ending.
    assert (root / "b.txt").read_bytes() == b"alpha\r\nbeta\r\ngamma\r\n"
    assert "+TWO" in r.diff
    # A stale guard rejects the file's hunks; strict writes nothing, and nothing is raised.
    edits = [{"path": "a.txt", "file_hash": "0" * 64,
              "hunks": [{"start_line": 1, "end_line": 1, "replace_with": "ONE\n"}]}]
    r = ws.apply_patch(files=edits)
    assert not r.applied and [h.reason for h in r.rejected_hunks] == ["stale"]
    assert (root / "a.txt").read_text() == "one\nTWO\nthree\n"
    sha = ws.read_file("a.txt").sha256
    edits[0]["file_hash"] = sha
    r = ws.apply_patch(files=edits)
    assert r.applied and (root / "a.txt").read_text() == "ONE\nTWO\nthree\n"
    moved = ws.apply_patch(patch="*** Begin Patch\n*** Update File: a.txt\n*** Move to: c.txt\n"
                           "@@\n-ONE\n+one\n*** End Patch\n")
    assert moved.files_changed[0].action == "move" and moved.files_changed[0].from_path == "a.txt"
    assert (root / "c.txt").read_text() == "one\nTWO\nthree\n" and not (root / "a.txt").exists()


def test_call_returns_envelopes_and_never_raises_for_tool_failures(ws, root):
    env = ws.call("write_file", path="c.txt", content="x")
    assert env["ok"] is True and env["data"]["created"] is True and isinstance(env["text"], str)
    assert (root / "c.txt").read_text() == "x"
    env = ws.call("get_path_info", path="c.txt")
    assert env["data"]["size"] == 1
    env = ws.call("read_file", path="missing.txt")
    assert env["ok"] is False and env["error"]["code"] == "path_not_found"
    assert env["text"].startswith("path_not_found: ")
    assert ws.call("rm_rf", path=".")["error"]["code"] == "unknown_tool"
    assert ws.call("list_dir", recursive=True)["error"]["code"] == "invalid_arguments"
    env = ws.call_json("list_dir", '{"path": "."}')
    assert [e["name"] for e in env["data"]["entries"]] == ["c.txt"]
    assert ws.call_json("list_dir", "{not json")["error"]["code"] == "invalid_arguments"


def test_escapes_are_refused(ws, root, tmp_path):
    outside = tmp_path / "outside"
    write(outside / "secret.txt", "TOPSECRET")
    (root / "out").symlink_to(outside)
    for path in ("../outside/secret.txt", str(outside / "secret.txt"), "out/secret.txt"):
        with pytest.raises(wsfs.OutsideWorkspace) as e:
            ws.read_file(path)
        assert "TOPSECRET" not in str(e.value)
        with pytest.raises(wsfs.OutsideWorkspace):
            ws.write_file(path, "pwned")
    assert (outside / "secret.txt").read_text() == "TOPSECRET"


def test_tool_specs_shapes():
    library = wsfs.tool_specs("wsfs")
    names = [s["name"] for s in library]
    openai = wsfs.tool_specs()
    assert [s["type"] for s in openai] == ["function"] * len(names)
    assert [s["function"]["name"] for s in openai] == names
    assert all(set(s["function"]) == {"name", "description", "parameters"} for s in openai)
    anthropic = wsfs.tool_specs(format="anthropic")
    assert [s["name"] for s in anthropic] == names
    assert all(set(s) == {"name", "description", "input_schema"} for s in anthropic)
    assert anthropic[0]["input_schema"] == library[0]["parameters"] == openai[0]["function"]["parameters"]
    read_only = [s["name"] for s in wsfs.tool_specs("anthropic", read_only=True)]
    assert "read_file" in read_only and "write_file" not in read_only
    assert read_only == [s["name"] for s in library if s["annotations"]["readOnlyHint"]]
    anthropic[0]["input_schema"]["properties"].clear()  # a copy: the next call is intact
    assert wsfs.tool_specs("anthropic")[0]["input_schema"]["properties"]
    json.dumps(openai)
    with pytest.raises(ValueError, match="anthropic"):
        wsfs.tool_specs("xml")  # type: ignore[arg-type]


def test_paths_must_be_text(ws, root):
    write(root / "f.txt", "x")
    for call in (lambda: ws.read_file(b"f.txt"), lambda: ws.get_path_info(b"f.txt")):
        with pytest.raises(wsfs.InvalidArguments):
            call()  # type: ignore[arg-type]
    with pytest.raises(wsfs.InvalidArguments):  # cannot be sent at all: raised, not returned
        ws.call("get_path_info", path=b"f.txt")


def test_write_modes_and_create_directory(ws, root):
    r = ws.write_file("new.txt", "one\n", mode="create")
    assert r.created and not r.existed_before and (root / "new.txt").read_text() == "one\n"
    with pytest.raises(wsfs.errors.FileExists) as e:
        ws.write_file("new.txt", "two\n", mode="create")
    assert e.value.code == "file_exists"
    assert (root / "new.txt").read_text() == "one\n"
    r = ws.write_file("new.txt", "two\n", mode="append")
    assert (root / "new.txt").read_text() == "one\ntwo\n"
    r = ws.write_file("new.txt", "three\n")
    assert r.existed_before and not r.created
    with pytest.raises(wsfs.errors.InvalidArguments):
        ws.write_file("new.txt", "x", mode="replace")

    d = ws.create_directory("a/b/c")
    assert (d.path, d.created, d.parents_created) == ("a/b/c", True, 2)
    assert (root / "a/b/c").is_dir()
    again = ws.create_directory("a/b/c")
    assert not again.created and again.parents_created == 0
    with pytest.raises(wsfs.errors.PathNotFound):
        ws.create_directory("x/y", parents=False)
    with pytest.raises(wsfs.errors.NotADirectory):
        ws.create_directory("new.txt")


def test_policy_is_passed_to_the_library(root):
    write(root / ".env", "SECRET=1\n")
    write(root / "app.py", "print(1)\n")
    policy = {"deny_read": [".env"], "deny_write": ["*.py"]}
    with wsfs.Workspace(root, policy=policy) as ws:
        with pytest.raises(wsfs.errors.PolicyDenied) as e:
            ws.read_file(".env")
        assert "'.env'" in e.value.message
        with pytest.raises(wsfs.errors.PolicyDenied):
            ws.write_file("app.py", "x")
        assert ws.read_file("app.py").content == "print(1)\n"
        assert ws.list_dir(".").denied == 1
    with wsfs.Workspace(root, policy={"writes_enabled": False}) as ws:
        with pytest.raises(wsfs.errors.WritesDisabled):
            ws.create_directory("d")
        assert not (root / "d").exists()


def test_move_and_delete(ws, root):
    write(root / "a.txt", "alpha\n")
    r = ws.move_file("a.txt", "docs/b.txt")
    assert (r.moved_from, r.moved_to, r.type, r.replaced, r.dirs_created) == (
        "a.txt", "docs/b.txt", "file", False, ("docs",))
    assert (root / "docs/b.txt").read_text() == "alpha\n" and not (root / "a.txt").exists()
    write(root / "c.txt", "c")
    with pytest.raises(wsfs.errors.FileExists):
        ws.move_file("c.txt", "docs/b.txt")
    assert ws.move_file("c.txt", "docs/b.txt", overwrite=True).replaced
    assert (root / "docs/b.txt").read_text() == "c"
    with pytest.raises(wsfs.errors.RecursiveRequired):
        ws.delete_file("docs")
    d = ws.delete_file("docs", recursive=True)
    assert (d.deleted, d.was_directory, d.entries_removed, d.stopped) == (True, True, 2, None)
    assert not (root / "docs").exists()
    with pytest.raises(wsfs.errors.OutsideWorkspace):
        ws.move_file("../x", "y")


def test_read_file_encoding_errors_replace(ws, root):
    (root / "latin1.txt").write_bytes(b"caf\xe9\n")
    with pytest.raises(wsfs.IoError):
        ws.read_file("latin1.txt")
    r = ws.read_file("latin1.txt", encoding_errors="replace")
    assert r.content == "caf\ufffd\n" and r.encoding_errors is True and r.total_bytes == 5
    assert ws.read_file("latin1.txt", encoding_errors="replace", start_line=1).encoding_errors
