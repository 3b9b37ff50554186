"""Typed results: one frozen dataclass per tool, mirroring the ``data`` of its envelope.

Every result has ``text`` (what a model should see, warnings included, exactly the library's
text) and ``warnings``. Fields the library leaves out (optional ones) are ``None``; lists are
tuples; fields a newer library adds are ignored here (``Workspace.call`` returns them all).

Adding a tool: a ``@result("tool_name")`` dataclass here and a method on ``Workspace``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any, ClassVar, TypeVar

R = TypeVar("R", bound="ToolResult")

# tool name -> its result class, filled by @result.
RESULTS: dict[str, type[ToolResult]] = {}


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult:
    """What every tool returns: ``text`` for a model, and the ``warnings`` it includes."""

    tool: ClassVar[str] = ""
    # field name -> converter for fields holding nested records (set per class).
    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    text: str
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_data(cls: type[R], data: Mapping[str, Any], text: str, warnings: tuple[str, ...]) -> R:
        """Builds the result from an envelope's ``data``, ``text`` and ``warnings``."""
        return cls(text=text, warnings=warnings, **_known(cls, data))


def result(tool: str) -> Callable[[type[R]], type[R]]:
    """Registers a result dataclass as the result of ``tool``."""

    def register(cls: type[R]) -> type[R]:
        cls.tool = tool
        RESULTS[tool] = cls
        return cls

    return register


# class -> the names of its fields that come from ``data``.
_FIELDS: dict[type, frozenset[str]] = {}


def _known(cls: type, data: Mapping[str, Any]) -> dict[str, Any]:
    """The entries of ``data`` that are fields of ``cls``, lists as tuples, records converted."""
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = frozenset(f.name for f in fields(cls)) - {"text", "warnings"}
    nested = getattr(cls, "nested", _NONE)
    out = {}
    for key, value in data.items():
        if key in names:
            convert = nested.get(key)
            if convert is not None:
                value = convert(value)
            elif type(value) is list:
                value = tuple(value)
            out[key] = value
    return out


_NONE: Mapping[str, Callable[[Any], Any]] = {}


def _records(record: Callable[[Mapping[str, Any]], Any]) -> Callable[[Any], tuple]:
    return lambda items: tuple(record(item) for item in items)


@dataclass(frozen=True, slots=True)
class DirEntry:
    """One entry of a flat ``list_dir``: ``type`` is file, dir, symlink or other; ``size``
    is the entry's own size (``lstat``)."""

    name: str
    type: str
    size: int | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> DirEntry:
        return cls(**_known(cls, data))


@dataclass(frozen=True, slots=True)
class TreeNode:
    """One node of a ``list_dir`` tree (``depth`` > 1). ``children`` is ``None`` for a
    directory that was not listed, which then has ``listed`` false (the depth limit, ``.git``,
    the entry limit, unreadable); ``truncated`` when some entries are not shown."""

    name: str
    type: str
    size: int | None = None
    children: tuple[TreeNode, ...] | None = None
    truncated: bool = False
    listed: bool = True

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {}

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TreeNode:
        return cls(**_known(cls, data))


TreeNode.nested = {"children": _records(TreeNode.from_data)}


@dataclass(frozen=True, slots=True)
class TextMatch:
    """One matching line of ``search_text``. ``column`` (1-based), ``match_start`` and
    ``match_end`` (0-based, into ``snippet``) count characters, not bytes."""

    file: str
    line: int
    column: int
    snippet: str
    match_start: int
    match_end: int
    before: tuple[str, ...] = ()
    after: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TextMatch:
        return cls(**_known(cls, data))


@result("read_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class ReadFileResult(ToolResult):
    """``content`` is the text read (at most ``max_read_bytes``; for a range, the lines' bytes
    without numbers). ``sha256`` is the whole file's hash when the read saw all of it and it
    fits ``max_write_bytes``. The line fields are set by range reads only, but for
    ``next_start_line``, which a plain read that was cut sets too (it ends at a line
    boundary unless line 1 alone is too long), and ``total_lines``, which a plain read that
    saw the whole file sets too. ``encoding_errors`` is True when
    ``encoding_errors="replace"`` replaced invalid UTF-8."""

    path: str
    content: str
    bytes: int
    total_bytes: int
    truncated: bool
    sha256: str | None = None
    encoding_errors: bool = False
    start_line: int | None = None
    end_line: int | None = None
    total_lines: int | None = None
    next_start_line: int | None = None


@result("write_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class WriteFileResult(ToolResult):
    """``existed_before`` is ``not created``: whether the name existed when the write began;
    ``mode`` the mode used."""

    path: str
    bytes_written: int
    created: bool
    existed_before: bool = False
    mode: str = "overwrite"


@result("create_directory")
@dataclass(frozen=True, slots=True, kw_only=True)
class CreateDirectoryResult(ToolResult):
    """``created`` is False when the directory already existed (nothing changed)."""

    path: str
    created: bool
    parents_created: int


@result("append_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class AppendFileResult(ToolResult):
    """``size`` is the file's size after the append."""

    path: str
    bytes_appended: int
    size: int


@result("list_dir")
@dataclass(frozen=True, slots=True, kw_only=True)
class ListDirResult(ToolResult):
    """A flat listing fills ``entries``; a tree (``depth`` > 1) fills ``tree``, leaves
    ``entries`` empty and counts the tree's entries in ``total``. ``include_files=False``
    leaves out what is not a directory, ``include_dirs=False`` the directories (a tree then
    enters none); both False is ``InvalidArguments``."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "entries": _records(DirEntry.from_data),
        "tree": TreeNode.from_data,
    }

    path: str
    entries: tuple[DirEntry, ...]
    total: int
    truncated: bool
    tree: TreeNode | None = None
    #: Entries the workspace policy's ``deny_read`` left out (not in ``total``).
    denied: int = 0
    #: Protected system locations (``/etc``, ``/proc``, ...) left out in unrestricted mode.
    protected: int = 0
    #: Names starting with ``.`` left out (``include_hidden=False``; not in ``total``).
    hidden: int = 0
    #: Entries a ``.gitignore`` rule left out (the default for a tree; not in ``total``).
    ignored: int = 0


@result("edit_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class EditFileResult(ToolResult):
    """``matches`` is how often ``old_text`` occurred, ``replaced`` how many were replaced; the
    file's size before and after, the lines of the original the replaced text touched, and
    the lines of the new file from the first replacement to the last (1-based)."""

    path: str
    matches: int
    replaced: int
    original_size: int = 0
    new_size: int = 0
    lines_changed: int = 0
    first_changed_line: int = 0
    last_changed_line: int = 0


@result("get_path_info")
@dataclass(frozen=True, slots=True, kw_only=True)
class GetPathInfoResult(ToolResult):
    """A missing path is ``exists=False`` with every other field ``None`` (not an error).
    ``modified`` is RFC 3339 UTC; ``mode`` octal such as ``"0644"``; a symlink is described,
    never followed."""

    path: str
    exists: bool
    type: str | None = None
    size: int | None = None
    modified: str | None = None
    mode: str | None = None
    readable: bool | None = None
    writable: bool | None = None
    symlink_target: str | None = None
    line_count: int | None = None
    sha256: str | None = None


@result("find_files")
@dataclass(frozen=True, slots=True, kw_only=True)
class FindFilesResult(ToolResult):
    """``files`` are workspace-relative paths in path order; ``truncated`` means more matched."""

    files: tuple[str, ...]
    truncated: bool
    files_scanned: int
    #: Entries the workspace policy's ``deny_read`` left out.
    denied: int = 0
    #: Protected system locations (``/etc``, ``/proc``, ...) left out in unrestricted mode.
    protected: int = 0


@result("search_text")
@dataclass(frozen=True, slots=True, kw_only=True)
class SearchTextResult(ToolResult):
    """``matches`` in path order, then line order; ``truncated`` means more lines matched.
    ``files_searched`` counts the text files searched, ``binary_files_skipped`` the files with
    a NUL byte, ``files_skipped`` those that could not be searched; ``denied`` the files the
    policy's ``deny_read`` left out."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "matches": _records(TextMatch.from_data),
    }

    matches: tuple[TextMatch, ...]
    files_searched: int
    binary_files_skipped: int
    files_skipped: int
    truncated: bool
    #: Entries the workspace policy's ``deny_read`` left out.
    denied: int = 0
    #: Protected system locations (``/etc``, ``/proc``, ...) left out in unrestricted mode.
    protected: int = 0


@dataclass(frozen=True, slots=True)
class FileChange:
    """One file ``apply_patch`` changed (or, in a dry run, would change). ``action`` is add,
    update, delete or move; ``from_path`` is a move's source (``from`` in the data)."""

    path: str
    action: str
    added_lines: int
    removed_lines: int
    from_path: str | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> FileChange:
        fields_ = dict(data)
        if "from" in fields_:
            fields_["from_path"] = fields_.pop("from")
        return cls(**_known(cls, fields_))


@dataclass(frozen=True, slots=True)
class RejectedHunk:
    """A hunk ``apply_patch`` could not place. ``hunk`` is 1-based within its file (0: the
    whole file section); ``reason`` is one of context_not_found, ambiguous, stale,
    out_of_range, file_not_found, file_exists, overlap."""

    path: str
    hunk: int
    reason: str
    expected: tuple[str, ...] = ()
    nearest_line: int | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> RejectedHunk:
        return cls(**_known(cls, data))


@result("apply_patch")
@dataclass(frozen=True, slots=True, kw_only=True)
class ApplyPatchResult(ToolResult):
    """``applied`` is False when a rejected hunk stopped a strict patch (nothing written);
    ``diff`` is a unified diff of what was (or would be) applied."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "files_changed": _records(FileChange.from_data),
        "rejected_hunks": _records(RejectedHunk.from_data),
    }

    applied: bool
    files_changed: tuple[FileChange, ...]
    rejected_hunks: tuple[RejectedHunk, ...]
    diff: str


@result("move_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class MoveFileResult(ToolResult):
    """``type`` is what was moved (file, dir, symlink, other); ``dirs_created`` are the
    missing parents of ``dst`` that were made, outermost first."""

    moved_from: str
    moved_to: str
    type: str
    replaced: bool
    dirs_created: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NotRemovedEntry:
    """An entry a recursive ``delete_file`` left in place, and why."""

    path: str
    reason: str

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> NotRemovedEntry:
        return cls(**_known(cls, data))


@result("delete_file")
@dataclass(frozen=True, slots=True, kw_only=True)
class DeleteFileResult(ToolResult):
    """``deleted`` is False when a recursive deletion stopped part-way: ``stopped`` says why
    (timeout, cancelled, entry_limit, not_removed) and ``entries_removed`` what was removed;
    call again to continue."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "not_removed": _records(NotRemovedEntry.from_data),
    }

    path: str
    deleted: bool
    was_directory: bool
    entries_removed: int
    stopped: str | None = None
    not_removed: tuple[NotRemovedEntry, ...] = ()
    not_removed_count: int | None = None


# -- the developer tools (off unless the workspace's policy sets exec_enabled) ---------------


@result("workspace_info")
@dataclass(frozen=True, slots=True, kw_only=True)
class WorkspaceInfoResult(ToolResult):
    """``runtimes`` (python, node, go, rust, java) and ``tools`` (git, pytest, npm, ruff,
    eslint, mypy, pyright, tsc, cargo, go) map a name to ``{"available", "version"?, "path"?,
    "note"?}``; ``git_repo_root`` is workspace-relative (``"."``), ``None`` outside a
    repository; ``unreadable_toolchains`` lists the toolchains on the PATH programs may not
    read, each ``{"program", "path", "kind", "root", "policy"}`` with ``policy`` the entry
    the host adds (``{"exec_read_paths": [root]}``, or ``["auto"]`` for all); ``sandbox`` is
    what programs run under."""

    os: str
    platform: str
    runtimes: Mapping[str, Any]
    tools: Mapping[str, Any]
    git_repo_root: str | None
    git_present: bool = False
    project: tuple[str, ...]
    sandbox: Mapping[str, Any]
    unreadable_toolchains: tuple[Mapping[str, Any], ...] = ()


@dataclass(frozen=True, slots=True)
class GitChange:
    """A changed path of ``git_status``: ``change`` is modified, added, deleted, renamed,
    copied or type_changed; ``from_path`` the old name of a rename (``from`` in the data)."""

    path: str
    change: str
    from_path: str | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> GitChange:
        fields_ = dict(data)
        if "from" in fields_:
            fields_["from_path"] = fields_.pop("from")
        return cls(**_known(cls, fields_))


@result("git_status")
@dataclass(frozen=True, slots=True, kw_only=True)
class GitStatusResult(ToolResult):
    """The repository's status; ``branch`` is None when HEAD is detached, ``commit`` before
    the first commit."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "staged": _records(GitChange.from_data),
        "unstaged": _records(GitChange.from_data),
    }

    branch: str | None
    detached: bool
    commit: str | None
    upstream: str | None
    ahead: int
    behind: int
    staged: tuple[GitChange, ...]
    unstaged: tuple[GitChange, ...]
    untracked: tuple[str, ...]
    conflicted: tuple[str, ...]
    clean: bool
    omitted: int = 0


@dataclass(frozen=True, slots=True)
class GitFileDiff:
    """One file of ``git_diff``: its part of the diff and its line counts."""

    path: str
    status: str
    binary: bool
    additions: int
    deletions: int
    diff: str
    from_path: str | None = None

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> GitFileDiff:
        fields_ = dict(data)
        if "from" in fields_:
            fields_["from_path"] = fields_.pop("from")
        return cls(**_known(cls, fields_))


@result("git_diff")
@dataclass(frozen=True, slots=True, kw_only=True)
class GitDiffResult(ToolResult):
    """``diff_text`` is cut past 100,000 bytes (``truncated``)."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "files_changed": _records(GitFileDiff.from_data),
    }

    diff_text: str
    files_changed: tuple[GitFileDiff, ...]
    additions: int
    deletions: int
    truncated: bool
    omitted_files: int = 0


@result("git_commit")
@dataclass(frozen=True, slots=True, kw_only=True)
class GitCommitResult(ToolResult):
    """The new commit; ``files_committed`` are relative to the repository's root."""

    commit_hash: str
    committed: bool = True
    files_committed: tuple[str, ...]
    message: str
    omitted_files: int = 0


@dataclass(frozen=True, slots=True)
class TestFailure:
    """One failing test: ``line`` is 0 when unknown."""

    __test__ = False  # not a pytest class

    file: str
    line: int
    test: str
    reason: str
    snippet: str

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> TestFailure:
        return cls(**_known(cls, data))


@result("run_tests")
@dataclass(frozen=True, slots=True, kw_only=True)
class RunTestsResult(ToolResult):
    """``runner`` is pytest, go, cargo, npm, or command (a command of the caller's own)."""

    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "failures": _records(TestFailure.from_data),
    }

    passed: bool
    total: int
    passed_count: int
    failed_count: int
    skipped_count: int
    summary: str
    failures: tuple[TestFailure, ...]
    raw_output: str
    runner: str
    command: str
    exit_code: int | None
    sandbox: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class CheckIssue:
    """One lint or type issue; ``line`` and ``col`` are 1-based, ``severity`` is error,
    warning or info."""

    file: str
    line: int
    col: int
    rule: str
    message: str
    severity: str

    @classmethod
    def from_data(cls, data: Mapping[str, Any]) -> CheckIssue:
        return cls(**_known(cls, data))


@dataclass(frozen=True, slots=True, kw_only=True)
class _CheckFields(ToolResult):
    nested: ClassVar[Mapping[str, Callable[[Any], Any]]] = {
        "issues": _records(CheckIssue.from_data),
    }

    clean: bool
    issue_count: int
    issues: tuple[CheckIssue, ...]
    raw_output: str
    parser_used: str
    command: str
    exit_code: int | None
    sandbox: Mapping[str, Any]


@result("run_lint")
@dataclass(frozen=True, slots=True, kw_only=True)
class RunLintResult(_CheckFields):
    """``parser_used`` is ruff, eslint, or fallback (``file:line:col`` read from text)."""


@result("typecheck")
@dataclass(frozen=True, slots=True, kw_only=True)
class TypecheckResult(_CheckFields):
    """``parser_used`` is mypy, pyright, tsc, or fallback (``file:line:col`` read from text)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _ShellFields(ToolResult):
    blocked: bool
    stdout: str = ""
    stderr: str = ""
    exit_code: int | None = None
    command_run: str = ""
    sandbox: Mapping[str, Any] | None = None


@result("safe_shell")
@dataclass(frozen=True, slots=True, kw_only=True)
class SafeShellResult(_ShellFields):
    """A blocked command (``blocked``) has only ``reason_code`` (``NOT_IN_ALLOWLIST``,
    ``DENYLIST_MATCH``, ``OPTION_NOT_ALLOWED``, ``ENV_NOT_ALLOWED``, ``UNSUPPORTED_SYNTAX`` or
    ``TOO_COMPLEX``), ``reason``, ``matched_pattern`` and ``suggested_safe_alternative``; an
    allowed one ran, with its output."""

    reason_code: str | None = None
    reason: str | None = None
    matched_pattern: str | None = None
    suggested_safe_alternative: str | None = None


@result("shell")
@dataclass(frozen=True, slots=True, kw_only=True)
class ShellResult(_ShellFields):
    """The command's output and exit code (``None`` when a signal ended it)."""
