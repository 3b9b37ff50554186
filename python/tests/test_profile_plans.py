"""The design documents' ported test plans (tests/profiles/plans/, format in
tests/profiles/README.md), run through the Python package: each case on a ``wsfs.Workspace``
opened with the plan's profile (``call_json``, ``workspace_tool_specs``), and the agent-base
plan's tool calls once more through ``FileSystemTools(profile="agent-base")``. A case marked
``gap`` must fail until the native tools close that gap (the marker goes with the change)."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

import wsfs

from conftest import REPO

PLANS = REPO / "tests" / "profiles" / "plans"
MISSING = object()
# Where the `devtools` cases' programs are (make venv devtools-node), put first on the PATH
# the workspace's programs get, and the programs those cases run.
TOOL_DIRS = (REPO / "target" / "venv" / "bin", REPO / "target" / "devtools-node" / "node_modules" / ".bin")
DEVTOOLS = ("git", "pytest", "ruff", "mypy", "pyright", "eslint", "tsc")


def _tools_path() -> str:
    return os.pathsep.join([*map(str, TOOL_DIRS), os.environ.get("PATH", "/usr/bin:/bin")])


def _devtools_missing() -> str | None:
    """Why the `devtools` cases cannot run here, or None."""
    if not any(s["function"]["name"] == "workspace_info" for s in wsfs.tool_specs()):
        return "this library has no developer tools (built without the exec feature)"
    path = _tools_path().split(os.pathsep)
    missing = [t for t in DEVTOOLS if not any(os.path.isfile(os.path.join(d, t)) for d in path)]
    if missing:
        return ", ".join(missing) + " not installed (make venv devtools-node installs them)"
    return None


def _cases() -> list[Any]:
    out = []
    for path in sorted(PLANS.glob("*.json")):
        plan = json.loads(path.read_text())
        for case in plan["cases"]:
            if case.get("host") or case.get("skip"):
                continue
            marks = []
            if case.get("requires") == "non_root" and os.geteuid() == 0:
                marks.append(pytest.mark.skip(reason="root bypasses permission bits"))
            if case.get("requires") == "devtools" and not os.environ.get("WSFS_REQUIRE_DEVTOOLS"):
                why = _devtools_missing()
                if why:
                    marks.append(pytest.mark.skip(reason=why))
            out.append(pytest.param(plan, case, id=f"{plan['profile']}/{case['name']}", marks=marks))
    return out


def _merge(base: dict[str, Any], over: dict[str, Any]) -> None:
    for key, value in over.items():
        if key in ("limits", "policy") and isinstance(base.get(key), dict) and isinstance(value, dict):
            base[key].update(value)
        else:
            base[key] = value


def _subst(value: Any, env: dict[str, str]) -> Any:
    if isinstance(value, str):
        for key, with_ in env.items():
            value = value.replace(key, with_)
        return value
    if isinstance(value, list):
        return [_subst(v, env) for v in value]
    if isinstance(value, dict):
        return {k: _subst(v, env) for k, v in value.items()}
    return value


def _setup(root: Path, outside: Path, item: dict[str, Any], env: dict[str, str]) -> None:
    def content() -> bytes:
        if "hex" in item:
            return bytes.fromhex(item["hex"])
        if "lines" in item:
            return "".join(item["line"].replace("{n}", str(n)) + "\n" for n in range(1, item["lines"] + 1)).encode()
        return item.get("content", "").encode()

    if "file" in item:
        path = root / item["file"]
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content())
        if "mode" in item:
            path.chmod(int(item["mode"], 8))
    elif "dir" in item:
        (root / item["dir"]).mkdir(parents=True, exist_ok=True)
    elif "symlink" in item:
        path = root / item["symlink"]
        path.parent.mkdir(parents=True, exist_ok=True)
        os.symlink(_subst(item["target"], env), path)
    elif "outside_file" in item:
        (outside / item["outside_file"]).write_bytes(content())
    elif "git" in item:
        _git(root, *item["git"])
    elif "git_repo" in item:
        _git(root, "init", "-q", "-b", "main")
        _git(root, "add", "-A")
        _git(root, "commit", "-q", "--allow-empty", "-m", item["git_repo"])
    else:
        raise AssertionError(f"a setup item creates something: {item}")


def _git(root: Path, *args: str) -> None:
    """git in the workspace as a person would run it, with an identity and no configuration."""
    env = {"GIT_CONFIG_NOSYSTEM": "1", "HOME": str(root), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    identity = ("-c", "user.email=plan@example.com", "-c", "user.name=plan")
    subprocess.run(["git", *identity, *args], cwd=root, env=env, check=True, capture_output=True)


def _type(value: Any) -> str:
    if value is MISSING:
        return "missing"
    for kind, types in (("null", type(None)), ("boolean", bool), ("string", str), ("array", list), ("object", dict)):
        if isinstance(value, types):
            return kind
    return "number" if isinstance(value, (int, float)) else "?"


def _match(expect: Any, actual: Any, at: str = ".") -> None:
    """The matching rules of tests/profiles/README.md; raises AssertionError naming the place."""
    if isinstance(expect, dict) and len(expect) == 1 and next(iter(expect)).startswith("$"):
        key, arg = next(iter(expect.items()))
        if not _matcher(key, arg, actual):
            raise AssertionError(f"at {at}: {key} {arg!r} does not hold for {actual!r}")
        return
    if isinstance(expect, dict):
        if not isinstance(actual, dict):
            raise AssertionError(f"at {at}: want an object, got {actual!r}")
        for key, want in expect.items():
            _match(want, actual.get(key, MISSING), f"{at}.{key}")
        return
    if actual is MISSING:
        raise AssertionError(f"at {at}: missing, want {expect!r}")
    if isinstance(expect, list):
        if not isinstance(actual, list) or len(actual) != len(expect):
            raise AssertionError(f"at {at}: want {len(expect)} items, got {actual!r}")
        for i, (want, got) in enumerate(zip(expect, actual, strict=True)):
            _match(want, got, f"{at}[{i}]")
        return
    # JSON equality: a bool is not a number, 1 == 1.0
    if isinstance(expect, bool) or isinstance(actual, bool):
        ok = type(expect) is type(actual) and expect == actual
    else:
        ok = expect == actual
    if not ok:
        raise AssertionError(f"at {at}: want {expect!r}, got {actual!r}")


def _holds(expect: Any, actual: Any) -> bool:
    try:
        _match(expect, actual)
    except AssertionError:
        return False
    return True


def _matcher(key: str, arg: Any, actual: Any) -> bool:
    text = actual if isinstance(actual, str) else None
    if key == "$absent":
        return actual is MISSING
    if key in ("$contains", "$not_contains", "$starts_with"):
        if text is None:
            return False
        if key == "$contains":
            return arg in text
        if key == "$not_contains":
            return arg not in text
        return text.startswith(arg)
    if key == "$nonempty":
        return isinstance(actual, (list, str)) and bool(actual) == arg
    if key == "$type":
        return _type(actual) == arg
    if key == "$len":
        return isinstance(actual, (list, str)) and len(actual) == arg
    if key == "$json":
        return text is not None and _holds(arg, json.loads(text))
    if key == "$any":
        return any(_holds(o, actual) for o in arg)
    if key == "$all":
        return all(_holds(o, actual) for o in arg)
    if key in ("$some", "$none"):
        found = isinstance(actual, list) and any(_holds(arg, i) for i in actual)
        return found if key == "$some" else isinstance(actual, list) and not found
    raise AssertionError(f"unknown matcher {key}")


def _run_case(tmp_path: Path, plan: dict[str, Any], case: dict[str, Any], via_toolset: bool) -> None:
    base = tmp_path / "base"
    (base / "outside").mkdir(parents=True)
    (base / "ws").mkdir()
    config: dict[str, Any] = {"root": str(base / "ws")}
    _merge(config, copy.deepcopy(plan.get("config", {})))
    _merge(config, copy.deepcopy(case.get("config", {})))
    config["profile"] = plan["profile"]
    # The programs a workspace runs get the host's PATH, read when it opens ("auto").
    saved_path = os.environ.get("PATH")
    if case.get("requires") == "devtools":
        os.environ["PATH"] = _tools_path()
    try:
        _run_opened(config, case, base, via_toolset)
    finally:
        if saved_path is not None:
            os.environ["PATH"] = saved_path


def _run_opened(config: dict[str, Any], case: dict[str, Any], base: Path, via_toolset: bool) -> None:
    try:
        opened = wsfs.Workspace.from_config(config)
    except wsfs.WsfsError as e:
        raise AssertionError(f"open: {e}") from None
    with opened as ws:
        root = Path(ws.root)
        outside = Path(os.path.realpath(base / "outside"))
        env = {"$root": ws.root, "$outside": str(outside)}
        for item in case.get("setup", []):
            _setup(root, outside, item, env)
        tools = wsfs.FileSystemTools(workspace=ws) if via_toolset else None
        for i, step in enumerate(case["steps"], 1):
            actual: Any = None
            try:
                if step.get("specs"):
                    actual = ws.workspace_tool_specs("wsfs")
                else:
                    args = step.get("args", {})
                    raw = args if isinstance(args, str) else json.dumps(_subst(args, env))
                    if tools is not None:
                        actual = asyncio.run(tools.call(step["call"], raw))
                    else:
                        actual = ws.call_json(step["call"], raw)
                _match(_subst(step["expect"], env), actual)
                for name, want in step.get("files", {}).items():
                    path = root / name
                    got = path.read_bytes().decode() if path.exists() else None
                    assert got == want, f"file {name}: want {want!r}, got {got!r}"
                for name, want in step.get("modes", {}).items():
                    got = f"{(root / name).stat().st_mode & 0o7777:04o}"
                    assert got == want, f"mode of {name}: want {want}, got {got}"
            except AssertionError as e:
                raise AssertionError(f"step {i}: {e}\n  got {actual!r}") from None


def _check(tmp_path: Path, plan: dict[str, Any], case: dict[str, Any], via_toolset: bool) -> None:
    gap = case.get("gap")
    if gap is None:
        _run_case(tmp_path, plan, case, via_toolset)
        return
    with pytest.raises(AssertionError):
        _run_case(tmp_path, plan, case, via_toolset)


@pytest.mark.parametrize(("plan", "case"), _cases())
def test_plan_case_through_workspace(tmp_path: Path, plan: dict[str, Any], case: dict[str, Any]) -> None:
    _check(tmp_path, plan, case, via_toolset=False)


@pytest.mark.parametrize(
    ("plan", "case"), [c for c in _cases() if c.values[0]["profile"] == "agent-base"]
)
def test_agent_base_case_through_file_system_tools(
    tmp_path: Path, plan: dict[str, Any], case: dict[str, Any]
) -> None:
    _check(tmp_path, plan, case, via_toolset=True)


def test_every_plan_has_cases_here() -> None:
    profiles = {c.values[0]["profile"] for c in _cases()}
    assert profiles == {"miniclaw", "filesystem-tool", "agent-base", "capability-plan"}
