"""mcpbind's client against a FastMCP server (fastmcp from PyPI, tests/interop/fastmcp_server.py)
speaking MCP 2026-07-28, over stdio and Streamable HTTP on 127.0.0.1: the era the client
negotiates, lists, calls, progress, the tools that ask for input through multi round-trip
requests (answered by the client's sampling and elicitation handlers), a resource and a prompt.

The server runs in a child process; the client here on both anyio backends.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import pytest

pytest.importorskip("fastmcp")

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.context import RequestContext
from mcpbind.schema import v2025_11_25 as types
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("fastmcp_server.py")
TIMEOUT = 30.0


async def elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    assert params.message == "What is your name?"
    return types.ElicitResult(action="accept", content={"name": "Ada"})


async def sample(
    params: types.CreateMessageRequestParams, ctx: RequestContext[Any]
) -> types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=f"{len(content.text)} characters"), model="m1"
    )


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


def http_server() -> AbstractAsyncContextManager[str]:
    """The FastMCP server on a free port of 127.0.0.1, in a child process; its MCP URL."""
    return child_http_server(lambda port: [sys.executable, str(SERVER), "http", str(port)], "FastMCP")


@asynccontextmanager
async def connect(kind: str) -> AsyncIterator[RemoteServer]:
    client = Client("mcpbind-to-fastmcp", "1.0", elicitation=elicit, sampling=sample, log_level="info")
    if kind == "stdio":
        async with client.connect_stdio(sys.executable, [str(SERVER)], timeout=20) as server:
            yield server
        return
    async with http_server() as url, client.connect_url(url, timeout=20) as server:
        yield server


def text_of(result: types.CallToolResult) -> str:
    [content] = result.content
    assert isinstance(content, types.TextContent)
    return content.text


async def test_the_client_speaks_2026_with_fastmcp(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            assert server.stateless and server.protocol_version == "2026-07-28"
            assert server.server_info.name == "fastmcp-peer"
            tools = await server.list_tools()
            assert {"add", "ask_name", "summarize", "count"} <= {tool.name for tool in tools.tools}
            assert text_of(await server.call_tool("add", {"a": 20, "b": 22})) == "42"
            steps: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                steps.append(progress)

            counted = await server.call_tool("count", {"n": 3}, progress=on_progress)
            assert text_of(counted) == "counted"
            assert steps == [1, 2, 3]
            read = await server.read_resource("data://greeting")
            [contents] = read.contents
            assert isinstance(contents, types.TextResourceContents) and contents.text == "hello from fastmcp"
            prompt = await server.get_prompt("greet", {"name": "Ada"})
            message = prompt.messages[0].content
            assert isinstance(message, types.TextContent) and "Ada" in message.text


async def test_fastmcp_tools_ask_through_multi_round_trip_requests(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            assert text_of(await server.call_tool("ask_name")) == "hello Ada (accept)"
            summary = await server.call_tool("summarize", {"text": "mcpbind"})
            assert text_of(summary) == "summary: 18 characters"  # "Summarize: mcpbind"
