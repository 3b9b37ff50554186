"""Wasm tools (the repository's example tools under tools/) through the Python package: loaded
by ``wasm_tools``, listed after the built-ins with their manifest's schema, called like them,
and offered by :class:`wsfs.FileSystemTools`."""

from __future__ import annotations

import asyncio
import json

import pytest

import wsfs

from conftest import REPO

TOOLS = REPO / "tools"


def test_listed_and_called_like_builtins(root):
    # Every built-in tool is offered once the exec switches are on.
    exec_on = {"exec_enabled": True, "shell_enabled": True}
    with wsfs.Workspace(root, wasm_tools=[TOOLS], policy=exec_on) as ws:
        assert ws.wasm_tools == ("ask_model", "echo", "inventory")
        specs = ws.workspace_tool_specs("wsfs")
        builtin = wsfs.tool_specs("wsfs")
        assert specs[: len(builtin)] == builtin
        echo = specs[len(builtin) + 1]
        manifest = json.loads((TOOLS / "echo" / "manifest.json").read_text())
        assert echo["name"] == "echo" and echo["parameters"] == manifest["input_schema"]
        anthropic = ws.workspace_tool_specs("anthropic", read_only=True)
        assert "inventory" not in [s["name"] for s in anthropic]
        env = ws.call("echo", message="hi")
        assert env["ok"] and env["data"] == {"received": {"message": "hi"}}
        env = ws.call("echo", message=1)
        assert env["error"]["code"] == "invalid_arguments"


def test_a_tool_that_does_not_load_fails_the_open(root, tmp_path):
    with pytest.raises(wsfs.CapabilityDenied):
        wsfs.Workspace(root, wasm_tools=[TOOLS], wasm_policy={"filesystem": "none"})
    with pytest.raises(wsfs.InvalidArguments):
        wsfs.Workspace(root, wasm_policy={"memory": 1})
    with pytest.raises(wsfs.ManifestInvalid):
        wsfs.Workspace(root, wasm_tools=[tmp_path / "missing"])
    with pytest.raises(TypeError):
        wsfs.Workspace(root, wasm_tools=str(TOOLS))  # type: ignore[arg-type]


def test_file_system_tools_offer_them(root):
    with wsfs.Workspace(root, wasm_tools=[TOOLS]) as ws:
        tools = wsfs.FileSystemTools(workspace=ws, writes_enabled=True)
        names = [t.__name__ for t in tools.get_tools()]
        assert names[-3:] == ["ask_model", "echo", "inventory"]
        assert [s["function"]["name"] for s in tools.tool_specs()][-3:] == names[-3:]
        response = asyncio.run(tools.call("echo", {"message": "hi"}))
        assert response["success"], response
        response = asyncio.run(tools.call("inventory", {}))
        assert response["success"], response
        assert (root / "INVENTORY.txt").exists()
        read_only = wsfs.FileSystemTools(workspace=ws)
        assert "inventory" not in [t.__name__ for t in read_only.get_tools()]


def test_the_model_gateway_is_a_callable(root):
    calls = []

    def gateway(request, timeout):
        calls.append((request, timeout))
        prompt = request["prompt"]
        if prompt == "slow":
            raise TimeoutError("the model took too long")
        if prompt == "bad":
            raise ValueError("no such model")
        if prompt == "fail":
            raise RuntimeError("provider down")
        return {"text": f"you said: {prompt}"}

    with wsfs.Workspace(root, wasm_tools=[TOOLS / "ask_model"]) as ws:
        assert ws.call("ask_model", prompt="hi")["error"]["code"] == "gateway_error"
        ws.set_model_gateway(gateway)
        env = ws.call("ask_model", prompt="hi")
        assert env["ok"] and env["data"] == {"text": "you said: hi"}, env
        assert 0 < calls[0][1] <= 30
        assert ws.call("ask_model", prompt="slow")["error"]["code"] == "timeout"
        assert ws.call("ask_model", prompt="bad")["error"]["code"] == "invalid_arguments"
        env = ws.call("ask_model", prompt="fail")
        assert env["error"]["code"] == "gateway_error" and "provider down" in env["error"]["message"]
        ws.set_model_gateway(None)
        assert ws.call("ask_model", prompt="hi")["error"]["code"] == "gateway_error"
        assert len(calls) == 4


def test_apply_tool_env(root):
    base = {"root": str(root), "wasm_tools": [str(TOOLS)], "wasm_policy": {"fuel": 5}}
    env = {
        "TOOL_RUNTIME": "wasm",
        "TOOL_TIMEOUT_SECS": "1.5",
        "TOOL_MEMORY_MB": "16",
        "TOOL_ALLOW_DIRECT_NETWORK": "true",
        "WORKSPACE_FS_MODE": "host",
    }
    cfg = wsfs.apply_tool_env(base, env)
    assert cfg["wasm_policy"] == {"fuel": 5, "timeout_ms": 1500, "memory_mb": 16, "allow_direct_network": True}
    assert "wasm_tools" not in wsfs.apply_tool_env(base, {"TOOL_RUNTIME": "builtin"})
    assert wsfs.apply_tool_env({"root": "/x"}, {"TOOL_MEMORY_MB": " "}) == {"root": "/x"}
    for name, value in [
        ("TOOL_RUNTIME", "docker"),
        ("TOOL_TIMEOUT_SECS", "0"),
        ("TOOL_MEMORY_MB", "-1"),
        ("TOOL_ALLOW_DIRECT_NETWORK", "maybe"),
        ("WORKSPACE_FS_MODE", "agentfs"),
        ("WORKSPACE_FS_SESSION", "s1"),
    ]:
        with pytest.raises(wsfs.InvalidArguments, match=name):
            wsfs.apply_tool_env(base, {name: value})
    with pytest.raises(wsfs.InvalidArguments):
        wsfs.apply_tool_env({"root": "/x"}, {"TOOL_RUNTIME": "wasm"})
    # The library takes the result as it is; a 1 s ceiling refuses the examples' timeouts.
    with pytest.raises(wsfs.CapabilityDenied):
        wsfs.Workspace.from_config(wsfs.apply_tool_env(base, {"TOOL_TIMEOUT_SECS": "1"}))
