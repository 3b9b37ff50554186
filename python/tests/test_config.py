"""The workspace configuration is decoded strictly through every Python door: a misspelt key
in ``limits`` or ``policy`` (or at the top level) fails the open, naming the key and the keys
that are known there, instead of silently leaving a default (or no deny rule) in force."""

from __future__ import annotations

import dataclasses

import pytest

import wsfs


@pytest.fixture
def policy_keys(root) -> list[str]:
    """The policy keys the library knows: those of the effective policy it reports."""
    with wsfs.Workspace(root) as ws:
        return list(ws.info["policy"])


def assert_names(error: wsfs.WsfsError, key: str, known: list[str]) -> None:
    assert isinstance(error, wsfs.InvalidArguments), repr(error)
    assert f"`{key}`" in error.message, error.message
    missing = [name for name in known if f"`{name}`" not in error.message]
    assert not missing, f"{error.message} does not list {missing}"


def test_a_misspelt_limit_is_refused(root):
    with pytest.raises(wsfs.WsfsError) as e:
        wsfs.Workspace(root, limits={"max_read_byte": 10})
    assert_names(e.value, "max_read_byte", [f.name for f in dataclasses.fields(wsfs.Limits)])


def test_a_misspelt_policy_key_is_refused(root, policy_keys):
    assert {"writes_enabled", "deny_read", "deny_write", "audit_log"} <= set(policy_keys)
    with pytest.raises(wsfs.WsfsError) as e:
        wsfs.Workspace(root, policy={"deny_reed": [".env"]})
    assert_names(e.value, "deny_reed", policy_keys)


def test_a_misspelt_top_level_key_is_refused(root):
    with pytest.raises(wsfs.WsfsError) as e:
        wsfs.Workspace(root, config={"state_directory": str(root.parent / "state")})
    known = ["root", "restrict_to_workspace", "limits", "policy", "state_dir"]
    assert_names(e.value, "state_directory", known)


@pytest.mark.parametrize("where", ["top", "limits", "policy"])
def test_from_config_has_no_comment_keys(root, where):
    config: dict = {"root": str(root)}
    if where == "top":
        config["_comment"] = "a workspace"
    else:
        config[where] = {"_comment": "explained"}
    with pytest.raises(wsfs.InvalidArguments, match="unknown field `_comment`"):
        wsfs.Workspace.from_config(config)


def test_limits_dataclass_refuses_unknown_names():
    with pytest.raises(TypeError, match="max_read_byte"):
        wsfs.Limits(max_read_byte=10)  # type: ignore[call-arg]


def test_audit_arguments_and_tool_lists_reach_the_library(root, tmp_path):
    """Issue 18 gap 6: ``audit_arguments`` records arguments without contents; ``deny_tools``
    refusals are audited; the effective policy reports the keys."""
    import hashlib
    import json

    log = tmp_path / "audit.jsonl"
    policy = {"audit_log": str(log), "audit_arguments": True, "deny_tools": ["delete_file"]}
    secret = "SECRET-py-0815"
    with wsfs.Workspace(root, policy=policy) as ws:
        assert ws.info["policy"]["audit_arguments"] is True
        assert ws.info["policy"]["deny_tools"] == ["delete_file"]
        ws.write_file("a.txt", secret)
        with pytest.raises(wsfs.PolicyDenied):
            ws.delete_file("a.txt")
        listed = ws.list_dir(".", include_dirs=False)
        assert [e.name for e in listed.entries] == ["a.txt"]
    text = log.read_text()
    assert secret not in text
    lines = [json.loads(line) for line in text.splitlines()]
    assert lines[0]["arguments"]["content"] == {
        "length": len(secret),
        "sha256": hashlib.sha256(secret.encode()).hexdigest(),
    }
    assert lines[1]["outcome"] == "policy_denied" and lines[1]["tool"] == "delete_file"
    assert lines[2]["arguments"]["include_dirs"] is False
    with pytest.raises(wsfs.InvalidArguments, match="audit_log"):
        wsfs.Workspace(root, policy={"audit_arguments": True})
