"""The client side of the scale-out tests: mcpbind's Client speaking MCP 2026-07-28 (no
session: any worker answers any request), one new connection per request so that each may
reach another worker, and at most one retry per call (a worker killed mid-request)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpbind import types
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.runtime.context import RequestContext

__all__ = ["MODERN", "NAME", "call_pid", "call_pids", "connected", "retrying"]

MODERN = "2026-07-28"
NAME = "Ada"  # what the client answers the server's ``ask``


async def _elicit(params: Any, ctx: RequestContext[Any]) -> types.ElicitResult:
    return types.ElicitResult(action="accept", content={"name": NAME})


@asynccontextmanager
async def connected(url: str) -> AsyncIterator[RemoteServer]:
    """A 2026-07-28 client of ``url`` opening a connection for each request (``Connection:
    close``: nothing keeps a request on the worker that answered the one before)."""
    client = Client("scale-test", "1.0", protocol_version=MODERN, elicitation=_elicit)
    async with client.connect_url(
        url, transport="streamable-http", headers={"Connection": "close"}, http_timeout=20
    ) as server:
        yield server


async def retrying(server: RemoteServer, tool: str, arguments: dict[str, Any] | None = None) -> Any:
    """The structured result of ``tool``, calling it again once if the first call fails."""
    try:
        result = await server.call_tool(tool, arguments or {})
    except Exception:
        result = await server.call_tool(tool, arguments or {})
    assert result.is_error is not True, result
    if isinstance(result.structured_content, dict):
        return result.structured_content["result"]
    text: str = getattr(result.content[0], "text", "")  # (a str result: text content alone)
    return text


async def call_pid(server: RemoteServer) -> int:
    pid: int = await retrying(server, "pid")
    return pid


async def call_pids(server: RemoteServer, count: int) -> list[int]:
    """The pids ``count`` concurrent ``pid`` calls got."""
    pids: list[int] = []

    async def one() -> None:
        pids.append(await call_pid(server))

    async with anyio.create_task_group() as tg:
        for _ in range(count):
            tg.start_soon(one)
    return pids
