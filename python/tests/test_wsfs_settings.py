"""FileSystemTools' ``filesystem_wsfs`` setting: every workspace setting, with the names of
MiniClaw's agents.defaults.wsfs object, checked strictly."""

from __future__ import annotations

import asyncio

import pytest

import wsfs

from conftest import REPO, write


def run(coro):
    return asyncio.run(coro)


def test_every_workspace_setting_reaches_the_library(root, tmp_path):
    write(root / "secret.txt", "s")
    for i in range(3):
        write(root / f"f{i}.txt", "x")
    config = {
        "workspace_root": str(root),
        "filesystem_writes_enabled": True,
        "filesystem_wsfs": {
            "_comment": "explanations are allowed",
            "max_list_entries": 2,
            "operation_timeout_ms": 5000,
            "policy": {"deny_read": ["secret.txt"], "audit_log": str(tmp_path / "audit.jsonl")},
            "mode": "overlay",
            "session": "review",
            "state_dir": str(tmp_path / "state"),
            "wasm_tools": [str(REPO / "tools")],
            "wasm_policy": {"timeout_ms": 30000},
        },
    }
    with wsfs.FileSystemTools(config) as tools:
        ws = tools.workspace
        assert ws.limits.max_list_entries == 2 and ws.limits.operation_timeout_ms == 5000
        assert ws.mode == "overlay" and ws.session == "review"
        assert run(tools.read_file(path="secret.txt"))["success"] is False
        listed = run(tools.list_dir(path="."))
        assert listed["success"] and len(listed["result"]["entries"]) == 2
        assert run(tools.write_file(path="new.txt", content="n"))["success"]
        assert not (root / "new.txt").exists()  # in the session, not the workspace
        assert "echo" in {t.__name__ for t in tools.get_tools()}
    assert (tmp_path / "audit.jsonl").read_text().count("\n") >= 3


def test_the_library_policy_refuses_writes_with_the_setting(root):
    with wsfs.FileSystemTools(root=root, wsfs={"policy": {"deny_read": []}}) as tools:
        assert tools.workspace.info["policy"]["writes_enabled"] is False
    with wsfs.FileSystemTools(root=root, wsfs={"policy": {"writes_enabled": True}}) as tools:
        assert tools.writes_enabled and run(tools.write_file(path="a.txt", content="a"))["success"]


def test_unknown_keys_and_disagreements_are_refused(root):
    with pytest.raises(ValueError) as e:
        wsfs.FileSystemTools(root=root, wsfs={"max_read_byte": 1})
    assert "'max_read_byte'" in str(e.value) and "max_read_bytes" in str(e.value) and "wasm_policy" in str(e.value)
    with pytest.raises(ValueError, match="max_read_bytes is 10 .* and 20 in filesystem_wsfs"):
        wsfs.FileSystemTools(root=root, max_read_bytes=10, wsfs={"max_read_bytes": 20})
    with pytest.raises(ValueError, match="writes_enabled"):
        wsfs.FileSystemTools(root=root, writes_enabled=True, wsfs={"policy": {"writes_enabled": False}})
    with pytest.raises(TypeError):
        wsfs.FileSystemTools(root=root, wsfs=["policy"])
    # The library checks the policy's own keys.
    with pytest.raises(wsfs.InvalidArguments, match="deny_reads"):
        wsfs.FileSystemTools(root=root, wsfs={"policy": {"deny_reads": ["x"]}})
    with wsfs.Workspace(root) as ws, pytest.raises(ValueError, match="not both"):
        wsfs.FileSystemTools(workspace=ws, wsfs={"mode": "overlay"})


def test_a_profile_from_the_setting(root):
    with wsfs.FileSystemTools(root=root, wsfs={"profile": "agent-base"}) as tools:
        assert tools.profile == "agent-base"
    with pytest.raises(ValueError, match="profile"):
        wsfs.FileSystemTools(root=root, profile="agent-base", wsfs={"profile": "capability-plan"})


def test_model_gateway_and_create_root_reach_the_library(tmp_path):
    missing = tmp_path / "new" / "ws"
    # Without create_root a missing root is refused; with it, it is made.
    with pytest.raises(wsfs.WsfsError) as refused:
        wsfs.FileSystemTools(root=str(missing))
    assert refused.value.code == "path_not_found" and "create_root" in str(refused.value)
    with wsfs.FileSystemTools(root=str(missing), wsfs={"create_root": True}):
        assert missing.is_dir()
    # The library checks model_gateway's values when the workspace opens.
    with pytest.raises(wsfs.WsfsError) as bad:
        wsfs.FileSystemTools(root=str(missing), wsfs={"model_gateway": {"provider": "gpt", "model": "m"}})
    assert "model_gateway.provider" in str(bad.value)
    gateway = {"provider": "ollama", "base_url": "http://127.0.0.1:9/v1", "model": "m"}
    with wsfs.FileSystemTools(root=str(missing), wsfs={"model_gateway": gateway}) as tools:
        assert tools.workspace.root == str(missing.resolve())
