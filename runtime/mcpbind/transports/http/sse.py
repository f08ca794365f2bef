"""The SSE streams of the Streamable HTTP server, and the queue each one's events wait in.

An :class:`SseStream` is one logical SSE stream of a session: the answer to one POST (it ends
with that request's response) or a GET listener. Its events are framed once, when they are
sent (:mod:`~mcpbind.transports.http.sse_encode`), and wait in an :class:`SseQueue`, bounded in
events and in bytes, for the HTTP connection currently writing the stream, if any (``attach``).
A stream outlives its connection: when the client goes away the stream is detached and its
events are only kept in the event store, until a ``GET`` with ``Last-Event-ID`` attaches a new
connection.

When the queue is full, a sender either waits for room (:meth:`SseStream.put`: the handler of
a POST's own request, held back by its own client) or gives up on the connection
(:meth:`SseStream.offer` then :meth:`SseStream.cut`: what a GET stream gets, since any
session's handler may be sending to it, and none may wait for one client). The legacy
HTTP+SSE transport (:mod:`mcpbind.transports.http.legacy`) writes each session's one stream from an
:class:`SseQueue` too, and gives up on its client the same way.

A POST's own connection first collects its events in a plain list (``collect``), since most
handlers answer before they wait for anything and the whole answer is then written at once;
only if the handler waits (or the list fills up) do they move to a queue (``to_queue``).
"""

from __future__ import annotations

from collections import deque
from typing import Final

import anyio
import anyio.lowlevel

from mcpbind.protocol.jsonrpc import RequestId

__all__ = [
    "CLOSE",
    "FINAL",
    "IDLE_TURNS",
    "MESSAGE",
    "SseItem",
    "SseQueue",
    "SseStream",
]

# Queue items: (event id, framed bytes, kind).
MESSAGE: Final = 0
FINAL: Final = 1  # the request's response: the stream is complete after it
CLOSE: Final = 2  # the server closes the connection, the stream goes on (polling)
SseItem = tuple[str, bytes, int]

# Turns of the event loop a stream's writer may take without taking anything from its full
# queue before its connection is deemed stalled (see SseQueue.room_soon): a writer that waits
# for its client takes nothing, one that makes progress takes something every turn on asyncio,
# every few on trio (where one write takes a few).
IDLE_TURNS: Final = 16


class SseQueue:
    """The events of one stream waiting for the connection that writes them, oldest first.

    It holds at most ``max_events`` events and ``max_bytes`` bytes of framed events, except
    that an event larger than ``max_bytes`` is taken when the queue is empty. One reader
    (the connection), any number of senders. Closed, it gives what it holds, then
    ``anyio.EndOfStream``; closed with ``drop``, it gives nothing more.
    """

    __slots__ = ("_items", "_readable", "_writable", "closed", "max_bytes", "max_events", "size", "taken")

    def __init__(self, max_events: int, max_bytes: int) -> None:
        self.max_events = max_events
        self.max_bytes = max_bytes
        self.size = 0  # bytes held
        self.taken = 0  # events the reader took so far
        self.closed = False
        self._items: deque[SseItem] = deque()
        self._readable: anyio.Event | None = None  # the reader waits on it
        self._writable: anyio.Event | None = None  # senders wait on it

    def __len__(self) -> int:
        return len(self._items)

    def has_room(self, size: int) -> bool:
        items = self._items
        return not items or (len(items) < self.max_events and self.size + size <= self.max_bytes)

    def put_nowait(self, item: SseItem) -> None:
        """Queue ``item`` whether or not there is room (nothing once closed)."""
        if self.closed:
            return
        self._items.append(item)
        self.size += len(item[1])
        readable = self._readable
        if readable is not None:
            self._readable = None
            readable.set()

    async def put(self, item: SseItem) -> None:
        """Queue ``item`` once there is room (nothing if the queue is closed meanwhile)."""
        size = len(item[1])
        while not self.closed and not self.has_room(size):
            writable = self._writable
            if writable is None:
                writable = self._writable = anyio.Event()
            await writable.wait()
        self.put_nowait(item)

    async def room_soon(self, size: int) -> bool:
        """Whether an event of ``size`` bytes fits once the reader had the CPU (a sender of a
        burst fills the queue before its reader runs). Waits only while the reader takes
        events without waiting for its client; False once it takes none for ``IDLE_TURNS``
        turns of the event loop (its client does not read), or the queue is closed."""
        idle = 0
        while idle < IDLE_TURNS:
            taken = self.taken
            await anyio.lowlevel.checkpoint()
            if self.closed:
                return False
            if self.has_room(size):
                return True
            idle = 0 if self.taken != taken else idle + 1
        return False

    def receive_nowait(self) -> SseItem:
        items = self._items
        if items:
            item = items.popleft()
            self.size -= len(item[1])
            self.taken += 1
            writable = self._writable
            if writable is not None:
                self._writable = None
                writable.set()
            return item
        if self.closed:
            raise anyio.EndOfStream
        raise anyio.WouldBlock

    async def receive(self) -> SseItem:
        while True:
            try:
                return self.receive_nowait()
            except anyio.WouldBlock:
                pass
            readable = self._readable
            if readable is None:
                readable = self._readable = anyio.Event()
            await readable.wait()

    def close(self, drop: bool = False) -> None:
        """No more events come (senders waiting for room give up); with ``drop``, the ones
        held go now."""
        self.closed = True
        if drop:
            self._items.clear()
            self.size = 0
        for event in (self._readable, self._writable):
            if event is not None:
                event.set()
        self._readable = self._writable = None


class SseStream:
    """One SSE stream of a session; see the module's docstring.

    ``request_id`` is the request whose answer it carries (``None`` for a GET listener).
    ``max_buffered`` events and ``max_bytes`` bytes of them wait for a slow reader; past that,
    :meth:`put` waits and :meth:`offer` refuses (never unbounded memory).
    """

    __slots__ = (
        "_collected",
        "_collected_size",
        "_moved",
        "_queue",
        "finished",
        "id",
        "max_buffered",
        "max_bytes",
        "request_id",
        "response",
    )

    def __init__(
        self, stream_id: str, request_id: RequestId | None, max_buffered: int, max_bytes: int = 1 << 20
    ) -> None:
        self.id = stream_id
        self.request_id = request_id
        self.max_buffered = max_buffered
        self.max_bytes = max_bytes
        self.finished = False
        # The response itself once sent (the one message an initialize answer is read from).
        self.response: bytes | None = None
        self._queue: SseQueue | None = None
        self._collected: list[SseItem] | None = None
        self._collected_size = 0
        # The list whose events moved to the current queue (the same connection goes on).
        self._moved: list[SseItem] | None = None

    @property
    def attached(self) -> bool:
        return self._queue is not None or self._collected is not None

    @property
    def taken(self) -> int:
        """How many events the connection's writer took from its queue so far (its progress)."""
        queue = self._queue
        return queue.taken if queue is not None else 0

    @property
    def buffered(self) -> int:
        """How many bytes of events wait for the connection (none when detached)."""
        if self._collected is not None:
            return self._collected_size
        queue = self._queue
        return queue.size if queue is not None else 0

    def collect(self) -> list[SseItem]:
        """Like :meth:`attach`, for a connection that writes the stream only once its handler
        has returned: events gather in the list returned (within the stream's bounds; past them
        they move to a queue and the sender waits). What was collected stays in the list when
        the stream is detached, as it stays in a queue."""
        self.detach()
        items: list[SseItem] = []
        self._collected = items
        self._collected_size = 0
        return items

    def to_queue(self, items: list[SseItem]) -> SseQueue | None:
        """Events collected in ``items`` move to a new queue, for a connection that writes them as
        they come from now on; ``None`` (and ``items`` left as they are) if ``items`` no longer
        collect this stream's events (it was detached, or another connection took it over)."""
        if self._collected is not items:
            return self._queue if self._moved is items else None
        queue = SseQueue(self.max_buffered, self.max_bytes)
        for item in items:
            queue.put_nowait(item)
        items.clear()
        self._collected = None
        self._moved = items
        self._queue = queue
        return queue

    def attach(self) -> SseQueue:
        """A new queue for the connection that writes this stream from now on (a connection
        still attached is cut off: its writer sees the end of its queue)."""
        self.detach()
        queue = self._queue = SseQueue(self.max_buffered, self.max_bytes)
        return queue

    def detach(self) -> None:
        """No connection writes this stream any more; its events are only stored (what its
        queue holds is still written)."""
        queue, self._queue = self._queue, None
        self._collected = self._moved = None
        if queue is not None:
            queue.close()

    def cut(self) -> None:
        """The connection writing this stream is too slow: detach it, dropping what it has not
        written yet (the event store has it). Its writer finishes the write in progress and
        then sees the end of its queue."""
        queue = self._queue
        self.detach()
        if queue is not None:
            queue.close(drop=True)

    def stop_collecting(self, items: list[SseItem]) -> None:
        """The connection collecting into ``items`` is done: detach, unless another took over."""
        if self._collected is items:
            self._collected = None

    def release(self, queue: SseQueue) -> None:
        """The connection that got ``queue`` went away: detach, unless another took over."""
        if self._queue is queue:
            self.detach()
        queue.close(drop=True)

    def has_room(self, size: int = 0) -> bool:
        """Whether an event of ``size`` bytes fits now (False when detached)."""
        collected = self._collected
        if collected is not None:
            return not collected or (
                len(collected) < self.max_buffered and self._collected_size + size <= self.max_bytes
            )
        queue = self._queue
        return queue is not None and queue.has_room(size)

    async def put(self, item: SseItem) -> None:
        """Queue an event for the attached connection, waiting for room; nothing when there
        is none (or it went away meanwhile: the event store has it)."""
        collected = self._collected
        if collected is not None:
            size = len(item[1])
            if not collected or (
                len(collected) < self.max_buffered and self._collected_size + size <= self.max_bytes
            ):
                collected.append(item)
                self._collected_size += size
                return
            self.to_queue(collected)  # full: the queue is full too, and the sender waits below
        queue = self._queue
        if queue is not None:
            await queue.put(item)

    def offer(self, item: SseItem) -> bool:
        """Queue an event for the attached connection if there is room, without waiting; False
        when it is full (the caller cuts the connection off). True when detached: nothing to
        do, the event store has it."""
        if self._collected is not None:
            if not self.has_room(len(item[1])):
                return False
            self._collected.append(item)
            self._collected_size += len(item[1])
            return True
        queue = self._queue
        if queue is None:
            return True
        if not queue.has_room(len(item[1])):
            return False
        queue.put_nowait(item)
        return True
