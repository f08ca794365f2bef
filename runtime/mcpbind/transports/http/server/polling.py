"""SSE polling (MCP 2025-11-25): a request's handler ends the HTTP connection carrying its SSE
stream early (:func:`close_sse_stream`), and the client comes back with ``GET`` and
``Last-Event-ID`` for the rest, response included.

A handler sees its session's transport only as some
:class:`~mcpbind.transports.base.Transport`. A transport that can close a request's stream says
so explicitly: it offers itself here (:func:`offer_stream_closing`, as a :class:`ClosesSseStreams`)
when it is made, and :func:`close_sse_stream` finds the session's transport among those offered.
Nothing asks a transport what it is (no ``isinstance``, no ``getattr``); a transport that made
no offer (stdio, memory, a stateless POST's) simply is not found.
"""

from __future__ import annotations

from typing import Protocol
from weakref import WeakValueDictionary

from mcpbind.protocol.wire import RequestId
from mcpbind.runtime.session import RequestContext

__all__ = ["ClosesSseStreams", "close_sse_stream", "offer_stream_closing"]


class ClosesSseStreams(Protocol):
    """A transport that can end the connection of a request's SSE stream, keeping the stream."""

    async def close_stream(self, ident: RequestId, retry_ms: int | None = None) -> bool:
        """End the connection of request ``ident``'s stream (the client resumes it after
        ``retry_ms``); False where that is not possible."""
        ...


# The transports offered, by id(): an entry goes with its transport (weak values), before the
# id can be reused by another object.
_offered: WeakValueDictionary[int, ClosesSseStreams] = WeakValueDictionary()


def offer_stream_closing(transport: ClosesSseStreams) -> None:
    """``transport`` (alive as long as its session) can close its requests' SSE streams."""
    _offered[id(transport)] = transport


async def close_sse_stream(ctx: RequestContext, retry_ms: int | None = None) -> bool:
    """From a request handler: end the HTTP connection carrying this request's SSE stream now,
    without ending the stream. The handler goes on; what it sends next (its result included) is
    kept, and the client gets it by reconnecting with ``GET`` and ``Last-Event-ID`` after
    ``retry_ms`` milliseconds (the app's ``retry_ms`` by default). Returns False, doing nothing,
    where that is not possible (another transport, JSON-response or stateless mode, no event
    store, a session older than 2025-11-25)."""
    closer = _offered.get(id(ctx.session.transport))
    if closer is None or ctx.request_id is None:
        return False
    return await closer.close_stream(ctx.request_id, retry_ms)
