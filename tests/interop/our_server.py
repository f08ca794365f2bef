"""An mcpbind stdio server for the interop tests, driven by the official SDK's client.

    python tests/interop/our_server.py --backend asyncio|trio [--marker PATH]

Tools:

* ``echo`` {text}: the text back as text content.
* ``slow`` {seconds}: sleeps, then answers ``"slept"``. With ``--marker PATH`` it appends a line
  to PATH when it starts (``started``), when its sleep is cancelled (``cancelled``) and when it
  finishes (``finished``), so a test can see what happened to the handler.
* ``progress``: reports 3 progress steps (1/3, 2/3, 3/3) when the caller gave a progressToken,
  then answers ``"progress token: yes|no"``.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import anyio

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server

methods = types.methods

NAME = "mcpbind-interop"
VERSION = "1.2.3"
TITLE = "mcpbind interop server"
INSTRUCTIONS = "Call echo, slow or progress."

TOOLS = [
    types.Tool(
        name="echo",
        description="Says the text back.",
        input_schema={
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"],
        },
    ),
    types.Tool(
        name="slow",
        description="Sleeps for a while.",
        input_schema={
            "type": "object",
            "properties": {"seconds": {"type": "number"}},
            "required": ["seconds"],
        },
    ),
    types.Tool(
        name="progress",
        description="Reports three progress steps.",
        input_schema={"type": "object", "properties": {}},
    ),
]


def text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


def build(marker: Path | None) -> Server:
    server = Server(NAME, VERSION, title=TITLE, instructions=INSTRUCTIONS)

    def mark(event: str) -> None:
        if marker is not None:
            with marker.open("a") as file:
                file.write(event + "\n")

    @server.on(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, ctx: RequestContext) -> types.ListToolsResult:
        return types.ListToolsResult(tools=TOOLS)

    @server.on(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, ctx: RequestContext
    ) -> types.CallToolResult | types.CreateTaskResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        if params.name == "echo":
            text = arguments.get("text")
            if not isinstance(text, str):
                raise McpError(INVALID_PARAMS, "Argument 'text' must be a string")
            return text_result(text)
        if params.name == "slow":
            seconds = arguments.get("seconds")
            if not isinstance(seconds, int | float):
                raise McpError(INVALID_PARAMS, "Argument 'seconds' must be a number")
            mark("started")
            try:
                await anyio.sleep(seconds)
            except anyio.get_cancelled_exc_class():
                mark("cancelled")
                raise
            mark("finished")
            return text_result("slept")
        if params.name == "progress":
            given = ctx.progress_token is not None
            for step in (1, 2, 3):
                await ctx.report_progress(step, 3, f"step {step}")
            return text_result(f"progress token: {'yes' if given else 'no'}")
        raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")

    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--marker", type=Path, default=None, help="file to record the slow tool's fate in")
    args = parser.parse_args()
    build(args.marker).run_stdio_sync(args.backend)


if __name__ == "__main__":
    main()
