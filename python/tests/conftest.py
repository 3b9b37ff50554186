"""Shared fixtures. The tests exercise the *installed* package (``make test-python-package``
installs it with pip), so ``import wsfs`` must not pick up the source tree's ``wsfs/``."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

import wsfs

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """An empty workspace directory (symlinks resolved, as the library reports roots)."""
    path = tmp_path / "ws"
    path.mkdir()
    return Path(os.path.realpath(path))


@pytest.fixture
def ws(root: Path):
    with wsfs.Workspace(root) as workspace:
        yield workspace


def write(path: Path, content: str | bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, newline="")
    return path
