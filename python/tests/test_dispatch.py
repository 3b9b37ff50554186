"""``Workspace.dispatch``: a model's whole tool call (docs/dispatch.md) in each form, run as
``call_json`` runs the tool it names: built-in, Wasm and profile tools, and malformed calls
that run nothing."""

from __future__ import annotations

import pytest

import wsfs

from conftest import REPO

ECHO = REPO / "tools" / "echo"


def test_every_form_runs_the_named_tool(root):
    (root / "a.txt").write_text("hi\n")
    with wsfs.Workspace(root, wasm_tools=[ECHO]) as ws:
        direct = ws.call_json("read_file", '{"path":"a.txt"}')
        for call in (
            {"tool_call": {"name": "read_file", "arguments": {"path": "a.txt"}}},
            {"name": "read_file", "arguments": '{"path":"a.txt"}'},
            '{"tool_call":{"name":"read_file","arguments":"{\\"path\\":\\"a.txt\\"}"}}',
            b'{"name":"read_file","arguments":{"path":"a.txt"}}',
        ):
            env = ws.dispatch(call)
            assert env["ok"], env
            env["metrics"].pop("duration_us")
            expected = dict(direct, metrics={k: v for k, v in direct["metrics"].items() if k != "duration_us"})
            assert env == expected, call
        env = ws.dispatch({"tool_call": {"name": "list_dir"}})
        assert [e["name"] for e in env["data"]["entries"]] == ["a.txt"]
        env = ws.dispatch({"name": "echo", "arguments": '{"message":"m"}'})
        assert env["data"] == {"received": {"message": "m"}}
        env = ws.dispatch({"name": "write_file", "arguments": {"path": "b.txt", "content": "b"}})
        assert env["ok"] and (root / "b.txt").read_text() == "b"


@pytest.mark.parametrize(
    ("call", "says"),
    [
        ({"arguments": {"path": "x", "content": "x"}}, "name is missing"),
        ({"name": 3}, "name must be the tool's name as a string"),
        ({"name": "write_file", "arguments": ["x"]}, "arguments must be an object"),
        ({"name": "write_file", "arguments": "[1]"}, "a string holding an array"),
        ({"name": "write_file", "arguments": {"path": "x", "content": "x"}, "type": "function"}, "unknown field `type`"),
        ({"tool_call": {"name": "write_file"}, "arguments": {"path": "x", "content": "x"}}, "both forms at once"),
        ("write_file", "must be a JSON object"),
    ],
)
def test_a_malformed_call_says_what_is_wrong(root, call, says):
    with wsfs.Workspace(root) as ws:
        env = ws.dispatch(call)
        assert not env["ok"] and env["error"]["code"] == "invalid_arguments", env
        assert says in env["error"]["message"], env
    assert not (root / "x").exists()


def test_options_and_nul(root):
    with wsfs.Workspace(root) as ws:
        token = wsfs.CancelToken()
        token.cancel()
        env = ws.dispatch({"name": "write_file", "arguments": {"path": "x", "content": "x"}}, cancel=token)
        assert env["error"]["code"] == "cancelled", env
        with pytest.raises(wsfs.InvalidArguments):
            ws.dispatch('{"name":"list_dir\0"}')
    assert not (root / "x").exists()


def test_a_profile_workspace_dispatches_its_names(root):
    (root / "a.txt").write_text("hello")
    with wsfs.Workspace(root, profile="capability-plan") as ws:
        env = ws.dispatch({"tool_call": {"name": "file_read", "arguments": {"path": "a.txt"}}})
        assert env["ok"] and env["error_code"] is None and env["data"]["content"] == "hello", env
        assert env == ws.call_json("file_read", '{"path":"a.txt"}')
