"""Servers for the gateway tests, and connectors that run them in this process."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager

import anyio

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.proxy import Connector
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS


def in_memory(server: Server) -> Connector:
    """Connects the proxy's client to ``server``, run in this process over memory."""

    @asynccontextmanager
    async def connect(client: Client) -> AsyncIterator[RemoteServer]:
        server_end, client_end = memory_pair()
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(server.run, server_end)
            async with client.connect(client_end) as remote:
                yield remote
            tasks.cancel_scope.cancel()

    return connect


def unreachable() -> Connector:
    """A server that cannot be started."""

    def connect(client: Client) -> AbstractAsyncContextManager[RemoteServer]:
        return _Failing()

    return connect


class _Failing(AbstractAsyncContextManager[RemoteServer]):
    async def __aenter__(self) -> RemoteServer:
        raise OSError("no such server")

    async def __aexit__(self, *exc: object) -> None:
        return None


def named_server(label: str, *, handshake_only: bool = False) -> Server:
    """A server whose tool, prompt and resources say which server answered (``label``)."""
    server = Server(label, "1.0", versions=HANDSHAKE_VERSIONS) if handshake_only else Server(label, "1.0")

    @server.tool()
    async def search(query: str) -> str:
        """Search."""
        return f"{label}:{query}"

    @server.prompt()
    async def greet(who: str) -> str:
        """Greet someone."""
        return f"{label} greets {who}"

    @server.resource(f"{label}://readme")
    async def readme() -> str:
        """The readme."""
        return f"{label} readme"

    @server.resource(f"{label}://doc/{{id}}")
    async def doc(id: str) -> str:
        """One document."""
        return f"{label} doc {id}"

    return server
