"""The results of the overlay session operations (``Workspace.session_*``): frozen dataclasses
mirroring the ``data`` of the ``wsfs_session_*`` envelopes (include/wsfs.h). Fields a newer
library adds are ignored here; :meth:`Workspace.session_call` returns the whole envelope."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

# The operations, as ``Workspace.session_call`` takes them (the C functions' names after
# ``wsfs_session_``).
SESSION_OPS = ("diff", "commit", "checkpoint", "rewind", "checkpoints", "discard", "refresh")


@dataclass(frozen=True, slots=True)
class DiffHunk:
    """One hunk of a text file's change; ``id`` names it in ``session_commit(hunks=...)`` and
    stays the same while the file's change does. Line numbers are 1-based."""

    id: str
    old_start: int
    old_lines: int
    new_start: int
    new_lines: int


@dataclass(frozen=True, slots=True)
class RepositoryCommit:
    """A commit the session made in a repository; ``subject`` is ``None`` where the repository
    keeps no reflog."""

    hash: str
    subject: str | None


@dataclass(frozen=True, slots=True)
class DiffChange:
    """One changed path: ``status`` is ``"A"``, ``"M"`` or ``"D"``; ``type`` the entry's
    (``file``, ``dir``, ``symlink``, ``other``; the old one's for ``D``), or ``git_repository``
    for every change below a ``.git`` directory together (``changed_paths`` and ``commits``, the
    commits the session made, oldest first); ``bytes_before`` / ``bytes_after`` are ``None``
    where there is no file; ``binary`` files have no hunks."""

    path: str
    status: str
    type: str
    binary: bool
    bytes_before: int | None
    bytes_after: int | None
    hunks: tuple[DiffHunk, ...]
    mode_only: bool = False
    changed_paths: int | None = None
    commits: tuple[RepositoryCommit, ...] = ()

    @classmethod
    def from_data(cls, d: Mapping[str, Any]) -> DiffChange:
        return cls(
            path=d["path"],
            status=d["status"],
            type=d["type"],
            binary=d.get("binary", False),
            bytes_before=d.get("bytes_before"),
            bytes_after=d.get("bytes_after"),
            hunks=tuple(DiffHunk(**{k: h[k] for k in DiffHunk.__slots__}) for h in d.get("hunks", ())),
            mode_only=d.get("mode_only", False),
            changed_paths=d.get("changed_paths"),
            commits=tuple(RepositoryCommit(hash=c["hash"], subject=c.get("subject")) for c in d.get("commits", ())),
        )


@dataclass(frozen=True, slots=True)
class DiffResult:
    """``changes``: deletions first (always all of them), then the rest; ``unified``: the unified
    diff, bounded by ``max_bytes`` (``truncated`` then, with a note at its end); ``ignored``: the
    changes ``.gitignore`` and the built-in cache list ignore, left out (they stay in the
    session; ``include_ignored=True`` lists them)."""

    text: str
    changes: tuple[DiffChange, ...]
    unified: str
    truncated: bool
    ignored: int = 0
    warnings: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, d: Mapping[str, Any], text: str) -> DiffResult:
        return cls(
            text=text,
            changes=tuple(DiffChange.from_data(c) for c in d.get("changes", ())),
            unified=d.get("unified", ""),
            truncated=d.get("truncated", False),
            ignored=d.get("ignored", 0),
            warnings=tuple(d.get("warnings", ())),
        )


@dataclass(frozen=True, slots=True)
class CommitConflict:
    """A path whose base is no longer what the session first saw."""

    path: str
    base_changed: bool
    session_changed: bool
    mergeable: bool


@dataclass(frozen=True, slots=True)
class CommitResult:
    """``committed`` False: ``conflicts`` says why, and nothing was written (a result, not an
    error). ``files``: the base paths changed; ``merged``: those committed as a three-way merge;
    ``ignored``: the ignored changes at the paths given, left in the session."""

    text: str
    committed: bool
    files: tuple[str, ...]
    conflicts: tuple[CommitConflict, ...]
    merged: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    ignored: int = 0

    @classmethod
    def from_data(cls, d: Mapping[str, Any], text: str) -> CommitResult:
        return cls(
            text=text,
            committed=d["committed"],
            files=tuple(d.get("files", ())),
            conflicts=tuple(
                CommitConflict(**{k: c[k] for k in CommitConflict.__slots__}) for c in d.get("conflicts", ())
            ),
            merged=tuple(d.get("merged", ())),
            warnings=tuple(d.get("warnings", ())),
            ignored=d.get("ignored", 0),
        )


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """One checkpoint: ``time`` is RFC 3339 UTC; ``paths`` those changed since the checkpoint
    before it (whose before-images it holds)."""

    id: str
    label: str | None
    time: str
    paths: tuple[str, ...]

    @classmethod
    def from_data(cls, d: Mapping[str, Any]) -> Checkpoint:
        return cls(id=d["id"], label=d.get("label"), time=d["time"], paths=tuple(d.get("paths", ())))
