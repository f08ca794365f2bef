"""What the Streamable HTTP client tests share: a :class:`~mcpbind.client.client.Client`
connected through the client transport to a scripted server (http_fake_server.py) served on
127.0.0.1, and a client that counts the ``notifications/tools/list_changed`` it hears (what a
fake GET stream delivers)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.transports.http.client import StreamableHTTPTransport, open_streamable_http
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.http_harness import serve_asgi
from tests.transports.http.http_fake_server import FakeServer

__all__ = ["LIST_CHANGED", "TIMEOUT", "ListChanges", "connect"]

# How long a connection, with what the test does in it, may take.
TIMEOUT = 10.0
# What a fake GET stream sends for the client to hear.
LIST_CHANGED: dict[str, Any] = {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}


@asynccontextmanager
async def connect(
    fake: FakeServer, client: Client | None = None, **options: Any
) -> AsyncIterator[tuple[RemoteServer, StreamableHTTPTransport]]:
    """``client`` (a plain one by default) connected to ``fake`` through a transport opened
    with ``options``; the block, connecting included, fails after :data:`TIMEOUT`."""
    async with serve_asgi(fake) as base:
        with anyio.fail_after(TIMEOUT):
            async with (
                open_streamable_http(f"{base}/mcp", **options) as transport,
                (client or Client("tester", "1.0", versions=HANDSHAKE_VERSIONS)).connect(
                    transport
                ) as session,
            ):
                yield session, transport


class ListChanges:
    """A client (``client``) counting the ``notifications/tools/list_changed`` it hears;
    ``heard`` is set once ``times`` came."""

    def __init__(self, times: int = 1) -> None:
        self.times = times
        self.count = 0
        self.heard = anyio.Event()
        self.client = Client(
            "tester",
            "1.0",
            notification_handlers={LIST_CHANGED["method"]: self._on_changed},
            versions=HANDSHAKE_VERSIONS,
        )

    async def _on_changed(self, params: Any, ctx: Any) -> None:
        self.count += 1
        if self.count >= self.times:
            self.heard.set()
