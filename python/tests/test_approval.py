"""The host's approval handler (issue 31, item 9): it decides git_commit, not confirmed=True."""

from __future__ import annotations

import subprocess
import time

import pytest
from test_devtools import git_repo

import wsfs

from conftest import write


def commits(root) -> int:
    out = subprocess.run(["git", "rev-list", "--count", "HEAD"], cwd=root, capture_output=True, check=True)
    return int(out.stdout)


def test_the_handler_decides_git_commit(root):
    git_repo(root)
    seen: list[dict] = []

    def handler(request, timeout):
        seen.append(request)
        assert timeout > 0
        message = request["arguments"]["message"]
        if message == "deny":
            return (False, "the user said no")
        if message == "no":
            return False
        if message == "fail":
            raise RuntimeError("no user at the terminal")
        if message == "slow":
            time.sleep(timeout + 0.05)
        return True

    with wsfs.Workspace(root, policy={"exec_enabled": True}) as ws:
        ws.set_approval_handler(handler)
        write(root / "a.txt", "approved\n")
        c = ws.git_commit("approved", paths=["a.txt"])  # approved without confirmed
        assert len(c.commit_hash) >= 40 and commits(root) == 2
        assert seen[0]["tool"] == "git_commit" and "history" in seen[0]["why"]
        assert seen[0]["arguments"]["message"] == "approved" and seen[0]["arguments"]["paths"] == ["a.txt"]
        assert seen[0]["arguments"].get("confirmed") is not True  # the model's own arguments
        write(root / "a.txt", "denied\n")
        for message, reason in [("deny", "the user said no"), ("no", "no reason given"), ("fail", "no user")]:
            with pytest.raises(wsfs.ApprovalDenied, match=reason):
                ws.git_commit(message, paths=["a.txt"], confirmed=True)
        with pytest.raises(wsfs.ApprovalDenied, match="deadline"):
            ws.git_commit("slow", paths=["a.txt"], confirmed=True, timeout=0.3)
        assert commits(root) == 2
        asked = len(seen)
        ws.set_approval_handler(None)
        with pytest.raises(wsfs.ConfirmationRequired):
            ws.git_commit("deny", paths=["a.txt"])
        ws.git_commit("deny", paths=["a.txt"], confirmed=True)
        assert commits(root) == 3 and len(seen) == asked
