"""FileSystemTools: the dict shapes, writes disabled, settings, logging, cancellation."""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import threading
import types
from pathlib import Path

import pytest

import wsfs
from wsfs.specs import EXEC_TOOLS, is_read_only

from conftest import write

WRITING_ARGS = {
    "write_file": {"path": "new.txt", "content": "secret content"},
    "append_file": {"path": "new.txt", "content": "secret content"},
    "edit_file": {"path": "f.txt", "old_text": "one", "new_text": "secret content"},
    "apply_patch": {"patch": "--- /dev/null\n+++ b/new.txt\n@@ -0,0 +1 @@\n+secret content\n"},
    "create_directory": {"path": "newdir"},
    "move_file": {"src": "f.txt", "dst": "moved.txt"},
    "delete_file": {"path": "f.txt"},
}


def run(coro):
    return asyncio.run(coro)


@pytest.fixture
def tools(root):
    with wsfs.FileSystemTools(root=root, writes_enabled=True) as t:
        yield t


def test_success_and_failure_shapes(tools, root):
    write(root / "f.txt", "one\n")
    r = run(tools.read_file(path="f.txt"))
    assert set(r) == {"success", "result", "message"} and r["success"] is True
    assert r["result"]["content"] == "one\n" and r["result"]["bytes"] == 4
    assert r["message"] == "read f.txt: 4 bytes"
    r = run(tools.list_dir())
    assert r["success"] is True and [e["name"] for e in r["result"]["entries"]] == ["f.txt"]
    assert r["message"].startswith(". (1 entry)")
    r = run(tools.read_file("missing.txt"))  # positional arguments work too
    assert set(r) == {"success", "error", "message"}
    assert r == {"success": False, "error": "path_not_found", "message": r["message"]}
    assert "missing.txt" in r["message"] and not r["message"].startswith("path_not_found")
    r = run(tools.write_file(path="../x", content="y"))
    assert (r["success"], r["error"]) == (False, "outside_workspace")


def test_a_serialised_read_holds_the_content_once(tools, root):
    """A framework that serialises the whole dict for the model sends the content once: in
    ``result["content"]`` (Agent Base's read_file result), while ``message`` keeps the rest of
    the library's text: a summary, and the notices that say what was left out and how to go on.
    With line numbers the numbered lines are the message and ``result`` has no content."""
    marker = "MARKER-7f3a"
    write(root / "f.txt", f"head\n{marker} in the middle\ntail\n")
    for args in ({"path": "f.txt"}, {"path": "f.txt", "start_line": 2, "max_lines": 1}):
        r = run(tools.read_file(**args))
        assert r["success"] and marker in r["result"]["content"], r
        assert json.dumps(r).count(marker) == 1, (args, r)
        assert marker not in r["message"] and r["message"].startswith("read f.txt: "), r
    assert "[line 2 of 3; continue with start_line=3, max_lines=1]" in r["message"]
    r = run(tools.read_file(path="f.txt", start_line=2, max_lines=1, line_numbers=True))
    assert r["success"] and json.dumps(r).count(marker) == 1, r
    assert r["message"] == f"2| {marker} in the middle\n[line 2 of 3; continue with start_line=3, max_lines=1, line_numbers=true]"
    assert "content" not in r["result"] and r["result"]["start_line"] == 2
    # A truncated read keeps the library's notice, and an empty file says so.
    with wsfs.FileSystemTools(root=root, max_read_bytes=8) as small:
        r = run(small.read_file(path="f.txt"))
    assert r["result"]["content"] == "head\n" and json.dumps(r).count("head") == 1, r
    assert r["message"] == (
        "read f.txt: 5 bytes\n[truncated: showing line 1 (5 of 36 bytes); max_read_bytes is 8; continue with start_line=2]"
    )
    write(root / "empty.txt", "")
    assert run(tools.read_file(path="empty.txt"))["message"] == "(empty file)"


def test_every_tool_runs(tools, root):
    write(root / "f.txt", "one\ntwo\n")
    results = {
        "read_file": run(tools.read_file(path="f.txt", start_line=2)),
        "write_file": run(tools.write_file(path="w.txt", content="w", mode="create")),
        "create_directory": run(tools.create_directory(path="d/e")),
        "move_file": run(tools.move_file(src="d/e", dst="d/e2")),
        "delete_file": run(tools.delete_file(path="d", recursive=True)),
        "append_file": run(tools.append_file(path="w.txt", content="+")),
        "list_dir": run(tools.list_dir(path=".", depth=2)),
        "edit_file": run(tools.edit_file(path="f.txt", old_text="two", new_text="2")),
        "get_path_info": run(tools.get_path_info(path="f.txt")),
        "find_files": run(tools.find_files(pattern="*.txt")),
        "search_text": run(tools.search_text(query="one")),
        "apply_patch": run(tools.apply_patch(patch="--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-one\n+ONE\n")),
    }
    assert set(results) == {t.__name__ for t in tools.get_tools()}
    assert all(r["success"] for r in results.values()), results
    assert results["read_file"]["result"]["content"] == "two\n"
    assert (root / "w.txt").read_text() == "w+" and (root / "f.txt").read_text() == "ONE\n2\n"
    assert results["find_files"]["result"]["files"] == ["f.txt", "w.txt"]


def test_bad_calls_never_raise(tools):
    assert run(tools.list_dir(recursive=True))["error"] == "invalid_arguments"
    assert run(tools.read_file())["error"] == "invalid_arguments"
    assert run(tools.read_file("a", "b", "c", "d", "e"))["error"] == "invalid_arguments"
    assert run(tools.read_file("a", path="b"))["error"] == "invalid_arguments"
    assert run(tools.read_file(path=42))["error"] == "invalid_arguments"
    assert run(tools.read_file(path="a\0b"))["error"] == "invalid_path"
    assert run(tools.call("nope", {}))["error"] == "unknown_tool"
    assert run(tools.call("read_file", "{not json"))["error"] == "invalid_arguments"
    assert run(tools.call("read_file", "[1]"))["error"] == "invalid_arguments"


def test_call_by_name_with_json_arguments(tools, root):
    write(root / "f.txt", "x")
    r = run(tools.call("read_file", '{"path": "f.txt"}'))
    assert r["success"] and r["result"]["content"] == "x"
    r = run(tools.call("get_path_info", {"path": "f.txt"}))
    assert r["result"]["size"] == 1


def test_writes_disabled_by_default(root):
    write(root / "f.txt", "one\n")
    with wsfs.FileSystemTools(root=root) as tools:
        assert tools.writes_enabled is False
        # The file tools (the developer tools are not offered without exec: test_devtools.py).
        writing = [s["name"] for s in wsfs.tool_specs("wsfs") if not is_read_only(s) and s["name"] not in EXEC_TOOLS]
        assert sorted(writing) == sorted(WRITING_ARGS)
        for name in writing:
            r = run(getattr(tools, name)(**WRITING_ARGS[name]))
            assert r["success"] is False and r["error"] == "writes_disabled", r
            assert "filesystem_writes_enabled" in r["message"]
            r = run(tools.call(name, WRITING_ARGS[name]))
            assert r["error"] == "writes_disabled"
        assert sorted(os.listdir(root)) == ["f.txt"] and (root / "f.txt").read_text() == "one\n"
        assert run(tools.read_file(path="f.txt"))["success"] is True
        listed = [s["function"]["name"] for s in tools.tool_specs()]
        assert listed and not set(listed) & set(writing)


def test_get_tools_offers_no_tool_that_can_only_fail(root):
    """While writes are disabled, by the setting or by the workspace's policy, get_tools() and
    tool_specs() offer only the read-only tools: every other one could only fail."""
    # The file tools: the developer tools are offered only with exec on (test_devtools.py).
    every = [s["name"] for s in wsfs.tool_specs("wsfs") if s["name"] not in EXEC_TOOLS]
    read_only = [s["name"] for s in wsfs.tool_specs("wsfs") if is_read_only(s) and s["name"] not in EXEC_TOOLS]
    assert 0 < len(read_only) < len(every)

    def offered(tools):
        names = [t.__name__ for t in tools.get_tools()]
        assert names == [s["function"]["name"] for s in tools.tool_specs()]
        return names

    with wsfs.FileSystemTools(root=root) as tools:
        assert offered(tools) == read_only
    with wsfs.FileSystemTools(root=root, writes_enabled=True) as tools:
        assert offered(tools) == every
    with wsfs.Workspace(root, policy={"writes_enabled": False}) as ws:
        tools = wsfs.FileSystemTools(workspace=ws, writes_enabled=True)
        assert offered(tools) == read_only
        # Called anyway, a changing tool is refused by the library.
        assert run(tools.write_file(path="x.txt", content="y"))["error"] == "writes_disabled"
    assert not (root / "x.txt").exists()


def test_writes_disabled_never_reaches_the_library(root, monkeypatch):
    with wsfs.FileSystemTools(root=root) as tools:

        def refuse(*args, **kwargs):
            raise AssertionError("the library was called")

        monkeypatch.setattr(tools.workspace, "_envelope", refuse)
        assert run(tools.write_file(path="x", content="y"))["error"] == "writes_disabled"
        with pytest.raises(AssertionError):
            run(tools.read_file(path="x"))


def test_settings_object_and_mapping(root):
    write(root / "f.txt", "x" * 100)
    settings = wsfs.FileSystemSettings(
        workspace_root=root,
        filesystem_writes_enabled=True,
        filesystem_max_read_bytes=10,
        filesystem_max_write_bytes=20,
    )
    with wsfs.FileSystemTools(settings) as tools:
        assert tools.writes_enabled and tools.root == str(root)
        assert tools.workspace.limits.max_read_bytes == 10 and tools.workspace.limits.max_write_bytes == 20
        assert run(tools.read_file(path="f.txt"))["result"]["truncated"] is True
        assert run(tools.write_file(path="g.txt", content="y" * 21))["error"] == "too_large"
    agent_config = types.SimpleNamespace(workspace_root=None, filesystem_writes_enabled=True)
    with wsfs.FileSystemTools(agent_config, root=root, writes_enabled=False) as tools:
        assert tools.writes_enabled is False  # keyword arguments win
    with wsfs.FileSystemTools({"workspace_root": str(root), "filesystem_max_read_bytes": 7}) as tools:
        assert tools.workspace.limits.max_read_bytes == 7 and not tools.writes_enabled


def test_a_misspelt_setting_in_a_mapping_is_refused(root):
    # A typo must not leave the default in force (here: unlimited writes for the agent).
    config = {"workspace_root": str(root), "filesystem_writes_enabeld": True, "model": "x"}
    with pytest.raises(ValueError) as e:
        wsfs.FileSystemTools(config)
    message = str(e.value)
    assert "'filesystem_writes_enabeld'" in message
    for name in ("workspace_root", "filesystem_writes_enabled", "filesystem_max_read_bytes"):
        assert name in message, message
    # The framework's own keys, and any object's attributes, are not FileSystemTools' to judge.
    with wsfs.FileSystemTools({"workspace_root": str(root), "log_level": "info"}):
        pass
    with wsfs.FileSystemTools(types.SimpleNamespace(workspace_root=root, filesystem_other=1)):
        pass


def test_root_order(tmp_path, monkeypatch):
    explicit, from_env, cwd = (tmp_path / n for n in ("explicit", "env", "cwd"))
    for d in (explicit, from_env, cwd):
        d.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("AGENT_WORKSPACE_ROOT", raising=False)
    with wsfs.FileSystemTools() as tools:
        assert tools.root == str(cwd.resolve())
    monkeypatch.setenv("AGENT_WORKSPACE_ROOT", str(from_env))
    with wsfs.FileSystemTools() as tools:
        assert tools.root == str(from_env.resolve())
    with wsfs.FileSystemTools(root=explicit) as tools:
        assert tools.root == str(explicit.resolve())


@pytest.mark.parametrize("where", ["home", "slash"])
def test_broad_root_is_logged_as_a_warning(tmp_path, monkeypatch, caplog, where):
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    root = home if where == "home" else Path("/")
    with caplog.at_level(logging.WARNING, logger="wsfs"):
        with wsfs.FileSystemTools(root=root):
            pass
    warnings = [r for r in caplog.records if r.name == "wsfs" and r.levelno == logging.WARNING]
    # The library's open warnings (the root, and where a journal can go) reach the log.
    assert any(str(root) in w.getMessage() for w in warnings), caplog.records
    caplog.clear()
    # A root beside $HOME (one that holds it would also hold the default state directory,
    # which the library warns about too) gets no warning.
    (tmp_path / "ws").mkdir()
    with caplog.at_level(logging.WARNING, logger="wsfs"):
        with wsfs.FileSystemTools(root=tmp_path / "ws"):
            pass
    assert not caplog.records


def test_one_log_record_per_call_without_contents(tools, root, caplog):
    write(root / "f.txt", "secret content\n")
    with caplog.at_level(logging.INFO, logger="wsfs"):
        run(tools.read_file(path="f.txt"))
        run(tools.write_file(path="g.txt", content="secret content"))
        run(tools.edit_file(path="nope.txt", old_text="secret content", new_text="x"))
    records = [r for r in caplog.records if r.name == "wsfs"]
    assert [(r.wsfs_tool, r.wsfs_path, r.wsfs_outcome) for r in records] == [
        ("read_file", "f.txt", "ok"),
        ("write_file", "g.txt", "ok"),
        ("edit_file", "nope.txt", "path_not_found"),
    ]
    for r in records:
        assert r.levelno == logging.INFO and r.wsfs_duration_ms >= 0
        assert "secret" not in r.getMessage() and "duration_ms=" in r.getMessage()
    caplog.clear()
    with wsfs.FileSystemTools(root=root) as read_only, caplog.at_level(logging.INFO, logger="wsfs"):
        run(read_only.append_file(path="f.txt", content="secret content"))
    assert [r.wsfs_outcome for r in caplog.records] == ["writes_disabled"]


def test_signatures_for_frameworks(tools):
    sig = inspect.signature(tools.find_files)
    assert list(sig.parameters) == ["pattern", "path", "max_results", "include_hidden", "respect_gitignore"]
    assert sig.parameters["pattern"].default is inspect.Parameter.empty
    assert sig.parameters["max_results"].default == 200
    assert sig.parameters["pattern"].annotation.__metadata__[0].startswith("Glob to match")
    assert "Args:\n    pattern: Glob to match" in tools.find_files.__doc__


def test_cancelling_the_task_cancels_the_library_call(tools, monkeypatch):
    """The task is cancelled while the call runs in its thread: the call's cancel token is
    cancelled, so the library stops it (nothing changed) and CancelledError propagates."""
    started, release = threading.Event(), threading.Event()
    seen = {}
    real = tools.workspace._envelope

    def slow_envelope(name, args, timeout, token, **options):
        started.set()
        release.wait(10)
        seen["cancelled"] = token.cancelled
        return real(name, args, timeout, token, **options)

    monkeypatch.setattr(tools.workspace, "_envelope", slow_envelope)

    async def main():
        task = asyncio.create_task(tools.write_file(path="late.txt", content="x"))
        for _ in range(10_000):  # at most about 10 s: a call that never starts fails the test
            if started.is_set() or task.done():
                break
            await asyncio.sleep(0.001)
        assert started.is_set(), task.result() if task.done() else "the call never started"
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()

    run(main())
    deadline = threading.Event()
    for _ in range(500):
        if "cancelled" in seen:
            break
        deadline.wait(0.01)
    assert seen.get("cancelled") is True
    assert not (Path(tools.root) / "late.txt").exists()


def test_refused_calls_are_logged_too(tools, caplog):
    with caplog.at_level(logging.INFO, logger="wsfs"):
        run(tools.call("nope", {}))
        run(tools.call("read_file", "{not json"))
        run(tools.read_file("a", "b"))
    assert [(r.wsfs_tool, r.wsfs_outcome) for r in caplog.records] == [
        ("nope", "unknown_tool"),
        ("read_file", "invalid_arguments"),
        ("read_file", "invalid_arguments"),
    ]


def test_writes_enabled_must_be_a_bool(root):
    with pytest.raises(TypeError, match="bool"):
        wsfs.FileSystemTools({"workspace_root": str(root), "filesystem_writes_enabled": "false"})
