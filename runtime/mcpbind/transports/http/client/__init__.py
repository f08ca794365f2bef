"""MCP over HTTP, client side (on httpx; needs the ``http`` extra): the Streamable HTTP
transport and the legacy HTTP+SSE transport of 2024-11-05.

Import from here::

    from mcpbind.transports.http.client import open_streamable_http, open_legacy_sse

The modules: :mod:`.streamable` (:class:`StreamableHTTPTransport`, :func:`open_streamable_http`)
built on :mod:`.core`, :mod:`.streams` (SSE streams, resumed with ``Last-Event-ID``) and
:mod:`.renewal` (a new session after 404), with :mod:`.lanes` (connection budget),
:mod:`.messages`, :mod:`.responses` and :mod:`.errors`; :mod:`.legacy` (the HTTP+SSE client);
:mod:`.sse_parse` (a bounded, sans-io SSE parser both use).
"""

from mcpbind.transports.http.client.errors import HTTPTransportError
from mcpbind.transports.http.client.lanes import (
    CONTROL_CONNECTIONS,
    DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    connection_limits,
)
from mcpbind.transports.http.client.legacy import LegacySSEError, LegacySSETransport, open_legacy_sse
from mcpbind.transports.http.client.sse_parse import SSEDecoder, SSEEvent, SSETooLarge
from mcpbind.transports.http.client.streamable import StreamableHTTPTransport, open_streamable_http

__all__ = [
    "CONTROL_CONNECTIONS",
    "DEFAULT_MAX_REQUESTS_IN_FLIGHT",
    "HTTPTransportError",
    "LegacySSEError",
    "LegacySSETransport",
    "SSEDecoder",
    "SSEEvent",
    "SSETooLarge",
    "StreamableHTTPTransport",
    "connection_limits",
    "open_legacy_sse",
    "open_streamable_http",
]
