"""A proxy: one MCP server (over stdio or HTTP) served to clients over another transport,
forwarding what passes through as raw JSON.

::

    upstream = Upstream(lambda client: client.connect_stdio("npx", ["some-server"]))
    async with serving_proxy(upstream) as server:     # the upstream is connected and kept up
        await server.run_http("127.0.0.1", 8000)      # or server.run_stdio(), server.http_app()

``mcpbind proxy`` is the command line of it. :mod:`.upstream` tells what is forwarded and how
the eras of the protocol are bridged; :mod:`.front` what the clients see; :mod:`.held` and
:mod:`.calls` the bookkeeping of questions a server asks mid-call.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpbind.proxy.front import front_server, offered_methods
from mcpbind.proxy.upstream import Connector, Upstream, UpstreamUnavailable
from mcpbind.server.server import Server

__all__ = ["Connector", "Upstream", "UpstreamUnavailable", "front_server", "offered_methods", "serving_proxy"]


@asynccontextmanager
async def serving_proxy(upstream: Upstream, **options: Any) -> AsyncIterator[Server]:
    """Connect ``upstream`` (kept connected while the block runs), and yield the server that
    fronts it (``options``: see :func:`front_server`). The first connection failing raises
    what it raised."""
    async with anyio.create_task_group() as tasks:
        remote = await tasks.start(upstream.run)
        try:
            yield front_server(upstream, remote, **options)
        finally:
            tasks.cancel_scope.cancel()
