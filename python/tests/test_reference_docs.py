"""docs/tools.md, the tool reference, is generated: each tool's name, description, behaviour
and arguments from the library's specs (``wsfs_tool_specs()``), and the error-code table from
the doc comments of ``ErrorCode`` in crates/sandbox/src/error.rs, where the codes are defined.
These tests fail when the committed file differs from what they generate.

The generated parts sit between ``<!-- NAME: generated ... -->`` and ``<!-- end of NAME -->``
lines, as in python/README.md; the text around them is written by hand. To rewrite them,
run ``WSFS_UPDATE_DOCS=1 make test-python-package`` and commit the diff."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from test_docs import BLOCK, cell, check_or_update
from test_errors import header_codes

import wsfs

from conftest import REPO

REFERENCE = REPO / "docs" / "tools.md"
ERROR_SOURCE = REPO / "crates" / "sandbox" / "src" / "error.rs"


def error_meanings() -> dict[str, str]:
    """code -> meaning: each ``ErrorCode`` variant's doc comment, keyed by its wire string."""
    src = ERROR_SOURCE.read_text()
    enum = re.search(r"pub enum ErrorCode \{\n(.*?)\n\}", src, re.S)
    assert enum, f"{ERROR_SOURCE.relative_to(REPO)} has no `pub enum ErrorCode {{`"
    wire = dict(re.findall(r'ErrorCode::(\w+) => "([a-z_]+)"', src))
    meanings: dict[str, str] = {}
    doc: list[str] = []
    for line in enum.group(1).splitlines():
        text = line.strip()
        if text.startswith("///"):
            doc.append(text[3:].strip())
            continue
        variant = re.fullmatch(r"(\w+),", text)
        if not variant:
            continue
        name = variant.group(1)
        assert doc, f"ErrorCode::{name} needs a doc comment: its meaning in docs/tools.md"
        assert name in wire, f"ErrorCode::{name} has no wire string in as_str()"
        meanings[wire[name]] = " ".join(doc)
        doc = []
    return meanings


def type_of(schema: dict[str, Any]) -> str:
    """A schema's type as one table cell: ``integer ≥ 0``, ``"strict" | "replace"``, ``array of string``."""
    if "enum" in schema:
        return " \\| ".join(f"`{json.dumps(v)}`" for v in schema["enum"])
    kind = schema.get("type", "any")
    if isinstance(kind, list):
        kind = " or ".join(kind)
    if kind == "array" and "items" in schema:
        items = schema["items"]
        kind = "array of objects" if items.get("properties") else f"array of {type_of(items)}"
    if "minimum" in schema:
        kind += f" ≥ {schema['minimum']}"
    return kind


def argument_rows(schema: dict[str, Any], prefix: str = "") -> list[str]:
    """One row per argument; the fields of an object, or of an array's objects, follow it as
    ``files[].path``."""
    rows = []
    required = set(schema.get("required", []))
    for name, prop in schema.get("properties", {}).items():
        label = f"`{prefix}{name}`" + (" (required)" if name in required else "")
        default = f"`{json.dumps(prop['default'])}`" if "default" in prop else ""
        rows.append(f"| {label} | {type_of(prop)} | {default} | {cell(prop.get('description', ''))} |")
        if prop.get("properties"):
            rows += argument_rows(prop, f"{prefix}{name}.")
        elif prop.get("type") == "array" and prop.get("items", {}).get("properties"):
            rows += argument_rows(prop["items"], f"{prefix}{name}[].")
    return rows


def kind_of(annotations: dict[str, Any]) -> str:
    if annotations.get("readOnlyHint"):
        return "Reads only."
    kind = "Changes the workspace"
    kind += ", may remove or replace what is there" if annotations.get("destructiveHint") else ""
    kind += "; repeating the call changes nothing more." if annotations.get("idempotentHint") else "."
    return kind


# A sentence ends at ". " before a capital letter ("e.g. '*.rs'" does not end one).
FIRST_SENTENCE = re.compile(r"(?<!e\.g\.)(?<=\.) (?=[A-Z])")


def tools_block() -> str:
    specs = wsfs.tool_specs("wsfs")
    out = ["| tool | what it does |", "| --- | --- |"]
    for spec in specs:
        first = FIRST_SENTENCE.split(spec["description"], maxsplit=1)[0]
        out.append(f"| [`{spec['name']}`](#{spec['name']}) | {cell(first)} |")
    for spec in specs:
        out += ["", f"### `{spec['name']}`", "", f"{kind_of(spec['annotations'])} {spec['description']}"]
        rows = argument_rows(spec["parameters"])
        if rows:
            out += ["", "| argument | type | default | meaning |", "| --- | --- | --- | --- |", *rows]
        else:
            out += ["", "No arguments."]
    return "\n".join(out)


def errors_block() -> str:
    rows = ["| code | meaning |", "| --- | --- |"]
    for code, meaning in error_meanings().items():
        rows.append(f"| `{code}` | {cell(meaning)} |")
    return "\n".join(rows)


BLOCKS = {"tool specs": tools_block, "error codes": errors_block}


@pytest.mark.parametrize("name", list(BLOCKS))
def test_reference_block_is_generated(name):
    text = REFERENCE.read_text()
    found = {m.group("name"): m for m in BLOCK.finditer(text)}
    assert name in found, f"docs/tools.md has no <!-- {name}: generated ... --> block"
    match = found[name]
    expected = text[: match.start("body")] + BLOCKS[name]() + text[match.end("body") :]
    check_or_update(REFERENCE, text, expected, f"the {name}")


def test_error_source_lists_every_code_of_the_header():
    # The generator reads the Rust source: it must see every code, in the header's order.
    assert list(error_meanings()) == header_codes()


def test_every_tool_is_in_the_reference():
    text = REFERENCE.read_text()
    for spec in wsfs.tool_specs("wsfs"):
        assert f"### `{spec['name']}`" in text, spec["name"]
