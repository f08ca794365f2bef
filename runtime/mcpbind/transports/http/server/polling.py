"""SSE polling (MCP 2025-11-25): a request's handler ends the HTTP connection carrying its SSE
stream early (:func:`close_sse_stream`), and the client comes back with ``GET`` and
``Last-Event-ID`` for the rest, response included.

The session's transport says whether it can, by its class
(:class:`~mcpbind.transports.base.ClosesStreams`, one of a transport's optional features);
stdio, memory and a stateless POST's transport cannot.
"""

from __future__ import annotations

from mcpbind.runtime.context import RequestContext
from mcpbind.transports.base import stream_closer

__all__ = ["close_sse_stream"]


async def close_sse_stream(ctx: RequestContext, retry_ms: int | None = None) -> bool:
    """From a request handler: end the HTTP connection carrying this request's SSE stream now,
    without ending the stream. The handler goes on; what it sends next (its result included) is
    kept, and the client gets it by reconnecting with ``GET`` and ``Last-Event-ID`` after
    ``retry_ms`` milliseconds (the app's ``retry_ms`` by default). Returns False, doing nothing,
    where that is not possible (another transport, JSON-response or stateless mode, no event
    store, a session older than 2025-11-25)."""
    closer = stream_closer(ctx.session.transport)
    if closer is None or ctx.request_id is None:
        return False
    return await closer.close_stream(ctx.request_id, retry_ms)
