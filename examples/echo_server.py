"""A stdio MCP server built on the typed handler protocols alone.

It has one tool, ``echo`` {text}, which answers with the text as text content. ``--tools N``
registers N more tools (``tool_0`` ... ``tool_{N-1}``, each echoing too) for benchmarks. The
tools never change, so their listing is encoded once (``Encoded``) and sent as it is.

    python examples/echo_server.py [--tools N] [--backend asyncio|trio]
"""

from __future__ import annotations

import argparse

from mcpbind.protocol.encoded import Encoded
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.schema.v2025_11_25.stubs import HandlesToolsCall, HandlesToolsList
from mcpbind.server.server import Server

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"text": {"type": "string", "description": "What to say back"}},
    "required": ["text"],
}


class EchoTools(HandlesToolsList[RequestContext], HandlesToolsCall[RequestContext]):
    def __init__(self, extra_tools: int) -> None:
        names = ["echo", *(f"tool_{i}" for i in range(extra_tools))]
        self.tools = [
            types.Tool(name=name, description="Says the text back.", input_schema=ECHO_SCHEMA)
            for name in names
        ]
        self.names = frozenset(names)
        self.listing = Encoded.of(types.ListToolsResult(tools=self.tools))

    async def on_tools_list(
        self, params: types.PaginatedRequestParams, ctx: RequestContext, /
    ) -> Encoded[types.ListToolsResult]:
        return self.listing

    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult | types.CreateTaskResult:
        if params.name not in self.names:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        text = arguments.get("text")
        if not isinstance(text, str):
            raise McpError(INVALID_PARAMS, "Argument 'text' must be a string")
        return types.CallToolResult(content=[types.TextContent(text=text)])


def build(extra_tools: int = 0) -> Server:
    server = Server("mcpbind-echo", "0.1.0", title="mcpbind echo server")
    server.add_handlers(EchoTools(extra_tools))
    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--tools", type=int, default=0, help="extra tools to register")
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    args = parser.parse_args()
    build(args.tools).run_stdio_sync(args.backend)


if __name__ == "__main__":
    main()
