"""What many tests need: a server and a client connected in memory, and the environment a
child Python process needs to import mcpbind from a source checkout."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio

import mcpbind
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS


def session_client() -> Client:
    """The default client of these helpers: one that speaks the handshake versions only, so
    that the tests of session behaviour keep a session (a default ``Client()`` negotiates the
    stateless MCP 2026-07-28 with a server that speaks it)."""
    return Client("tester", "0.1", versions=HANDSHAKE_VERSIONS)


@asynccontextmanager
async def connected(
    server: Server, client: Client | None = None, *, timeout: float = 10
) -> AsyncIterator[RemoteServer]:
    """``server`` running over an in-memory pair, and an initialized ``client`` session on it."""
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        with anyio.fail_after(timeout):
            async with (client or session_client()).connect(client_end) as session:
                yield session


@asynccontextmanager
async def connected_recording(
    server: Server, client: Client | None = None, *, timeout: float = 10
) -> AsyncIterator[tuple[RemoteServer, list[bytes]]]:
    """As :func:`connected`, and the list of every message the server sends, as it sends it."""
    server_end, client_end = memory_pair()
    sent: list[bytes] = []
    send, send_nowait = server_end.send, server_end.send_nowait

    async def record(message: bytes) -> None:
        sent.append(message)
        await send(message)

    def record_nowait(message: bytes) -> bool:
        done = send_nowait(message)
        if done:
            sent.append(message)
        return done

    server_end.send = record  # type: ignore[method-assign]
    server_end.send_nowait = record_nowait  # type: ignore[method-assign]
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        with anyio.fail_after(timeout):
            async with (client or session_client()).connect(client_end) as session:
                yield session, sent


def source_roots() -> list[str]:
    """The folders holding mcpbind in a source checkout (runtime/, generated/); none installed."""
    return [str(Path(p).parent) for p in mcpbind.__path__ if "-packages" not in p]


def child_env() -> dict[str, str]:
    """``os.environ`` plus, in a source checkout, the ``PYTHONPATH`` a child needs for mcpbind."""
    env = dict(os.environ)
    roots = source_roots()
    if roots:
        env["PYTHONPATH"] = os.pathsep.join([*roots, env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env
