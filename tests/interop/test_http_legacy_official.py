"""The legacy HTTP+SSE transport (2024-11-05) against the official MCP Python SDK, both ways:

* the official client (``mcp.client.sse.sse_client`` + ``mcp.ClientSession``) against our
  ``LegacySSEApp``;
* our ``open_legacy_sse`` against the official server (``MCPServer.sse_app()``, a Starlette app
  on the SDK's ``SseServerTransport``).

Both run in this process, served on 127.0.0.1 by tests/http_harness.py (uvicorn on asyncio,
hypercorn on trio), on both anyio backends.
"""

from __future__ import annotations

import warnings
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

# Skipped, not failed, where the official SDK is not installed (plain ``pytest``).
pytest.importorskip("mcp")

import mcp
import mcp.types
from mcp.client.context import ClientRequestContext
from mcp.client.sse import sse_client
from mcp.server.mcpserver import Context, MCPServer
from mcp.shared.exceptions import MCPDeprecationWarning

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.client import open_legacy_sse
from mcpbind.transports.http.legacy import LegacySSEApp
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

TIMEOUT = 30.0


# -- the official client, our server ------------------------------------------------------------


def our_server() -> Server:
    server = Server("mcpbind-legacy", "2.0", instructions="Add, count, ask.")

    @server.tool(description="Adds two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Reports progress, step by step.")
    async def count(steps: int, ctx: RequestContext) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @server.tool(description="Asks the client's model.")
    async def ask(question: str, ctx: RequestContext) -> str:
        answer = await ctx.create_message(
            types.CreateMessageRequestParams(
                max_tokens=5,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text=question))],
            )
        )
        assert isinstance(answer, types.CreateMessageResult) and isinstance(answer.content, types.TextContent)
        return answer.content.text

    return server


async def official_sampling(
    context: ClientRequestContext, params: mcp.types.CreateMessageRequestParams
) -> mcp.types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, mcp.types.TextContent)
    return mcp.types.CreateMessageResult(
        role="assistant",
        model="official",
        content=mcp.types.TextContent(type="text", text=content.text.upper()),
    )


@asynccontextmanager
async def official_client(app: LegacySSEApp) -> AsyncIterator[mcp.ClientSession]:
    async with (
        serve_asgi(app) as base_url,
        sse_client(base_url + "/sse", timeout=10) as (read, write),
        mcp.ClientSession(read, write, sampling_callback=official_sampling) as session,
    ):
        yield session


def text_of(result: Any) -> str:
    [block] = result.content
    assert block.type == "text"
    text: str = block.text
    return text


async def test_official_client_initializes_lists_and_calls() -> None:
    app = LegacySSEApp(our_server())
    with anyio.fail_after(TIMEOUT):
        async with official_client(app) as session:
            result = await session.initialize()
            assert result.server_info.name == "mcpbind-legacy"
            assert result.instructions == "Add, count, ask."
            assert len(app.sessions) == 1
            listing = await session.list_tools()
            assert [tool.name for tool in listing.tools] == ["add", "count", "ask"]
            added = await session.call_tool("add", {"a": 20, "b": 22})
            assert added.structured_content == {"result": 42}
            assert not added.is_error
            [server_side] = app.sessions.values()
        await server_side.wait_closed()
        assert app.sessions == {}


async def test_official_client_gets_progress_and_answers_sampling() -> None:
    app = LegacySSEApp(our_server())
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with official_client(app) as session:
            await session.initialize()
            counted = await session.call_tool("count", {"steps": 3}, progress_callback=on_progress)
            assert text_of(counted) == "counted 3"
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
            asked = await session.call_tool("ask", {"question": "louder"})
            assert text_of(asked) == "LOUDER"


# -- our client, the official server ------------------------------------------------------------


def official_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("official-legacy", version="3.1.4", instructions="Official SSE.")

    @server.tool(description="Adds two integers.")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Reports progress, step by step.")
    async def count(steps: int, ctx: Context) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @server.tool(description="Asks the client's model.")
    async def ask(question: str, ctx: Context) -> str:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", MCPDeprecationWarning)
            answer = await ctx.session.create_message(
                [
                    mcp.types.SamplingMessage(
                        role="user", content=mcp.types.TextContent(type="text", text=question)
                    )
                ],
                max_tokens=5,
                related_request_id=ctx.request_context.request_id,
            )
        assert isinstance(answer.content, mcp.types.TextContent)
        return answer.content.text

    return server


async def our_sampling(
    params: types.CreateMessageRequestParams, ctx: RequestContext
) -> types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", model="ours", content=types.TextContent(text=content.text[::-1])
    )


@asynccontextmanager
async def our_client() -> AsyncIterator[RemoteServer]:
    app = official_server().sse_app(host="127.0.0.1")
    client = Client("mcpbind-legacy-client", "0.1", sampling=our_sampling)
    async with (
        serve_asgi(app) as base_url,
        open_legacy_sse(base_url + "/sse", timeout=10) as transport,
        client.connect(transport) as session,
    ):
        assert transport.endpoint.startswith(base_url + "/messages/?session_id=")
        yield session


def our_text(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


async def test_our_client_against_the_official_server() -> None:
    with anyio.fail_after(TIMEOUT):
        async with our_client() as session:
            assert session.server_info.name == "official-legacy"
            assert session.instructions == "Official SSE."
            assert [tool.name for tool in await session.all_tools()] == ["add", "count", "ask"]
            added = await session.call_tool("add", {"a": 1, "b": 2})
            assert our_text(added) == "3"
            await session.ping()


async def test_our_client_gets_progress_and_answers_sampling_from_the_official_server() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with our_client() as session:
            counted = await session.call_tool("count", {"steps": 2}, progress=on_progress)
            assert our_text(counted) == "counted 2"
            assert seen == [(1, 2, "step 1"), (2, 2, "step 2")]
            asked = await session.call_tool("ask", {"question": "abc"})
            assert our_text(asked) == "cba"
