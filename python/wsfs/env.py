"""The sandboxed-tools environment variables (see the repository's ``.env.example``), applied to
a library configuration: the same names and rules as the Go package's ``ApplyToolEnv``."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any

from .errors import ERROR_CLASSES

TOOL_RUNTIME = "TOOL_RUNTIME"
TOOL_TIMEOUT_SECS = "TOOL_TIMEOUT_SECS"
TOOL_MEMORY_MB = "TOOL_MEMORY_MB"
TOOL_ALLOW_DIRECT_NETWORK = "TOOL_ALLOW_DIRECT_NETWORK"
WORKSPACE_FS_MODE = "WORKSPACE_FS_MODE"
WORKSPACE_FS_SESSION = "WORKSPACE_FS_SESSION"
MODEL_PROVIDER = "MODEL_PROVIDER"
MODEL_BASE_URL = "MODEL_BASE_URL"
MODEL_API_KEY_ENV = "MODEL_API_KEY_ENV"
MODEL_TIMEOUT_SECS = "MODEL_TIMEOUT_SECS"
MODEL_NAME = "MODEL_NAME"
MODEL_PROVIDERS = ("openai-compatible", "anthropic", "ollama")

_TRUE = {"1", "t", "true", "TRUE", "True"}
_FALSE = {"0", "f", "false", "FALSE", "False"}


def _bad(name: str, value: str, want: str) -> Exception:
    return ERROR_CLASSES["invalid_arguments"]("invalid_arguments", f"{name}={value!r}: {want}")


def apply_tool_env(config: Mapping[str, Any], environ: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``config`` (a library configuration) with the variables applied; ``environ`` defaults to
    ``os.environ``. A variable that is set (not empty) overrides the configuration's field:

    - ``TOOL_RUNTIME``: ``builtin`` leaves the config's ``wasm_tools`` out; ``wasm`` requires
      some; unset lets the config decide.
    - ``TOOL_TIMEOUT_SECS``, ``TOOL_MEMORY_MB``, ``TOOL_ALLOW_DIRECT_NETWORK``:
      ``wasm_policy``'s ``timeout_ms``, ``memory_mb`` and ``allow_direct_network``.
    - ``WORKSPACE_FS_MODE``: the config's ``mode``: ``host`` (the config's ``session`` and
      ``session_refresh_ms`` are dropped) or ``overlay``; ``agentfs`` is not available yet.
    - ``WORKSPACE_FS_SESSION``: the config's ``session`` (the overlay session's name); it needs
      overlay mode, by the config or ``WORKSPACE_FS_MODE``.
    - ``MODEL_PROVIDER``, ``MODEL_BASE_URL``, ``MODEL_API_KEY_ENV`` (the NAME of the variable
      holding the key), ``MODEL_TIMEOUT_SECS``, ``MODEL_NAME``: ``model_gateway``'s
      ``provider``, ``base_url``, ``api_key_env``, ``timeout_ms`` and ``model``, the gateway the
      library provides to Wasm tools when no callable is set (docs/model-gateway.md).

    Raises :class:`wsfs.InvalidArguments` naming the variable for a value that is not valid."""
    env = os.environ if environ is None else environ
    cfg = dict(config)

    def get(name: str) -> str | None:
        value = (env.get(name) or "").strip()
        return value or None

    mode = get(WORKSPACE_FS_MODE)
    if mode == "host":
        cfg["mode"] = "host"
        # The session keys belong to overlay mode: a config written for a session still opens
        # on the host.
        cfg.pop("session", None)
        cfg.pop("session_refresh_ms", None)
    elif mode == "overlay":
        cfg["mode"] = "overlay"
    elif mode == "agentfs":
        raise _bad(WORKSPACE_FS_MODE, mode, "the agentfs mode is not available yet; use host or overlay")
    elif mode is not None:
        raise _bad(WORKSPACE_FS_MODE, mode, "must be host or overlay")
    if (session := get(WORKSPACE_FS_SESSION)) is not None:
        if cfg.get("mode") != "overlay":
            raise _bad(
                WORKSPACE_FS_SESSION,
                session,
                "names an overlay session: set WORKSPACE_FS_MODE=overlay (or the configuration's mode) too",
            )
        cfg["session"] = session
    runtime = get(TOOL_RUNTIME)
    if runtime == "builtin":
        cfg.pop("wasm_tools", None)
    elif runtime == "wasm":
        if not cfg.get("wasm_tools"):
            raise _bad(TOOL_RUNTIME, runtime, "needs Wasm tools: list their folders in the configuration's wasm_tools")
    elif runtime is not None:
        raise _bad(TOOL_RUNTIME, runtime, "must be builtin or wasm")
    policy = dict(cfg.get("wasm_policy") or {})
    changed = False
    if (value := get(TOOL_TIMEOUT_SECS)) is not None:
        try:
            secs = float(value)
        except ValueError:
            secs = math.nan
        if not 0 < secs <= 86400:
            raise _bad(TOOL_TIMEOUT_SECS, value, "must be a number of seconds above 0, at most 86400")
        policy["timeout_ms"], changed = math.ceil(secs * 1000), True
    if (value := get(TOOL_MEMORY_MB)) is not None:
        if not value.isdigit() or int(value) == 0:
            raise _bad(TOOL_MEMORY_MB, value, "must be a whole number of MiB above 0")
        policy["memory_mb"], changed = int(value), True
    if (value := get(TOOL_ALLOW_DIRECT_NETWORK)) is not None:
        if value not in _TRUE | _FALSE:
            raise _bad(TOOL_ALLOW_DIRECT_NETWORK, value, "must be true or false")
        policy["allow_direct_network"], changed = value in _TRUE, True
    if changed:
        cfg["wasm_policy"] = policy
    return _apply_model_env(cfg, get)


def _apply_model_env(cfg: dict[str, Any], get: Any) -> dict[str, Any]:
    gateway = dict(cfg.get("model_gateway") or {})
    changed = False
    if (value := get(MODEL_PROVIDER)) is not None:
        if value not in MODEL_PROVIDERS:
            raise _bad(MODEL_PROVIDER, value, "must be openai-compatible, anthropic or ollama")
        gateway["provider"], changed = value, True
    # The library checks these (and never echoes api_key_env, should a key be put there).
    for name, key in ((MODEL_BASE_URL, "base_url"), (MODEL_API_KEY_ENV, "api_key_env"), (MODEL_NAME, "model")):
        if (value := get(name)) is not None:
            gateway[key], changed = value, True
    if (value := get(MODEL_TIMEOUT_SECS)) is not None:
        try:
            secs = float(value)
        except ValueError:
            secs = math.nan
        if not 0 < secs <= 86400:
            raise _bad(MODEL_TIMEOUT_SECS, value, "must be a number of seconds above 0, at most 86400")
        gateway["timeout_ms"], changed = math.ceil(secs * 1000), True
    if changed:
        cfg["model_gateway"] = gateway
    return cfg
