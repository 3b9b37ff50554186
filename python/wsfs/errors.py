"""Errors: ``WsfsError(code, message)`` and one subclass per stable error code.

The subclasses are generated from :data:`ERROR_CODES` (the library's code list, in the
order of the C ABI documentation): ``path_not_found`` is :class:`PathNotFound`,
``outside_workspace`` is :class:`OutsideWorkspace`, and so on. A code this package does not
know yet (from a newer library) is raised as a plain :class:`WsfsError` carrying it.
"""

from __future__ import annotations

from typing import Any

# code -> meaning (the subclass's docstring). Keep in step with docs/tools.md's error table,
# include/wsfs.h and go/errors.go; tests/test_errors.py compares it with the header.
ERROR_CODES: dict[str, str] = {
    "invalid_path": "Empty path, NUL byte, invalid UTF-8, path over 4096 bytes, symlink loop, "
    "a name reserved for wsfs's temp files, or a \\xNN escape for '/' or NUL.",
    "outside_workspace": "The path, or a symlink on it, leads outside the workspace.",
    "path_not_found": "The file or a parent directory does not exist (the message suggests similar names); "
    "at open, a root that does not exist without create_root.",
    "permission_denied": "The OS refused, a protected system path, or an append to a hard-linked file; "
    "at open, a root this process may not list or enter (the message names the permission).",
    "io_error": "Any other I/O failure, a binary or non-UTF-8 file, or an internal error.",
    "ambiguous_edit": "old_text occurs more than once and replace_all is false.",
    "edit_not_found": "old_text does not occur in the file (the message shows the closest text).",
    "not_a_file": "A directory, FIFO, socket or device where a regular file is needed.",
    "not_a_directory": "A file where a directory is needed.",
    "too_large": "Content, result or arguments over a configured limit.",
    "no_space": "The device is full, the quota is exceeded, or the file would pass the largest "
    "size allowed; nothing was changed.",
    "invalid_arguments": "Invalid JSON, wrong types, missing or unknown fields, bad options or limits.",
    "unknown_tool": "No tool has this name.",
    "invalid_workspace": "The workspace is closed (or its handle is unknown to the library).",
    "cancelled": "The cancel token fired before the commit point; nothing was changed.",
    "timeout": "The deadline passed before the commit point; nothing was changed.",
    "line_out_of_range": "read_file's start_line is past the end of the file.",
    "invalid_regex": "search_text's query is not a valid regular expression.",
    "writes_disabled": "The workspace is read-only (policy writes_enabled is false); nothing was changed.",
    "policy_denied": "The workspace policy denies reading or changing this path "
    "(the message names the rule).",
    "file_exists": "write_file with mode 'create', or move_file without overwrite: the name is taken "
    "(or, with overwrite, it is a non-empty directory); nothing was changed.",
    "recursive_required": "delete_file on a directory without recursive=True; nothing was deleted.",
    "capability_denied": "A Wasm tool asked for something its manifest does not grant or the host does "
    "not allow: refused at load, or by the host function it called.",
    "fuel_exhausted": "A Wasm tool used up its fuel (instruction budget) and was stopped.",
    "memory_limit": "A Wasm tool needed more memory than its limit and failed or was stopped.",
    "tool_trap": "A Wasm tool crashed, exited with a failure status without saying why, or wrote "
    "output that is not JSON.",
    "manifest_invalid": "A Wasm tool's manifest.json or module is not valid (the message names the field).",
    "module_mismatch": "A Wasm tool's module does not match its manifest's module_sha256; it was not loaded.",
    "gateway_error": "The host's model gateway failed or is not set, for a Wasm tool's model call.",
    "exec_disabled": "A developer tool while the policy's exec_enabled (shell: shell_enabled) is "
    "false; nothing ran.",
    "sandbox_unavailable": "The kernel sandbox (Landlock) cannot be applied and the policy requires "
    "it; nothing ran.",
    "command_required": "run_tests, run_lint or typecheck found nothing to run here; pass command.",
    "confirmation_required": "git_commit without confirmed=True; nothing was staged or committed.",
    "approval_denied": "The host's approval handler denied a call that needs confirming (git_commit), "
    "failed, or did not answer in time; nothing ran.",
    "nothing_to_commit": "git_commit with nothing staged and no paths.",
    "overlay_unavailable": "Overlay mode needs a kernel overlay of the base and the session (the "
    "workspace's view, and each program's view) and this system cannot make it (user namespaces "
    "or overlayfs unavailable); nothing ran, and a program never runs on the base.",
    "no_session": "A session operation (Workspace.session_*) on a workspace in host mode, which "
    "has no overlay session; nothing was done.",
    "feature_not_built": "The configuration asks for a part the library was built without (a cargo "
    "feature: overlay, exec, wasm, wasmtime; the message names it); nothing was opened or created.",
}


class WsfsError(Exception):
    """A failed wsfs call: ``code`` is the stable error code, ``message`` says what to do next.

    ``str(error)`` is ``"<code>: <message>"``, the envelope's ``text`` (what a model should see).
    Catch a subclass (``except wsfs.PathNotFound``) or compare ``error.code``.
    """

    code: str
    message: str
    metrics: dict[str, Any] | None = None
    """The failed call's figures (tool, path, duration; docs/c-abi.md, "Metrics") when the library
    reported them, else ``None``."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.code!r}, {self.message!r})"

    @staticmethod
    def for_code(code: str, message: str) -> WsfsError:
        """The exception for ``code``: its subclass, or a plain WsfsError for an unknown code."""
        return ERROR_CLASSES.get(code, WsfsError)(code, message)


class LibraryError(OSError):
    """libwsfs could not be loaded (not bundled, ``WSFS_LIB`` wrong, or an incompatible ABI)."""


def class_name(code: str) -> str:
    """``path_not_found`` -> ``PathNotFound``."""
    return "".join(part.capitalize() for part in code.split("_"))


ERROR_CLASSES: dict[str, type[WsfsError]] = {
    code: type(class_name(code), (WsfsError,), {"__doc__": meaning, "__module__": __name__})
    for code, meaning in ERROR_CODES.items()
}
globals().update({cls.__name__: cls for cls in ERROR_CLASSES.values()})

__all__ = ["ERROR_CODES", "ERROR_CLASSES", "LibraryError", "WsfsError"] + [
    cls.__name__ for cls in ERROR_CLASSES.values()
]
