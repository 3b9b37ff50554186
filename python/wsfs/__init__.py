"""wsfs: filesystem tools for AI agents, confined to one workspace directory.

The Rust library ``libwsfs`` (bundled in this package, or ``$WSFS_LIB``) is loaded with ctypes.

- :class:`Workspace`: a typed method per tool, results as frozen dataclasses, errors raised as
  :class:`WsfsError` subclasses (``PathNotFound``, ``OutsideWorkspace``, ...).
- :class:`FileSystemTools`: the tools as async callables returning ``{"success", ...}`` dicts,
  for agent frameworks.
- :func:`tool_specs`: the specs in the OpenAI or Anthropic function-calling shape.
- :func:`tool_instructions`: what to tell the model once beside them (how paths are read).
"""

from __future__ import annotations

import json as _json

from . import _native
from .agent_tools import FileSystemSettings, FileSystemTools
from .cancel import CancelToken
from .errors import *  # noqa: F403 - the generated subclasses, one per code
from .errors import ERROR_CLASSES, ERROR_CODES, LibraryError, WsfsError
from .results import (
    AppendFileResult,
    ApplyPatchResult,
    CreateDirectoryResult,
    DeleteFileResult,
    DirEntry,
    EditFileResult,
    FileChange,
    FindFilesResult,
    GetPathInfoResult,
    ListDirResult,
    MoveFileResult,
    NotRemovedEntry,
    ReadFileResult,
    RejectedHunk,
    SearchTextResult,
    TextMatch,
    ToolResult,
    TreeNode,
    WriteFileResult,
)
from .env import apply_tool_env
from .results import (  # the developer tools'
    CheckIssue,
    GitChange,
    GitCommitResult,
    GitDiffResult,
    GitFileDiff,
    GitStatusResult,
    RunLintResult,
    RunTestsResult,
    SafeShellResult,
    ShellResult,
    TestFailure,
    TypecheckResult,
    WorkspaceInfoResult,
)
from .session import Checkpoint, CommitConflict, CommitResult, DiffChange, DiffHunk, DiffResult, RepositoryCommit
from .specs import tool_instructions, tool_specs
from .workspace import Limits, Workspace

__version__ = "0.1.0"


def library_path() -> str:
    """The path of the libwsfs this process uses: ``$WSFS_LIB``, else the bundled library."""
    return _native.library_path()


def library_version() -> dict:
    """The loaded library's ``{"version": ..., "abi": ...}``."""
    lib = _native.load()
    return _json.loads(_native.take(lib, lib.wsfs_version()))


__all__ = [
    "ERROR_CLASSES",
    "ERROR_CODES",
    "LibraryError",
    "WsfsError",
    "AppendFileResult",
    "ApplyPatchResult",
    "CreateDirectoryResult",
    "DeleteFileResult",
    "MoveFileResult",
    "NotRemovedEntry",
    "CancelToken",
    "DirEntry",
    "EditFileResult",
    "FileChange",
    "FileSystemSettings",
    "FileSystemTools",
    "FindFilesResult",
    "GetPathInfoResult",
    "Limits",
    "ListDirResult",
    "ReadFileResult",
    "RejectedHunk",
    "SearchTextResult",
    "TextMatch",
    "ToolResult",
    "TreeNode",
    "Workspace",
    "WriteFileResult",
    "CheckIssue",
    "GitChange",
    "GitCommitResult",
    "GitDiffResult",
    "GitFileDiff",
    "GitStatusResult",
    "RunLintResult",
    "RunTestsResult",
    "SafeShellResult",
    "ShellResult",
    "TestFailure",
    "TypecheckResult",
    "WorkspaceInfoResult",
    "Checkpoint",
    "CommitConflict",
    "CommitResult",
    "DiffChange",
    "DiffHunk",
    "RepositoryCommit",
    "DiffResult",
    "library_path",
    "library_version",
    "tool_instructions",
    "tool_specs",
    "apply_tool_env",
    *(cls.__name__ for cls in ERROR_CLASSES.values()),
]
