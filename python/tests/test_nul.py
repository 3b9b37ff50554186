"""NUL bytes: a C string ends at the first NUL, so strings passed as C strings are checked
in Python. Were they not, each call below would reach C cut short and succeed."""

from __future__ import annotations

import pytest

import wsfs

from conftest import write


def test_nul_in_the_tool_name_is_refused(ws, root):
    write(root / "f.txt", "x")
    with pytest.raises(wsfs.InvalidArguments, match="NUL"):
        ws.call("read_file\0anything", path="f.txt")  # C would see "read_file"
    with pytest.raises(wsfs.InvalidArguments, match="NUL"):
        ws.call_json("read_file\0", '{"path": "f.txt"}')


def test_nul_in_json_arguments_is_refused(ws, root):
    write(root / "f.txt", "x")
    for args in ('{"path": "f.txt"}\0garbage', b'{"path": "f.txt"}\0garbage'):
        with pytest.raises(wsfs.InvalidArguments, match="NUL"):
            ws.call_json("read_file", args)  # C would see valid JSON


def test_nul_in_paths_is_invalid_path(ws, root):
    write(root / "f.txt", "x")
    for call in (
        lambda: ws.read_file("f.txt\0.png"),
        lambda: ws.read_file("f.txt\0", start_line=1),
        lambda: ws.write_file("f.txt\0x", "y"),
        lambda: ws.get_path_info("f.txt\0"),
        lambda: ws.find_files("*", path="a\0b"),
    ):
        with pytest.raises(wsfs.InvalidPath, match="NUL"):
            call()
    assert ws.call("read_file", path="f.txt\0.png")["error"]["code"] == "invalid_path"
    with pytest.raises(wsfs.InvalidPath):
        wsfs.Workspace(str(root) + "\0/etc")
    assert (root / "f.txt").read_text() == "x"


def test_nul_in_other_text_travels_escaped(ws, root):
    # Inside JSON, a NUL is the escape \u0000, never a raw byte: the library sees all of it.
    write(root / "f.txt", "a\n")
    with pytest.raises(wsfs.EditNotFound):
        ws.edit_file("f.txt", "a\0", "b")
    assert ws.search_text("a\0").matches == ()
