"""mcpbind's client against a server of the official MCP Python SDK speaking MCP 2026-07-28
(tests/interop/official_server_modern.py, an ``MCPServer``), over stdio and over Streamable
HTTP on 127.0.0.1: the era negotiated by ``server/discover``, pins, multi round-trip requests
answered by the client's handlers, ``listen()``, and the headers a stateless request carries.

The server runs in a child process on asyncio; the client here on both anyio backends.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.client.mrtr import InputRoundsExceeded
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import ResourceUpdated, ToolsListChanged
from mcpbind.protocol.errors import INVALID_REQUEST, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.http.client import open_streamable_http
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("official_server_modern.py")
TIMEOUT = 30.0


async def elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    assert isinstance(params, types.ElicitRequestFormParams)
    return types.ElicitResult(action="accept", content={"name": "Ada", "answer": params.message})


async def sample(
    params: types.CreateMessageRequestParams, ctx: RequestContext[Any]
) -> types.CreateMessageResult:
    content = params.messages[0].content
    assert isinstance(content, types.TextContent)
    return types.CreateMessageResult(
        role="assistant", content=types.TextContent(text=f"short ({len(content.text)})"), model="m1"
    )


async def roots(params: types.RequestParams, ctx: RequestContext[Any]) -> types.ListRootsResult:
    return types.ListRootsResult(roots=[types.Root(uri="file:///a"), types.Root(uri="file:///b")])


def full_client(**options: Any) -> Client:
    return Client("mcpbind-modern", "0.3", elicitation=elicit, sampling=sample, roots=roots, **options)


@pytest.fixture(params=["stdio", "http"])
def transport(request: pytest.FixtureRequest) -> str:
    kind: str = request.param
    return kind


class Recorder:
    """The HTTP requests the client sends: method and headers."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, httpx.Headers]] = []

    async def __call__(self, request: httpx.Request) -> None:
        self.requests.append((request.method, request.headers))


def http_server() -> AbstractAsyncContextManager[str]:
    """The official server on a free port of 127.0.0.1, in a child process; its MCP URL."""
    return child_http_server(lambda port: [sys.executable, str(SERVER), "http", str(port)], "official")


@asynccontextmanager
async def connect(
    kind: str, client: Client | None = None, recorder: Recorder | None = None
) -> AsyncIterator[RemoteServer]:
    client = client or full_client()
    if kind == "stdio":
        async with client.connect_stdio(sys.executable, [str(SERVER)], timeout=20) as server:
            yield server
        return
    hooks: dict[str, Any] = {"request": [recorder]} if recorder is not None else {}
    async with (
        http_server() as url,
        httpx.AsyncClient(event_hooks=hooks) as http,
        open_streamable_http(url, http_client=http) as channel,
        client.connect(channel, timeout=20) as server,
    ):
        yield server


def text_of(result: types.CallToolResult | types.GetPromptResult) -> str:
    if isinstance(result, types.GetPromptResult):
        content = result.messages[0].content
    else:
        content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


async def test_auto_negotiation_speaks_2026(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            assert server.stateless
            assert server.protocol_version == "2026-07-28"
            assert (server.server_info.name, server.server_info.version) == ("official-modern", "2.6.0")
            assert server.instructions == "Ask, summarize, change."
            assert server.discover_result is not None
            assert "2026-07-28" in server.discover_result.supported_versions
            assert isinstance(server.server_capabilities.tools, types.ServerCapabilitiesTools)
            names = {tool.name for tool in await server.all_tools()}
            assert {"add", "ask_name", "summarize", "where", "regional", "change"} <= names
            result = await server.call_tool("add", {"a": 2, "b": 40})
            assert isinstance(result, types.CallToolResult)
            assert result.structured_content == {"result": 42}
            prompt = await server.get_prompt("greet", {"name": "Bo"})
            assert text_of(prompt) == "Say hello to Bo"
            read = await server.read_resource("data://watched")
            assert isinstance(read.contents[0], types.TextResourceContents)
            assert read.contents[0].text == "watched"
            await server.ping()  # server/discover stands in for it


async def test_pins(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, full_client(protocol_version="2026-07-28")) as server:
            assert server.stateless and server.discover_result is None
            assert text_of(await server.call_tool("add", {"a": 1, "b": 2})) == "3"
            assert server.server_info.name == "official-modern"  # from the result's _meta
        async with connect(transport, full_client(protocol_version="2026-07-28", discover=True)) as server:
            assert server.stateless and server.discover_result is not None
        async with connect(transport, full_client(protocol_version="2025-11-25")) as server:
            assert not server.stateless
            assert server.protocol_version == "2025-11-25"
            assert text_of(await server.call_tool("add", {"a": 1, "b": 2})) == "3"
        # A client of the handshake versions only never probes.
        async with connect(transport, full_client(versions=HANDSHAKE_VERSIONS)) as server:
            assert not server.stateless
            await server.ping()


async def test_multi_round_trip_requests_use_the_handlers(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            # Elicitation; the server checks that its requestState came back as it was.
            assert text_of(await server.call_tool("ask_name")) == "hello Ada (accept)"
            assert (
                text_of(await server.call_tool("summarize", {"text": "abcdef"}))
                == "summary: short (17) by m1"
            )
            assert text_of(await server.call_tool("where")) == "file:///a, file:///b"


async def test_input_the_client_cannot_give_fails_clearly(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, Client("bare", "1")) as server:
            with pytest.raises(McpError) as raised:
                await server.call_tool("summarize", {"text": "x"})
            assert raised.value.code == INVALID_REQUEST
            assert "sampling handler" in raised.value.message
            # The connection goes on.
            assert text_of(await server.call_tool("add", {"a": 1, "b": 1})) == "2"


async def test_the_rounds_are_bounded(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport, full_client(max_input_rounds=3)) as server:
            with pytest.raises(InputRoundsExceeded) as raised:
                await server.call_tool("interview")
            assert raised.value.max_rounds == 3
            assert "3 rounds" in raised.value.message


async def test_listen_receives_changes(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            async with server.listen(tools=True, prompts=True, resource_uris=["data://watched"]) as changes:
                assert changes.acknowledged.tools_list_changed is True
                assert changes.acknowledged.resource_subscriptions == ["data://watched"]
                assert isinstance(changes.subscription_id, int)
                assert text_of(await server.call_tool("change")) == "changed"
                seen = {await changes.next(10), await changes.next(10)}
                assert seen == {ToolsListChanged(), ResourceUpdated("data://watched")}
            # Ended cleanly: the connection serves on.
            assert text_of(await server.call_tool("add", {"a": 2, "b": 2})) == "4"


async def test_removed_methods_in_the_stateless_era(transport: str) -> None:
    with anyio.fail_after(TIMEOUT):
        async with connect(transport) as server:
            with pytest.raises(McpError, match="listen"):
                await server.subscribe_resource("data://watched")
            await server.set_logging_level("warning")
            assert server.log_level == "warning"


async def test_per_request_logging(transport: str) -> None:
    logged: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params)

    with anyio.fail_after(TIMEOUT):
        async with connect(transport, full_client(logging=on_log)) as server:
            assert text_of(await server.call_tool("shout", {"message": "hi"}, log_level="info")) == "HI"
            while not logged:  # the log came before the result; its handler runs in order
                await anyio.sleep(0.01)
            assert (logged[0].level, logged[0].data) == ("warning", "hi")


async def test_http_headers_of_stateless_requests() -> None:
    recorder = Recorder()
    with anyio.fail_after(TIMEOUT):
        async with connect("http", recorder=recorder) as server:
            await server.all_tools()  # learns regional's x-mcp-header
            assert (
                text_of(await server.call_tool("regional", {"region": "eu-west", "query": "q"}))
                == "q in eu-west"
            )
            assert (
                text_of(await server.call_tool("regional", {"region": "grüß", "query": "q"})) == "q in grüß"
            )
            read = await server.read_resource("data://watched")
            assert isinstance(read.contents[0], types.TextResourceContents)
    methods = [method for method, _ in recorder.requests]
    assert set(methods) == {"POST"}  # no GET stream, no DELETE
    posted = [headers for _, headers in recorder.requests]
    assert all(headers["mcp-protocol-version"] == "2026-07-28" for headers in posted)
    assert all("mcp-session-id" not in headers for headers in posted)
    assert posted[0]["mcp-method"] == "server/discover"
    calls = [headers for headers in posted if headers["mcp-method"] == "tools/call"]
    assert [headers["mcp-name"] for headers in calls] == ["regional", "regional"]
    assert calls[0]["mcp-param-region"] == "eu-west"
    assert calls[1]["mcp-param-region"] == "=?base64?Z3LDvMOf?="
    reads = [headers for headers in posted if headers["mcp-method"] == "resources/read"]
    assert reads[0]["mcp-name"] == "data://watched"


async def test_the_official_legacy_sse_server_gets_initialize() -> None:
    """``connect_url`` at an official HTTP+SSE endpoint (2024-11-05): the discover probe and
    the initialize POST are refused, and the client falls back to the legacy transport."""
    import importlib.util

    from tests.http_harness import serve_asgi

    spec = importlib.util.spec_from_file_location("official_server_modern", SERVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    app = module.server.sse_app(host="127.0.0.1")
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base, full_client().connect_url(base + "/sse") as server:
            assert not server.stateless
            assert server.protocol_version in HANDSHAKE_VERSIONS
            assert text_of(await server.call_tool("add", {"a": 20, "b": 22})) == "42"
