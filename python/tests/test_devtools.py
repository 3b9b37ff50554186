"""The developer tools from Python (issue 21): off unless the workspace's policy turns them
on, typed methods and results on a real repository, the policy's switches checked strictly,
and FileSystemTools offering them only when they can run."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path

import pytest

import wsfs
from wsfs.specs import EXEC_TOOLS

from conftest import write

EXEC = {"exec_enabled": True, "shell_enabled": True}


def git_repo(root: Path) -> None:
    write(root / "a.txt", "one\n")
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.email", "t@example.com"],
        ["config", "user.name", "t"],
        ["add", "a.txt"],
        ["commit", "-q", "-m", "first"],
    ):
        subprocess.run(["git", *args], cwd=root, env=env, check=True, capture_output=True)


def test_off_by_default(ws):
    with pytest.raises(wsfs.ExecDisabled, match="exec_enabled"):
        ws.git_status()
    with pytest.raises(wsfs.ExecDisabled):
        ws.run_tests()


def test_shell_needs_shell_enabled(root):
    with wsfs.Workspace(root, policy={"exec_enabled": True}) as ws:
        with pytest.raises(wsfs.ExecDisabled, match="shell_enabled"):
            ws.shell("true")
        assert ws.safe_shell("echo ok").stdout == "ok\n"


def test_the_switches_are_checked_strictly(root):
    with pytest.raises(wsfs.InvalidArguments, match="exec_enable"):
        wsfs.Workspace(root, policy={"exec_enable": True})
    with pytest.raises(wsfs.InvalidArguments, match="deny_read"):
        wsfs.Workspace(root, policy={"exec_enabled": True, "deny_read": [".env"]})
    with wsfs.Workspace(root, policy={**EXEC, "exec_timeout_sec": 5, "exec_env_allow": ["GOFLAGS"]}) as ws:
        policy = ws.info["policy"]
        assert policy["exec_enabled"] and policy["exec_timeout_sec"] == 5
        assert policy["exec_env_allow"] == ["GOFLAGS"] and policy["exec_require_sandbox"] is True


def test_typed_methods_on_a_repository(root):
    git_repo(root)
    write(root / "a.txt", "one\ntwo\n")
    with wsfs.Workspace(root, policy=EXEC) as ws:
        st = ws.git_status()
        assert isinstance(st, wsfs.GitStatusResult)
        assert st.branch == "main" and not st.clean
        assert st.unstaged == (wsfs.GitChange(path="a.txt", change="modified"),)
        assert "On branch main" in st.text
        d = ws.git_diff(pathspec=["a.txt"])
        assert d.files_changed[0].path == "a.txt" and d.files_changed[0].additions == 1
        assert "+two" in d.diff_text
        with pytest.raises(wsfs.ConfirmationRequired):
            ws.git_commit("m", paths=["a.txt"])
        with pytest.raises(wsfs.PolicyDenied):
            ws.git_commit("m", paths=[".git/config"], confirmed=True)
        c = ws.git_commit("second", paths=["a.txt"], confirmed=True)
        assert c.files_committed == ("a.txt",) and len(c.commit_hash) >= 40
        with pytest.raises(wsfs.NothingToCommit):
            ws.git_commit("again", confirmed=True)
        sh = ws.shell("echo hi; exit 3", cwd=".")
        assert (sh.stdout, sh.exit_code, sh.blocked) == ("hi\n", 3, False)
        assert sh.sandbox is not None and sh.sandbox["sandbox"].startswith("landlock-v")
        blocked = ws.safe_shell("rm -rf /")
        assert blocked.blocked and blocked.reason and blocked.suggested_safe_alternative
        assert blocked.reason_code == "DENYLIST_MATCH"
        info = ws.workspace_info()
        assert info.git_repo_root == "." and info.tools["git"]["available"] is True
        with pytest.raises(wsfs.CommandRequired):
            ws.run_tests()


def test_a_failing_python_test_is_reported_with_its_line(root, monkeypatch):
    # pytest from the Python running these tests (target/venv under make), which the sandbox
    # must be able to read and execute, with the Python it was made from.
    bin_dir = os.path.dirname(sys.executable)
    real_prefix = os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/local/bin:/usr/bin:/bin")
    policy = {**EXEC, "exec_read_paths": [sys.prefix, real_prefix]}
    write(root / "test_calc.py", "def test_ok():\n    assert 1 == 1\n\n\ndef test_bad():\n    assert 1 == 2\n")
    with wsfs.Workspace(root, policy=policy) as ws:
        if not ws.workspace_info().tools["pytest"]["available"]:
            message = f"pytest is not installed beside {sys.executable} (make venv installs it)"
            if os.environ.get("WSFS_REQUIRE_DEVTOOLS"):
                pytest.fail(message)
            pytest.skip(message)
        r = ws.run_tests(command="pytest")
        assert (r.passed, r.passed_count, r.failed_count) == (False, 1, 1)
        assert r.failures[0].test.endswith("test_bad") and r.failures[0].line == 6


def test_a_timeout_kills_the_program(root):
    with wsfs.Workspace(root, policy={**EXEC, "exec_timeout_sec": 1}) as ws:
        with pytest.raises(wsfs.Timeout):
            ws.shell("sleep 30")


def test_file_system_tools_offer_the_dev_tools_only_when_on(root):
    with wsfs.FileSystemTools(root=root, writes_enabled=True) as tools:
        names = [t.__name__ for t in tools.get_tools()]
        assert not set(EXEC_TOOLS) & set(names)
        assert [s["function"]["name"] for s in tools.tool_specs()] == names
        # Still attributes: a call returns exec_disabled, it does not raise.
        out = asyncio.run(tools.git_status())
        assert out["success"] is False and out["error"] == "exec_disabled"
    with (
        wsfs.Workspace(root, policy={"exec_enabled": True}) as ws,
        wsfs.FileSystemTools(workspace=ws, writes_enabled=True) as tools,
    ):
        names = [t.__name__ for t in tools.get_tools()]
        assert set(EXEC_TOOLS) - set(names) == {"shell"}
        assert [s["function"]["name"] for s in tools.tool_specs()] == names
        out = asyncio.run(tools.safe_shell(command="echo hi"))
        assert out["success"] is True and out["result"]["stdout"] == "hi\n"
    with (
        wsfs.Workspace(root, policy={"exec_enabled": True}) as ws,
        wsfs.FileSystemTools(workspace=ws, writes_enabled=False) as tools,
    ):
        names = [t.__name__ for t in tools.get_tools()]
        assert {"git_status", "git_diff", "workspace_info"} <= set(names)
        assert "run_tests" not in names and "safe_shell" not in names
    # A read-only workspace: the program tools run there on a read-only view (the kernel
    # refuses their changes); git_commit, which could only fail, is left out.
    (root / "README.md").write_text("read me\n")
    with (
        wsfs.Workspace(root, policy={"exec_enabled": True, "writes_enabled": False}) as ws,
        wsfs.FileSystemTools(workspace=ws, writes_enabled=False) as tools,
    ):
        names = [t.__name__ for t in tools.get_tools()]
        assert {"run_tests", "safe_shell", "git_status"} <= set(names)
        assert "git_commit" not in names and "write_file" not in names
        out = asyncio.run(tools.safe_shell(command="cat README.md"))
        assert out["success"] is True and out["result"]["stdout"] == "read me\n"
        out = asyncio.run(tools.run_lint(command="touch", paths=["README.md"]))
        assert (root / "README.md").read_text() == "read me\n"
