"""A stdio server written with the official MCP Python SDK (``MCPServer``, formerly FastMCP), for
mcpbind's client to drive in the interop tests. It runs on asyncio, the SDK's default.

    python tests/interop/official_server.py

Tools:

* ``add`` {a, b}: their sum (an int: text content plus ``{"result": sum}`` structured content).
* ``stats`` {values}: ``{"count", "mean"}`` as structured content (with an output schema).
* ``count`` {steps}: reports ``steps`` progress notifications, then answers ``"counted N"``.
* ``shout`` {message}: sends the message as a ``notifications/message`` log at ``warning``
  level (logger ``official``), then answers it upper-cased.
* ``sleep`` {seconds}: sleeps; with ``OFFICIAL_MARKER`` set it appends ``started``, then
  ``cancelled`` or ``finished``, to that file.
* ``fail`` {reason}: raises ``ToolError``, which the SDK turns into an ``isError`` result.
"""

from __future__ import annotations

import os
import warnings
from typing import Any, TypedDict

import anyio
from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from mcp.shared.exceptions import MCPDeprecationWarning

NAME = "official-interop"
VERSION = "9.8.7"
TITLE = "Official SDK interop server"
INSTRUCTIONS = "Add numbers, count, shout."

# Context.log is deprecated from protocol 2026-07-28 on; this server speaks 2025-11-25.
warnings.filterwarnings("ignore", category=MCPDeprecationWarning)

server: MCPServer[Any] = MCPServer(
    NAME, title=TITLE, instructions=INSTRUCTIONS, version=VERSION, log_level="WARNING"
)


class Stats(TypedDict):
    count: int
    mean: float


@server.tool(description="Adds two integers.")
def add(a: int, b: int) -> int:
    return a + b


@server.tool(description="Count and mean of some numbers.")
def stats(values: list[float]) -> Stats:
    return Stats(count=len(values), mean=sum(values) / len(values) if values else 0.0)


@server.tool(description="Reports progress, step by step.")
async def count(steps: int, ctx: Context) -> str:
    for step in range(1, steps + 1):
        await ctx.report_progress(step, steps, f"step {step} of {steps}")
    return f"counted {steps}"


@server.tool(description="Logs the message, then says it louder.")
async def shout(message: str, ctx: Context) -> str:
    await ctx.log("warning", message, logger_name="official")
    return message.upper()


@server.tool(description="Sleeps for a while.")
async def sleep(seconds: float) -> str:
    marker = os.environ.get("OFFICIAL_MARKER")

    def mark(event: str) -> None:
        if marker:
            with open(marker, "a") as file:
                file.write(event + "\n")

    mark("started")
    try:
        await anyio.sleep(seconds)
    except anyio.get_cancelled_exc_class():
        mark("cancelled")
        raise
    mark("finished")
    return "slept"


@server.tool(description="Always fails.")
def fail(reason: str) -> str:
    raise ToolError(f"failed: {reason}")


if __name__ == "__main__":
    server.run("stdio")
