"""The routing transport of one Streamable HTTP session: what the session sends goes to the SSE
stream or the waiting POST of the request it relates to, else to a GET stream, else to a
bounded backlog that the next GET stream receives first.

Messages unrelated to a request (``list_changed`` and the like) go to one open GET stream (each
message to exactly one). With none open they wait in a bounded backlog (``backlog`` messages
and ``max_buffered_bytes`` bytes, the oldest dropped with a debug log when full). Every SSE
event gets its id from the session's event store (when there is one), so that a client can
resume a stream it lost. A GET stream takes what handlers of every session send to all, and
none of them waits for its client: a sender finding it full lets its writer run, and if the
writer is waiting for its client instead, the connection is cut off (see
:meth:`HttpSessionTransport._unrelated`).

``send`` keeps the signature of :class:`~mcpbind.transports.base.Transport`'s (``related``,
``final``): the routing is all in this module.
"""

from __future__ import annotations

import logging
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Final

import anyio
import anyio.lowlevel

from mcpbind.protocol.errors import INTERNAL_ERROR
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.wire import Codec
from mcpbind.transports.http._asgi import Headers, Send
from mcpbind.transports.http.errors import RETRY_AFTER, SESSION_NOT_FOUND
from mcpbind.transports.http.events import EventStore
from mcpbind.transports.http.sse import CLOSE, FINAL, IDLE_TURNS, MESSAGE, SseItem, SseStream
from mcpbind.transports.http.sse_encode import encode_event, encode_priming, encode_retry
from mcpbind.versions import POLLING_SINCE

__all__ = ["KEEP_COMPLETED", "POLLING_VERSION", "HttpSessionTransport", "JsonWaiter"]

log = logging.getLogger("mcpbind.http")

# From this version on, streams start with a priming event and may be closed early (polling).
POLLING_VERSION: Final = POLLING_SINCE
# How many completed POST streams of a session stay replayable (see HttpSessionTransport.finished).
KEEP_COMPLETED: Final = 4


class JsonWaiter:
    """The POST of one request in JSON-response mode. The session's task that produces the
    response writes it to the POST's connection itself, so that the POST's own task only waits
    in ``receive()``: that returns ``http.disconnect`` once the response is sent (the ASGI
    rule) or when the client goes away, and the POST needs neither a second task nor a wake-up.
    """

    __slots__ = ("answered", "headers", "on_initialize", "send")

    def __init__(
        self, send: Send, headers: Headers, on_initialize: Callable[[bytes], Awaitable[Headers | None]] | None
    ) -> None:
        self.send = send
        self.headers = headers
        self.on_initialize = on_initialize
        self.answered = False

    async def respond(self, status: int, body: bytes) -> None:
        if self.answered:
            return
        self.answered = True
        extra: Headers = []
        if self.on_initialize is not None and status == 200:
            given = await self.on_initialize(body)
            if given is not None:
                extra = given
            else:  # the session could not be kept
                status, extra = 503, list(RETRY_AFTER)
                body = Codec.encode_error(
                    None, INTERNAL_ERROR, "Service unavailable: the session store is unavailable"
                )
        headers = [*self.headers, (b"content-length", b"%d" % len(body)), *extra]
        try:
            await self.send({"type": "http.response.start", "status": status, "headers": headers})
            await self.send({"type": "http.response.body", "body": body})
        except Exception as exc:  # the ASGI server's own error for a connection that went away
            log.debug("could not write a response: %r", exc)


class HttpSessionTransport:
    """The :class:`~mcpbind.transports.base.Transport` of one Streamable HTTP session.

    Messages from the client do not come through it: the app hands each POST's message to
    the session itself (``Session.feed``, in the POST's task), so :meth:`receive` is never
    called and refuses to be. What the session sends is routed by the request it relates to:
    to that request's SSE stream or waiting POST, else to a GET stream or the backlog (see the
    module's docstring). Handlers reach it through
    :func:`~mcpbind.transports.http.server.polling.close_sse_stream` (it is a
    :class:`~mcpbind.transports.base.ClosesStreams`; without an event store it closes nothing).
    """

    __slots__ = (
        "_backlog",
        "_backlog_bytes",
        "_backlog_size",
        "_closed",
        "_completed",
        "_listeners",
        "_next_event",
        "_next_stream",
        "_routes",
        "_streams",
        "event_store",
        "max_buffered_bytes",
        "max_buffered_events",
        "protocol_version",
        "relay",
        "retry_ms",
        "session_id",
        "stream_tag",
    )

    # A message for no request never waits for a client (see _unrelated): a server telling
    # every session something sends it in line (see mcpbind.transports.base.Transport).
    unrelated_send_waits_for_peer = False

    def __init__(
        self,
        session_id: str,
        *,
        event_store: EventStore | None,
        max_buffered_events: int = 256,
        max_buffered_bytes: int = 1 << 20,
        backlog: int = 256,
        retry_ms: int | None = None,
        stream_tag: str = "",
    ) -> None:
        self.session_id = session_id
        # Put in the id of every stream of this transport (after its "p" or "g"): a worker's
        # own, where several serve one session (ids unique across them).
        self.stream_tag = stream_tag
        # With no GET stream here, where a message for a GET stream goes instead of the backlog
        # (a worker sharing the session with others: to the one holding its GET stream).
        # (it returns False for a message it leaves to the backlog).
        self.relay: Callable[[bytes], Awaitable[bool]] | None = None
        self.event_store = event_store
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self.retry_ms = retry_ms
        self.protocol_version: str | None = None
        self._routes: dict[RequestId, SseStream | JsonWaiter] = {}
        # Unfinished POST streams by id (for resumption) and the GET streams taking messages.
        self._streams: dict[str, SseStream] = {}
        self._listeners: list[SseStream] = []
        # Made when first needed: an empty deque costs more than the rest of this object.
        self._backlog: deque[bytes] | None = None
        self._completed: list[str] | None = None
        self._backlog_size = backlog
        self._backlog_bytes = 0
        self._next_stream = 0
        self._next_event = 0
        self._closed = False

    # -- Transport ----------------------------------------------------------------------

    async def receive(self) -> bytes:
        """Not used: the app feeds the session each message (``Session.feed``). A session
        that tries to read this transport (``Server.run(transport)``) fails at once."""
        raise RuntimeError(
            "an HttpSessionTransport is not read with receive(): StreamableHTTPApp feeds its "
            "session with Session.feed (make it with Server.inline_session)"
        )

    async def send_related(
        self, message: bytes, related: RequestId | None = None, final: bool = False
    ) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if related is not None:
            route = self._routes.get(related)
            if route is None:
                log.debug("dropping a message for request %r, whose client is gone", related)
                return
            if isinstance(route, SseStream):
                if final:
                    del self._routes[related]
                await self._emit(route, message, FINAL if final else MESSAGE)
                return
            if final:
                del self._routes[related]
                await route.respond(200, message)
                return
            # JSON-response mode: only the response goes on the POST; the rest as unrelated.
        await self._unrelated(message)

    send = send_related  # (a message related to no request)

    async def aclose(self) -> None:
        """End the session's traffic: every stream, every waiting POST."""
        if self._closed:
            return
        self._closed = True
        waiting = [route for route in self._routes.values() if isinstance(route, JsonWaiter)]
        self._routes.clear()
        for waiter in waiting:
            await waiter.respond(404, Codec.encode_error(None, SESSION_NOT_FOUND, "Session ended"))
        for stream in [*self._streams.values(), *self._listeners]:
            stream.detach()
        self._streams.clear()
        self._listeners.clear()
        self._backlog = None
        self._backlog_bytes = 0

    # -- from the HTTP side ---------------------------------------------------------------

    @property
    def closed(self) -> bool:
        return self._closed

    def drop_route(self, ident: RequestId) -> None:
        """The client of request ``ident`` went away: what the request sends is dropped."""
        self._routes.pop(ident, None)

    def in_flight(self, ident: RequestId) -> bool:
        return ident in self._routes

    def wait_json(
        self,
        ident: RequestId,
        send: Send,
        headers: Headers,
        on_initialize: Callable[[bytes], Awaitable[Headers | None]] | None,
    ) -> JsonWaiter:
        """Request ``ident``'s response goes straight to ``send`` as JSON, with ``headers``."""
        waiter = self._routes[ident] = JsonWaiter(send, headers, on_initialize)
        return waiter

    def open_stream(self, ident: RequestId) -> SseStream:
        """The SSE stream answering request ``ident``."""
        self._next_stream += 1
        stream_id = f"p{self.stream_tag}{self._next_stream}"
        stream = SseStream(stream_id, ident, self.max_buffered_events, self.max_buffered_bytes)
        self._routes[ident] = stream
        self._streams[stream.id] = stream
        return stream

    def open_listener(self, stream_id: str | None = None) -> SseStream:
        """A GET stream (not yet taking messages: see :meth:`listen`)."""
        if stream_id is None:
            self._next_stream += 1
            stream_id = f"g{self.stream_tag}{self._next_stream}"
        return SseStream(stream_id, None, self.max_buffered_events, self.max_buffered_bytes)

    async def listen(self, stream: SseStream) -> None:
        """Give the GET stream the backlog, then the unrelated messages from now on. (The
        backlog is written as fast as this stream's own client reads it: only its task waits.)"""
        while self._backlog and stream.attached:
            message = self._backlog.popleft()
            self._backlog_bytes -= len(message)
            await self._emit(stream, message, MESSAGE)
        if not self._backlog:
            self._backlog = None
            self._backlog_bytes = 0
        if stream.attached and not self._closed:
            self._listeners.append(stream)

    @property
    def listening(self) -> bool:
        """Whether a GET stream of this transport takes messages."""
        return bool(self._listeners)

    async def take_relayed(self, message: bytes) -> None:
        """A message for a GET stream that another worker relayed: to a GET stream here, or
        the backlog (never relayed again)."""
        if not self._closed:
            await self._unrelated(message, relay=False)

    def stop_listening(self, stream: SseStream) -> None:
        stream.detach()
        if stream in self._listeners:
            self._listeners.remove(stream)

    def stream(self, stream_id: str) -> SseStream | None:
        """An unfinished POST stream, by id."""
        return self._streams.get(stream_id)

    async def finished(self, stream: SseStream) -> None:
        """The stream's response was written to the client. Its events are kept a little longer
        (the last :data:`KEEP_COMPLETED` such streams of the session): a connection can break
        before the server notices, and the client then resumes a stream the server thought
        delivered."""
        if self._streams.pop(stream.id, None) is None or self.event_store is None:
            return
        completed = self._completed
        if completed is None:
            completed = self._completed = []
        completed.append(stream.id)
        if len(completed) > KEEP_COMPLETED:
            await self.event_store.forget_stream(self.session_id, completed.pop(0))

    def forget(self, stream: SseStream) -> None:
        """A POST stream that cannot be resumed lost its connection."""
        stream.detach()
        self._streams.pop(stream.id, None)

    async def prime(self, stream: SseStream) -> bytes:
        """The priming event of a stream (stored, so that its id is a cursor)."""
        return encode_priming(await self._event_id(stream, b""), self.retry_ms)

    async def close_stream(self, ident: RequestId, retry_ms: int | None = None) -> bool:
        """End the connection of request ``ident``'s SSE stream now; the stream goes on and the
        client resumes it with ``GET`` + ``Last-Event-ID`` (after ``retry_ms``). False when
        that is not possible: no such stream, no event store, or a session older than
        2025-11-25."""
        stream = self._routes.get(ident)
        if (
            not isinstance(stream, SseStream)
            or self.event_store is None
            or self.protocol_version is None
            or self.protocol_version < POLLING_VERSION
        ):
            return False
        retry = retry_ms if retry_ms is not None else self.retry_ms
        if stream.attached:
            item: SseItem = ("", encode_retry(retry) if retry is not None else b"", CLOSE)
            await stream.put(item)
            stream.detach()
        return True

    # -- routing ------------------------------------------------------------------------

    async def _event_id(self, stream: SseStream, data: bytes) -> str:
        if self.event_store is not None:
            return await self.event_store.append(self.session_id, stream.id, data)
        self._next_event += 1
        return f"{stream.id}_{self._next_event}"

    async def _emit(self, stream: SseStream, message: bytes, kind: int) -> None:
        event_id = await self._event_id(stream, message)
        if kind == FINAL:
            stream.finished = True
            stream.response = message
        await stream.put((event_id, encode_event(message, event_id), kind))

    def _listener_with_room(self, size: int) -> SseStream | None:
        for stream in self._listeners:
            if stream.has_room(size):
                return stream
        return None

    async def _room_soon(self, size: int) -> SseStream | None:
        """A GET stream with room for ``size`` bytes once the writers had the CPU: a handler
        sending a burst fills the streams before their writers run. It waits only while they
        make progress without waiting for their clients (each turn of the event loop, or
        every few on trio, where every write takes a few); ``None`` once they make none."""
        idle = 0
        while idle < IDLE_TURNS and self._listeners:
            taken = sum(stream.taken for stream in self._listeners)
            await anyio.lowlevel.checkpoint()
            target = self._listener_with_room(size)
            if target is not None:
                return target
            idle = 0 if sum(stream.taken for stream in self._listeners) != taken else idle + 1
        return None

    async def _unrelated(self, message: bytes, relay: bool = True) -> None:
        """A message for a GET stream. It never waits for a client: it goes to a stream with
        room, else to the first one, whose connection is cut off if it still has no room once
        its writer had a chance to run (its client reconnects, with ``Last-Event-ID`` to get
        what it missed)."""
        listeners = self._listeners
        if listeners:
            size = len(message)
            target = self._listener_with_room(size) or await self._room_soon(size)
            if not listeners:
                await self._unrelated(message, relay)  # they went meanwhile: to the backlog
                return
            if target is None:
                target = listeners[0]
            event_id = await self._event_id(target, message)
            if not target.offer((event_id, encode_event(message, event_id), MESSAGE)):
                log.debug(
                    "GET stream %s of session %s is %d bytes behind: cutting its connection off",
                    target.id,
                    self.session_id,
                    target.buffered,
                )
                target.cut()
                if target in listeners:
                    listeners.remove(target)
            return
        if relay and self.relay is not None and await self.relay(message):
            return
        if self._backlog_size <= 0:
            log.debug("no GET stream: dropping a %d-byte message", len(message))
            return
        backlog = self._backlog
        if backlog is None:
            backlog = self._backlog = deque()
        backlog.append(message)
        self._backlog_bytes += len(message)
        while len(backlog) > 1 and (
            len(backlog) > self._backlog_size or self._backlog_bytes > self.max_buffered_bytes
        ):
            self._backlog_bytes -= len(backlog.popleft())
            log.debug(
                "backlog full (%d messages, %d bytes): dropped the oldest",
                self._backlog_size,
                self.max_buffered_bytes,
            )
