"""``Workspace``: one open workspace, with a typed method per tool."""

from __future__ import annotations

import json
import logging
import math
import os
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any, TypeVar

from . import _approval, _native
from .cancel import CancelToken
from .errors import ERROR_CLASSES, WsfsError
from .results import (
    AppendFileResult,
    ApplyPatchResult,
    CreateDirectoryResult,
    DeleteFileResult,
    EditFileResult,
    FindFilesResult,
    GetPathInfoResult,
    ListDirResult,
    MoveFileResult,
    GitCommitResult,
    GitDiffResult,
    GitStatusResult,
    ReadFileResult,
    RunLintResult,
    RunTestsResult,
    SafeShellResult,
    SearchTextResult,
    ShellResult,
    ToolResult,
    TypecheckResult,
    WorkspaceInfoResult,
    WriteFileResult,
)
from .session import SESSION_OPS, Checkpoint, CommitResult, DiffResult
from .specs import SpecFormat, format_specs, tool_specs

log = logging.getLogger("wsfs")

R = TypeVar("R", bound=ToolResult)
PathArg = str | os.PathLike

# Tools whose `content` goes to wsfs_call_with_content as a buffer (no JSON escaping).
CONTENT_TOOLS = frozenset({"write_file", "append_file"})
# The write_file warning the library leaves out of `text` (the text says "overwrote").
OVERWRITE_WARNING = "file exists, overwriting"
EMPTY_FILE_TEXT = "(empty file)"
CONFIG_KEYWORDS = (
    "root",
    "create_root",
    "restrict_to_workspace",
    "limits",
    "policy",
    "state_dir",
    "profile",
    "wasm_tools",
    "wasm_policy",
    "model_gateway",
    "mode",
    "session",
    "session_refresh_ms",
)
NATIVE_PROFILE = "wsfs"

_OPTIONS = {out: b'{"output":"%s"}' % out.encode() for out in ("full", "data_raw")}
_READ = b"read_file"
_encode_json_string = json.encoder.encode_basestring  # type: ignore[attr-defined]


@dataclass(frozen=True, slots=True)
class Limits:
    """The workspace limits; ``None`` means the library's default (docs/security.md, "Limits")."""

    max_read_bytes: int | None = None
    max_write_bytes: int | None = None
    max_list_entries: int | None = None
    operation_timeout_ms: int | None = None

    def to_config(self) -> dict[str, int]:
        return {f.name: getattr(self, f.name) for f in fields(self) if getattr(self, f.name) is not None}


class Workspace:
    """An open workspace: every path a method receives stays beneath ``root`` (see
    docs/security.md, "Confinement"). Use it as a context manager, or call :meth:`close`.

    Thread-safe: one workspace may serve many threads at once, and calls run in parallel (the
    GIL is released while the library works). Each tool method takes the tool's arguments as
    keyword arguments (required ones may be positional), plus ``timeout`` (seconds; it can
    only shorten ``limits.operation_timeout_ms``) and ``cancel`` (a :class:`CancelToken`),
    returns the tool's frozen result dataclass, and raises :class:`WsfsError` (a subclass per
    code) on failure.

    A ``root`` that does not exist raises :class:`PathNotFound` naming it; ``create_root=True``
    makes it (with its parents) instead.

    ``config`` holds further library configuration keys (for keys this class has no keyword
    for yet); :meth:`from_config` takes a whole configuration mapping as is.

    ``profile`` (default ``"wsfs"``, the native tools) serves the tools as one host expects
    them (docs/profiles.md): every call then takes the profile's tool and argument names and
    returns the profile's envelope, so use :meth:`call` / :meth:`call_json` and
    :meth:`workspace_tool_specs`; the typed methods, which return the native results, raise
    :class:`InvalidArguments` on such a workspace.
    """

    root: str
    """The absolute root, symlinks resolved."""
    restrict_to_workspace: bool
    limits: Limits
    """The effective limits (defaults filled in)."""
    wasm_tools: tuple[str, ...]
    """The names of the Wasm tools the workspace loaded (``wasm_tools`` folders)."""
    warnings: tuple[str, ...]
    """Warnings of the open (a root of ``/`` or the home directory, unrestricted mode)."""
    info: dict[str, Any]
    """The ``data`` of ``wsfs_workspace_open`` (handle, root, limits, and any newer keys)."""
    profile: str
    """The profile the workspace serves (``"wsfs"``: the native tools)."""
    mode: str
    """``"host"`` or ``"overlay"`` (the configuration's ``mode``)."""
    session: str | None
    """The overlay session's name (``"default"`` unless the configuration names one); ``None``
    in host mode."""

    def __init__(
        self,
        root: PathArg,
        *,
        create_root: bool = False,
        restrict_to_workspace: bool = True,
        limits: Limits | Mapping[str, int] | None = None,
        policy: Mapping[str, Any] | None = None,
        state_dir: PathArg | None = None,
        profile: str | None = None,
        wasm_tools: Sequence[PathArg] | None = None,
        wasm_policy: Mapping[str, Any] | None = None,
        model_gateway: Mapping[str, Any] | None = None,
        mode: str | None = None,
        session: str | None = None,
        session_refresh_ms: int | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> None:
        extra = dict(config or {})
        repeated = sorted(set(extra) & set(CONFIG_KEYWORDS))
        if repeated:
            raise ValueError(
                f"pass {', '.join(repeated)} as keyword arguments, not in config "
                "(or use Workspace.from_config with a whole configuration)"
            )
        cfg: dict[str, Any] = {"root": os.fspath(root), "restrict_to_workspace": restrict_to_workspace}
        if create_root:
            cfg["create_root"] = True
        if limits is not None:
            cfg["limits"] = limits.to_config() if isinstance(limits, Limits) else dict(limits)
        if policy is not None:
            cfg["policy"] = dict(policy)
        if state_dir is not None:
            cfg["state_dir"] = os.fspath(state_dir)
        if profile is not None:
            cfg["profile"] = profile
        if wasm_tools is not None:
            if isinstance(wasm_tools, (str, bytes, os.PathLike)):
                raise TypeError("wasm_tools is a list of folders, not one path")
            cfg["wasm_tools"] = [os.fspath(folder) for folder in wasm_tools]
        if wasm_policy is not None:
            cfg["wasm_policy"] = dict(wasm_policy)
        if model_gateway is not None:
            cfg["model_gateway"] = dict(model_gateway)
        for key, value in (("mode", mode), ("session", session), ("session_refresh_ms", session_refresh_ms)):
            if value is not None:
                cfg[key] = value
        cfg.update(extra)
        self._open(cfg)

    @classmethod
    def from_config(cls, config: Mapping[str, Any]) -> Workspace:
        """Opens a workspace from a whole library configuration (``{"root": ..., "limits":
        {...}, ...}``), passed through as is, so every key the library accepts works."""
        ws = cls.__new__(cls)
        ws._open(dict(config))
        return ws

    def _open(self, cfg: dict[str, Any]) -> None:
        self._handle = 0
        self._closed = True  # until opened: __del__ must not close anything
        self._close_lock = threading.Lock()
        self._gateways: list[Any] = []
        self._approval_handlers: list[Any] = []
        self._lib = lib = _native.load()
        text = json.dumps(cfg, ensure_ascii=False, default=_json_default)
        env = json.loads(_native.take(lib, lib.wsfs_workspace_open(_native.utf8(text, "config"))))
        if not env["ok"]:
            raise _error(env)
        data = env["data"]
        self.info = data
        self._handle = data["workspace"]
        self._closed = False
        self.root = data["root"]
        self.restrict_to_workspace = data["restrict_to_workspace"]
        self.profile = data.get("profile", NATIVE_PROFILE)
        known = {f.name for f in fields(Limits)}
        self.limits = Limits(**{k: v for k, v in data["limits"].items() if k in known})
        self._max_read = self.limits.max_read_bytes
        self.wasm_tools = tuple(data.get("wasm_tools", ()))
        self.mode = "overlay" if cfg.get("mode") == "overlay" else "host"
        self.session = (cfg.get("session") or "default") if self.mode == "overlay" else None
        self.warnings = tuple(env.get("warnings", ()))
        for warning in self.warnings:
            log.warning("workspace %s: %s", self.root, warning)

    # -- lifecycle ----------------------------------------------------------------------

    @property
    def handle(self) -> int:
        return self._handle

    @property
    def closed(self) -> bool:
        return self._closed

    def close(self) -> None:
        """Closes the workspace (idempotent). Calls in flight finish normally; later calls
        raise :class:`InvalidWorkspace`."""
        with self._close_lock:
            if self._closed:
                return
            self._closed = True
        env = json.loads(_native.take(self._lib, self._lib.wsfs_workspace_close(self._handle)))
        if not env["ok"]:
            raise _error(env)

    def __enter__(self) -> Workspace:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __del__(self) -> None:
        try:
            if not getattr(self, "_closed", True):
                self.close()
        except Exception:  # noqa: BLE001 - interpreter shutdown may have torn down ctypes
            pass

    def __repr__(self) -> str:
        state = "closed" if self._closed else "open"
        return f"<wsfs.Workspace {getattr(self, 'root', '?')!r} {state}>"

    # -- specs and generic calls --------------------------------------------------------

    @staticmethod
    def tool_specs(format: SpecFormat = "openai", *, read_only: bool = False) -> list[dict[str, Any]]:
        """The tool specs for a function-calling API: see :func:`wsfs.tool_specs`."""
        return tool_specs(format, read_only=read_only)

    def set_model_gateway(self, gateway: Callable[[dict[str, Any], float], Any] | None) -> None:
        """Sets the model gateway of this workspace's Wasm tools (``wsfs_set_model_gateway``):
        a tool with the ``model_access`` capability reaches a model only through it. ``None``
        removes it (tools then get ``gateway_error``).

        ``gateway(request, timeout)`` gets the tool's request (a dict, decoded from its JSON) and
        the seconds left before the tool's deadline, and returns the answer: a JSON-serialisable
        value, or a ``str`` holding JSON. It may be called from several threads at once (the
        library's, with the GIL taken for the call). Raising ``TimeoutError`` gives the tool
        ``timeout``, ``ValueError`` ``invalid_arguments``, anything else ``gateway_error``, with
        the exception's text as the message."""
        lib = self._lib
        if gateway is None:
            callback = None
        else:
            callback = _native.GATEWAY_FN(_gateway_callback(lib, gateway))
            # A call in flight may still use a replaced callback: each is kept as long as the
            # workspace object lives.
            self._gateways.append(callback)
        env = json.loads(_native.take(lib, lib.wsfs_set_model_gateway(self._handle, callback, None)))
        if not env["ok"]:
            raise _error(env)

    def set_approval_handler(self, handler: _approval.ApprovalHandler | None) -> None:
        """Sets this workspace's approval handler (``wsfs_set_approval_handler``): it decides
        every call that needs confirming (``git_commit``) instead of the model's
        ``confirmed=True``, and the calls no model confirms (every ``shell`` command, a
        recursive ``delete_file``). ``None`` removes it, and ``confirmed=True`` is the gate
        again (those others then run as before).

        ``handler(request, timeout)`` gets the request (a dict ``{"tool", "arguments", "why"}``)
        and the seconds left before the call's deadline. ``True`` runs the call (whatever its
        ``confirmed`` says); ``False`` or ``(False, reason)`` denies it with
        ``approval_denied``, and so does raising (the exception's text is the reason) or
        answering after the deadline. It may be called from several threads at once."""
        lib = self._lib
        if handler is None:
            callback = None
        else:
            callback = _native.APPROVAL_FN(_approval.callback(lib, handler))
            # A call in flight may still use a replaced callback: each is kept as long as the
            # workspace object lives.
            self._approval_handlers.append(callback)
        env = json.loads(_native.take(lib, lib.wsfs_set_approval_handler(self._handle, callback, None)))
        if not env["ok"]:
            raise _error(env)

    def library_specs(self) -> list[dict[str, Any]]:
        """The tools this workspace offers (``wsfs_workspace_tool_specs``), in the library's own
        spec shape: its profile's names, schemas and defaults (for the native profile the
        built-in tools, then its Wasm tools with their manifest's description and input
        schema; another profile offers no Wasm tools), without the tools its policy refuses
        whatever the arguments (every changing tool when the policy disables writes, the
        developer tools while their exec switch is off, those ``allow_tools`` /
        ``deny_tools`` leave out). A fresh list."""
        env = json.loads(_native.take(self._lib, self._lib.wsfs_workspace_tool_specs(self._handle)))
        if not env["ok"]:
            raise _error(env)
        return env["data"]["tools"]

    def workspace_tool_specs(self, format: SpecFormat = "openai", *, read_only: bool = False) -> list[dict[str, Any]]:
        """:meth:`library_specs` in ``format`` (see :func:`wsfs.tool_specs`); ``read_only=True``
        keeps only the read-only ones of them."""
        return format_specs(self.library_specs(), format, read_only=read_only)

    def call(
        self,
        name: str,
        /,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
        **args: Any,
    ) -> dict[str, Any]:
        """Runs any tool by name and returns its envelope as a dict: ``{"ok": True, "data",
        "text", "warnings"}`` or ``{"ok": False, "error": {"code", "message"}, "text"}`` (on a
        workspace with a profile: that profile's envelope).
        Tool failures are returned, not raised; arguments that cannot be sent at all raise
        :class:`InvalidArguments` (not JSON, a NUL in ``name``, a closed cancel token)."""
        return self._envelope(name, args, timeout, cancel)

    def call_json(
        self,
        name: str,
        args_json: str | bytes,
        /,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> dict[str, Any]:
        """Like :meth:`call`, with the arguments as a JSON object text (as a model sends them);
        the library parses and checks it."""
        args_b = _native.c_string(args_json, "args_json")
        raw = self._invoke(_native.c_string(name, "tool name"), args_b, _options("full", timeout, cancel))
        return json.loads(raw)

    def dispatch(
        self,
        call: Mapping[str, Any] | str | bytes,
        /,
        *,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> dict[str, Any]:
        """Runs a tool call as a model API hands it over, whole (``wsfs_dispatch``,
        docs/dispatch.md): ``{"tool_call": {"name", "arguments"}}``, the bare ``{"name",
        "arguments"}``, or either without ``arguments`` (the name-only call); ``arguments`` may
        be a mapping or a JSON text holding an object. ``call`` is that object, or its JSON text.
        The named tool runs exactly as :meth:`call_json` runs it (built-in and Wasm tools alike;
        on a workspace with a profile, the profile's names and envelope) and its envelope is
        returned as a dict, failures included. A malformed call runs nothing: its envelope is
        ``invalid_arguments`` saying what is wrong."""
        if isinstance(call, Mapping):
            body = _encode_args(call)
        else:
            body = _native.c_string(call, "call")
        ptr = self._lib.wsfs_dispatch(self._handle, body, _options("full", timeout, cancel))
        return json.loads(_native.take(self._lib, ptr))

    def _envelope(
        self,
        name: str,
        args: dict[str, Any],
        timeout: float | None,
        cancel: CancelToken | None,
        profile_metrics: bool = False,
    ) -> dict[str, Any]:
        """The full envelope of a call, with its ``metrics`` (docs/c-abi.md, "Metrics"); plain reads
        take the raw fast path and rebuild it. A profile's envelope has them only with
        ``profile_metrics`` (the caller removes them before a model sees it)."""
        if self.profile != NATIVE_PROFILE:  # the profile's envelope: no raw modes, no buffer
            options = _options("full", timeout, cancel, metrics=True if profile_metrics else None)
            raw = self._invoke(_native.c_string(name, "tool name"), _encode_args(args), options)
            return json.loads(raw)
        if name == "read_file" and _is_plain_read(args):
            options = _options("data_raw", timeout, cancel, metrics=True)
            try:
                data, text, warnings, metrics = self._plain_read(args["path"], options)
            except WsfsError as e:  # the library's, or a path refused as the library would
                failure: dict[str, Any] = {"ok": False, "error": {"code": e.code, "message": e.message}, "text": str(e)}
                if e.metrics is not None:
                    failure["metrics"] = e.metrics
                return failure
            envelope = {"ok": True, "data": data, "text": text, "warnings": list(warnings)}
            if metrics is not None:
                envelope["metrics"] = metrics
            return envelope
        content = None
        if name in CONTENT_TOOLS and isinstance(args.get("content"), str):
            args = dict(args)
            content = _native.utf8(args.pop("content"), "content")
        raw = self._invoke(
            _native.c_string(name, "tool name"),
            _encode_args(args),
            _options("full", timeout, cancel),
            content,
        )
        return json.loads(raw)

    # -- overlay sessions: the host's operations (docs/sessions.md) -------------
    #
    # Each waits for the tool calls in flight, then runs to its end (no timeout or cancel).
    # A workspace in host mode raises NoSession.

    def session_call(self, op: str, options: Mapping[str, Any] | str | bytes | None = None) -> dict[str, Any]:
        """Runs session operation ``op`` (``diff``, ``commit``, ``checkpoint``, ``rewind``,
        ``checkpoints``, ``discard``, ``refresh``) with ``options`` (a mapping, a JSON text, or
        ``None`` for none) and returns its envelope as a dict, failures included (like
        :meth:`call`)."""
        if op not in SESSION_OPS:
            raise ERROR_CLASSES["invalid_arguments"](
                "invalid_arguments", f"unknown session operation {op!r}: one of {', '.join(SESSION_OPS)}"
            )
        if options is None:
            opts = None
        elif isinstance(options, (str, bytes)):
            opts = _native.c_string(options, "options")
        else:
            opts = _encode_args(options)
        lib = self._lib
        fn = getattr(lib, "wsfs_session_" + op)
        if op in ("checkpoints", "discard", "refresh"):
            if opts is not None:
                raise ERROR_CLASSES["invalid_arguments"]("invalid_arguments", f"session {op} takes no options")
            ptr = fn(self._handle)
        else:
            ptr = fn(self._handle, opts)
        return json.loads(_native.take(lib, ptr))

    def _session(self, op: str, options: Mapping[str, Any] | None = None) -> tuple[Any, str]:
        env = self.session_call(op, options)
        if not env["ok"]:
            raise _error(env)
        return env.get("data") or {}, env.get("text", "")

    def session_diff(
        self,
        paths: Sequence[PathArg] | None = None,
        *,
        max_bytes: int | None = None,
        include_ignored: bool = False,
    ) -> DiffResult:
        """The session's changes against the base (only ``paths``, a directory meaning
        everything below it, if given); ``max_bytes`` bounds the unified text (the list of
        changes is never cut). What the workspace's ``.gitignore`` files and the built-in cache
        list ignore is left out and counted in ``ignored`` unless ``include_ignored``; a git
        repository's changes are one ``git_repository`` entry (docs/session-review.md)."""
        opts: dict[str, Any] = {}
        if paths is not None:
            opts["paths"] = _paths(paths)
        if max_bytes is not None:
            opts["max_bytes"] = max_bytes
        if include_ignored:
            opts["include_ignored"] = True
        data, text = self._session("diff", opts)
        return DiffResult.from_data(data, text)

    def session_commit(
        self,
        paths: Sequence[PathArg] | None = None,
        *,
        hunks: Mapping[str, Sequence[str]] | None = None,
        force: bool = False,
        merge: bool = False,
        include_ignored: bool = False,
    ) -> CommitResult:
        """Writes the session's changes to the base: all of them, ``paths``, or ``hunks``
        (``{path: [hunk id]}`` from :meth:`session_diff`; the rest of the file stays in the
        session). If the base of an affected path changed since the session first touched it,
        nothing is written and the result has ``committed`` False and ``conflicts``, unless
        ``force`` (the session wins) or ``merge`` (a clean three-way merge). Each file is
        replaced atomically under a journal; a reader of the base may see some files new and
        others not yet. Ignored changes (see :meth:`session_diff`) stay in the session unless
        ``include_ignored``; a git repository is committed whole."""
        opts: dict[str, Any] = {}
        if paths is not None:
            opts["paths"] = _paths(paths)
        if hunks is not None:
            opts["hunks"] = {_path_str(p): list(ids) for p, ids in hunks.items()}
        if force:
            opts["force"] = True
        if merge:
            opts["merge"] = True
        if include_ignored:
            opts["include_ignored"] = True
        data, text = self._session("commit", opts)
        return CommitResult.from_data(data, text)

    def session_checkpoint(self, label: str | None = None) -> str:
        """Records a checkpoint of the session and returns its id (for :meth:`session_rewind`).
        Its cost follows what changed since the previous checkpoint, never the tree."""
        data, _ = self._session("checkpoint", {} if label is None else {"label": label})
        return data["id"]

    def session_rewind(self, checkpoint_id: str) -> None:
        """Brings the session back to checkpoint ``checkpoint_id`` and removes the newer ones;
        the base is not touched. An unknown id raises InvalidArguments."""
        self._session("rewind", {"id": checkpoint_id})

    def session_checkpoints(self) -> tuple[Checkpoint, ...]:
        """The session's checkpoints, oldest first."""
        data, _ = self._session("checkpoints")
        return tuple(Checkpoint.from_data(c) for c in data.get("checkpoints", ()))

    def session_discard(self) -> None:
        """Drops every change and checkpoint of the session: the workspace shows the base."""
        self._session("discard")

    def session_refresh(self) -> None:
        """Makes the session's view show the base as it is now (after the host changed the base
        itself; changes made outside show within ``session_refresh_ms`` on their own)."""
        self._session("refresh")

    # -- plumbing -------------------------------------------------------------------------

    def _invoke(self, name: bytes, args: bytes, options: bytes, content: bytes | None = None) -> bytes:
        lib = self._lib
        if content is None:
            ptr = lib.wsfs_call_with_options(self._handle, name, args, options)
        else:
            ptr = lib.wsfs_call_with_content(self._handle, name, args, options, content, len(content))
        return _native.take(lib, ptr)

    def _native_only(self, tool: str) -> None:
        if self.profile != NATIVE_PROFILE:
            raise ERROR_CLASSES["invalid_arguments"](
                "invalid_arguments",
                f"Workspace.{tool}() returns the native result; this workspace serves the "
                f"{self.profile!r} profile: use call() or call_json()",
            )

    def _run(
        self,
        cls: type[R],
        args: dict[str, Any],
        timeout: float | None,
        cancel: CancelToken | None,
        content: str | None = None,
    ) -> R:
        """Runs ``cls.tool`` and returns its typed result, or raises its error."""
        self._native_only(cls.tool)
        _check_path(args.get("path"))
        body = None if content is None else _native.utf8(content, "content")
        raw = self._invoke(cls.tool.encode(), _encode_args(args), _options("full", timeout, cancel), body)
        env = json.loads(raw)
        if not env["ok"]:
            raise _error(env)
        return cls.from_data(env["data"], env["text"], tuple(env.get("warnings", ())))

    def _plain_read(
        self, path: PathArg, options: bytes
    ) -> tuple[dict[str, Any], str, tuple[str, ...], dict[str, Any] | None]:
        """A whole-file read with output "data_raw": the JSON part, one newline, then the
        content unescaped, so the content is neither escaped nor parsed. Returns (data with
        content, text as the library renders it, warnings, the metrics if the options asked)."""
        if type(path) is not str:
            path = _path_str(path)
        _check_path(path)
        args_b = _native.utf8('{"path":' + _encode_json_string(path) + "}", "path")
        raw = self._invoke(_READ, args_b, options)
        newline = raw.find(b"\n")
        if newline < 0:  # a failure (or a library that kept the content in the JSON)
            env = json.loads(raw)
            if not env["ok"]:
                error = _error(env)
                error.metrics = env.get("metrics")
                raise error
            data = env["data"]
            content = data.get("content", "")
        else:
            env = json.loads(raw[:newline].decode())  # str parses faster than bytes
            data = env["data"]
            content = str(memoryview(raw)[newline + 1 :], "utf-8")
        data["content"] = content
        warnings = tuple(env.get("warnings", ()))
        return data, _read_text(content, data, self._max_read, warnings), warnings, env.get("metrics")

    # -- tools: one method per tool; tests/test_registry.py checks them against the specs --

    def read_file(
        self,
        path: PathArg,
        *,
        start_line: int = 0,
        max_lines: int = 0,
        line_numbers: bool = False,
        encoding_errors: str | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ReadFileResult:
        """Reads a UTF-8 text file (at most ``max_read_bytes``), or with ``start_line``,
        ``max_lines`` or ``line_numbers`` a range of its lines. ``encoding_errors="replace"``
        reads a file that is not UTF-8 with U+FFFD for each invalid sequence (the result's
        ``encoding_errors`` is then True); the default refuses it."""
        if start_line or max_lines or line_numbers or encoding_errors is not None:
            args: dict[str, Any] = {"path": path}
            if start_line or max_lines or line_numbers:
                args.update(start_line=start_line, max_lines=max_lines, line_numbers=line_numbers)
            if encoding_errors is not None:
                args["encoding_errors"] = encoding_errors
            return self._run(ReadFileResult, args, timeout, cancel)
        data, text, warnings, _ = self._plain_read(path, _options("data_raw", timeout, cancel))
        # Built directly (not from_data): this is the hot path the benchmark measures.
        return ReadFileResult(
            text=text,
            warnings=warnings,
            path=data["path"],
            content=data["content"],
            bytes=data["bytes"],
            total_bytes=data["total_bytes"],
            truncated=data["truncated"],
            sha256=data.get("sha256"),
            total_lines=data.get("total_lines"),
            next_start_line=data.get("next_start_line"),
        )

    def write_file(
        self,
        path: PathArg,
        content: str,
        *,
        mode: str | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> WriteFileResult:
        """Creates or atomically replaces a file with ``content`` (passed as a buffer).
        ``mode="create"`` never replaces an existing file (raises ``wsfs.errors.FileExists``,
        code ``file_exists``, if the name is taken); ``mode="append"`` appends."""
        args: dict[str, Any] = {"path": path}
        if mode is not None:  # None: the library's default, "overwrite"
            args["mode"] = mode
        return self._run(WriteFileResult, args, timeout, cancel, content)

    def create_directory(
        self,
        path: PathArg,
        *,
        parents: bool = True,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> CreateDirectoryResult:
        """Creates a directory (and, with ``parents``, its missing parents); an existing
        directory is success with ``created=False``."""
        return self._run(CreateDirectoryResult, {"path": path, "parents": parents}, timeout, cancel)

    def append_file(
        self, path: PathArg, content: str, *, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> AppendFileResult:
        """Appends ``content`` to a file (created if missing) with one all-or-nothing write."""
        return self._run(AppendFileResult, {"path": path}, timeout, cancel, content)

    def list_dir(
        self,
        path: PathArg = ".",
        *,
        depth: int = 1,
        include_hidden: bool = True,
        max_entries: int = 0,
        respect_gitignore: bool | None = None,
        include_files: bool = True,
        include_dirs: bool = True,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ListDirResult:
        """Lists a directory, or with ``depth`` > 1 a breadth-first tree. ``respect_gitignore``
        ``None`` is the library's default: true for a tree, false for one level.
        ``include_files`` / ``include_dirs`` false leave out what is not a directory, or the
        directories (both false is :class:`InvalidArguments`)."""
        args: dict[str, Any] = {
            "path": path,
            "depth": depth,
            "include_hidden": include_hidden,
            "max_entries": max_entries,
        }
        if not include_files:
            args["include_files"] = False
        if not include_dirs:
            args["include_dirs"] = False
        if respect_gitignore is not None:
            args["respect_gitignore"] = respect_gitignore
        return self._run(ListDirResult, args, timeout, cancel)

    def edit_file(
        self,
        path: PathArg,
        old_text: str,
        new_text: str,
        *,
        replace_all: bool = False,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> EditFileResult:
        """Replaces exact text: ``old_text`` must occur once (or every occurrence with
        ``replace_all``)."""
        args = {"path": path, "old_text": old_text, "new_text": new_text, "replace_all": replace_all}
        return self._run(EditFileResult, args, timeout, cancel)

    def get_path_info(
        self, path: PathArg, *, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> GetPathInfoResult:
        """Describes a path without reading it out (a missing path is ``exists=False``)."""
        return self._run(GetPathInfoResult, {"path": path}, timeout, cancel)

    def find_files(
        self,
        pattern: str,
        *,
        path: PathArg = ".",
        max_results: int = 200,
        include_hidden: bool = False,
        respect_gitignore: bool = True,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> FindFilesResult:
        """Finds files by glob pattern (``**/*.py``), in path order."""
        args = {
            "pattern": pattern,
            "path": path,
            "max_results": max_results,
            "include_hidden": include_hidden,
            "respect_gitignore": respect_gitignore,
        }
        return self._run(FindFilesResult, args, timeout, cancel)

    def search_text(
        self,
        query: str,
        *,
        path: PathArg = ".",
        glob: str = "",
        use_regex: bool = False,
        case_sensitive: bool = True,
        max_matches: int = 50,
        context_lines: int = 0,
        include_hidden: bool = False,
        respect_gitignore: bool = True,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> SearchTextResult:
        """Searches file contents for a literal string (or a regex with ``use_regex``)."""
        args = {
            "query": query,
            "path": path,
            "glob": glob,
            "use_regex": use_regex,
            "case_sensitive": case_sensitive,
            "max_matches": max_matches,
            "context_lines": context_lines,
            "include_hidden": include_hidden,
            "respect_gitignore": respect_gitignore,
        }
        return self._run(SearchTextResult, args, timeout, cancel)

    def apply_patch(
        self,
        *,
        patch: str = "",
        files: Sequence[Mapping[str, Any]] | None = None,
        dry_run: bool = False,
        strict: bool = True,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ApplyPatchResult:
        """Applies a unified diff or a ``*** Begin Patch`` patch (``patch``), or line-range
        edits (``files``: ``[{"path", "file_hash"?, "hunks": [{"start_line", "end_line",
        "replace_with"}]}]``), all files together. A rejected hunk is reported in the result
        (``applied=False`` under ``strict``), not raised."""
        args: dict[str, Any] = {"dry_run": dry_run, "strict": strict}
        if patch:
            args["patch"] = patch
        if files is not None:
            args["files"] = [dict(f) for f in files]
        return self._run(ApplyPatchResult, args, timeout, cancel)

    def move_file(
        self,
        src: PathArg,
        dst: PathArg,
        *,
        overwrite: bool = False,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> MoveFileResult:
        """Moves or renames a file, directory or symlink in one atomic rename; ``dst`` is the
        complete new path. An existing ``dst`` raises ``file_exists`` unless ``overwrite``."""
        _check_path(src)
        _check_path(dst)
        args = {"src": src, "dst": dst, "overwrite": overwrite}
        return self._run(MoveFileResult, args, timeout, cancel)

    def delete_file(
        self,
        path: PathArg,
        *,
        recursive: bool = False,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> DeleteFileResult:
        """Deletes a file or symlink (never its target), or with ``recursive`` a directory and
        everything in it. A directory without ``recursive`` raises ``recursive_required``."""
        return self._run(DeleteFileResult, {"path": path, "recursive": recursive}, timeout, cancel)


    # -- the developer tools: off unless the policy sets exec_enabled (else exec_disabled) --

    def workspace_info(
        self, *, refresh: bool = False, timeout: float | None = None, cancel: CancelToken | None = None
    ) -> WorkspaceInfoResult:
        """The OS, runtimes and tools that run inside the sandbox, the repository root and the
        project's kind; cached per workspace, ``refresh`` probes again."""
        return self._run(WorkspaceInfoResult, {"refresh": refresh}, timeout, cancel)

    def git_status(self, *, timeout: float | None = None, cancel: CancelToken | None = None) -> GitStatusResult:
        """The repository's status (hardened ``git status --porcelain=v2``) as data."""
        return self._run(GitStatusResult, {}, timeout, cancel)

    def git_diff(
        self,
        *,
        staged: bool = False,
        pathspec: Sequence[PathArg] | None = None,
        base_ref: str = "",
        target_ref: str = "",
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> GitDiffResult:
        """The repository's changes as a diff with per-file line counts."""
        args: dict[str, Any] = {"staged": staged, "base_ref": base_ref, "target_ref": target_ref}
        if pathspec is not None:
            args["pathspec"] = list(pathspec)
        return self._run(GitDiffResult, args, timeout, cancel)

    def git_commit(
        self,
        message: str,
        *,
        paths: Sequence[PathArg] | None = None,
        signoff: bool = False,
        confirmed: bool = False,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> GitCommitResult:
        """Stages ``paths`` (resolved like every tool path) and commits; raises
        ``confirmation_required`` without ``confirmed`` (a soft gate, not a human's approval;
        with an approval handler set, the handler decides instead: see
        :meth:`set_approval_handler`) and ``nothing_to_commit`` when nothing is staged."""
        args: dict[str, Any] = {"message": message, "signoff": signoff, "confirmed": confirmed}
        if paths is not None:
            args["paths"] = list(paths)
        return self._run(GitCommitResult, args, timeout, cancel)

    def run_tests(
        self,
        *,
        command: str = "",
        focus: Sequence[str] | None = None,
        timeout_sec: int = 0,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> RunTestsResult:
        """Runs the project's tests (pytest, go test, cargo test or npm test, detected, or
        ``command``) and parses the failures."""
        args: dict[str, Any] = {"command": command, "timeout_sec": timeout_sec}
        if focus is not None:
            args["focus"] = list(focus)
        return self._run(RunTestsResult, args, timeout, cancel)

    def run_lint(
        self,
        *,
        command: str = "",
        paths: Sequence[PathArg] | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> RunLintResult:
        """Runs the project's linter (ruff or eslint, detected, or ``command``)."""
        args: dict[str, Any] = {"command": command}
        if paths is not None:
            args["paths"] = list(paths)
        return self._run(RunLintResult, args, timeout, cancel)

    def typecheck(
        self,
        *,
        command: str = "",
        paths: Sequence[PathArg] | None = None,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> TypecheckResult:
        """Runs the project's type checker (mypy, pyright or tsc, detected, or ``command``)."""
        args: dict[str, Any] = {"command": command}
        if paths is not None:
            args["paths"] = list(paths)
        return self._run(TypecheckResult, args, timeout, cancel)

    def safe_shell(
        self, command: str, *, cwd: PathArg = "", timeout: float | None = None, cancel: CancelToken | None = None
    ) -> SafeShellResult:
        """Runs a simple command line the shipped policy allows; a blocked one is a result
        with ``blocked=True``, not an exception."""
        return self._run(SafeShellResult, {"command": command, "cwd": cwd}, timeout, cancel)

    def shell(
        self,
        command: str,
        *,
        cwd: PathArg = "",
        timeout_sec: int = 0,
        timeout: float | None = None,
        cancel: CancelToken | None = None,
    ) -> ShellResult:
        """Runs a command line with bash as it is (the policy's ``shell_enabled``)."""
        return self._run(ShellResult, {"command": command, "cwd": cwd, "timeout_sec": timeout_sec}, timeout, cancel)


def _gateway_callback(lib: Any, gateway: Callable[[dict[str, Any], float], Any]) -> Callable[..., int]:
    """The C callback around a Python gateway: never raises into C."""

    def callback(_userdata: object, request_json: bytes, timeout_ms: int, response: int) -> int:
        try:
            try:
                request = json.loads(request_json.decode("utf-8"))
                answer = gateway(request, timeout_ms / 1000)
                text = answer if isinstance(answer, str) else json.dumps(answer, ensure_ascii=False)
                status = _native.GATEWAY_OK
            except TimeoutError as e:
                text, status = str(e) or "the model did not answer in time", _native.GATEWAY_TIMEOUT
            except ValueError as e:
                text, status = str(e) or "the gateway refused the request", _native.GATEWAY_INVALID_REQUEST
            except Exception as e:  # noqa: BLE001 - every failure is the tool's gateway_error
                text, status = f"{type(e).__name__}: {e}", _native.GATEWAY_ERROR
            lib.wsfs_gateway_respond(response, text.replace("\0", "").encode("utf-8"))
            return status
        except BaseException:  # noqa: BLE001 - nothing may unwind into C
            return _native.GATEWAY_ERROR

    return callback


def _error(env: Mapping[str, Any]) -> WsfsError:
    err = env["error"]
    return WsfsError.for_code(err["code"], err["message"])


def _json_default(value: object) -> str:
    if isinstance(value, os.PathLike):
        path = os.fspath(value)
        if isinstance(path, str):
            return path
    raise TypeError(f"{type(value).__name__} is not a JSON value")


def _encode_args(args: Mapping[str, Any]) -> bytes:
    """The arguments as compact UTF-8 JSON (NUL and control characters escaped)."""
    try:
        text = json.dumps(args, ensure_ascii=False, separators=(",", ":"), default=_json_default)
    except (TypeError, ValueError) as e:
        raise ERROR_CLASSES["invalid_arguments"](
            "invalid_arguments", f"arguments are not JSON: {e}"
        ) from None
    return _native.utf8(text, "arguments")


def _paths(paths: Sequence[PathArg]) -> list[str]:
    if isinstance(paths, (str, bytes, os.PathLike)):
        raise TypeError("paths is a list of paths, not one path")
    return [_path_str(p) for p in paths]


def _path_str(path: object) -> str:
    """A path argument as text: ``str`` or an ``os.PathLike`` naming a ``str`` path."""
    text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else path
    if not isinstance(text, str):
        raise ERROR_CLASSES["invalid_arguments"](
            "invalid_arguments", f"path must be a str or os.PathLike[str], not {type(path).__name__}"
        )
    return text


def _check_path(path: object) -> None:
    """A NUL in a path is refused here, as the Go package does, before any call."""
    if isinstance(path, os.PathLike):
        path = os.fspath(path)
    if isinstance(path, str) and "\0" in path:
        raise ERROR_CLASSES["invalid_path"]("invalid_path", "path contains a NUL byte")


def _options(output: str, timeout: float | None, cancel: CancelToken | None, metrics: bool | None = None) -> bytes:
    if timeout is None and cancel is None and metrics is None:
        return _OPTIONS[output]
    options: dict[str, Any] = {"output": output}
    if metrics is not None:
        options["metrics"] = metrics
    if timeout is not None:
        if not timeout >= 0:  # also refuses NaN
            raise ValueError(f"timeout must be >= 0 seconds, got {timeout!r}")
        if not math.isinf(timeout):
            options["timeout_ms"] = math.ceil(timeout * 1000)
    if cancel is not None:
        if not cancel.id:
            raise ERROR_CLASSES["invalid_arguments"]("invalid_arguments", "the cancel token is closed")
        options["cancel_token"] = cancel.id
    return json.dumps(options).encode()


def _is_plain_read(args: Mapping[str, Any]) -> bool:
    """A read with only a path: its text is the content, so the raw fast path can rebuild it."""
    return len(args) == 1 and isinstance(args.get("path"), (str, os.PathLike))


def _read_text(content: str, data: Mapping[str, Any], limit: int | None, warnings: tuple[str, ...]) -> str:
    """read_file's text for a whole-file read, exactly as the library renders it: the
    content ("(empty file)" if empty), a truncation notice if cut, then shown warnings."""
    if data.get("truncated"):
        following = data.get("next_start_line") or 2
        if not content.endswith("\n"):
            text = (
                f"{content}\n[truncated: line 1 is longer than max_read_bytes ({limit}): only its "
                f"first {data['bytes']} of {data['total_bytes']} bytes are shown; "
                f"continue with start_line={following}]"
            )
        else:
            shown = "line 1" if following == 2 else f"lines 1-{following - 1}"
            text = (
                f"{content}[truncated: showing {shown} ({data['bytes']} of {data['total_bytes']} "
                f"bytes); max_read_bytes is {limit}; continue with start_line={following}]"
            )
    else:
        text = content or EMPTY_FILE_TEXT
    for warning in warnings:
        if warning != OVERWRITE_WARNING:
            text += "\nwarning: " + warning
    return text
