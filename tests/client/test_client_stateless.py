"""The client at MCP 2026-07-28 against mcpbind's own server (in memory), and the era
negotiation against scripted servers: ``server/discover`` first, the fallback to
``initialize`` by the official SDK's rules, pins, the ``_meta`` envelope every stateless
request carries, the methods the stateless era dropped, and the ``ttlMs`` cache.
"""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import ToolsListChanged
from mcpbind.exception_groups import only_error
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION
from mcpbind.protocol.errors import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.server.caching import CacheHint
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

pytestmark = pytest.mark.anyio


async def sample(
    params: types.CreateMessageRequestParams, ctx: RequestContext[Any]
) -> types.CreateMessageResult:
    return types.CreateMessageResult(role="assistant", content=types.TextContent(text="ok"), model="m")


def make_server(**options: Any) -> Server:
    server = Server("mcpbind-26", "2.0", instructions="Stateless.", **options)
    seen: list[Any] = []
    server.seen = seen  # type: ignore[attr-defined]

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def envelope(ctx: RequestContext) -> dict[str, Any]:
        found = ctx.envelope
        assert found is not None
        return {
            "version": found.version,
            "client": found.client_info.name if found.client_info is not None else None,
            "sampling": found.client_capabilities.sampling is not types.UNSET,
            "level": found.log_level,
        }

    @server.resource("data://counted")
    def counted() -> str:
        seen.append("read")
        return f"read {len(seen)}"

    return server


async def test_auto_negotiation_speaks_2026_with_an_mcpbind_server() -> None:
    with anyio.fail_after(10):
        async with connected(make_server(), Client("c26", "0.1", sampling=sample)) as server:
            assert server.stateless and server.protocol_version == "2026-07-28"
            assert (server.server_info.name, server.server_info.version) == ("mcpbind-26", "2.0")
            assert server.instructions == "Stateless."
            assert isinstance(server.server_capabilities.tools, types.ServerCapabilitiesTools)
            assert (await server.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
            seen = (await server.call_tool("envelope")).structured_content
            assert seen == {"version": "2026-07-28", "client": "c26", "sampling": True, "level": None}
            seen = (await server.call_tool("envelope", log_level="error")).structured_content
            assert isinstance(seen, dict) and seen["level"] == "error"
            await server.set_logging_level("notice")
            seen = (await server.call_tool("envelope")).structured_content
            assert isinstance(seen, dict) and seen["level"] == "notice"
            await server.ping()


async def test_a_handshake_only_server_gets_initialize() -> None:
    with anyio.fail_after(10):
        async with connected(make_server(versions=HANDSHAKE_VERSIONS), Client()) as server:
            assert not server.stateless and server.protocol_version == "2025-11-25"
            assert server.discover_result is None
            await server.ping()
            assert (await server.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_pins() -> None:
    with anyio.fail_after(10):
        async with connected(
            make_server(), Client(protocol_version="2026-07-28", log_level="debug")
        ) as server:
            assert server.stateless and server.discover_result is None
            assert server.log_level == "debug"
            seen = (await server.call_tool("envelope")).structured_content
            assert isinstance(seen, dict) and seen["level"] == "debug"
            assert server.server_info.name == "mcpbind-26"
        async with connected(make_server(), Client(protocol_version="2025-06-18")) as server:
            assert not server.stateless and server.protocol_version == "2025-06-18"
    with pytest.raises(ValueError, match="not one of versions"):
        Client(versions=HANDSHAKE_VERSIONS, protocol_version="2026-07-28")


async def test_what_the_stateless_era_dropped() -> None:
    with anyio.fail_after(10):
        async with connected(make_server(), Client()) as server:
            with pytest.raises(McpError, match="listen") as raised:
                await server.subscribe_resource("data://counted")
            assert raised.value.code == INVALID_REQUEST
            with pytest.raises(McpError, match="not part of protocol version 2026-07-28"):
                await server.request(types.methods.PING, types.RequestParams())
            await server.send_roots_list_changed()  # nothing to send: no error
        async with connected(make_server(versions=HANDSHAKE_VERSIONS), Client()) as server:
            with pytest.raises(McpError, match="server/discover is not part"):
                await server.discover()


async def test_cache_honours_ttl() -> None:
    server_side = make_server(cache_hints={"resources/read": CacheHint(ttl_ms=60_000)})
    with anyio.fail_after(10):
        async with connected(server_side, Client(cache=True)) as server:
            first = await server.read_resource("data://counted")
            again = await server.read_resource("data://counted")
            assert first == again
            assert server_side.seen == ["read"]  # type: ignore[attr-defined]
        async with connected(server_side, Client()) as server:  # no cache: read each time
            await server.read_resource("data://counted")
            await server.read_resource("data://counted")
            assert len(server_side.seen) == 3  # type: ignore[attr-defined]
    stale = make_server()  # ttlMs 0: never kept
    with anyio.fail_after(10):
        async with connected(stale, Client(cache=True)) as server:
            await server.read_resource("data://counted")
            await server.read_resource("data://counted")
            assert len(stale.seen) == 2  # type: ignore[attr-defined]


async def test_listen_falls_back_to_session_notifications() -> None:
    server_side = make_server(versions=HANDSHAKE_VERSIONS)
    with anyio.fail_after(10):
        async with connected(server_side, Client()) as server:
            async with server.listen(tools=True, prompts=True) as changes:
                assert changes.acknowledged.tools_list_changed is True
                assert changes.acknowledged.prompts_list_changed is types.UNSET  # no prompts
                await server.list_tools()  # (the server's side of the session is ready)
                server_side.remove_tool("add")
                assert await changes.next(5) == ToolsListChanged()


# -- the negotiation, against scripted servers ------------------------------------------------

Script = Callable[[dict[str, Any]], dict[str, Any] | None]


def result(ident: Any, value: dict[str, Any]) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "result": value}


def error(ident: Any, code: int, message: str, data: Any = None) -> dict[str, Any]:
    body: dict[str, Any] = {"code": code, "message": message}
    if data is not None:
        body["data"] = data
    return {"jsonrpc": "2.0", "id": ident, "error": body}


INITIALIZED = {
    "protocolVersion": "2025-11-25",
    "capabilities": {"tools": {}},
    "serverInfo": {"name": "scripted", "version": "1"},
}
DISCOVERED = {
    "resultType": "complete",
    "supportedVersions": ["2026-07-28", "2025-11-25"],
    "capabilities": {"tools": {}},
    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "scripted", "version": "2"}},
}


@asynccontextmanager
async def scripted(
    answers: dict[str, list[Callable[[Any], Any]]], client: Client | None = None
) -> AsyncIterator[tuple[RemoteServer, list[dict[str, Any]]]]:
    """A server that answers each method with the next of its scripted answers; yields the
    connected client and every message it received."""
    server_end, client_end = memory_pair()
    received: list[dict[str, Any]] = []

    async def serve() -> None:
        while True:
            try:
                message = json.loads(await server_end.receive())
            except anyio.EndOfStream:
                return
            received.append(message)
            if "id" in message and "method" in message:
                answer: Any = answers[message["method"]].pop(0)(message["id"])
                for item in answer if isinstance(answer, list) else [answer]:
                    await server_end.send(json.dumps(item).encode())

    try:
        async with anyio.create_task_group() as tg:
            tg.start_soon(serve)
            with anyio.fail_after(10):
                async with (client or Client()).connect(client_end) as server:
                    yield server, received
            tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        error = only_error(group)
        if error is None:
            raise
        raise error from None


def methods_of(received: list[dict[str, Any]]) -> list[str]:
    return [message["method"] for message in received if "method" in message]


async def test_the_probe_carries_the_envelope() -> None:
    async with scripted({"server/discover": [lambda i: result(i, DISCOVERED)]}) as (server, received):
        assert server.stateless and server.server_info.version == "2"
    meta = received[0]["params"]["_meta"]
    assert meta[PROTOCOL_VERSION] == "2026-07-28"
    assert meta[CLIENT_CAPABILITIES] == {}
    assert meta[CLIENT_INFO]["name"] == "mcpbind"
    assert LOG_LEVEL not in meta


@pytest.mark.parametrize(
    "refusal",
    [
        lambda i: error(i, -32601, "Method not found"),
        lambda i: error(i, -32600, "Received server/discover before initialization"),
        lambda i: error(i, -32603, "HTTP 404 Not Found"),
        # What the TypeScript SDK's 2025 HTTP server answers (at 400) to a version it lacks.
        lambda i: error(i, -32000, "Bad Request: Unsupported protocol version: 2026-07-28"),
        lambda i: error(i, UNSUPPORTED_PROTOCOL_VERSION, "no", {"supported": ["2025-06-18"]}),
        lambda i: result(i, {**DISCOVERED, "supportedVersions": ["2025-11-25"]}),
    ],
    ids=[
        "method-not-found",
        "invalid-request",
        "http-error",
        "typescript-2025",
        "handshake-only-32022",
        "no-modern-version",
    ],
)
async def test_what_falls_back_to_initialize(refusal: Callable[[Any], dict[str, Any]]) -> None:
    answers = {
        "server/discover": [refusal],
        "initialize": [lambda i: result(i, INITIALIZED)],
    }
    async with scripted(answers) as (server, received):
        assert not server.stateless and server.protocol_version == "2025-11-25"
    assert methods_of(received) == ["server/discover", "initialize", "notifications/initialized"]
    assert "_meta" not in received[1]["params"]


async def test_a_stateless_server_without_a_common_version_is_an_error() -> None:
    answers = {
        "server/discover": [
            lambda i: error(i, UNSUPPORTED_PROTOCOL_VERSION, "no", {"supported": ["2099-01-01"]})
        ]
    }
    with pytest.raises(McpError) as raised:
        async with scripted(answers):
            pass
    assert raised.value.code == UNSUPPORTED_PROTOCOL_VERSION


async def test_initialize_refused_as_stateless_probes_again() -> None:
    answers = {
        "server/discover": [
            lambda i: error(i, -32001, "Request timed out"),
            lambda i: result(i, DISCOVERED),
        ],
        "initialize": [
            lambda i: error(i, UNSUPPORTED_PROTOCOL_VERSION, "stateless here", {"supported": ["2026-07-28"]})
        ],
    }
    async with scripted(answers) as (server, received):
        assert server.stateless
    assert methods_of(received) == ["server/discover", "initialize", "server/discover"]


async def test_a_handshake_pin_never_probes() -> None:
    answers = {"initialize": [lambda i: result(i, INITIALIZED)]}
    async with scripted(answers, Client(protocol_version="2025-11-25")) as (server, received):
        assert not server.stateless
    assert methods_of(received) == ["initialize", "notifications/initialized"]


async def test_a_modern_pin_sends_nothing_first() -> None:
    answers = {"tools/list": [lambda i: result(i, {"resultType": "complete", "tools": []})]}
    async with scripted(answers, Client(protocol_version="2026-07-28")) as (server, received):
        assert received == []
        assert (await server.list_tools()).tools == []
    assert methods_of(received) == ["tools/list"]
    assert received[0]["params"]["_meta"][PROTOCOL_VERSION] == "2026-07-28"


# -- over HTTP ----------------------------------------------------------------------------------


async def test_a_handshake_only_http_server_gets_initialize() -> None:
    from tests.http_harness import serve_asgi

    with anyio.fail_after(20):
        async with (
            serve_asgi(make_server(versions=HANDSHAKE_VERSIONS).http_app()) as base,
            Client().connect_url(base + "/mcp") as server,
        ):
            assert not server.stateless and server.protocol_version == "2025-11-25"
            assert (await server.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}


async def test_an_mcpbind_http_server_is_spoken_to_statelessly() -> None:
    from tests.http_harness import serve_asgi

    with anyio.fail_after(20):
        server_side = make_server()
        async with (
            serve_asgi(server_side.http_app()) as base,
            Client().connect_url(base + "/mcp") as server,
        ):
            assert server.stateless and server.protocol_version == "2026-07-28"
            assert (await server.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
            async with server.listen(tools=True) as changes:
                assert changes.acknowledged.tools_list_changed is True
                server_side.remove_tool("add")
                assert await changes.next(5) == ToolsListChanged()


# -- features of mcpbind's server: multi round-trip requests, subscriptions/listen -------------


async def test_mrtr_with_an_mcpbind_server() -> None:
    server_side = Server("mrtr", "1")

    @server_side.tool()
    async def ask(ctx: RequestContext) -> str:
        schema = types.ElicitRequestFormParamsRequestedSchema(properties={"name": types.StringSchema()})
        answer = await ctx.elicit(types.ElicitRequestFormParams(message="Name?", requested_schema=schema))
        assert isinstance(answer, types.ElicitResult) and isinstance(answer.content, dict)
        sampled = await ctx.create_message(
            types.CreateMessageRequestParams(
                max_tokens=5,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
            )
        )
        assert isinstance(sampled, types.CreateMessageResult) and isinstance(
            sampled.content, types.TextContent
        )
        roots = await ctx.list_roots()
        return f"{answer.content['name']} {sampled.content.text} {len(roots.roots)}"

    async def elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def roots(params: types.RequestParams, ctx: RequestContext[Any]) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///a")])

    client = Client(elicitation=elicit, sampling=sample, roots=roots)
    with anyio.fail_after(10):
        async with connected(server_side, client) as server:
            assert server.stateless
            result = await server.call_tool("ask")
            assert result.content == [types.TextContent(text="Ada ok 1")]


async def test_listen_with_an_mcpbind_server() -> None:
    server_side = make_server()
    with anyio.fail_after(10):
        async with connected(server_side, Client()) as server:
            assert server.stateless
            async with server.listen(tools=True) as changes:
                assert changes.acknowledged.tools_list_changed is True
                server_side.remove_tool("add")
                assert await changes.next(5) == ToolsListChanged()


def note(method: str, tag: Any, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": method,
        "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": tag}, **params},
    }


async def test_listen_routes_by_subscription_id_and_ends_with_the_server() -> None:
    def listen(ident: Any) -> list[dict[str, Any]]:
        return [
            note("notifications/subscriptions/acknowledged", ident, notifications={"toolsListChanged": True}),
            note("notifications/tools/list_changed", "someone-else"),  # another stream's: not ours
            note("notifications/resources/updated", ident, uri="file:///not-asked"),  # not acknowledged
            note("notifications/tools/list_changed", ident),
            result(
                ident, {"resultType": "complete", "_meta": {"io.modelcontextprotocol/subscriptionId": ident}}
            ),
        ]

    async with scripted({"subscriptions/listen": [listen]}, Client(protocol_version="2026-07-28")) as (
        server,
        received,
    ):
        async with server.listen(tools=True) as changes:
            assert changes.acknowledged.tools_list_changed is True
            assert [event async for event in changes] == [ToolsListChanged()]  # then the server ended it
    listen_request = received[0]
    assert listen_request["params"]["notifications"] == {"toolsListChanged": True}
    assert listen_request["params"]["_meta"][PROTOCOL_VERSION] == "2026-07-28"
    assert changes.subscription_id == listen_request["id"]


async def test_leaving_a_listen_block_cancels_the_stream() -> None:
    def listen(ident: Any) -> list[dict[str, Any]]:
        return [
            note(
                "notifications/subscriptions/acknowledged", ident, notifications={"promptsListChanged": True}
            )
        ]

    async with scripted({"subscriptions/listen": [listen]}, Client(protocol_version="2026-07-28")) as (
        server,
        received,
    ):
        with pytest.raises(KeyError):  # the block's own error comes out as itself
            async with server.listen(prompts=True):
                raise KeyError("mine")
        with anyio.fail_after(5):
            while methods_of(received)[-1:] != ["notifications/cancelled"]:
                await anyio.sleep(0.01)
    assert received[-1]["params"]["requestId"] == received[0]["id"]
