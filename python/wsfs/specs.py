"""The library's tool specs, in the shapes function-calling APIs take."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from typing import Any, Literal

from . import _native

SpecFormat = Literal["openai", "anthropic", "wsfs"]

_FORMATS = ("openai", "anthropic", "wsfs")
_specs: list[dict[str, Any]] | None = None


def library_specs() -> list[dict[str, Any]]:
    """``wsfs_tool_specs()`` parsed once: ``[{name, description, parameters, annotations}]``.

    Shared: do not modify (``tool_specs`` returns copies)."""
    global _specs
    if _specs is None:  # two threads may both parse it; they get equal lists
        lib = _native.load()
        _specs = json.loads(_native.take(lib, lib.wsfs_tool_specs()))
    return _specs


# The developer tools: off unless the workspace's policy sets ``exec_enabled`` (``shell`` also
# ``shell_enabled``); off, every call raises ``exec_disabled``.
EXEC_TOOLS = (
    "workspace_info",
    "git_status",
    "git_diff",
    "git_commit",
    "run_tests",
    "run_lint",
    "typecheck",
    "safe_shell",
    "shell",
)


def exec_switch_on(name: str, policy: Mapping[str, Any]) -> bool:
    """Whether the policy (a workspace's effective ``policy``) lets the tool ``name`` run as
    far as the exec switches go; the file tools are always on."""
    if name == "shell":
        return policy.get("exec_enabled") is True and policy.get("shell_enabled") is True
    if name in EXEC_TOOLS:
        return policy.get("exec_enabled") is True
    return True


def tool_instructions() -> str:
    """``wsfs_tool_instructions()``: what a host tells the model once, beside the tools (a
    system prompt): how every path argument is read. Each spec's description keeps only the
    clause "Paths are relative to the workspace root."."""
    lib = _native.load()
    return _native.take(lib, lib.wsfs_tool_instructions()).decode("utf-8")


def is_read_only(spec: dict[str, Any]) -> bool:
    """Whether the spec's annotations say ``readOnlyHint: true`` (absent means it may write)."""
    return (spec.get("annotations") or {}).get("readOnlyHint") is True


def tool_specs(format: SpecFormat = "openai", *, read_only: bool = False) -> list[dict[str, Any]]:
    """Every tool's spec, in the library's order, as a fresh copy the caller may change.

    - ``"openai"``: ``{"type": "function", "function": {name, description, parameters}}``
      (Chat Completions ``tools``; most OpenAI-compatible APIs take it too).
    - ``"anthropic"``: ``{name, description, input_schema}`` (Messages API ``tools``).
    - ``"wsfs"``: the library's own ``{name, description, parameters, annotations}``.

    ``read_only=True`` keeps only the tools whose annotations say ``readOnlyHint: true``.
    These are the built-in tools; :meth:`Workspace.workspace_tool_specs` adds a workspace's
    Wasm tools.
    """
    return format_specs(library_specs(), format, read_only=read_only)


def format_specs(
    specs: list[dict[str, Any]], format: SpecFormat = "openai", *, read_only: bool = False
) -> list[dict[str, Any]]:
    """``specs`` (the library's own shape) in ``format``, as a fresh copy (see :func:`tool_specs`)."""
    if format not in _FORMATS:
        raise ValueError(f"unknown spec format {format!r}: use 'openai', 'anthropic' or 'wsfs'")
    specs = copy.deepcopy([s for s in specs if not read_only or is_read_only(s)])
    if format == "wsfs":
        return specs
    if format == "openai":
        return [
            {
                "type": "function",
                "function": {
                    "name": s["name"],
                    "description": s["description"],
                    "parameters": s["parameters"],
                },
            }
            for s in specs
        ]
    return [  # anthropic
        {"name": s["name"], "description": s["description"], "input_schema": s["parameters"]} for s in specs
    ]
