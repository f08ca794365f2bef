"""What a session learns about its transport once, when it is made: the optional features of
:mod:`mcpbind.transports.base` (``RelatedSender``, ``NowaitSender``, ``UnrelatedSendsNeverWait``),
and that a transport offering none of them (``send(message)`` alone) gets everything through
``send``. Every session test runs on asyncio and on trio."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.base import Features, features, nowait_sender, related_sender
from mcpbind.transports.http.client import StreamableHTTPTransport
from mcpbind.transports.http.server import HttpSessionTransport
from mcpbind.transports.memory import MemoryTransport, memory_pair
from mcpbind.transports.stdio import StdioTransport
from mcpbind.versions import HANDSHAKE_VERSIONS

pytestmark = pytest.mark.anyio


def test_the_features_of_each_transport() -> None:
    assert features(memory_pair()[0]) == Features(
        related=False, nowait=True, closes_streams=False, unrelated_send_waits_for_peer=True
    )
    stdio = object.__new__(StdioTransport)  # (its class alone is asked)
    assert features(stdio) == Features(
        related=True, nowait=True, closes_streams=False, unrelated_send_waits_for_peer=True, batches=True
    )
    http = HttpSessionTransport("s", event_store=None)
    assert features(http) == Features(
        related=True, nowait=False, closes_streams=True, unrelated_send_waits_for_peer=False
    )
    client = object.__new__(StreamableHTTPTransport)
    assert features(client) == Features(
        related=False, nowait=False, closes_streams=False, unrelated_send_waits_for_peer=True
    )


def test_features_are_learnt_once_per_class() -> None:
    a, b = memory_pair()
    assert features(a) is features(b)
    assert nowait_sender(a) is a and related_sender(a) is None


class PlainTransport:
    """``receive``, ``send(message)`` and ``aclose``, nothing more; notes what it sends."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.sent: list[dict[str, Any]] = []

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        self.sent.append(json.loads(message))
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_transport_with_send_alone_gets_everything_through_it() -> None:
    server = Server("plain", "1", logging=True)

    @server.tool()
    async def busy(text: str, ctx: RequestContext) -> str:
        await ctx.report_progress(1, 2)
        await ctx.log("info", "working")
        return text

    server_end, client_end = memory_pair()
    transport = PlainTransport(server_end)
    assert features(transport) == Features(
        related=False, nowait=False, closes_streams=False, unrelated_send_waits_for_peer=True
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, transport)
        with anyio.fail_after(10):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(client_end) as client:
                result = await client.call_tool("busy", {"text": "done"}, progress=progress)
                assert result.content == [types.TextContent(text="done")]
        tg.cancel_scope.cancel()
    methods = [m.get("method") for m in transport.sent]
    assert "notifications/progress" in methods and "notifications/message" in methods
    assert sum(1 for m in transport.sent if "result" in m) == 2  # initialize, then the call


async def progress(done: float, total: float | None, message: str | None) -> None:
    pass
