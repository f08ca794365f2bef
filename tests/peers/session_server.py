"""An mcpbind stdio server for tests/test_stdio_session.py.

    python tests/peers/session_server.py --backend asyncio|trio [--max-message-size N]
        [--max-pending N] [--marker PATH] [--grace SECONDS]

``--max-message-size``, ``--max-pending`` and ``--grace`` set ``run_stdio(max_message_size=...)``,
``Server(max_pending_requests=...)`` and ``Server(shutdown_grace_period=...)``.

Tools:

* ``echo`` {text}: the text back as text content.
* ``slow`` {seconds}: sleeps, then answers ``"slept"``. With ``--marker PATH`` it appends
  ``started <id>``, then ``cancelled <id>`` or ``finished <id>`` (``<id>`` is the JSON-RPC
  request id) to PATH, one line each.
* ``crash``: the process exits at once with status 1 (``os._exit``), mid-request.
* ``unsendable``: returns a result that cannot be encoded (an ``object()`` in its structured
  content); the client is to get an internal error and the server to go on.
* ``note`` {uri, times}: tells the client ``times`` times that ``uri`` changed, then once that
  ``note://done`` did (if it subscribed: the resource ``note://board`` makes the server offer
  subscriptions, to URIs of up to 100,000 characters); with ``--marker PATH`` it appends
  ``noted <id>`` to PATH then.

It exits when stdin ends.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

import anyio

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server

methods = types.methods


def build(marker: Path | None, max_pending: int, grace: float = 5.0) -> Server:
    server = Server("session-peer", "0.0.1", max_pending_requests=max_pending, shutdown_grace_period=grace)
    server.max_uri_length = 100_000

    @server.resource("note://board")
    def board() -> str:
        return "notes"

    def mark(event: str, ident: object) -> None:
        if marker is not None:
            with marker.open("a") as file:
                file.write(f"{event} {ident}\n")

    @server.on(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, ctx: RequestContext) -> types.ListToolsResult:
        schema = {"type": "object"}
        return types.ListToolsResult(
            tools=[types.Tool(name=name, input_schema=schema) for name in ("echo", "slow", "crash", "note")]
        )

    @server.on(methods.TOOLS_CALL)
    async def call_tool(
        params: types.CallToolRequestParams, ctx: RequestContext
    ) -> types.CallToolResult | types.CreateTaskResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        if params.name == "echo":
            return types.CallToolResult(content=[types.TextContent(text=str(arguments.get("text")))])
        if params.name == "slow":
            seconds = arguments.get("seconds", 0)
            if not isinstance(seconds, int | float):
                raise McpError(INVALID_PARAMS, "Argument 'seconds' must be a number")
            mark("started", ctx.request_id)
            try:
                await anyio.sleep(seconds)
            except anyio.get_cancelled_exc_class():
                mark("cancelled", ctx.request_id)
                raise
            mark("finished", ctx.request_id)
            return types.CallToolResult(content=[types.TextContent(text="slept")])
        if params.name == "crash":
            os._exit(1)
        if params.name == "unsendable":
            return types.CallToolResult(content=[], structured_content={"value": object()})
        if params.name == "note":
            uri, times = arguments.get("uri"), arguments.get("times")
            if not isinstance(uri, str) or not isinstance(times, int):
                raise McpError(
                    INVALID_PARAMS, "Arguments 'uri' (a string) and 'times' (an integer) are needed"
                )
            for _ in range(times):
                await server.resource_updated(uri)
            await server.resource_updated("note://done")
            mark("noted", ctx.request_id)
            return types.CallToolResult(content=[types.TextContent(text=f"noted {times}")])
        raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")

    return server


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--backend", choices=["asyncio", "trio"], default="asyncio")
    parser.add_argument("--max-message-size", type=int, default=None)
    parser.add_argument("--max-pending", type=int, default=1024)
    parser.add_argument("--marker", type=Path, default=None)
    parser.add_argument("--grace", type=float, default=5.0)
    args = parser.parse_args()
    server = build(args.marker, args.max_pending, args.grace)

    async def run() -> None:
        await server.run_stdio(max_message_size=args.max_message_size)

    anyio.run(run, backend=args.backend)


if __name__ == "__main__":
    main()
