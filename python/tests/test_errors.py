"""Error codes: one subclass per code, the code list kept in step with the library, and
each code raised where the library reports it."""

from __future__ import annotations

import os
import pickle
import re

import pytest

import wsfs

from conftest import REPO, write


def header_codes() -> list[str]:
    header = (REPO / "include" / "wsfs.h").read_text()
    listed = re.search(r"Error codes: (.*?)\. See docs/tools.md", header, re.S).group(1)
    return [c.strip() for c in re.sub(r"\s*\*\s*", " ", listed).split(",")]


def test_code_list_matches_the_library_header():
    assert list(wsfs.ERROR_CODES) == header_codes()


@pytest.mark.parametrize("code", list(wsfs.ERROR_CODES))
def test_one_subclass_per_code(code):
    cls = getattr(wsfs, wsfs.errors.class_name(code))
    assert cls is wsfs.ERROR_CLASSES[code] and issubclass(cls, wsfs.WsfsError)
    assert cls.__doc__
    e = wsfs.WsfsError.for_code(code, "what to do next")
    assert type(e) is cls and (e.code, e.message) == (code, "what to do next")
    assert str(e) == f"{code}: what to do next"
    again = pickle.loads(pickle.dumps(e))
    assert type(again) is cls and (again.code, again.message) == (code, e.message)


def test_named_classes():
    assert wsfs.PathNotFound.__name__ == "PathNotFound"
    assert wsfs.OutsideWorkspace is wsfs.ERROR_CLASSES["outside_workspace"]
    assert wsfs.IoError is wsfs.ERROR_CLASSES["io_error"]
    assert wsfs.NotAFile is wsfs.ERROR_CLASSES["not_a_file"]


def test_unknown_code_is_a_plain_wsfs_error():
    e = wsfs.WsfsError.for_code("brand_new_code", "m")
    assert type(e) is wsfs.WsfsError and e.code == "brand_new_code"


def test_codes_raised_by_the_tools(ws, root):
    write(root / "f.txt", "one\none\n")
    write(root / "bin.dat", b"\x00\x01binary")
    (root / "d").mkdir()
    cases = [
        (wsfs.InvalidPath, lambda: ws.read_file("")),
        (wsfs.OutsideWorkspace, lambda: ws.list_dir("..")),
        (wsfs.PathNotFound, lambda: ws.read_file("nope/x.txt")),
        (wsfs.IoError, lambda: ws.read_file("bin.dat")),
        (wsfs.AmbiguousEdit, lambda: ws.edit_file("f.txt", "one", "two")),
        (wsfs.EditNotFound, lambda: ws.edit_file("f.txt", "three", "two")),
        (wsfs.NotAFile, lambda: ws.read_file("d")),
        (wsfs.NotADirectory, lambda: ws.list_dir("f.txt")),
        (wsfs.InvalidArguments, lambda: ws.edit_file("f.txt", "", "x")),
        (wsfs.LineOutOfRange, lambda: ws.read_file("f.txt", start_line=9)),
        (wsfs.InvalidRegex, lambda: ws.search_text("(", use_regex=True)),
        (wsfs.Timeout, lambda: ws.read_file("f.txt", timeout=0)),
    ]
    for cls, call in cases:
        with pytest.raises(cls) as e:
            call()
        assert type(e.value) is cls, (cls, e.value)
        assert e.value.message and str(e.value).startswith(e.value.code + ": ")


def test_too_large(root):
    with wsfs.Workspace(root, limits={"max_write_bytes": 10}) as ws:
        with pytest.raises(wsfs.TooLarge):
            ws.write_file("big.txt", "x" * 11)
        assert not (root / "big.txt").exists()


def test_invalid_workspace_after_close(root):
    ws = wsfs.Workspace(root)
    ws.close()
    with pytest.raises(wsfs.InvalidWorkspace):
        ws.read_file("x")
    with pytest.raises(wsfs.InvalidWorkspace):
        ws.write_file("x", "y")
    assert ws.call("list_dir")["error"]["code"] == "invalid_workspace"
    assert not (root / "x").exists()


def test_open_errors(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(wsfs.NotADirectory):
        wsfs.Workspace(tmp_path / "file")
    with pytest.raises(wsfs.InvalidPath):
        wsfs.Workspace("")
    with pytest.raises(wsfs.InvalidArguments):
        wsfs.Workspace(tmp_path, limits={"max_read_bytes": 0})


def test_a_missing_root_is_refused_unless_create_root(tmp_path):
    missing = tmp_path / "projcet" / "ws"
    with pytest.raises(wsfs.PathNotFound) as e:
        wsfs.Workspace(missing)
    assert str(missing) in str(e.value) and "create_root" in str(e.value)
    assert not (tmp_path / "projcet").exists()
    with wsfs.Workspace(missing, create_root=True) as ws:
        assert ws.root == os.path.realpath(missing)


def test_permission_denied_for_a_protected_path_when_unrestricted(root):
    with wsfs.Workspace(root, restrict_to_workspace=False) as ws:
        assert any("/etc" in w for w in ws.warnings)
        with pytest.raises(wsfs.PermissionDenied):
            ws.read_file("/etc/hostname")


def test_no_space_past_the_file_size_limit(root):
    # In a child process: RLIMIT_FSIZE stands in for a full disk (the library refuses a write
    # that would pass it with no_space instead of letting SIGXFSZ kill the process).
    code = (
        "import resource, sys, wsfs\n"
        "resource.setrlimit(resource.RLIMIT_FSIZE, (1000, resource.RLIM_INFINITY))\n"
        "ws = wsfs.Workspace(sys.argv[1])\n"
        "try:\n"
        "    ws.write_file('big.txt', 'x' * 2000)\n"
        "except wsfs.NoSpace as e:\n"
        "    print(e.code)\n"
    )
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code, str(root)], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "no_space"
    assert not (root / "big.txt").exists()
