"""The library's tool specs, in the shapes function-calling APIs take."""

from __future__ import annotations

import copy
import json
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
    """
    return convert_specs([s for s in library_specs() if not read_only or is_read_only(s)], format)


def convert_specs(specs: list[dict[str, Any]], format: SpecFormat) -> list[dict[str, Any]]:
    """``specs`` (the library's ``{name, description, parameters, annotations}``) as a fresh
    copy in ``format`` (see :func:`tool_specs`)."""
    if format not in _FORMATS:
        raise ValueError(f"unknown spec format {format!r}: use 'openai', 'anthropic' or 'wsfs'")
    specs = copy.deepcopy(specs)
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
