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

import functools
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio

from mcpbind.proxy.config import ConfigError, ServerEntry, parse_config, read_config
from mcpbind.proxy.front import front_server, offered_methods
from mcpbind.proxy.gateway import gateway_server
from mcpbind.proxy.upstream import Connector, Upstream, UpstreamUnavailable
from mcpbind.server.server import Server

__all__ = [
    "ConfigError",
    "Connector",
    "ServerEntry",
    "Upstream",
    "UpstreamUnavailable",
    "front_server",
    "gateway_server",
    "offered_methods",
    "parse_config",
    "read_config",
    "serving_gateway",
    "serving_proxy",
    "upstreams_of",
]


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


def upstreams_of(entries: list[ServerEntry], **options: Any) -> list[Upstream]:
    """An :class:`Upstream` for each server of a configuration (``options``: the Upstream's,
    under each entry's own timeout and limit)."""
    return [
        Upstream(
            entry.connector(),
            name=entry.name,
            **{"request_timeout": entry.timeout, "max_in_flight": entry.max_in_flight, **options},
        )
        for entry in entries
    ]


@asynccontextmanager
async def serving_gateway(
    upstreams: list[Upstream], *, wait: float = 10.0, **options: Any
) -> AsyncIterator[Server]:
    """Connect every upstream, each on its own (one that fails is retried in the background
    without holding up the others), waiting up to ``wait`` seconds for each one's first
    connection to be made or to fail; yield the gateway's server (``options``: see
    :func:`gateway_server`)."""
    async with anyio.create_task_group() as tasks:
        for upstream in upstreams:
            tasks.start_soon(functools.partial(upstream.run, fail_fast=False))
        with anyio.move_on_after(wait):
            for upstream in upstreams:
                await upstream.tried()
        try:
            yield gateway_server(upstreams, **options)
        finally:
            tasks.cancel_scope.cancel()
