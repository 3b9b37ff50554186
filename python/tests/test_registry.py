"""Every tool the library lists has a typed method and a result class that mirror its spec.

When a tool is added to the library (crates/core/src/tools/, crates/devtools/src/entries/), these fail until the Python package gets
its result dataclass (wsfs/results.py, @result) and its Workspace method."""

from __future__ import annotations

import dataclasses
import json
import inspect

import pytest

import wsfs
from wsfs.results import RESULTS

SPECS = wsfs.tool_specs("wsfs")
CALL_OPTIONS = {"timeout", "cancel"}
JSON_TYPES = {"string": str, "integer": int, "boolean": bool}


def test_every_library_tool_has_a_method_and_a_result():
    missing = [s["name"] for s in SPECS if not callable(getattr(wsfs.Workspace, s["name"], None))]
    assert not missing, f"tools without a Workspace method: {missing}"
    assert sorted(RESULTS) == sorted(s["name"] for s in SPECS), "one @result class per tool"


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_method_signature_mirrors_the_schema(spec):
    schema = spec["parameters"]
    properties, required = schema["properties"], set(schema.get("required", []))
    params = dict(inspect.signature(getattr(wsfs.Workspace, spec["name"])).parameters)
    params.pop("self")
    for option in CALL_OPTIONS:
        assert params.pop(option).kind is inspect.Parameter.KEYWORD_ONLY
        assert params[option].default is None if option in params else True
    assert set(params) == set(properties)
    for name, param in params.items():
        prop = properties[name]
        if name in required:
            assert param.default is inspect.Parameter.empty, f"{name} is required"
        elif "default" in prop:
            assert param.default == prop["default"], f"{name}: default differs from the schema"
            assert type(param.default) is JSON_TYPES[prop["type"]], name
        else:
            # Optional without a schema default (an array): None leaves it out of the call.
            assert param.default is None, f"{name}: default must be None (omitted)"
            assert param.kind is inspect.Parameter.KEYWORD_ONLY or name == "path", name


@pytest.mark.parametrize("spec", SPECS, ids=[s["name"] for s in SPECS])
def test_result_class_is_a_frozen_tool_result(spec):
    cls = RESULTS[spec["name"]]
    assert issubclass(cls, wsfs.ToolResult) and cls.tool == spec["name"]
    assert cls.__dataclass_params__.frozen
    names = {f.name for f in dataclasses.fields(cls)}
    assert {"text", "warnings"} <= names


def test_file_system_tools_offer_every_library_tool(tmp_path):
    # With writes enabled: without, get_tools() leaves out the changing tools
    # (test_agent_tools.py::test_get_tools_offers_no_tool_that_can_only_fail), but every
    # tool is still an attribute.
    # And with the developer tools on, which get_tools() offers only then
    # (test_devtools.py::test_file_system_tools_offer_the_dev_tools_only_when_on).
    policy = {"exec_enabled": True, "shell_enabled": True}
    with (
        wsfs.Workspace(tmp_path, policy=policy) as ws,
        wsfs.FileSystemTools(workspace=ws, writes_enabled=True) as tools,
    ):
        assert [t.__name__ for t in tools.get_tools()] == [s["name"] for s in SPECS]
        for spec in SPECS:
            tool = getattr(tools, spec["name"])
            assert inspect.iscoroutinefunction(tool)
            params = inspect.signature(tool).parameters
            assert set(params) == set(spec["parameters"]["properties"])
            assert spec["description"] in tool.__doc__


def test_the_paths_rule_is_said_once_beside_the_specs(tmp_path):
    """Issue 19 item 10: the specs keep one clause; the rest is wsfs.tool_instructions()."""
    rule = wsfs.tool_instructions()
    assert "'..' above the root and symlinks leading outside the workspace are refused" in rule
    specs = wsfs.tool_specs(format="wsfs")
    assert all(s["description"].endswith("Paths are relative to the workspace root.") for s in specs)
    assert "above the root and symlinks" not in json.dumps(specs)
    with wsfs.FileSystemTools(root=tmp_path) as tools:
        assert tools.instructions == rule
