#!/usr/bin/env python3
"""Drives `wsfs mcp` with the official MCP Python SDK's stdio client.

Usage: test_mcp_client.py PATH/TO/wsfs

A client nobody here wrote starts the built binary as an MCP host would,
lists its tools (compared with `wsfs tools`: names, descriptions,
schemas, annotations), calls every tool it lists with schema-valid arguments
built from its input schema, checks read/write/append/list/edit results and
an escape, that results are the library's text with no structuredContent
unless --structured-content asks for it (and what the client does with it:
no tool declares an outputSchema, so the client validates nothing), the
--read-only selection (by readOnlyHint, nothing else; the same for a
--config policy without writes), that a --config file's keys reach the
library, and that diagnostics stay on stderr.
Every check raises on failure; the last line is "N passed, 0 failed".
"""

import faulthandler
import json
import os
import subprocess
import sys
import tempfile
import traceback
from contextlib import asynccontextmanager

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from mcp.shared.exceptions import MCPError

CALL_TIMEOUT = 30  # seconds for one request; the whole run is bounded below
WSFS = os.path.abspath(sys.argv[1]) if len(sys.argv) > 1 else sys.exit("usage: test_mcp_client.py PATH/TO/wsfs")


def check(cond, msg):
    if not cond:
        raise AssertionError(msg)


def library_specs():
    out = subprocess.run([WSFS, "tools", "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)


class Server:
    """One `wsfs mcp` process and an initialised client session."""

    def __init__(self, session):
        self.session = session

    async def tools(self):
        tools, cursor = [], None
        while True:
            params = None if cursor is None else {"cursor": cursor}
            res = await self.session.list_tools(params=params)
            tools.extend(res.tools)
            cursor = res.next_cursor
            if cursor is None:
                return tools

    async def call(self, name, args):
        with anyio.fail_after(CALL_TIMEOUT):
            return await self.session.call_tool(name, args)


@asynccontextmanager
async def server(args, errlog):
    params = StdioServerParameters(command=WSFS, args=["mcp", *args])
    async with stdio_client(params, errlog=errlog) as (read, write):
        async with ClientSession(read, write) as session:
            with anyio.fail_after(CALL_TIMEOUT):
                await session.initialize()
            yield Server(session)


def text_of(res):
    check(len(res.content) == 1 and res.content[0].type == "text", f"content is not one text item: {res.content!r}")
    return res.content[0].text


def check_well_formed(name, res, structured=True):
    """Every result: one text item; a failure's text starts with its code. With
    --structured-content (structured) a success has a data object and a failure its code in
    structuredContent; without, there is no structuredContent at all."""
    text = text_of(res)
    sc = res.structured_content
    if not structured:
        check(sc is None, f"{name}: structuredContent without --structured-content: {sc!r}")
        if res.is_error:
            code = text.split(": ", 1)[0]
            check(code and code.replace("_", "").isalpha() and code.islower() and text != code,
                  f"{name}: error text {text!r} does not start with a code")
        return
    if res.is_error:
        check(isinstance(sc, dict) and isinstance(sc.get("error"), dict), f"{name}: error without structured error: {sc!r}")
        code = sc["error"].get("code")
        check(isinstance(code, str) and code and text.startswith(code + ": "), f"{name}: error text {text!r} does not start with its code {code!r}")
    else:
        check(isinstance(sc, dict), f"{name}: success without a data object: {sc!r}")


def ok(name, res):
    check_well_formed(name, res)
    check(not res.is_error, f"{name} failed: {text_of(res)}")
    return res.structured_content, text_of(res)


def failed(name, res, code, structured=True):
    check_well_formed(name, res, structured)
    check(res.is_error, f"{name} succeeded, wanted {code}: {text_of(res)}")
    check(text_of(res).startswith(code + ": "), f"{name}: text {text_of(res)!r} does not start with {code}")
    if structured:
        check(res.structured_content["error"]["code"] == code, f"{name}: code {res.structured_content!r}")


def ok_text(name, res):
    """A success without --structured-content: the text, and nothing structured."""
    check_well_formed(name, res, structured=False)
    check(not res.is_error, f"{name} failed: {text_of(res)}")
    return text_of(res)


def sample(prop_name, schema):
    """A value valid for a property schema, for the generic driver."""
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    if kind == "string":
        return "probe.txt" if "path" in prop_name or prop_name in ("source", "destination") else "probe"
    if kind == "integer":
        return max(1, schema.get("minimum", 1))
    if kind == "number":
        return max(1, schema.get("minimum", 1))
    if kind == "boolean":
        return False
    if kind == "array":
        return []
    if kind == "object":
        return {k: sample(k, v) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
    raise AssertionError(f"no sample value for schema {schema!r}")


def annotations_of(tool):
    return tool.annotations.model_dump(by_alias=True, exclude_none=True) if tool.annotations else {}


passed = 0


def passes(what):
    global passed
    passed += 1
    print(f"ok   {what}")


# The developer tools: served only when the --config policy turns them on (exec_enabled; shell
# also shell_enabled), so the default servers below are compared with the other tools.
EXEC_TOOLS = ("workspace_info", "git_status", "git_diff", "git_commit", "run_tests", "run_lint",
              "typecheck", "safe_shell", "shell")


async def main():
    all_specs = library_specs()
    check(set(EXEC_TOOLS) <= {s["name"] for s in all_specs}, "wsfs tools lacks the developer tools")
    specs = [s for s in all_specs if s["name"] not in EXEC_TOOLS]
    check(len(specs) >= 5, f"wsfs tools lists {len(specs)} tools")
    with tempfile.TemporaryDirectory() as tmp:
        ws = os.path.join(tmp, "ws")
        os.makedirs(os.path.join(ws, "sub"))
        with open(os.path.join(ws, "probe.txt"), "w") as f:
            f.write("probe text\n")
        with open(os.path.join(ws, "sub", "readonly.txt"), "w") as f:
            f.write("read me\n")
        with open(os.path.join(tmp, "x"), "w") as f:
            f.write("outside secret\n")
        errlog_path = os.path.join(tmp, "stderr.log")

        ws_text = os.path.join(tmp, "ws-text")
        os.makedirs(ws_text)
        with open(os.path.join(ws_text, "probe.txt"), "w") as f:
            f.write("probe text\nsecond line\n")
        with open(errlog_path, "w") as errlog:
            async with server(["--root", ws_text], errlog) as srv:
                await text_server(srv, specs, ws_text)
        log = open(errlog_path).read()
        check("structured_content=false" in log, f"the startup line does not say structured_content=false:\n{log}")

        with open(errlog_path, "w") as errlog:
            async with server(["--root", ws, "-v", "--structured-content"], errlog) as srv:
                await full_server(srv, specs, ws)

        log = open(errlog_path).read()
        check("wsfs mcp: serving on stdio" in log, f"no startup line on stderr:\n{log}")
        check("wsfs tool call" in log and "tool=write_file" in log, f"-v logged no tool calls on stderr:\n{log}")
        check("PRIVATE-CONTENT" not in log, "file content reached the log")
        check("structured_content=true" in log, f"the startup line does not say structured_content=true:\n{log}")
        passes("diagnostics and -v tool-call records go to stderr, never contents (stdout stayed clean protocol)")

        with open(errlog_path, "w") as errlog:
            async with server(["--root", ws, "--read-only"], errlog) as srv:
                await read_only_server(srv, specs, ws)

        # --config: the library's workspace configuration, passed through; --root overrides its root.
        cfg = os.path.join(tmp, "wsfs.json")
        with open(cfg, "w") as f:
            json.dump({"root": os.path.join(tmp, "not-this-one"), "restrict_to_workspace": True,
                       "limits": {"max_read_bytes": 5}}, f)
        with open(errlog_path, "w") as errlog:
            async with server(["--config", cfg, "--root", ws, "--structured-content"], errlog) as srv:
                data, text = ok("read_file", await srv.call("read_file", {"path": "sub/readonly.txt"}))
                check(data["content"] == "read " and data["truncated"] is True, f"max_read_bytes from --config not applied: {data!r}")
                check("[truncated:" in text, f"no truncation notice: {text!r}")
        check(not os.path.exists(os.path.join(tmp, "not-this-one")), "--root did not override the config file's root")
        passes("--config limits reach the library and --root overrides the file's root")

        # A --config policy that disables writes offers the read-only tools, as --read-only does.
        with open(cfg, "w") as f:
            json.dump({"root": ws, "policy": {"writes_enabled": False}}, f)
        with open(errlog_path, "w") as errlog:
            async with server(["--config", cfg], errlog) as srv:
                listed = sorted(t.name for t in await srv.tools())
        want = sorted(s["name"] for s in specs if s["annotations"].get("readOnlyHint") is True)
        check(listed == want, f"policy writes_enabled false lists {listed}, want {want}")
        passes("a --config policy with writes_enabled false offers only the readOnlyHint tools")

        # A --config policy with exec_enabled and shell_enabled serves the developer tools too.
        with open(cfg, "w") as f:
            json.dump({"root": ws, "policy": {"exec_enabled": True, "shell_enabled": True}}, f)
        with open(errlog_path, "w") as errlog:
            async with server(["--config", cfg], errlog) as srv:
                listed = sorted(t.name for t in await srv.tools())
                text = ok_text("safe_shell", await srv.call("safe_shell", {"command": "cat sub/readonly.txt"}))
                check(text == "exit code 0\nread me\n", f"safe_shell text {text!r}")
                text = ok_text("safe_shell", await srv.call("safe_shell", {"command": "rm -rf /"}))
                check(text.startswith("blocked: "), f"safe_shell rm text {text!r}")
                failed("git_status", await srv.call("git_status", {}), "invalid_arguments", structured=False)
        check(listed == sorted(s["name"] for s in all_specs), f"exec_enabled lists {listed}")
        passes("a --config policy with exec_enabled serves the developer tools (safe_shell runs and blocks)")

        with open(cfg, "w") as f:
            json.dump({"root": ws, "no_such_key": 1}, f)
        proc = subprocess.run([WSFS, "mcp", "--config", cfg], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
        check(proc.returncode == 2 and "invalid_arguments" in proc.stderr and proc.stdout == "",
              f"unknown config key: exit {proc.returncode}, stdout {proc.stdout!r}, stderr {proc.stderr!r}")
        passes("every --config key reaches the library (an unknown one is refused by it, exit 2)")

        proc = subprocess.run([WSFS, "mcp"], capture_output=True, text=True, stdin=subprocess.DEVNULL, timeout=30)
        check(proc.returncode == 2 and "--root" in proc.stderr and proc.stdout == "", f"no root: exit {proc.returncode}, {proc.stderr!r}")
        passes("wsfs mcp without a root is a usage error")


async def text_server(srv, specs, ws):
    """The default: every result is the library's text (hints included), isError for a
    failure, and no structuredContent, so a client that would show the model
    structuredContent instead of the text has nothing to show in its place."""
    tools = await srv.tools()
    check(sorted(t.name for t in tools) == sorted(s["name"] for s in specs), f"tools {[t.name for t in tools]}")
    check(all(t.output_schema is None for t in tools), "a tool declares an outputSchema")
    text = ok_text("write_file", await srv.call("write_file", {"path": "notes.md", "content": "a\nb\n"}))
    check(text == "created notes.md (4 bytes)", f"write_file text {text!r}")
    text = ok_text("read_file", await srv.call("read_file", {"path": "probe.txt", "max_lines": 1}))
    check(text == "probe text\n[line 1 of 2; continue with start_line=2, max_lines=1]", f"read_file text {text!r}")
    text = ok_text("list_dir", await srv.call("list_dir", {}))
    check(text.startswith(". (2 entries)") and "notes.md" in text, f"list_dir text {text!r}")
    failed("read_file", await srv.call("read_file", {"path": "../x"}), "outside_workspace", structured=False)
    failed("read_file", await srv.call("read_file", {"path": "probe.txt", "bogus": 1}), "invalid_arguments", structured=False)
    failed("edit_file", await srv.call("edit_file", {"path": "probe.txt", "old_text": "absent", "new_text": "x"}),
           "edit_not_found", structured=False)
    for tool in tools:
        schema = tool.input_schema
        args = {k: sample(k, v) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
        check_well_formed(tool.name, await srv.call(tool.name, args), structured=False)
    passes("by default every result is the library's text (hints included), isError for failures, "
           "no structuredContent; no tool declares an outputSchema")


async def full_server(srv, specs, ws):
    tools = await srv.tools()
    # The SDK lists tools by name; the set, and each tool, must be the library's.
    by_name = {s["name"]: s for s in specs}
    check(sorted(t.name for t in tools) == sorted(by_name),
          f"tools {[t.name for t in tools]} != wsfs tools {list(by_name)}")
    for tool in tools:
        spec = by_name[tool.name]
        check(tool.description == spec["description"], f"{tool.name}: description differs")
        check(tool.input_schema == spec["parameters"], f"{tool.name}: schema {tool.input_schema} != {spec['parameters']}")
        check(annotations_of(tool) == spec["annotations"], f"{tool.name}: annotations {annotations_of(tool)} != {spec['annotations']}")
        check(spec["annotations"].get("openWorldHint") is False, f"{tool.name}: openWorldHint is not false")
    passes(f"tools/list matches `wsfs tools` ({len(tools)} tools: names, descriptions, schemas, annotations)")

    data, text = ok("write_file", await srv.call("write_file", {"path": "notes/todo.md", "content": "- milk\nPRIVATE-CONTENT\n"}))
    check(data == {"path": "notes/todo.md", "bytes_written": 23, "created": True, "existed_before": False, "mode": "overwrite"}, f"write_file data {data!r}")
    check(text.startswith("created notes/todo.md"), f"write_file text {text!r}")
    with open(os.path.join(ws, "notes", "todo.md")) as f:
        check(f.read() == "- milk\nPRIVATE-CONTENT\n", "write_file did not write")
    data, text = ok("append_file", await srv.call("append_file", {"path": "notes/todo.md", "content": "- eggs\n"}))
    check(data["bytes_appended"] == 7 and data["size"] == 30, f"append_file data {data!r}")
    data, text = ok("edit_file", await srv.call("edit_file", {"path": "notes/todo.md", "old_text": "milk", "new_text": "oat milk"}))
    check(data["replaced"] == 1, f"edit_file data {data!r}")
    data, text = ok("read_file", await srv.call("read_file", {"path": "notes/todo.md"}))
    check(data["content"] == "- oat milk\nPRIVATE-CONTENT\n- eggs\n" and text == data["content"], f"read_file data {data!r}, text {text!r}")
    data, text = ok("list_dir", await srv.call("list_dir", {"path": "notes"}))
    check([e["name"] for e in data["entries"]] == ["todo.md"] and "todo.md" in text, f"list_dir data {data!r}")
    data, _ = ok("list_dir", await srv.call("list_dir", {}))
    check({e["name"] for e in data["entries"]} >= {"notes", "probe.txt", "sub"}, f"list_dir of the root {data!r}")
    passes("write_file, append_file, edit_file, read_file, list_dir: data is the envelope's data, text its text")

    failed("read_file", await srv.call("read_file", {"path": "../x"}), "outside_workspace")
    failed("write_file", await srv.call("write_file", {"path": "../x", "content": "pwned"}), "outside_workspace")
    with open(os.path.join(os.path.dirname(ws), "x")) as f:
        check(f.read() == "outside secret\n", "the escape changed the outside file")
    passes("../x is an isError result whose text starts with outside_workspace (and nothing outside changed)")

    failed("read_file", await srv.call("read_file", {"path": "missing.txt"}), "path_not_found")
    failed("read_file", await srv.call("read_file", {"path": "probe.txt", "bogus": 1}), "invalid_arguments")
    failed("edit_file", await srv.call("edit_file", {"path": "probe.txt", "old_text": "absent", "new_text": "x"}), "edit_not_found")
    passes("library errors come back as isError results with their stable code")

    # Generic driver, last (a tool may delete or move probe.txt): every listed
    # tool, with the required arguments its schema asks for.
    for tool in tools:
        schema = tool.input_schema
        args = {k: sample(k, v) for k, v in schema.get("properties", {}).items() if k in schema.get("required", [])}
        check_well_formed(tool.name, await srv.call(tool.name, args))
    passes(f"every tool answers schema-valid arguments with a well-formed result ({', '.join(t.name for t in tools)})")
    # The client validates structuredContent only against a declared outputSchema; none is
    # declared, so it took every result above as sent.
    check(all(t.output_schema is None for t in tools), "a tool declares an outputSchema")
    passes("--structured-content: the client accepts structuredContent without an outputSchema (nothing to validate against)")


async def read_only_server(srv, specs, ws):
    tools = await srv.tools()
    want = [s["name"] for s in specs if s["annotations"].get("readOnlyHint") is True]
    check(sorted(t.name for t in tools) == sorted(want), f"--read-only lists {[t.name for t in tools]}, want {want}")
    check(all(annotations_of(t).get("readOnlyHint") is True for t in tools), "--read-only lists a tool without readOnlyHint")
    text = ok_text("read_file", await srv.call("read_file", {"path": "sub/readonly.txt"}))
    check(text == "read me\n", f"read_file {text!r}")
    for spec in specs:
        if spec["annotations"].get("readOnlyHint") is True:
            continue
        try:
            res = await srv.call(spec["name"], {"path": "ro.txt", "content": "x"})
        except MCPError:
            continue
        raise AssertionError(f"--read-only: {spec['name']} could be called: {res!r}")
    check(not os.path.exists(os.path.join(ws, "ro.txt")), "--read-only: a write happened")
    passes(f"--read-only offers exactly the readOnlyHint tools ({', '.join(want)}) and refuses the others")


if __name__ == "__main__":
    faulthandler.dump_traceback_later(300, exit=True)  # a hang fails loudly too
    try:
        anyio.run(main)
    except BaseException:
        traceback.print_exc()
        print(f"mcp client test: {passed} passed, 1 failed")
        sys.exit(1)
    print(f"mcp client test: {passed} passed, 0 failed")
