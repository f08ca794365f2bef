"""A proxy in the test's own process: an upstream server reached over a memory pair (or a
spawned stdio process), fronted by the proxy's server, which clients reach over a memory pair or
over Streamable HTTP (uvicorn or hypercorn on 127.0.0.1, in this event loop)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from typing import Any, Literal

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.envelope import envelope_meta
from mcpbind.proxy import Connector, Upstream, serving_proxy
from mcpbind.server.server import Server
from tests.harness import connected, connected_recording
from tests.http_harness import serve_asgi
from tests.proxy.upstreams import version_of

__all__ = [
    "FRONTS",
    "Answers",
    "Front",
    "Proxy",
    "front_client",
    "in_memory",
    "running_proxy",
    "stateless_params",
]

Front = Literal["memory", "http"]
FRONTS: tuple[Front, ...] = ("memory", "http")

# The most a whole connection (the upstream's, a front client's) may last in a test.
LIFETIME = 60.0


def in_memory(server: Server, sent: list[bytes] | None = None) -> Connector:
    """Connects the proxy's client to ``server`` over a memory pair; ``sent``, if given, gets
    every message the server sends, as it sends it."""

    @asynccontextmanager
    async def connect(client: Client) -> AsyncIterator[RemoteServer]:
        if sent is None:
            async with connected(server, client, timeout=LIFETIME) as remote:
                yield remote
            return
        async with connected_recording(server, client, timeout=LIFETIME) as (remote, messages):
            try:
                yield remote
            finally:
                sent.extend(messages)

    return connect


class Proxy:
    """A running proxy: its front ``server``, its ``upstream``, and the ``url`` of its
    Streamable HTTP endpoint when it is served over HTTP."""

    def __init__(self, server: Server, upstream: Upstream, url: str | None) -> None:
        self.server = server
        self.upstream = upstream
        self.url = url

    def connect(self, client: Client) -> AbstractAsyncContextManager[RemoteServer]:
        """``client`` connected to the proxy, over its front's transport."""
        if self.url is not None:
            return client.connect_url(self.url, transport="streamable-http")
        return connected(self.server, client, timeout=LIFETIME)


@asynccontextmanager
async def running_proxy(upstream: Upstream, front: Front = "memory", **options: Any) -> AsyncIterator[Proxy]:
    """``upstream`` behind a proxy (``options``: the front server's) until the block ends."""
    async with serving_proxy(upstream, **options) as server:
        if front == "http":
            async with serve_asgi(server.http_app()) as base:
                yield Proxy(server, upstream, base + "/mcp")
        else:
            yield Proxy(server, upstream, None)


def front_client(era: str, **options: Any) -> Client:
    """A client of the proxy pinned to the newest version of ``era`` (a 2026 one learns the
    server's capabilities with ``server/discover``); ``options``: its handlers and the like."""
    if era == "2026":
        options.setdefault("discover", True)
    return Client("front", "0.1", protocol_version=version_of(era), **options)


def stateless_params(client: Client, params: dict[str, Any]) -> dict[str, Any]:
    """``params`` of a request of ``client`` (pinned to a stateless version) as it sends them:
    with its envelope in ``_meta`` (to send a request by hand, a retry with a request state of
    one's own, say)."""
    assert client.protocol_version is not None
    meta = envelope_meta(client.protocol_version, client.capabilities, client.info)
    return {**params, "_meta": meta}


class Answers:
    """A front client's answers to the server's questions (``elicit``: the name Ada; ``sample``:
    the text Hello), and the questions asked (``asked``: the elicitation messages and
    ``"sampling"``)."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    async def elicit(self, params: Any, ctx: Any) -> types.ElicitResult:
        self.asked.append(params.message)
        return types.ElicitResult(action="accept", content={"name": "Ada"})

    async def sample(self, params: types.CreateMessageRequestParams, ctx: Any) -> types.CreateMessageResult:
        self.asked.append("sampling")
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="Hello"), model="m")

    def client(self, era: str, **options: Any) -> Client:
        """A :func:`front_client` of ``era`` answering with these."""
        return front_client(era, elicitation=self.elicit, sampling=self.sample, **options)
