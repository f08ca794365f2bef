"""``subscriptions/listen`` (2026-07-28 clients) in front of servers: the proxy's own server
answers the stream, and the resources it asks for are subscribed to upstream for as long as it
is open (one upstream subscription however many clients hold one)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any, Final

import anyio

from mcpbind.proxy.upstream import Upstream
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server

__all__ = ["LISTEN", "subscribing_listen"]

LISTEN: Final = "subscriptions/listen"
_UNSUBSCRIBE_TIMEOUT: Final = 5.0  # seconds a closed stream's unsubscriptions may take


def subscribing_listen(
    server: Server, upstream_of: Callable[[str, RequestContext[Any], Any], Awaitable[Upstream]]
) -> None:
    """Make ``server``'s listen streams subscribe upstream (``upstream_of(uri, ctx, meta)``:
    the server a URI belongs to, ``meta`` the listen request's ``_meta``) to the resources
    they ask for, while they are open."""
    answer = server.request_handlers[LISTEN]

    async def listen(params: Any, ctx: RequestContext[Any]) -> Any:
        wanted = getattr(getattr(params, "notifications", None), "resource_subscriptions", None)
        held: list[tuple[Upstream, str]] = []
        try:
            for uri in dict.fromkeys(wanted if isinstance(wanted, list) else ()):
                if isinstance(uri, str):
                    upstream = await upstream_of(uri, ctx, getattr(params, "meta", None))
                    await upstream.subscribe(uri)
                    held.append((upstream, uri))
            return await answer(params, ctx)
        finally:
            with anyio.CancelScope(shield=True), anyio.move_on_after(_UNSUBSCRIBE_TIMEOUT):
                for upstream, uri in held:
                    await upstream.unsubscribe(uri)

    server.request_handlers[LISTEN] = listen
