"""Writing an SSE response of the Streamable HTTP app: its headers, its events as they come
from a stream's queue (with a keep-alive comment after ``keepalive`` seconds of silence), and
its end."""

from __future__ import annotations

from typing import Final

import anyio

from mcpbind.transports.http._asgi import Send
from mcpbind.transports.http.sse import MESSAGE, SseQueue
from mcpbind.transports.http.sse_encode import PING

__all__ = ["SSE_HEADERS", "end", "pump", "write"]

SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]


async def write(send: Send, chunk: bytes) -> None:
    """Write ``chunk`` (framed events) to the response, which goes on."""
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


async def end(send: Send, chunk: bytes = b"") -> None:
    """Write ``chunk`` and end the response."""
    await send({"type": "http.response.body", "body": chunk, "more_body": False})


async def pump(queue: SseQueue, send: Send, seen: set[str], keepalive: float | None) -> int | None:
    """Write a stream's events, but those whose ids are in ``seen`` (replayed already), until its
    response (``FINAL``), a polling close (``CLOSE``) or its end (``None``: the session ended,
    another connection took the stream, or this one was cut off for falling behind)."""
    while True:
        try:
            item = queue.receive_nowait()
        except anyio.WouldBlock:
            try:
                if keepalive is None:
                    item = await queue.receive()
                else:
                    with anyio.fail_after(keepalive):
                        item = await queue.receive()
            except TimeoutError:
                await write(send, PING)
                continue
            except anyio.EndOfStream:
                return None
        except anyio.EndOfStream:
            return None
        event_id, chunk, kind = item
        if seen and event_id in seen:
            continue
        if chunk:
            await write(send, chunk)
        if kind != MESSAGE:
            return kind
