"""Overlay sessions from Python: the agent's writes stay in the session; the host diffs,
checkpoints, rewinds and commits part, checking the base on disk at each step."""

from __future__ import annotations

from pathlib import Path

import pytest

import wsfs
from conftest import write


def lines(n: int, repl: dict[int, str] | None = None) -> str:
    repl = repl or {}
    return "".join(repl.get(i, f"line {i}") + "\n" for i in range(1, n + 1))


@pytest.fixture
def overlay(root: Path, tmp_path: Path):
    write(root / "a.txt", lines(20))
    write(root / "b.txt", "bee\n")
    write(root / "gone.txt", "going\n")
    write(root / "m.txt", lines(20))
    state = tmp_path / "state"
    try:
        ws = wsfs.Workspace(root, state_dir=state, mode="overlay", session="t1")
        ws.list_dir(".")  # a refusal may come with the first call
    except wsfs.OverlayUnavailable as e:
        pytest.skip(f"this kernel refuses the overlay view: {e}")
    with ws:
        yield ws


def test_session(overlay: wsfs.Workspace, root: Path):
    ws = overlay
    assert (ws.mode, ws.session) == ("overlay", "t1")
    a_new = lines(20, {2: "LINE TWO", 18: "LINE EIGHTEEN"})
    ws.write_file("a.txt", a_new)
    ws.write_file("c.txt", "sea\n")
    ws.delete_file("gone.txt")
    assert (root / "a.txt").read_text() == lines(20)
    assert not (root / "c.txt").exists()
    assert ws.read_file("a.txt").content == a_new

    d = ws.session_diff()
    assert [(c.status, c.path) for c in d.changes] == [("D", "gone.txt"), ("M", "a.txt"), ("A", "c.txt")]
    a = d.changes[1]
    assert a.type == "file" and not a.binary and len(a.hunks) == 2
    assert (a.bytes_before, a.bytes_after) == (len(lines(20)), len(a_new))
    assert d.changes[2].bytes_before is None
    assert "+LINE TWO" in d.unified and not d.truncated and d.text
    bounded = ws.session_diff(["c.txt"], max_bytes=10)
    assert len(bounded.changes) == 1 and bounded.truncated

    cp = ws.session_checkpoint("before b")
    ws.write_file("b.txt", "changed\n")
    [listed] = ws.session_checkpoints()
    assert (listed.id, listed.label) == (cp, "before b") and listed.time
    ws.session_rewind(cp)
    assert ws.read_file("b.txt").content == "bee\n"
    with pytest.raises(wsfs.InvalidArguments):
        ws.session_rewind("no-such-checkpoint")

    c = ws.session_commit(["c.txt", "gone.txt"])
    assert c.committed and sorted(c.files) == ["c.txt", "gone.txt"] and not c.conflicts
    assert (root / "c.txt").read_text() == "sea\n"
    assert not (root / "gone.txt").exists()
    assert (root / "a.txt").read_text() == lines(20)

    c = ws.session_commit(hunks={"a.txt": [a.hunks[0].id]})
    assert c.committed
    assert (root / "a.txt").read_text() == lines(20, {2: "LINE TWO"})
    [rest] = ws.session_diff().changes
    assert rest.path == "a.txt" and len(rest.hunks) == 1
    assert ws.session_commit(["a.txt"]).committed
    assert (root / "a.txt").read_text() == a_new

    # The base changes outside: a conflict, nothing written; the merge commits both.
    ws.write_file("m.txt", lines(20, {18: "session"}))
    outside = lines(20, {2: "outside"})
    write(root / "m.txt", outside)
    ws.session_refresh()
    c = ws.session_commit()
    assert not c.committed
    assert c.conflicts == (wsfs.CommitConflict("m.txt", True, True, True),)
    assert (root / "m.txt").read_text() == outside
    c = ws.session_commit(merge=True)
    assert c.committed and c.merged == ("m.txt",)
    assert (root / "m.txt").read_text() == lines(20, {2: "outside", 18: "session"})

    ws.write_file("b.txt", "dropped\n")
    ws.session_discard()
    assert ws.session_diff().changes == ()
    assert (root / "b.txt").read_text() == "bee\n"
    env = ws.session_call("checkpoints")
    assert env["ok"] and env["data"]["checkpoints"] == []


def test_no_session(ws: wsfs.Workspace):
    assert (ws.mode, ws.session) == ("host", None)
    for call in (
        ws.session_diff,
        ws.session_commit,
        ws.session_checkpoint,
        lambda: ws.session_rewind("x"),
        ws.session_checkpoints,
        ws.session_discard,
        ws.session_refresh,
    ):
        with pytest.raises(wsfs.NoSession):
            call()
    env = ws.session_call("diff", '{"paths":["a"]}')
    assert env["ok"] is False and env["error"]["code"] == "no_session"
    with pytest.raises(wsfs.InvalidArguments):
        ws.session_call("merge")
    with pytest.raises(wsfs.InvalidArguments):
        ws.session_call("diff", '{"paths":["a\0"]}')


def test_session_keys_need_overlay_mode(root: Path):
    with pytest.raises(wsfs.InvalidArguments):
        wsfs.Workspace(root, session="s")


def test_mode_env():
    base = {"root": "/x", "mode": "overlay", "session": "a", "session_refresh_ms": 5}
    assert wsfs.apply_tool_env({"root": "/x"}, {"WORKSPACE_FS_MODE": "overlay"}) == {"root": "/x", "mode": "overlay"}
    assert wsfs.apply_tool_env(base, {"WORKSPACE_FS_MODE": "host"}) == {"root": "/x", "mode": "host"}
    assert wsfs.apply_tool_env(base, {"WORKSPACE_FS_SESSION": "b"})["session"] == "b"
    assert wsfs.apply_tool_env({"root": "/x"}, {"WORKSPACE_FS_MODE": "overlay", "WORKSPACE_FS_SESSION": "s"}) == {
        "root": "/x",
        "mode": "overlay",
        "session": "s",
    }
    with pytest.raises(wsfs.InvalidArguments, match="WORKSPACE_FS_SESSION"):
        wsfs.apply_tool_env({"root": "/x"}, {"WORKSPACE_FS_SESSION": "s"})


def test_session_include_ignored(root: Path, tmp_path: Path):
    """A cache and a .gitignore'd file stay out of session_diff and session_commit (counted
    in ``ignored``, kept in the session) until ``include_ignored=True`` takes them."""
    write(root / ".gitignore", "*.log\n")
    write(root / "a.txt", "a\n")
    try:
        ws = wsfs.Workspace(root, state_dir=tmp_path / "state", mode="overlay", session="t1")
        ws.list_dir(".")
    except wsfs.OverlayUnavailable as e:
        pytest.skip(f"this kernel refuses the overlay view: {e}")
    with ws:
        ws.write_file("a.txt", "A\n")
        ws.write_file("run.log", "log\n")
        ws.write_file(".mypy_cache/3.12/m.json", "{}\n")
        d = ws.session_diff()
        assert [c.path for c in d.changes] == ["a.txt"]
        assert d.ignored == 4
        every = ws.session_diff(include_ignored=True)
        assert {c.path for c in every.changes} >= {"run.log", ".mypy_cache/3.12/m.json"}
        assert every.ignored == 0
        c = ws.session_commit()
        assert c.committed and c.files == ("a.txt",) and c.ignored == 4
        assert not (root / "run.log").exists()
        assert ws.read_file("run.log").content == "log\n"
        c = ws.session_commit(include_ignored=True)
        assert c.committed and c.ignored == 0
        assert (root / "run.log").read_text() == "log\n"
