"""The official MCP Python SDK's Streamable HTTP client (``mcp.client.streamable_http``) against
mcpbind's ASGI app, served on 127.0.0.1 in the test's loop: stateful (SSE answers), stateless
and JSON-response modes; initialize, list tools, a tool call with progress, a resource read, a
notification on the GET stream, and session termination.

The official client runs on anyio, so it runs here on both backends (uvicorn under asyncio,
hypercorn under trio and asyncio).
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest

pytest.importorskip("mcp")

import mcp
import mcp.types
from mcp.client.session import MessageHandlerFnT
from mcp.client.streamable_http import streamable_http_client

from mcpbind.runtime.session import RequestContext
from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp
from tests.http_harness import ServerName, serve_asgi

pytestmark = pytest.mark.anyio

TEST_TIMEOUT = 30.0
MODES = {
    "stateful": {},
    "stateless": {"stateless": True},
    "json": {"json_response": True},
    "stateless-json": {"stateless": True, "json_response": True},
}
COMBINATIONS = [("asyncio", "uvicorn"), ("asyncio", "hypercorn"), ("trio", "hypercorn")]


@pytest.fixture(params=COMBINATIONS, ids=["-".join(c) for c in COMBINATIONS])
def backend_and_server(request: pytest.FixtureRequest) -> tuple[str, ServerName]:
    combination: tuple[str, ServerName] = request.param
    return combination


@pytest.fixture
def anyio_backend(backend_and_server: tuple[str, ServerName]) -> str:
    return backend_and_server[0]


@pytest.fixture(params=list(MODES))
def mode(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


def build_server() -> Server:
    server = Server("mcpbind-http-interop", "1.0", instructions="Echo, count, read.")

    @server.tool()
    async def echo(text: str) -> str:
        """Says the text back."""
        return text

    @server.tool()
    async def count(steps: int, ctx: RequestContext) -> str:
        """Reports progress at each step."""
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @server.tool()
    async def announce(ctx: RequestContext) -> str:
        """Tells every session that the tool list changed."""
        await server.tools_changed()
        return "announced"

    @server.resource("note://greeting", mime_type="text/plain", description="A greeting")
    async def greeting() -> str:
        return "hello from mcpbind"

    return server


@asynccontextmanager
async def official_client(
    backend_and_server: tuple[str, ServerName],
    mode: str,
    handler: MessageHandlerFnT | None = None,
) -> AsyncIterator[tuple[mcp.ClientSession, StreamableHTTPApp]]:
    app = StreamableHTTPApp(build_server(), **MODES[mode])  # type: ignore[arg-type]
    async with (
        serve_asgi(app, backend_and_server[1]) as base,
        streamable_http_client(f"{base}/mcp") as (read, write),
        mcp.ClientSession(read, write, message_handler=handler) as session,
    ):
        yield session, app


async def test_official_client_lists_calls_and_reads(
    backend_and_server: tuple[str, ServerName], mode: str
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with official_client(backend_and_server, mode) as (session, app):
            result = await session.initialize()
            assert result.server_info.name == "mcpbind-http-interop"
            assert result.protocol_version == "2025-11-25"
            assert result.instructions == "Echo, count, read."
            if mode.startswith("stateless"):
                assert app.sessions == {}
            else:
                assert len(app.sessions) == 1

            listing = await session.list_tools()
            assert [tool.name for tool in listing.tools] == ["echo", "count", "announce"]

            echoed = await session.call_tool("echo", {"text": "héllo ✓"})
            block = echoed.content[0]
            assert isinstance(block, mcp.types.TextContent) and block.text == "héllo ✓"

            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            counted = await session.call_tool("count", {"steps": 3}, progress_callback=on_progress)
            block = counted.content[0]
            assert isinstance(block, mcp.types.TextContent) and block.text == "counted 3"
            if mode.endswith("json"):
                # A JSON answer carries the response alone; progress goes where unrelated messages go.
                assert len(seen) <= 3
            else:
                assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            read = await session.read_resource("note://greeting")
            contents = read.contents[0]
            assert isinstance(contents, mcp.types.TextResourceContents)
            assert contents.text == "hello from mcpbind"
            assert contents.mime_type == "text/plain"

            # Several calls at once, each answered to its caller.
            answers: dict[int, str] = {}

            async def call(i: int) -> None:
                result = await session.call_tool("echo", {"text": f"n{i}"})
                first = result.content[0]
                assert isinstance(first, mcp.types.TextContent)
                answers[i] = first.text

            async with anyio.create_task_group() as tg:
                for i in range(10):
                    tg.start_soon(call, i)
            assert answers == {i: f"n{i}" for i in range(10)}
        # The client's exit sends DELETE: the session is gone.
        if not mode.startswith("stateless"):
            with anyio.fail_after(5):
                while app.sessions:
                    await anyio.sleep(0.01)


async def test_official_client_gets_notifications_on_its_get_stream(
    backend_and_server: tuple[str, ServerName],
) -> None:
    changed = anyio.Event()

    async def handler(message: object) -> None:
        if isinstance(message, mcp.types.ToolListChangedNotification):
            changed.set()

    with anyio.fail_after(TEST_TIMEOUT):
        async with official_client(backend_and_server, "stateful", handler) as (session, _):
            await session.initialize()
            result = await session.call_tool("announce", {})
            block = result.content[0]
            assert isinstance(block, mcp.types.TextContent) and block.text == "announced"
            await changed.wait()
