"""Profiles in the Python package: ``Workspace(profile=...)``, ``workspace_tool_specs`` and
``FileSystemTools(profile=...)`` (the agent-base plan's host checks among them)."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path

import pytest

import wsfs
from wsfs.specs import exec_switch_on
from conftest import write


def test_unknown_profile_names_the_known_ones(root: Path) -> None:
    with pytest.raises(wsfs.InvalidArguments) as e:
        wsfs.Workspace(root, profile="agentbase")
    for name in ("wsfs", "miniclaw", "filesystem-tool", "agent-base", "capability-plan"):
        assert name in str(e.value)


def test_workspace_serves_its_profile(root: Path) -> None:
    write(root / "a.txt", "hi\n")
    with wsfs.Workspace(root, profile="filesystem-tool") as ws:
        assert ws.profile == "filesystem-tool"
        assert [s["name"] for s in ws.workspace_tool_specs("anthropic")] == ["filesystem"]
        assert ws.call("filesystem", operation="read", path="a.txt") == {
            "ok": True,
            "result": "hi\n",
            "warnings": [],
        }
        with pytest.raises(wsfs.InvalidArguments, match="filesystem-tool"):
            ws.list_dir(".")
    with wsfs.Workspace(root) as ws:
        assert ws.profile == "wsfs"
        # The native tools the policy lets run (the exec switches are off by default).
        offered = [s for s in wsfs.tool_specs("wsfs") if exec_switch_on(s["name"], ws.info["policy"])]
        assert len(offered) == len(wsfs.tool_specs("wsfs")) - 9
        assert ws.workspace_tool_specs("wsfs") == offered


def test_read_only_workspace_specs_leave_writers_out(root: Path) -> None:
    with wsfs.Workspace(root, profile="miniclaw", policy={"writes_enabled": False}) as ws:
        assert [s["function"]["name"] for s in ws.workspace_tool_specs()] == ["read_file", "list_dir"]


def test_file_system_tools_agent_base_profile(root: Path) -> None:
    write(root / "a.txt", "one\n")
    config = {"workspace_root": str(root), "filesystem_writes_enabled": True, "filesystem_profile": "agent-base"}
    with wsfs.FileSystemTools(config) as tools:
        assert tools.profile == "agent-base"
        names = [t.__name__ for t in tools.get_tools()]
        assert names == [
            "get_path_info",
            "list_directory",
            "read_file",
            "search_text",
            "write_file",
            "apply_text_edit",
            "create_directory",
        ]
        # Agent Base's write_file defaults to mode "create": a model that omits it gets file_exists.
        r = asyncio.run(tools.write_file("a.txt", "x"))
        assert r["success"] is False and r["error"] == "file_exists"
        assert (root / "a.txt").read_text() == "one\n"
        r = asyncio.run(tools.read_file(path="../etc/passwd"))
        assert r == {"success": False, "error": "path_traversal_attempt", "message": r["message"]}
        spec = tools.tool_specs("wsfs")[4]
        assert spec["parameters"]["properties"]["mode"]["default"] == "create"


def test_file_system_tools_writes_disabled_offers_the_writing_tools_that_refuse(root: Path) -> None:
    # Agent Base's document: with writes off, each changing tool answers writes_disabled.
    with wsfs.FileSystemTools(root=root, profile="agent-base") as tools:
        names = [t.__name__ for t in tools.get_tools()]
        assert names == [
            "get_path_info",
            "list_directory",
            "read_file",
            "search_text",
            "write_file",
            "apply_text_edit",
            "create_directory",
        ]
        assert [s["function"]["name"] for s in tools.tool_specs()] == names
        for tool, args in [
            ("write_file", {"path": "n.txt", "content": "x"}),
            ("apply_text_edit", {"path": "n.txt", "expected_text": "x", "replacement_text": "y"}),
            ("create_directory", {"path": "d"}),
        ]:
            r = asyncio.run(tools.call(tool, args))
            assert r["success"] is False and r["error"] == "writes_disabled", r
            assert "filesystem_writes_enabled" in r["message"]
        assert not (root / "n.txt").exists() and not (root / "d").exists()


def test_file_system_tools_profile_must_match_the_workspace(root: Path) -> None:
    with wsfs.Workspace(root, profile="miniclaw") as ws:
        with pytest.raises(ValueError, match="miniclaw"):
            wsfs.FileSystemTools(workspace=ws, profile="agent-base")
        assert wsfs.FileSystemTools(workspace=ws).profile == "miniclaw"
    with pytest.raises(TypeError):
        wsfs.FileSystemTools(root=root, profile=3)  # type: ignore[arg-type]


def test_file_system_tools_default_is_the_native_tools(root: Path) -> None:
    with wsfs.FileSystemTools(root=root) as tools:
        assert tools.profile == "wsfs"
        assert "list_dir" in [t.__name__ for t in tools.get_tools()]


def test_profile_calls_log_the_profiles_code(root: Path, caplog: pytest.LogCaptureFixture) -> None:
    with wsfs.FileSystemTools(root=root, profile="agent-base") as tools, caplog.at_level(logging.INFO, "wsfs"):
        asyncio.run(tools.read_file(path="missing.txt"))
    record = [r for r in caplog.records if getattr(r, "wsfs_tool", None) == "read_file"][-1]
    assert record.wsfs_outcome == "not_found"  # agent-base's code, not path_not_found
    assert record.wsfs_path == "missing.txt"


def test_workspace_defaults_to_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AGENT_WORKSPACE_ROOT", raising=False)
    monkeypatch.chdir(tmp_path)
    with wsfs.FileSystemTools(profile="agent-base") as tools:
        assert Path(tools.root) == tmp_path.resolve()
