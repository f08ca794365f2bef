"""Server-Sent Events framing for the HTTP server apps: events, the priming event, the
reconnection delay and the keep-alive comment (the client side reads them with
:mod:`mcpbind.transports.http.sse_parse`)."""

from __future__ import annotations

from typing import Final

__all__ = ["PING", "encode_event", "encode_priming", "encode_retry"]

# A comment line: keeps idle connections (and proxies) from timing out; clients ignore it.
PING: Final = b": ping\n\n"


def encode_event(data: bytes, event_id: str | None = None, event: bytes = b"message") -> bytes:
    """One event named ``event``, with an ``id`` line when ``event_id`` is given. JSON from the
    codec holds no line breaks; anything else is split into ``data`` lines, which the client
    joins back with ``\\n``."""
    if event_id is None:
        head = b"event: " + event + b"\n"
    elif event == b"message":
        head = b"event: message\nid: " + event_id.encode() + b"\n"
    else:
        head = b"event: " + event + b"\nid: " + event_id.encode() + b"\n"
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return head + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"".join((head, b"data: ", data, b"\n\n"))


def encode_priming(event_id: str, retry_ms: int | None) -> bytes:
    """An event with an id and empty data: the client's cursor before any message arrived."""
    retry = b"" if retry_ms is None else b"retry: %d\n" % retry_ms
    return b"id: " + event_id.encode() + b"\n" + retry + b"data: \n\n"


def encode_retry(retry_ms: int) -> bytes:
    """Only the reconnection delay (sent before the server closes a connection early)."""
    return b"retry: %d\n\n" % retry_ms
