"""One SDK's client calling the ``echo`` tool of a stdio server: calls per second, one at a time and N in flight.

Runs in the environment of the SDK it measures (``bench/clients.py`` starts it there: mcpbind from
this checkout, the official SDK and FastMCP in their venvs), so it imports the standard library,
anyio (which all three bring) and the one SDK named on its command line, nothing of this
repository. The client starts the server itself, through its SDK's own stdio client:

* ``mcpbind-asyncio`` / ``mcpbind-trio``: ``mcpbind.client.client.Client().connect_stdio(...)`` and the
  typed ``RemoteServer.call_tool``;
* ``official``: the official SDK's ``stdio_client(StdioServerParameters(...))`` and
  ``ClientSession(read, write)``: ``initialize()`` then ``call_tool`` (which lists the tools once,
  to check results against their output schemas);
* ``fastmcp``: ``fastmcp.Client(StdioTransport(...))`` and its ``call_tool``.

After a warm-up it makes ``--sequential`` calls, each after the previous answer, then
``--pipelined`` calls with ``--in-flight`` tasks each calling in a loop. Every answer is checked:
not an error, and its first content block a text block holding the text sent (each call sends a
text of its own). It prints one JSON object: for each phase the calls, the wall time and this
process's CPU time (all its threads, not the server's), and the time from start to the first
answer. Any wrong answer or failure exits non-zero with the reason on stderr.

    python bench/client_runner.py SDK [--sequential N] [--pipelined N] [--in-flight N] [--warmup N]
        -- SERVER_COMMAND [ARG ...]
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any

import anyio

Call = Callable[[str], Awaitable[str]]  # sends a text to echo, returns the text answered
Connector = Callable[[str, list[str]], AbstractAsyncContextManager[Call]]


class WrongAnswer(Exception):
    pass


def first_text(result: Any, sent: str) -> str:
    """The text of a CallToolResult's first content block (any SDK's: read by attribute)."""
    if getattr(result, "is_error", False) or getattr(result, "isError", False):
        raise WrongAnswer(f"error result for {sent!r}: {result!r}"[:500])
    content = getattr(result, "content", None)
    if not content:
        raise WrongAnswer(f"no content in the result for {sent!r}: {result!r}"[:500])
    block = content[0]
    text = getattr(block, "text", None)
    # The official SDK's and FastMCP's blocks carry ``type``; mcpbind's are tagged by their class.
    is_text = getattr(block, "type", None) == "text" or type(block).__name__ == "TextContent"
    if not is_text or not isinstance(text, str):
        raise WrongAnswer(f"first block is not text for {sent!r}: {block!r}"[:500])
    return text


@asynccontextmanager
async def mcpbind_client(command: str, args: list[str]) -> AsyncIterator[Call]:
    from mcpbind.client.client import Client

    async with Client("bench-client", "0.1.0").connect_stdio(command, args) as session:

        async def call(text: str) -> str:
            return first_text(await session.call_tool("echo", {"text": text}), text)

        yield call


@asynccontextmanager
async def official_client(command: str, args: list[str]) -> AsyncIterator[Call]:
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    parameters = StdioServerParameters(command=command, args=args)
    async with stdio_client(parameters) as (read, write), ClientSession(read, write) as session:
        await session.initialize()

        async def call(text: str) -> str:
            return first_text(await session.call_tool("echo", {"text": text}), text)

        yield call


@asynccontextmanager
async def fastmcp_client(command: str, args: list[str]) -> AsyncIterator[Call]:
    # Imported by name: fastmcp is installed in its venv only, not where mypy checks this file.
    fastmcp: Any = importlib.import_module("fastmcp")
    transports: Any = importlib.import_module("fastmcp.client.transports")
    transport = transports.StdioTransport(command=command, args=args, keep_alive=False)
    async with fastmcp.Client(transport) as client:

        async def call(text: str) -> str:
            return first_text(await client.call_tool("echo", {"text": text}), text)

        yield call


CLIENTS: dict[str, tuple[Connector, str]] = {
    "mcpbind-asyncio": (mcpbind_client, "asyncio"),
    "mcpbind-trio": (mcpbind_client, "trio"),
    "official": (official_client, "asyncio"),
    "fastmcp": (fastmcp_client, "asyncio"),
}


async def checked(call: Call, text: str) -> None:
    got = await call(text)
    if got != text:
        raise WrongAnswer(f"sent {text!r}, got {got[:200]!r}")


async def sequential(call: Call, prefix: str, n: int) -> None:
    for i in range(n):
        await checked(call, f"{prefix}{i}")


async def pipelined(call: Call, prefix: str, n: int, in_flight: int) -> None:
    """``n`` calls from ``in_flight`` tasks, each taking the next number when its answer is in."""
    next_number = 0

    async def worker() -> None:
        nonlocal next_number
        while next_number < n:
            i = next_number
            next_number += 1
            await checked(call, f"{prefix}{i}")

    async with anyio.create_task_group() as tg:
        for _ in range(in_flight):
            tg.start_soon(worker)
    if next_number != n:
        raise WrongAnswer(f"{next_number} calls made, {n} wanted")


def phase(calls: int, wall: float, cpu: float) -> dict[str, float]:
    return {"calls": calls, "seconds": wall, "cpu_seconds": cpu}


async def measure(connect: Connector, args: argparse.Namespace) -> dict[str, Any]:
    out: dict[str, Any] = {"sdk": args.sdk}
    started = time.perf_counter()
    async with connect(args.server[0], args.server[1:]) as call:
        await checked(call, "first")
        out["first_answer_seconds"] = time.perf_counter() - started
        await sequential(call, "w", args.warmup // 2)
        await pipelined(call, "v", args.warmup - args.warmup // 2, args.in_flight)

        wall, cpu = time.perf_counter(), time.process_time()
        await sequential(call, "s", args.sequential)
        out["sequential"] = phase(args.sequential, time.perf_counter() - wall, time.process_time() - cpu)

        wall, cpu = time.perf_counter(), time.process_time()
        await pipelined(call, "p", args.pipelined, args.in_flight)
        out["pipelined"] = phase(args.pipelined, time.perf_counter() - wall, time.process_time() - cpu)
        out["in_flight"] = args.in_flight
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("sdk", choices=list(CLIENTS))
    parser.add_argument("--sequential", type=int, default=5000, help="calls one at a time")
    parser.add_argument("--pipelined", type=int, default=20000, help="calls with --in-flight at once")
    parser.add_argument("--in-flight", type=int, default=16, help="calls in flight in the pipelined phase")
    parser.add_argument("--warmup", type=int, default=1000, help="calls before the timed phases")
    parser.add_argument("server", nargs="+", help="the server's command line (after --)")
    args = parser.parse_args(argv)
    if min(args.sequential, args.pipelined, args.in_flight) < 1 or args.warmup < 0:
        parser.error("--sequential, --pipelined and --in-flight must be at least 1, --warmup at least 0")
    connect, backend = CLIENTS[args.sdk]
    try:
        result = anyio.run(measure, connect, args, backend=backend)
    except WrongAnswer as exc:
        print(f"client_runner {args.sdk}: wrong answer: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(result), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
