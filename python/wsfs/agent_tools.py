"""``FileSystemTools``: the wsfs tools as an Agent-Base-style toolset of async methods.

Each tool is an ``async`` callable named after the library's tool, with a signature and
docstring built from the library's spec (so every tool the library lists is here, with no
per-tool code). A call returns ``{"success": True, "result": {...data...}, "message":
"<text>"}`` or ``{"success": False, "error": "<code>", "message": "..."}`` and never raises
for a tool failure. A read's content is in the dict once, in ``result["content"]``; its
``message`` is a summary and the library's notices (see ``_success``). The blocking library call runs in a thread (``asyncio.to_thread``);
cancelling the awaiting task cancels the call in the library too (nothing is changed).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, fields
from typing import Annotated, Any

from .cancel import CancelToken
from .errors import WsfsError
from .specs import SpecFormat, exec_switch_on, format_specs, is_read_only, library_specs, tool_instructions
from .workspace import NATIVE_PROFILE, Limits, Workspace

log = logging.getLogger("wsfs")

try:  # optional: with OpenTelemetry installed, each call's figures go on the current span
    from opentelemetry import trace as _otel_trace
except ImportError:  # pragma: no cover - depends on the environment
    _otel_trace = None

ROOT_ENV = "AGENT_WORKSPACE_ROOT"
WRITES_DISABLED = "writes_disabled"
_JSON_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "number": float,
    "boolean": bool,
    "array": list,
    "object": dict,
}
_LOGGED_PATH_CHARS = 200

ToolResponse = dict[str, Any]


@dataclass(frozen=True)
class FileSystemSettings:
    """The settings FileSystemTools reads (any object or mapping with these names works, such
    as an Agent-Base ``AgentConfig``). ``None`` means: look further (root) or the default."""

    workspace_root: str | os.PathLike | None = None
    filesystem_writes_enabled: bool = False
    filesystem_max_read_bytes: int | None = None
    filesystem_max_write_bytes: int | None = None
    filesystem_profile: str | None = None
    filesystem_wsfs: Mapping[str, Any] | None = None


# The keys of the ``filesystem_wsfs`` mapping: every workspace setting of the library, named as
# MiniClaw's ``agents.defaults.wsfs`` object names them (the limits flat, not under "limits").
WSFS_LIMIT_KEYS = ("max_read_bytes", "max_write_bytes", "max_list_entries", "operation_timeout_ms")
WSFS_KEYS = WSFS_LIMIT_KEYS + (
    "policy",
    "mode",
    "session",
    "session_refresh_ms",
    "state_dir",
    "profile",
    "wasm_tools",
    "wasm_policy",
    "model_gateway",
    "create_root",
)


# The config names FileSystemTools reads, and the prefix that marks a key of a config mapping as
# one of them: a misspelt "filesystem_max_read_bytes" must be refused, not leave the default in
# force. Keys without the prefix are the agent framework's own settings and are left alone.
SETTING_NAMES = tuple(f.name for f in fields(FileSystemSettings))
SETTING_PREFIX = "filesystem_"


class FileSystemTools:
    """The wsfs tools for an agent framework: ``get_tools()`` lists async callables.

    Settings, each from the keyword argument, else the ``config`` object's (or mapping's)
    attribute of the same name as :class:`FileSystemSettings`, else the default:

    - root: ``root`` / ``workspace_root``, else ``$AGENT_WORKSPACE_ROOT``, else the current
      directory. A root of ``/`` or the home directory is logged as a warning.
    - ``writes_enabled`` / ``filesystem_writes_enabled`` (default False): while False, every
      tool whose spec annotations do not say ``readOnlyHint: true`` returns
      ``{"success": False, "error": "writes_disabled", ...}`` without calling the library, and
      ``get_tools()`` and ``tool_specs()`` leave those tools out (as they do when the
      workspace's policy disables writes).
    - ``max_read_bytes`` / ``filesystem_max_read_bytes`` and ``max_write_bytes`` /
      ``filesystem_max_write_bytes``: the workspace limits (library defaults when unset).

    - ``wsfs`` / ``filesystem_wsfs``: every other workspace setting, as a mapping with the names
      of MiniClaw's ``agents.defaults.wsfs`` object (go/README.md): ``max_read_bytes``,
      ``max_write_bytes``, ``max_list_entries``, ``operation_timeout_ms``, ``policy`` (the
      library's policy object: deny rules, audit log, developer tools ...), ``mode``,
      ``session``, ``session_refresh_ms``, ``state_dir``, ``profile``, ``wasm_tools``,
      ``wasm_policy``, ``model_gateway`` (docs/model-gateway.md) and ``create_root``. Its
      keys are checked (an unknown one raises ``ValueError`` naming the
      known ones; ``_comment...`` keys are allowed); the library checks the values and the
      policy's keys when the workspace opens. A setting given both here and above (a limit,
      the profile, ``policy.writes_enabled``) must agree, or ``ValueError`` says which. With
      it, the policy (``writes_enabled`` included) is the library's, so a read-only workspace
      also refuses writes in the library.

    - ``profile`` / ``filesystem_profile`` (default ``None``: the native tools in the
      Agent-Base-style result above): a library profile (docs/profiles.md), such as
      ``"agent-base"`` (Agent Base's own tool names, arguments, defaults and codes). The
      tools are then the profile's, as the workspace offers them
      (``Workspace.workspace_tool_specs``; no Wasm tools), and each returns the profile's
      envelope as the library made it. The workspace is opened with the profile and with
      ``writes_enabled`` as its policy; the library then offers what the profile's document
      does (agent-base: the changing tools too, each answering ``writes_disabled`` in the
      profile's words) and refuses the changes. A given ``workspace`` must have been opened
      with the profile (its policy, or the profile's default, then decides about writes).

    The tools are the built-in ones followed by the workspace's Wasm tools (its config's
    ``wasm_tools``; pass an open ``workspace`` to have them), each with its manifest's schema.

    A ``config`` mapping is checked strictly: a key starting with ``filesystem_`` that is not
    one of these settings raises ``ValueError`` naming it and the settings (an object's
    attributes are its class's business). Or pass an open ``workspace`` (it is then not closed
    by :meth:`close`).
    Each call logs one record on the ``wsfs`` logger (INFO): tool, path, outcome, duration;
    never contents.
    """

    def __init__(
        self,
        config: object | None = None,
        *,
        root: str | os.PathLike | None = None,
        writes_enabled: bool | None = None,
        max_read_bytes: int | None = None,
        max_write_bytes: int | None = None,
        workspace: Workspace | None = None,
        profile: str | None = None,
        wsfs: Mapping[str, Any] | None = None,
    ) -> None:
        _check_setting_names(config)
        wsfs_given = _pick(wsfs, config, "filesystem_wsfs", None)
        settings = _wsfs_settings(wsfs_given)
        policy = dict(settings.pop("policy", None) or {})
        writes = _agreeing(
            "writes_enabled",
            _pick(writes_enabled, config, "filesystem_writes_enabled", None),
            policy.get("writes_enabled"),
        )
        writes = False if writes is None else writes
        if not isinstance(writes, bool):  # a string such as "false" must not enable writes
            raise TypeError(f"filesystem_writes_enabled must be a bool, not {type(writes).__name__}")
        profile = _agreeing("profile", _pick(profile, config, "filesystem_profile", None), settings.pop("profile", None))
        if profile is not None and not isinstance(profile, str):
            raise TypeError(f"filesystem_profile must be a str, not {type(profile).__name__}")
        self.writes_enabled = writes
        if workspace is not None:
            if root is not None or max_read_bytes is not None or max_write_bytes is not None or settings or policy:
                raise ValueError("give either an open workspace or root/limits/wsfs settings, not both")
            if profile is not None and profile != workspace.profile:
                raise ValueError(
                    f"the workspace serves the {workspace.profile!r} profile, not {profile!r}: "
                    "open it with profile=..."
                )
            self._workspace, self._owned = workspace, False
        else:
            limits = Limits(
                max_read_bytes=_agreeing(
                    "max_read_bytes",
                    _pick(max_read_bytes, config, "filesystem_max_read_bytes", None),
                    settings.pop("max_read_bytes", None),
                ),
                max_write_bytes=_agreeing(
                    "max_write_bytes",
                    _pick(max_write_bytes, config, "filesystem_max_write_bytes", None),
                    settings.pop("max_write_bytes", None),
                ),
                max_list_entries=settings.pop("max_list_entries", None),
                operation_timeout_ms=settings.pop("operation_timeout_ms", None),
            )
            opened: dict[str, Any] = dict(settings)
            if profile or wsfs_given is not None:
                # The library's policy decides (without these, the native tools keep the
                # library's default policy and writes are refused here, before the library).
                opened.update(profile=profile, policy={**policy, "writes_enabled": writes})
            self._workspace = Workspace(_workspace_root(root, config), limits=limits, **opened)
            self._owned = True
        self.profile: str = self._workspace.profile
        """The library profile the tools follow (``"wsfs"``: the native tools)."""
        self._native = self.profile == NATIVE_PROFILE
        self._tools: list[Callable[..., Awaitable[ToolResponse]]] = []
        self._specs: dict[str, dict[str, Any]] = {}
        if self._native:
            # Every built-in tool stays an attribute (get_tools leaves out what the policy
            # turns off), then the workspace's Wasm tools as it offers them.
            builtin = library_specs()
            names = {s["name"] for s in builtin}
            extra = [s for s in self._workspace.library_specs() if s["name"] not in names]
            self._library_specs = builtin + extra
        else:
            self._library_specs = self._workspace.library_specs()
        # What runs while writes are off: the read-only tools, and in a read-only workspace the
        # program tools too (their programs get a read-only view), as the workspace's own
        # specs say.
        self._runs_read_only = {s["name"] for s in self._workspace.library_specs() if is_read_only(s)}
        self._runs_read_only |= {s["name"] for s in self._library_specs if is_read_only(s)}
        for spec in self._library_specs:
            tool = self._make_tool(spec)
            self._specs[spec["name"]] = spec
            self._tools.append(tool)
            if not hasattr(type(self), spec["name"]):  # a Wasm tool named "close" stays a tool only
                setattr(self, spec["name"], tool)

    @property
    def workspace(self) -> Workspace:
        return self._workspace

    @property
    def root(self) -> str:
        return self._workspace.root

    @property
    def offers_writes(self) -> bool:
        """Whether the changing tools are offered: writes are enabled here
        (``writes_enabled``) and by the workspace's policy (``writes_enabled`` in its
        ``policy``). Otherwise each of them could only fail with ``writes_disabled``."""
        policy = self._workspace.info.get("policy") or {}
        if not self._native:  # the library decides, and offers only what can run
            return policy.get("writes_enabled", True) is not False
        return self.writes_enabled and policy.get("writes_enabled", True) is not False

    def get_tools(self) -> list[Callable[..., Awaitable[ToolResponse]]]:
        """The tools, in the library's order: async callables named after the tools. While
        writes are disabled (see :attr:`offers_writes`), only the read-only ones (and, in a
        read-only workspace, the program tools, which run on a read-only view); the developer
        tools (``run_tests``, ``git_status``, ``safe_shell``, ...) only when the workspace's
        policy turns them on (``exec_enabled``; ``shell`` also ``shell_enabled``; pass an open
        ``workspace`` with that policy): a tool that can only fail is not offered. (Every tool stays an attribute; a changing one called
        anyway returns ``writes_disabled``.)"""
        if not self._native:
            return list(self._tools)
        policy = self._workspace.info.get("policy") or {}
        writes = self.offers_writes
        return [
            t
            for t in self._tools
            if exec_switch_on(t.__name__, policy) and (writes or t.__name__ in self._runs_read_only)
        ]

    @property
    def instructions(self) -> str:
        """What to tell the model once beside the tools, e.g. in the system prompt: how every
        path argument is read (:func:`wsfs.tool_instructions`; the tools' descriptions keep
        one clause of it)."""
        return tool_instructions()

    def tool_specs(self, format: SpecFormat = "openai") -> list[dict[str, Any]]:
        """The specs of the tools :meth:`get_tools` offers, for a function-calling API (see
        :func:`wsfs.tool_specs`)."""
        offered = {t.__name__ for t in self.get_tools()}
        kept = [s for s in self._library_specs if s["name"] in offered]
        return format_specs(kept, format)

    async def call(self, name: str, arguments: Mapping[str, Any] | str | None = None) -> ToolResponse:
        """Runs the tool ``name`` with ``arguments`` (a mapping, or a JSON object text as a
        model sends it), as the tool's own method would."""
        if isinstance(arguments, str):
            try:
                arguments = json.loads(arguments) if arguments.strip() else {}
            except ValueError as e:
                return _refused(name, "invalid_arguments", f"arguments are not valid JSON: {e}")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, Mapping):
            return _refused(name, "invalid_arguments", "arguments must be a JSON object")
        return await self._run(name, dict(arguments))

    def close(self) -> None:
        """Closes the workspace if this toolset opened it (idempotent)."""
        if self._owned:
            self._workspace.close()

    def __enter__(self) -> FileSystemTools:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    async def __aenter__(self) -> FileSystemTools:
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.close()

    # -- internals ------------------------------------------------------------------------

    def _make_tool(self, spec: dict[str, Any]) -> Callable[..., Awaitable[ToolResponse]]:
        name = spec["name"]
        signature = _signature(spec["parameters"])
        positional = [p.name for p in signature.parameters.values() if p.kind is p.POSITIONAL_OR_KEYWORD]

        async def tool(*args: Any, **kwargs: Any) -> ToolResponse:
            if len(args) > len(positional):
                return _refused(
                    name, "invalid_arguments", f"{name} takes at most {len(positional)} positional arguments"
                )
            for key, value in zip(positional, args, strict=False):  # len checked above
                if key in kwargs:
                    return _refused(name, "invalid_arguments", f"{name} got {key!r} twice")
                kwargs[key] = value
            return await self._run(name, kwargs)

        tool.__name__ = tool.__qualname__ = name
        tool.__doc__ = _docstring(spec)
        tool.__signature__ = signature  # type: ignore[attr-defined]
        tool.__annotations__ = {p.name: p.annotation for p in signature.parameters.values()}
        tool.__annotations__["return"] = signature.return_annotation
        return tool

    async def _run(self, name: str, args: dict[str, Any]) -> ToolResponse:
        started = time.perf_counter()
        outcome = "error"
        metrics: dict[str, Any] | None = None
        try:
            response, metrics = await self._dispatch(name, args)
            outcome = _outcome(response)
            return response
        except asyncio.CancelledError:
            outcome = "cancelled"
            raise
        finally:
            if metrics is not None:
                _record_on_span(metrics, outcome)
            if log.isEnabledFor(logging.INFO):
                _log_call(name, args, outcome, time.perf_counter() - started, metrics)

    async def _dispatch(self, name: str, args: dict[str, Any]) -> tuple[ToolResponse, dict[str, Any] | None]:
        """The response, and the call's metrics when the library ran it."""
        if not self._native:  # the profile's envelope, as the library made it
            envelope = await self._in_thread(name, args)
            return envelope, envelope.pop("metrics", None)
        spec = self._specs.get(name)
        if spec is None:
            known = ", ".join(self._specs)
            return _failure("unknown_tool", f"there is no tool named {name!r}; the tools are: {known}"), None
        if not self.writes_enabled and name not in self._runs_read_only:
            return _failure(
                WRITES_DISABLED,
                f"{name} is not available: file changes are disabled for this agent "
                "(filesystem_writes_enabled is false). The read-only tools still work.",
            ), None
        envelope = await self._in_thread(name, args)
        metrics = envelope.get("metrics")
        if envelope["ok"]:
            return _success(envelope["data"], envelope["text"]), metrics
        error = envelope["error"]
        return _failure(error["code"], error["message"]), metrics

    async def _in_thread(self, name: str, args: dict[str, Any]) -> dict[str, Any]:
        """The library's envelope of one call, run in a thread; cancelling the awaiting task
        cancels the call in the library."""
        token = CancelToken()
        try:
            envelope = await asyncio.to_thread(self._envelope, name, args, token)
        except asyncio.CancelledError:
            token.cancel()  # the library call stops at its next check; nothing is changed
            raise
        finally:
            token.close()
        return envelope

    def _envelope(self, name: str, args: dict[str, Any], token: CancelToken) -> dict[str, Any]:
        try:
            return self._workspace._envelope(name, args, None, token, profile_metrics=True)
        except WsfsError as e:  # refused before the library (a NUL in a C string, ...)
            if not self._native:
                return _failure(e.code, e.message)
            return {"ok": False, "error": {"code": e.code, "message": e.message}, "text": str(e)}


def _outcome(response: Mapping[str, Any]) -> str:
    """``ok`` or the error code, for the log, in any profile's envelope (``success``/``ok``;
    ``error`` a code or ``{code}``, or ``error_code``)."""
    if response.get("success", response.get("ok")) is True:
        return "ok"
    error = response.get("error", response.get("error_code"))
    if isinstance(error, Mapping):
        error = error.get("code")
    return error if isinstance(error, str) else "error"


def _success(data: dict[str, Any], text: str) -> ToolResponse:
    """A success dict that holds a read's content once: a framework that serialises the whole
    dict for the model must not send it twice. ``result`` is the envelope's data and
    ``message`` its text; for a read, whose text is the content followed by the library's
    notices (truncated, how to continue, warnings), the content stays in ``result["content"]``
    (Agent Base's read_file result) and ``message`` is a summary followed by those notices.
    A read with line numbers renders the content differently from ``result["content"]``: then
    the numbered lines are the message, and ``result`` goes without ``content``."""
    content = data.get("content")
    if not isinstance(content, str) or not content:
        return {"success": True, "result": data, "message": text}
    if text.startswith(content):
        rest = text[len(content) :].lstrip("\n")
        summary = f"read {data.get('path')}: {data.get('bytes')} bytes"
        return {"success": True, "result": data, "message": f"{summary}\n{rest}" if rest else summary}
    return {"success": True, "result": {k: v for k, v in data.items() if k != "content"}, "message": text}


def _failure(code: str, message: str) -> ToolResponse:
    return {"success": False, "error": code, "message": message}


def _refused(name: str, code: str, message: str) -> ToolResponse:
    """A failure found before the call could start, logged as a call."""
    if log.isEnabledFor(logging.INFO):
        _log_call(name, {}, code, 0.0)
    return _failure(code, message)


def _check_setting_names(config: object | None) -> None:
    if not isinstance(config, Mapping):
        return
    unknown = [
        k for k in config if isinstance(k, str) and k.startswith(SETTING_PREFIX) and k not in SETTING_NAMES
    ]
    if unknown:
        raise ValueError(
            f"unknown FileSystemTools setting {unknown[0]!r} in config; the settings are "
            f"{', '.join(SETTING_NAMES)}"
        )


def _wsfs_settings(settings: object | None) -> dict[str, Any]:
    """The ``filesystem_wsfs`` mapping, its keys checked (``_comment...`` keys dropped)."""
    if settings is None:
        return {}
    if not isinstance(settings, Mapping):
        raise TypeError(f"filesystem_wsfs must be a mapping, not {type(settings).__name__}")
    unknown = sorted(k for k in settings if k not in WSFS_KEYS and not str(k).startswith("_comment"))
    if unknown:
        raise ValueError(
            f"unknown key {', '.join(map(repr, unknown))} in filesystem_wsfs; the known keys are {', '.join(WSFS_KEYS)}"
        )
    return {k: v for k, v in settings.items() if k in WSFS_KEYS and v is not None}


def _agreeing(name: str, setting: Any, in_wsfs: Any) -> Any:
    """One value from a FileSystemTools setting and the same setting in ``filesystem_wsfs``."""
    if setting is not None and in_wsfs is not None and setting != in_wsfs:
        raise ValueError(
            f"{name} is {setting!r} as a FileSystemTools setting and {in_wsfs!r} in filesystem_wsfs: "
            "give it once, or the same in both"
        )
    return in_wsfs if setting is None else setting


def _pick(explicit: Any, config: object | None, name: str, default: Any) -> Any:
    if explicit is not None:
        return explicit
    if config is not None:
        value = config.get(name) if isinstance(config, Mapping) else getattr(config, name, None)
        if value is not None:
            return value
    return default


def _workspace_root(root: str | os.PathLike | None, config: object | None) -> str | os.PathLike:
    """The explicit root, else the config's workspace_root, else $AGENT_WORKSPACE_ROOT, else
    the current directory."""
    chosen = _pick(root, config, "workspace_root", None)
    if chosen is not None:
        return chosen
    return os.environ.get(ROOT_ENV) or os.getcwd()


def _signature(schema: Mapping[str, Any]) -> inspect.Signature:
    """A Python signature for a tool's JSON Schema: required parameters first (positional or
    keyword), then the optional ones (keyword only, with the schema's defaults), each
    annotated ``Annotated[<type>, "<description>"]``."""
    required = list(schema.get("required", []))
    properties: Mapping[str, Any] = schema.get("properties", {})
    params = []
    for name in required + [n for n in properties if n not in required]:
        prop = properties.get(name, {})
        annotation: Any = _JSON_TYPES.get(prop.get("type", ""), Any)
        if prop.get("description"):
            annotation = Annotated[annotation, prop["description"]]
        if name in required:
            params.append(
                inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD, annotation=annotation)
            )
        else:
            default = prop.get("default")
            params.append(
                inspect.Parameter(
                    name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=annotation
                )
            )
    return inspect.Signature(params, return_annotation=dict[str, Any])


def _docstring(spec: Mapping[str, Any]) -> str:
    lines = [spec["description"]]
    properties = spec["parameters"].get("properties", {})
    if properties:
        lines += ["", "Args:"]
        lines += [f"    {name}: {prop.get('description', '')}" for name, prop in properties.items()]
    return "\n".join(lines)


def _record_on_span(metrics: Mapping[str, Any], outcome: str) -> None:
    """Sets the call's figures as ``tool.*`` attributes on the current OpenTelemetry span (the
    one an agent framework's middleware opened around the tool), when OpenTelemetry is
    installed and that span records."""
    if _otel_trace is None:
        return
    span = _otel_trace.get_current_span()
    if span.is_recording():
        span.set_attributes(span_attributes(metrics, outcome))


def span_attributes(metrics: Mapping[str, Any], outcome: str) -> dict[str, Any]:
    """A call's metrics as span attributes: ``tool.name``, ``tool.path``, ``tool.outcome``,
    ``tool.duration_ms`` and ``tool.<figure>`` for each figure the tool has (``tool.lines_read``,
    ``tool.bytes_read``, ``tool.truncated`` ...). Never contents."""
    attributes: dict[str, Any] = {"tool.name": metrics.get("tool", ""), "tool.outcome": outcome}
    for key, value in metrics.items():
        if key == "tool":
            continue
        if key == "duration_us":
            attributes["tool.duration_ms"] = value / 1000
        elif isinstance(value, (str, int, float, bool)):
            attributes[f"tool.{key}"] = value
    return attributes


def _log_call(
    name: str, args: Mapping[str, Any], outcome: str, seconds: float, metrics: Mapping[str, Any] | None = None
) -> None:
    path = args.get("path", ".")
    path = path if isinstance(path, str) else repr(path)
    if len(path) > _LOGGED_PATH_CHARS:
        path = path[:_LOGGED_PATH_CHARS] + "..."
    ms = seconds * 1000
    log.info(
        "%s path=%r outcome=%s duration_ms=%.2f",
        name,
        path,
        outcome,
        ms,
        extra={
            "wsfs_tool": name,
            "wsfs_path": path,
            "wsfs_outcome": outcome,
            "wsfs_duration_ms": ms,
            "wsfs_metrics": dict(metrics) if metrics is not None else None,
        },
    )
