"""Results a handler returns already encoded (``Encoded``), and the server's listings kept
encoded between calls: each version gets what it would get from a typed result (older ones
converted down, the stateless one with its members put in front), over memory, stdio-like raw
JSON and Streamable HTTP (JSON and SSE); bytes that are not JSON are an internal error; a
listing follows every change of what it lists."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.encoded import Encoded
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION, SERVER_INFO
from mcpbind.protocol.errors import INTERNAL_ERROR, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.middleware import CallNext, IncomingRequest, Middleware
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

SESSION_VERSIONS = ("2024-11-05", "2025-06-18", "2025-11-25")
ALL_VERSIONS = (*SESSION_VERSIONS, "2026-07-28")
GOOD = Encoded.of(types.CallToolResult(content=[types.TextContent(text="pre-encoded")]))


def encoded_server() -> Server:
    server = Server(
        "enc", "1.0", capabilities=types.ServerCapabilities(tools=types.ServerCapabilitiesTools())
    )

    @server.on(types.methods.TOOLS_CALL)
    async def call(
        params: types.CallToolRequestParams, ctx: RequestContext[Any]
    ) -> Encoded[types.CallToolResult]:
        if params.name == "bad":
            return Encoded(b'{"content":')  # trusted, but not JSON
        return GOOD

    return server


@asynccontextmanager
async def talking(server: Server, version: str) -> AsyncIterator[MemoryTransport]:
    """A raw JSON peer of ``server`` at ``version`` (a session's initialized first)."""
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, theirs)
        try:
            if version != "2026-07-28":
                params = {
                    "protocolVersion": version,
                    "capabilities": {},
                    "clientInfo": {"name": "c", "version": "1"},
                }
                assert (await ask(ours, version, 0, "initialize", params))["result"][
                    "protocolVersion"
                ] == version
                await ours.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            yield ours
        finally:
            await ours.aclose()
            tg.cancel_scope.cancel()


async def ask(
    peer: MemoryTransport, version: str, ident: int, method: str, params: dict[str, Any] | None = None
) -> Any:
    params = dict(params or {})
    if version == "2026-07-28":
        params["_meta"] = {PROTOCOL_VERSION: version, CLIENT_CAPABILITIES: {}}
    await peer.send(json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode())
    with anyio.fail_after(5):
        while True:
            answer = json.loads(await peer.receive())
            if answer.get("id") == ident:
                return answer


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_an_encoded_result_is_sent_as_the_typed_one_would_be(version: str) -> None:
    async with talking(encoded_server(), version) as peer:
        for ident in (1, 2):  # the second from what the first derived
            result = (await ask(peer, version, ident, "tools/call", {"name": "good"}))["result"]
            assert result["content"] == [{"type": "text", "text": "pre-encoded"}]
            if version == "2026-07-28":
                assert result["resultType"] == "complete" and result["_meta"][SERVER_INFO]["name"] == "enc"
        failed = await ask(peer, version, 3, "tools/call", {"name": "bad"})
        assert failed["error"]["code"] == INTERNAL_ERROR
        assert (await ask(peer, version, 4, "tools/call", {"name": "good"}))["result"]["content"]


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
@pytest.mark.parametrize("versions", [("2025-11-25",), ("2026-07-28",)], ids=["session", "stateless"])
async def test_an_encoded_result_over_streamable_http(json_response: bool, versions: tuple[str, ...]) -> None:
    app = encoded_server().http_app(json_response=json_response)
    async with (
        serve_asgi(app) as base,
        Client("c", "1", versions=versions).connect_url(f"{base}/mcp") as remote,
    ):
        assert remote.stateless == (versions == ("2026-07-28",))
        result = await remote.call_tool("good", {})
        assert result.content == [types.TextContent(text="pre-encoded")]
        with pytest.raises(McpError) as failed:
            await remote.call_tool("bad", {})
        assert failed.value.code == INTERNAL_ERROR
        assert (await remote.call_tool("good", {})).content


def test_encoded_of_keeps_the_bytes_and_checks_trusted_ones_once() -> None:
    assert GOOD.json == msgspec.json.encode(
        types.CallToolResult(content=[types.TextContent(text="pre-encoded")])
    )
    assert Encoded(b' {"a":1} ').raw() == msgspec.Raw(b' {"a":1} ')
    for bad in (b'{"a":', b"[1]", b'{"a":"\xff"}'):
        with pytest.raises(msgspec.DecodeError):
            Encoded(bad).raw()
    with pytest.raises(TypeError):
        Encoded.of([1, 2])


# -- the listings ----------------------------------------------------------------------------


def listed_server() -> Server:
    server = Server("lists", "1.0", page_size=2)

    @server.tool(title="First")
    def first() -> str:
        return "1"

    @server.prompt()
    def greet() -> str:
        return "hello"

    @server.resource("notes://a")
    def note_a() -> str:
        return "a"

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return name

    return server


LISTS = {
    "tools/list": "tools",
    "prompts/list": "prompts",
    "resources/list": "resources",
    "resources/templates/list": "resourceTemplates",
}


async def names(peer: MemoryTransport, version: str, method: str, ident: int) -> list[str]:
    """Every item's name (a template's URI template) over all pages of ``method``."""
    found: list[str] = []
    cursor: str | None = None
    for page in range(10):
        params = {} if cursor is None else {"cursor": cursor}
        result = (await ask(peer, version, ident * 100 + page, method, params))["result"]
        found += [item.get("uriTemplate", item["name"]) for item in result[LISTS[method]]]
        cursor = result.get("nextCursor")
        if cursor is None:
            return found
    raise AssertionError("too many pages")


def add_second(server: Server, method: str) -> None:
    if method == "tools/list":
        server.tool(title="Second")(lambda: "2")  # named "<lambda>"
    elif method == "prompts/list":
        server.prompt("farewell")(lambda: "bye")
    elif method == "resources/list":
        server.resource("notes://b", name="b")(lambda: "b")
    else:
        server.resource("other://{x}")(lambda x: x)


def remove_first(server: Server, method: str) -> None:
    if method == "tools/list":
        server.remove_tool("first")
    elif method == "prompts/list":
        server.remove_prompt("greet")
    elif method == "resources/list":
        server.remove_resource("notes://a")
    else:
        server.remove_resource_template("notes://{name}")


@pytest.mark.parametrize("version", ALL_VERSIONS)
@pytest.mark.parametrize("method", list(LISTS))
async def test_a_listing_follows_every_change(version: str, method: str) -> None:
    server = listed_server()
    async with talking(server, version) as peer:
        before = await names(peer, version, method, 1)
        assert await names(peer, version, method, 2) == before  # (kept)
        add_second(server, method)
        added = await names(peer, version, method, 3)
        assert len(added) == len(before) + 1 and added[: len(before)] == before
        remove_first(server, method)
        assert await names(peer, version, method, 4) == added[1:]
        server.page_size = 1
        assert await names(peer, version, method, 5) == added[1:]


@pytest.mark.parametrize("version", ALL_VERSIONS)
async def test_a_kept_listing_is_each_versions_own(version: str) -> None:
    server = listed_server()
    server.tool(icons=[types.Icon(src="https://example.com/i.png")])(lambda: "3")
    async with talking(server, version) as peer, talking(server, "2025-11-25") as newest:
        for ident in (1, 2):
            tools = (await ask(peer, version, ident, "tools/list"))["result"]["tools"]
            assert ("title" in tools[0]) == (version != "2024-11-05")
            assert ("icons" in tools[1]) == (version in ("2025-11-25", "2026-07-28"))
            assert "icons" in (await ask(newest, "2025-11-25", ident, "tools/list"))["result"]["tools"][1]
        server.tools.pop("first")  # in place: seen all the same
        tools = (await ask(peer, version, 3, "tools/list"))["result"]["tools"]
        assert [tool["name"] for tool in tools] == ["<lambda>"]


class Renaming(Middleware):
    """Reads and changes the typed listing a handler returns."""

    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        result = await call_next(request)
        if isinstance(result, types.ListToolsResult):
            result.tools = [msgspec.structs.replace(tool, description="seen") for tool in result.tools]
        return result


async def test_middleware_gets_typed_listings() -> None:
    server = listed_server()
    server.add_middleware(Renaming())
    async with talking(server, "2025-11-25") as peer:
        tools = (await ask(peer, "2025-11-25", 1, "tools/list"))["result"]["tools"]
        assert [tool["description"] for tool in tools] == ["seen"]
