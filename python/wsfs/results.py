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
    directory that was not listed; ``truncated`` when some entries are not shown."""

    name: str
    type: str
    size: int | None = None
    children: tuple[TreeNode, ...] | None = None
    truncated: bool = False

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
    fits ``max_write_bytes``. The line fields are set by range reads only. ``encoding_errors``
    is True when ``encoding_errors="replace"`` replaced invalid UTF-8."""

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
    ``entries`` empty and counts the tree's entries in ``total``."""

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
