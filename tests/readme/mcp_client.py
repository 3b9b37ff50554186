"""Starts the MCP server as README.md's mcpServers entry (read from stdin) says, with the
checkout for /path/to/wsfs and argv[1] for the root, and checks what a host gets: the tools
listed, a write and a read through them, and an escape refused with its code."""

from __future__ import annotations

import json
import sys

import anyio
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(repo: str, root: str) -> None:
    entry = json.load(sys.stdin)["mcpServers"]["wsfs"]
    command = entry["command"].replace("/path/to/wsfs", repo)
    args = list(entry["args"])
    args[args.index("--root") + 1] = root
    async with stdio_client(StdioServerParameters(command=command, args=args)) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            names = [t.name for t in (await session.list_tools()).tools]
            assert "read_file" in names and "write_file" in names, f"tools listed: {names}"
            wrote = await session.call_tool("write_file", {"path": "hello.txt", "content": "hi\n"})
            assert not wrote.is_error, wrote
            got = await session.call_tool("read_file", {"path": "hello.txt"})
            assert not got.is_error and got.content[0].text == "hi\n", got
            escape = await session.call_tool("read_file", {"path": "../x"})
            assert escape.is_error and escape.content[0].text.startswith("outside_workspace"), escape
    print(f"mcp: {len(names)} tools listed; write_file, read_file and an escape behave as documented")


if __name__ == "__main__":
    anyio.run(main, sys.argv[1], sys.argv[2])
