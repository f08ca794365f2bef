"""``server/discover`` and the caching hints of a server at MCP 2026-07-28, over an in-memory
transport with raw JSON: what a client learns before anything else, and how long it may keep
the answers."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, PROTOCOL_VERSION, SERVER_INFO
from mcpbind.server.caching import CacheHint
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair
from mcpbind.versions import SUPPORTED_VERSIONS

pytestmark = pytest.mark.anyio

META = {PROTOCOL_VERSION: "2026-07-28", CLIENT_CAPABILITIES: {}}


def build(**options: Any) -> Server:
    server = Server("discoverable", "2.1", instructions="Add numbers.", **options)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.resource("test://greeting")
    def greeting() -> str:
        return "hi"

    return server


@asynccontextmanager
async def serving(server: Server) -> AsyncIterator[MemoryTransport]:
    ours, theirs = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, theirs)
        try:
            yield ours
        finally:
            await ours.aclose()


async def call(peer: MemoryTransport, ident: int, method: str, params: dict[str, Any] | None = None) -> Any:
    body = {"jsonrpc": "2.0", "id": ident, "method": method, "params": {**(params or {}), "_meta": META}}
    await peer.send(json.dumps(body).encode())
    with anyio.fail_after(5):
        while True:
            answer = json.loads(await peer.receive())
            if answer.get("id") == ident:
                return answer


async def test_discover_says_what_the_server_speaks_and_offers() -> None:
    async with serving(build()) as peer:
        result = (await call(peer, 1, "server/discover"))["result"]
    assert result["resultType"] == "complete"
    assert result["supportedVersions"] == list(SUPPORTED_VERSIONS)
    assert result["instructions"] == "Add numbers."
    assert result["_meta"] == {SERVER_INFO: {"name": "discoverable", "version": "2.1"}}
    assert set(result["capabilities"]) == {"tools", "resources"}
    assert (result["ttlMs"], result["cacheScope"]) == (0, "private")


async def test_caching_hints_are_set_per_server_and_per_method() -> None:
    server = build(cache=CacheHint(30_000, "public"), cache_hints={"resources/read": CacheHint(0, "private")})
    async with serving(server) as peer:
        discovered = (await call(peer, 1, "server/discover"))["result"]
        tools = (await call(peer, 2, "tools/list"))["result"]
        read = (await call(peer, 3, "resources/read", {"uri": "test://greeting"}))["result"]
        called = (await call(peer, 4, "tools/call", {"name": "add", "arguments": {"a": 1, "b": 2}}))["result"]
    assert (discovered["ttlMs"], discovered["cacheScope"]) == (30_000, "public")
    assert (tools["ttlMs"], tools["cacheScope"]) == (30_000, "public")
    assert [tool["name"] for tool in tools["tools"]] == ["add"]
    assert (read["ttlMs"], read["cacheScope"]) == (0, "private")
    assert "ttlMs" not in called and called["structuredContent"] == {"result": 3}


def test_a_hint_must_make_sense() -> None:
    with pytest.raises(ValueError, match="ttl_ms"):
        CacheHint(-1)
    with pytest.raises(ValueError, match="scope"):
        CacheHint(0, "everyone")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="not cacheable"):
        build(cache_hints={"tools/call": CacheHint()})


async def test_tools_are_listed_in_a_stable_order() -> None:
    server = build()

    @server.tool()
    def zeta() -> str:
        return "z"

    @server.tool()
    def alpha() -> str:
        return "a"

    async with serving(server) as peer:
        first = (await call(peer, 1, "tools/list"))["result"]["tools"]
        second = (await call(peer, 2, "tools/list"))["result"]["tools"]
    assert [tool["name"] for tool in first] == [tool["name"] for tool in second] == ["add", "zeta", "alpha"]
