"""``server/discover`` (MCP 2026-07-28): the versions, capabilities, identity and instructions a
server offers, asked for before (or instead of) anything else."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import msgspec
from msgspec import UNSET

from mcpbind.runtime.context import RequestContext
from mcpbind.server.caching import CacheHint
from mcpbind.versions import LATEST_VERSION, schema_for

__all__ = ["discover_handler"]


def discover_handler(
    hint: CacheHint, extensions: Mapping[str, Any] | None = None
) -> Callable[[Any, RequestContext], Awaitable[Any]]:
    """The handler answering ``server/discover`` from the connection's own description (its
    capabilities are what the transport lets it declare), with caching ``hint``; the
    capabilities declare ``extensions`` (read at each request: a server adds to it)."""
    # The last capabilities seen and their stateless versions' form (no ``tasks``, with
    # ``extensions``): servers build equal ones for each connection.
    last: list[Any] = [None, None]

    async def discover(params: Any, ctx: RequestContext) -> Any:
        modern = schema_for(LATEST_VERSION)  # (loaded by the request's decoding already)
        connection = ctx.session.connection
        capabilities = connection.capabilities
        if last[0] is None or last[0] != capabilities:
            last[1] = msgspec.json.decode(msgspec.json.encode(capabilities), type=modern.ServerCapabilities)
            last[0] = capabilities
        declared = last[1]
        if extensions:
            declared = msgspec.structs.replace(declared, extensions=dict(extensions))
        return modern.DiscoverResult(
            supported_versions=list(connection.versions),
            capabilities=declared,
            instructions=connection.instructions if connection.instructions is not None else UNSET,
            ttl_ms=hint.ttl_ms,
            cache_scope=hint.scope,
        )

    return discover
