"""The echo server of ``examples/echo_server.py``, written with the official MCP Python SDK.

It is the comparison point of ``bench/stdio.py``: the SDK's low-level server
(``mcp.server.lowlevel.Server`` with ``on_list_tools`` / ``on_call_tool`` handlers) served over
``mcp.server.stdio.stdio_server``, the SDK's documented stdio setup. It has one tool, ``echo``
{text}, which answers with the text as text content; ``--tools N`` registers N more tools
(``tool_0`` ... ``tool_{N-1}``, each echoing too), as in our example.

    python bench/official_echo_server.py [--tools N] [--backend asyncio|trio]

Needs the ``mcp`` package (the official SDK).
"""

from __future__ import annotations

import argparse
from typing import Any

import anyio
import mcp.types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

ECHO_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to say back"}},
    "required": ["text"],
}


class EchoTools:
    def __init__(self, extra_tools: int) -> None:
        names = ["echo", *(f"tool_{i}" for i in range(extra_tools))]
        self.tools = [
            types.Tool(name=name, description="Says the text back.", input_schema=ECHO_SCHEMA)
            for name in names
        ]
        self.names = frozenset(names)
        self.listing = types.ListToolsResult(tools=self.tools)

    async def list_tools(
        self, ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return self.listing

    async def call_tool(
        self, ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name not in self.names:
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        text = arguments.get("text")
        if not isinstance(text, str):
            raise MCPError(types.INVALID_PARAMS, "Argument 'text' must be a string")
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])


def build(extra_tools: int = 0) -> Server[Any]:
    tools = EchoTools(extra_tools)
    return Server(
        "official-echo",
        version="0.1.0",
        title="official SDK echo server",
        on_list_tools=tools.list_tools,
        on_call_tool=tools.call_tool,
    )


async def serve(server: Server[Any]) -> None:
    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=0, help="extra tools to register")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    anyio.run(serve, build(args.tools), backend=args.backend)


if __name__ == "__main__":
    main()
