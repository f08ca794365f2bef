"""Server-Sent Events for the Streamable HTTP server: the framing, and one stream's queue.

An :class:`SseStream` is one logical SSE stream of a session: the answer to one POST (it ends
with that request's response) or a GET listener. Its events are framed once, when they are
sent, and wait in a bounded queue for the HTTP connection currently writing the stream, if any
(``attach``). A stream outlives its connection: when the client goes away the stream is
detached and its events are only kept in the event store, until a ``GET`` with
``Last-Event-ID`` attaches a new connection.

A POST's own connection first collects its events in a plain list (``collect``), since most
handlers answer before they wait for anything and the whole answer is then written at once;
only if the handler waits (or the list fills up) do they move to a queue (``to_queue``).
"""

from __future__ import annotations

from typing import Final

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.wire import RequestId

__all__ = ["PING", "SseItem", "SseStream", "encode_event", "encode_priming", "encode_retry"]

# A comment line: keeps idle connections (and proxies) from timing out; clients ignore it.
PING: Final = b": ping\n\n"

# Queue items: (event id, framed bytes, kind).
MESSAGE: Final = 0
FINAL: Final = 1  # the request's response: the stream is complete after it
CLOSE: Final = 2  # the server closes the connection, the stream goes on (polling)
SseItem = tuple[str, bytes, int]


def encode_event(event_id: str, data: bytes) -> bytes:
    """One ``message`` event. JSON from the codec holds no line breaks; anything else is split
    into ``data`` lines, which the client joins back with ``\\n``."""
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        body = b"".join(b"data: " + line + b"\n" for line in lines)
        return b"event: message\nid: " + event_id.encode() + b"\n" + body + b"\n"
    return b"event: message\nid: " + event_id.encode() + b"\ndata: " + data + b"\n\n"


def encode_priming(event_id: str, retry_ms: int | None) -> bytes:
    """An event with an id and empty data: the client's cursor before any message arrived."""
    retry = b"" if retry_ms is None else b"retry: %d\n" % retry_ms
    return b"id: " + event_id.encode() + b"\n" + retry + b"data: \n\n"


def encode_retry(retry_ms: int) -> bytes:
    """Only the reconnection delay (sent before the server closes a connection early)."""
    return b"retry: %d\n\n" % retry_ms


class SseStream:
    """One SSE stream of a session; see the module's docstring.

    ``request_id`` is the request whose answer it carries (``None`` for a GET listener).
    ``max_buffered`` events wait for a slow reader; past that, senders wait (backpressure on
    the handler, never unbounded memory).
    """

    __slots__ = (
        "_collected",
        "_moved",
        "_receiver",
        "_sender",
        "finished",
        "id",
        "max_buffered",
        "request_id",
        "response",
    )

    def __init__(self, stream_id: str, request_id: RequestId | None, max_buffered: int) -> None:
        self.id = stream_id
        self.request_id = request_id
        self.max_buffered = max_buffered
        self.finished = False
        # The response itself once sent (the one message an initialize answer is read from).
        self.response: bytes | None = None
        self._sender: MemoryObjectSendStream[SseItem] | None = None
        self._receiver: MemoryObjectReceiveStream[SseItem] | None = None
        self._collected: list[SseItem] | None = None
        # The list whose events moved to the current queue (the same connection goes on).
        self._moved: list[SseItem] | None = None

    @property
    def attached(self) -> bool:
        return self._sender is not None or self._collected is not None

    def collect(self) -> list[SseItem]:
        """Like :meth:`attach`, for a connection that writes the stream only once its handler
        has returned: events gather in the list returned (up to ``max_buffered``; past that they
        move to a queue and the sender waits). What was collected stays in the list when the
        stream is detached, as it stays in a queue."""
        self.detach()
        items: list[SseItem] = []
        self._collected = items
        return items

    def to_queue(self, items: list[SseItem]) -> MemoryObjectReceiveStream[SseItem] | None:
        """Events collected in ``items`` move to a new queue, for a connection that writes them as
        they come from now on; ``None`` (and ``items`` left as they are) if ``items`` no longer
        collect this stream's events (it was detached, or another connection took it over)."""
        if self._collected is not items:
            return self._receiver if self._moved is items else None
        sender, receiver = anyio.create_memory_object_stream[SseItem](self.max_buffered)
        for item in items:
            sender.send_nowait(item)
        items.clear()
        self._collected = None
        self._moved = items
        self._sender, self._receiver = sender, receiver
        return receiver

    def attach(self) -> MemoryObjectReceiveStream[SseItem]:
        """A new queue for the connection that writes this stream from now on (a connection
        still attached is cut off: its writer sees the end of its queue)."""
        self.detach()
        sender, receiver = anyio.create_memory_object_stream[SseItem](self.max_buffered)
        self._sender, self._receiver = sender, receiver
        return receiver

    def detach(self) -> None:
        """No connection writes this stream any more; its events are only stored."""
        sender, self._sender, self._receiver = self._sender, None, None
        self._collected = self._moved = None
        if sender is not None:
            sender.close()

    def stop_collecting(self, items: list[SseItem]) -> None:
        """The connection collecting into ``items`` is done: detach, unless another took over."""
        if self._collected is items:
            self._collected = None

    def release(self, queue: MemoryObjectReceiveStream[SseItem]) -> None:
        """The connection that got ``queue`` went away: detach, unless another took over."""
        if self._receiver is queue:
            self.detach()
        queue.close()

    def has_room(self) -> bool:
        collected = self._collected
        if collected is not None:
            return len(collected) < self.max_buffered
        sender = self._sender
        return sender is not None and sender.statistics().current_buffer_used < self.max_buffered

    async def put(self, item: SseItem) -> None:
        """Queue an event for the attached connection; nothing when there is none (or it went
        away meanwhile: the event store has it)."""
        collected = self._collected
        if collected is not None:
            if len(collected) < self.max_buffered:
                collected.append(item)
                return
            self.to_queue(collected)  # full: the queue is full too, and the sender waits below
        sender = self._sender
        if sender is None:
            return
        try:
            try:
                sender.send_nowait(item)
            except anyio.WouldBlock:
                await sender.send(item)
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            pass
