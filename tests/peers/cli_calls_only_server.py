"""A server for the CLI tests that, as the README's ``server.on(TOOLS_CALL)`` example, answers
tools/call and no tools/list: the tool ``wait`` sleeps ``seconds`` (first creating the file that
``MCPBIND_TEST_WAITING`` names, if set); any other tool answers its arguments as JSON text.
``broken`` is a server factory that fails."""

from __future__ import annotations

import json
import os
from pathlib import Path

import anyio

from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server

server = Server("calls-only", "1.0")


@server.on(types.methods.TOOLS_CALL)
async def call_tool(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
    arguments = params.arguments if isinstance(params.arguments, dict) else {}
    if params.name == "wait":
        waiting = os.environ.get("MCPBIND_TEST_WAITING")
        if waiting:
            Path(waiting).touch()
        await anyio.sleep(float(arguments["seconds"]))
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(arguments))])


def broken() -> Server:
    raise RuntimeError("this factory always fails")
