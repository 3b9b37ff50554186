"""The lists in the docs come from the package: python/README.md's tool names, tool table,
record table and error table, and config/config.example.json's tool list, are generated from
the library's specs and the package's classes, and these tests fail when a doc is stale.

Each generated part of python/README.md sits between ``<!-- NAME: generated ... -->`` and
``<!-- end of NAME -->`` lines. To rewrite every stale part instead of failing, run
``WSFS_UPDATE_DOCS=1 make test-python-package``; then read the diff and commit it."""

from __future__ import annotations

import dataclasses
import difflib
import inspect
import json
import os
import re

import pytest

import wsfs
from wsfs import results
from wsfs.errors import class_name

from conftest import REPO

README = REPO / "python" / "README.md"
EXAMPLE_CONFIG = REPO / "config" / "config.example.json"
UPDATE = os.environ.get("WSFS_UPDATE_DOCS") == "1"
CALL_OPTIONS = ("self", "timeout", "cancel")


def tool_names() -> list[str]:
    return [spec["name"] for spec in wsfs.tool_specs("wsfs")]


def record_classes() -> list[type]:
    """The dataclasses nested in results (DirEntry, FileChange, ...), in definition order."""
    return [
        cls
        for cls in vars(results).values()
        if isinstance(cls, type)
        and dataclasses.is_dataclass(cls)
        and cls.__module__ == results.__name__
        and not issubclass(cls, wsfs.ToolResult)
    ]


def prose(cls: type) -> str:
    """A class's docstring as one table cell: one line, reST ``code`` as Markdown `code`."""
    doc = cls.__doc__ or ""
    # A dataclass without a docstring gets its signature as one: the table needs a real one.
    assert doc and not doc.startswith(cls.__name__ + "("), f"{cls.__name__} needs a docstring"
    return cell(doc)


def cell(text: str) -> str:
    text = " ".join(inspect.cleandoc(text).split())
    return text.replace("``", "`").replace("|", "\\|")


def signature(tool: str) -> str:
    """``read_file(path, *, start_line=0, ...)``: the method's parameters and defaults, without
    the call options every method has."""
    parts: list[str] = []
    for param in inspect.signature(getattr(wsfs.Workspace, tool)).parameters.values():
        if param.name in CALL_OPTIONS:
            continue
        if param.kind is param.KEYWORD_ONLY and "*" not in parts:
            parts.append("*")
        if param.default is param.empty:
            parts.append(param.name)
        else:
            default = json.dumps(param.default) if isinstance(param.default, str) else repr(param.default)
            parts.append(f"{param.name}={default}")
    return f"{tool}({', '.join(parts)})"


def fields(cls: type) -> str:
    """A dataclass's fields, each nested record class named: ``entries (DirEntry)``."""
    records = [c.__name__ for c in record_classes()]
    out = []
    for field in dataclasses.fields(cls):
        if field.name in ("text", "warnings"):
            continue
        annotation = str(field.type)  # a string: results.py postpones its annotations
        nested = [name for name in records if re.search(rf"\b{name}\b", annotation)]
        out.append(f"{field.name} ({nested[0]})" if nested else field.name)
    return ", ".join(out)


def tool_names_block() -> str:
    return ", ".join(f"`{name}`" for name in tool_names()) + "."


def tools_block() -> str:
    rows = ["| method | result: fields | about the result |", "| --- | --- | --- |"]
    for tool in tool_names():
        cls = results.RESULTS[tool]
        rows.append(f"| `{signature(tool)}` | `{cls.__name__}`: `{fields(cls)}` | {prose(cls)} |")
    return "\n".join(rows)


def records_block() -> str:
    rows = ["| record | fields | about it |", "| --- | --- | --- |"]
    for cls in record_classes():
        rows.append(f"| `{cls.__name__}` | `{fields(cls)}` | {prose(cls)} |")
    return "\n".join(rows)


def errors_block() -> str:
    rows = ["| code | exception | meaning |", "| --- | --- | --- |"]
    for code, meaning in wsfs.ERROR_CODES.items():
        rows.append(f"| `{code}` | `{class_name(code)}` | {cell(meaning)} |")
    return "\n".join(rows)


BLOCKS = {
    "tool names": tool_names_block,
    "tool table": tools_block,
    "record table": records_block,
    "error table": errors_block,
}
BLOCK = re.compile(
    r"<!-- (?P<name>[a-z ]+): generated [^\n]*-->\n(?P<body>.*?)\n<!-- end of (?P=name) -->", re.S
)


def check_or_update(path, current: str, expected: str, what: str) -> None:
    if current == expected:
        return
    if UPDATE:
        path.write_text(expected)
        return
    diff = "".join(
        difflib.unified_diff(
            current.splitlines(keepends=True), expected.splitlines(keepends=True), str(path), "generated"
        )
    )
    pytest.fail(
        f"{path.relative_to(REPO)}: {what} is not what the tests generate from its sources. "
        f"Rewrite it with WSFS_UPDATE_DOCS=1 make test-python-package, or apply:\n{diff}"
    )


@pytest.mark.parametrize("name", list(BLOCKS))
def test_readme_block_is_generated_from_the_package(name):
    readme = README.read_text()
    found = {m.group("name"): m for m in BLOCK.finditer(readme)}
    assert name in found, f"python/README.md has no <!-- {name}: generated ... --> block"
    match = found[name]
    expected = readme[: match.start("body")] + BLOCKS[name]() + readme[match.end("body") :]
    check_or_update(README, readme, expected, f"the {name}")


def test_every_tool_and_error_code_is_in_the_readme():
    # A guard on the generator itself: what it writes names everything there is.
    readme = README.read_text()
    for tool in tool_names():
        assert f"`{signature(tool)}`" in readme or UPDATE, tool
    for code in wsfs.ERROR_CODES:
        assert f"`{class_name(code)}`" in readme or UPDATE, code
    assert "from_path" in readme, "FileChange.from_path is the field's Python name"


def test_example_config_lists_every_tool():
    text = EXAMPLE_CONFIG.read_text()
    json.loads(text)  # still valid JSON
    listed = re.search(r"every tool the library lists: ([a-z_, ]+)\.", text)
    assert listed, "config.example.json's _comment_tools no longer lists the tools"
    expected = text[: listed.start(1)] + ", ".join(tool_names()) + text[listed.end(1) :]
    check_or_update(EXAMPLE_CONFIG, text, expected, "_comment_tools' tool list")
