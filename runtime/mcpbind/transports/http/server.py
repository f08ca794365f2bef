"""The Streamable HTTP server (MCP 2025-03-26 and later) as a raw ASGI 3 application.

::

    app = StreamableHTTPApp(server)          # mount it in any ASGI server, at /mcp
    await serve_http(server, port=8000)      # or run it on uvicorn (asyncio) / hypercorn (trio)

Each MCP session is an inline :class:`~mcpbind.runtime.session.Session` (``Server.inline_session``)
over a transport of this module: it has no task of its own. The task the ASGI server runs for
each POST hands its message to the session (``Session.feed``), which acts on it right there: a
request's handler runs in that task and writes its answer from it. A session between requests
is a few objects (about 3 KB) and no task. The app's task group, opened at ASGI ``lifespan``
startup (or in ``async with app.run():`` for hosts without lifespan), holds what outlives a
request: the idle-session expiry, and a helper task for each request whose handler waits for
something (it watches for the client going away and writes the SSE stream as it comes; a
handler that answers at once, as most do, needs none).

How messages travel, and the choices made where the specification leaves them open:

* ``POST``: one JSON-RPC message per body; batches (JSON arrays) are refused with 400 and
  -32600. A request is answered by an SSE stream carrying the messages its handler sends
  (progress, logs, sampling...) then the response, or with ``json_response=True`` by the
  response alone as ``application/json``; in that mode the other messages tied to a request go
  where unrelated messages go. A notification or response gets 202.
* ``Content-Type`` must be ``application/json`` (415); a body over ``max_body_size`` gets 413,
  whether ``Content-Length`` says so or the body turns out longer; bad JSON gets 400 and -32700.
  All bodies being read or answered together hold at most ``max_body_bytes_in_flight`` bytes
  (counted from ``Content-Length`` before reading, else as they arrive): past it, 503 with
  ``Retry-After: 1``. A body must arrive within ``body_timeout`` seconds: past it, 408 and the
  connection is closed.
  ``MCP-Protocol-Version`` must name a version the server supports (400); when absent,
  2025-03-26 is assumed (which matters only in stateless mode).
* ``Accept`` must list both ``application/json`` and ``text/event-stream`` (only the first in
  JSON-response mode; only the second for GET); wildcards (``*/*``, ``application/*``,
  ``text/*``) count, a missing header does not (406).
* Messages unrelated to a request (``list_changed`` and the like) go to one open GET stream
  (each message to exactly one). With none open they wait in a bounded backlog (``backlog``
  messages and ``max_buffered_bytes`` bytes, the oldest dropped with a debug log when full)
  that the next GET receives first.
* Every SSE event has an id, given by the :class:`~mcpbind.transports.http.events.EventStore` (a bounded
  :class:`~mcpbind.transports.http.events.MemoryEventStore` by default). A ``GET`` with ``Last-Event-ID``
  replays what followed on that stream and then goes on with it: a POST stream up to its
  response, a GET stream as a GET stream.
* Sessions that negotiated 2025-11-25 or later (whatever their ``MCP-Protocol-Version`` header
  says) get a priming event (an id and empty data, with ``retry:``) first on each stream, and a
  handler may end its POST's connection early with :func:`close_sse_stream`: the client comes
  back with ``GET`` + ``Last-Event-ID`` and gets the rest, response included.
* A client that disconnects from a POST stream does not cancel its request when the stream can
  be resumed (an event store is configured): the handler goes on and its events are kept.
  Otherwise (JSON-response mode, stateless mode, no event store) the handler is cancelled.
  The events of the last few completed POST streams of a session stay in the store too, for a
  client whose connection broke before the server noticed.
* A notification is answered 202 before its handler runs (in the POST's task, after the
  answer); a response from the client wakes the request that waits for it, then gets 202.
* Sessions: ids from :func:`secrets.token_urlsafe`. Past ``max_sessions`` an ``initialize``
  gets 503 with ``Retry-After`` (existing sessions are never evicted to make room). A session
  with no HTTP request in progress for ``session_idle_timeout`` seconds ends; so does one whose
  client has not sent ``notifications/initialized`` ``initialization_timeout`` seconds after
  its ``initialize``, and one whose client sends DELETE (204). Ended sessions answer 404.
* ``stateless=True``: no sessions; each POST runs on a fresh connection, initialized at the
  version of its ``MCP-Protocol-Version`` header (2025-03-26 when absent), and ends with it.
  GET and DELETE get 405. No lifespan is needed in this mode.
* What reaches the client depends on the mode (:func:`delivery_for` decides it, and the
  server's capabilities and refusals follow): messages unrelated to a request only on a GET
  stream, so without one (``stateless=True`` or ``get_stream=False``) the server declares no
  ``listChanged`` and no ``resources.subscribe`` (``resources/subscribe`` gets -32601), keeps
  no backlog, and refuses requests to the client from outside a request's handler. With
  ``json_response=True`` and no GET stream nothing but the response reaches the client: no
  ``logging`` is declared, log messages and progress are dropped, and every request to the
  client (sampling, elicitation, roots, ping) fails at once with an ``McpError`` naming the
  mode and the option to change; so does every request in stateless mode, where no answer
  from the client could reach the server. With ``json_response=True`` and a GET stream, a
  handler's requests to the client, progress and log messages go on the GET stream (the
  backlog keeps them, within its bounds, until the client opens one; a request waits for its
  answer up to its timeout); progress sent just before the response may reach the client
  after it (and be ignored): use SSE answers where that matters.
* DNS-rebinding protection: ``Host`` must match ``allowed_hosts`` and, when present,
  ``Origin`` must match ``allowed_origins`` (both default to localhost, any port); 403
  otherwise. Pass ``None`` to turn a check off (e.g. behind a reverse proxy that checks).
* A slow reader: at most ``max_buffered_events`` events and ``max_buffered_bytes`` bytes (or a
  single larger event) wait per stream. Past that, the handler answering a POST waits for its
  own client to read (only that request is held back). A GET stream takes what handlers of
  every session send to all (list changes, resource updates), and none of them waits for its
  client: a sender finding it full lets its writer run (a burst fills a stream before its
  writer gets the CPU), and if the writer is waiting for its client instead, the connection is
  ended once the write in progress completes. The client reconnects; with ``Last-Event-ID`` it
  gets what it missed from the event store, as far as the store still holds it.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from types import CoroutineType
from typing import Any, Final, Literal, NamedTuple

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
from msgspec import UNSET, UnsetType

from mcpbind.fastpath import finish, first_step
from mcpbind.protocol.connection import FULL_DELIVERY, Connection, Delivery
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from mcpbind.protocol.wire import Codec, RequestId, salvage_id
from mcpbind.runtime.session import RequestContext, Session, Spawn
from mcpbind.server.server import Server
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.http._asgi import Headers, Receive, Scope, Send, lifespan, matches
from mcpbind.transports.http._asgi import (
    Message as Message,  # the ASGI event type, importable from here as before
)
from mcpbind.transports.http.events import EventStore, MemoryEventStore
from mcpbind.transports.http.sse import (
    CLOSE,
    FINAL,
    IDLE_TURNS,
    MESSAGE,
    PING,
    SseItem,
    SseQueue,
    SseStream,
    encode_event,
    encode_priming,
    encode_retry,
)
from mcpbind.versions import POLLING_SINCE, STREAMABLE_HTTP_ASSUMED_VERSION

__all__ = [
    "DEFAULT_ALLOWED_HOSTS",
    "DEFAULT_ALLOWED_ORIGINS",
    "HttpSessionTransport",
    "Receive",
    "Scope",
    "Send",
    "StreamableHTTPApp",
    "close_sse_stream",
    "delivery_for",
    "serve_http",
]

log = logging.getLogger("mcpbind.http")

DEFAULT_ALLOWED_HOSTS: Final = ("127.0.0.1:*", "localhost:*", "[::1]:*")
DEFAULT_ALLOWED_ORIGINS: Final = tuple(
    f"{scheme}://{host}:*" for scheme in ("http", "https") for host in ("127.0.0.1", "localhost", "[::1]")
)
# What a request without MCP-Protocol-Version is taken to speak (the specification's rule).
ASSUMED_VERSION: Final = STREAMABLE_HTTP_ASSUMED_VERSION
# From this version on, streams start with a priming event and may be closed early (polling).
POLLING_VERSION: Final = POLLING_SINCE
# A JSON-RPC code of the implementation-defined range, as other SDKs answer an unknown session.
SESSION_NOT_FOUND: Final = -32001
# How many completed POST streams of a session stay replayable (see HttpSessionTransport.finished).
KEEP_COMPLETED: Final = 4
SERVER_BUSY: Final = -32000


class _Envelope(msgspec.Struct):
    """What routing needs from a message; the session decodes it fully."""

    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET


class _InitializeAnswer(msgspec.Struct):
    result: _NegotiatedResult | UnsetType = UNSET


class _NegotiatedResult(msgspec.Struct, rename="camel"):
    protocol_version: str


_ENVELOPE = msgspec.json.Decoder(_Envelope)
_INITIALIZE_ANSWER = msgspec.json.Decoder(_InitializeAnswer)

_JSON: Final = (b"content-type", b"application/json")
_SSE_HEADERS: Final = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-cache"),
    (b"x-accel-buffering", b"no"),
]
_EMPTY: Final[Headers] = []


class _Problem(Exception):
    """An HTTP error answer: status, JSON-RPC code and message, the request id if known, and
    headers of its own (``Retry-After``, ``Connection: close``)."""

    def __init__(
        self,
        status: int,
        code: int,
        message: str,
        ident: RequestId | None = None,
        headers: Headers = _EMPTY,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.ident = ident
        self.headers = headers


_RETRY_AFTER: Final[Headers] = [(b"retry-after", b"1")]
_CLOSE: Final[Headers] = [(b"connection", b"close")]


# -- the per-session transport ------------------------------------------------------------


class _JsonWaiter:
    """The POST of one request in JSON-response mode. The session's task that produces the
    response writes it to the POST's connection itself, so that the POST's own task only waits
    in ``receive()``: that returns ``http.disconnect`` once the response is sent (the ASGI
    rule) or when the client goes away, and the POST needs neither a second task nor a wake-up.
    """

    __slots__ = ("answered", "headers", "on_initialize", "send")

    def __init__(
        self, send: Send, headers: Headers, on_initialize: Callable[[bytes], Headers] | None
    ) -> None:
        self.send = send
        self.headers = headers
        self.on_initialize = on_initialize
        self.answered = False

    async def respond(self, status: int, body: bytes) -> None:
        if self.answered:
            return
        self.answered = True
        headers = [*self.headers, (b"content-length", b"%d" % len(body))]
        if self.on_initialize is not None and status == 200:
            headers += self.on_initialize(body)
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
    module's docstring). Handlers reach it as ``ctx.session.transport``;
    :func:`close_sse_stream` is the public way to use it from there.
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
        "retry_ms",
        "session_id",
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
    ) -> None:
        self.session_id = session_id
        self.event_store = event_store
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self.retry_ms = retry_ms
        self.protocol_version: str | None = None
        self._routes: dict[RequestId, SseStream | _JsonWaiter] = {}
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
        waiting = [route for route in self._routes.values() if isinstance(route, _JsonWaiter)]
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
        self, ident: RequestId, send: Send, headers: Headers, on_initialize: Callable[[bytes], Headers] | None
    ) -> _JsonWaiter:
        """Request ``ident``'s response goes straight to ``send`` as JSON, with ``headers``."""
        waiter = self._routes[ident] = _JsonWaiter(send, headers, on_initialize)
        return waiter

    def open_stream(self, ident: RequestId) -> SseStream:
        """The SSE stream answering request ``ident``."""
        self._next_stream += 1
        stream = SseStream(f"p{self._next_stream}", ident, self.max_buffered_events, self.max_buffered_bytes)
        self._routes[ident] = stream
        self._streams[stream.id] = stream
        return stream

    def open_listener(self, stream_id: str | None = None) -> SseStream:
        """A GET stream (not yet taking messages: see :meth:`listen`)."""
        if stream_id is None:
            self._next_stream += 1
            stream_id = f"g{self._next_stream}"
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
        await stream.put((event_id, encode_event(event_id, message), kind))

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

    async def _unrelated(self, message: bytes) -> None:
        """A message for a GET stream. It never waits for a client: it goes to a stream with
        room, else to the first one, whose connection is cut off if it still has no room once
        its writer had a chance to run (its client reconnects, with ``Last-Event-ID`` to get
        what it missed)."""
        listeners = self._listeners
        if listeners:
            size = len(message)
            target = self._listener_with_room(size) or await self._room_soon(size)
            if not listeners:
                await self._unrelated(message)  # they went meanwhile: to the backlog
                return
            if target is None:
                target = listeners[0]
            event_id = await self._event_id(target, message)
            if not target.offer((event_id, encode_event(event_id, message), MESSAGE)):
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


async def close_sse_stream(ctx: RequestContext, retry_ms: int | None = None) -> bool:
    """From a request handler: end the HTTP connection carrying this request's SSE stream now,
    without ending the stream. The handler goes on; what it sends next (its result included) is
    kept, and the client gets it by reconnecting with ``GET`` and ``Last-Event-ID`` after
    ``retry_ms`` milliseconds (the app's ``retry_ms`` by default). Returns False, doing nothing,
    where that is not possible (another transport, JSON-response or stateless mode, no event
    store, a session older than 2025-11-25)."""
    transport = ctx.session.transport
    if not isinstance(transport, HttpSessionTransport) or ctx.request_id is None:
        return False
    return await transport.close_stream(ctx.request_id, retry_ms)


# -- the application -----------------------------------------------------------------------


def delivery_for(*, stateless: bool, json_response: bool, get_stream: bool) -> Delivery:
    """What a :class:`StreamableHTTPApp` with these options can carry to the client besides
    responses: the one place that decides it (the capabilities declared, the requests to the
    client refused, the backlog kept all follow from it).

    Messages unrelated to a request travel only on a GET stream (and need a session). What a
    request's handler sends before its response travels on the POST's SSE stream, or on the
    GET stream when requests are answered with JSON. The client's answers to the server's
    requests reach the handler only in a session.
    """
    if stateless:
        return Delivery(
            unrelated=False,
            related=not json_response,
            answers=False,
            mode="stateless mode",
            why="StreamableHTTPApp(stateless=True): each POST stands alone, so no answer from the "
            "client could reach the server",
            remedy="serve with stateless=False to send them",
        )
    if get_stream:
        return FULL_DELIVERY
    if json_response:
        return Delivery(
            unrelated=False,
            related=False,
            mode="JSON-response mode without a GET stream",
            why="StreamableHTTPApp(json_response=True, get_stream=False): only the response to a "
            "request reaches the client",
            remedy="serve with get_stream=True to send them",
        )
    return Delivery(
        unrelated=False,
        mode="a session without a GET stream",
        why="StreamableHTTPApp(get_stream=False): only the SSE stream answering a request of the "
        "client's reaches it",
        remedy="serve with get_stream=True to send them",
    )


class _SessionState:
    """One session of the app: its inline :class:`~mcpbind.runtime.session.Session` (no task of its own:
    each POST runs what it brings in its own task) and its transport."""

    __slots__ = ("active", "ending", "header", "id", "last_seen", "session", "transport")

    def __init__(self, session_id: str, transport: HttpSessionTransport, session: Session) -> None:
        self.id = session_id
        self.transport = transport
        self.session = session
        self.header: tuple[tuple[bytes, bytes], ...] = (
            ((b"mcp-session-id", session_id.encode()),) if session_id else ()
        )
        self.active = 0
        self.last_seen = time.monotonic()
        self.ending = False


class _Helper:
    """A task helping a POST whose handler waits for something: it watches for the client
    going away (and writes the SSE stream). ``scope`` stops it; ``done`` is set when it ends."""

    __slots__ = ("done", "ended", "scope")

    def __init__(self) -> None:
        self.scope = anyio.CancelScope()
        self.done = anyio.Event()
        self.ended = False  # it wrote the end of the response


class _Post(NamedTuple):
    """A request that its POST's task answers (``StreamableHTTPApp._answer_json``/``_sse``)."""

    state: _SessionState
    ident: RequestId
    body: bytes
    receive: Receive
    send: Send
    extra: Headers
    initialize: bool  # the request is initialize: the session's headers wait for its answer
    spawn: Spawn


class _Request:
    """What the app reads from one HTTP request's headers."""

    __slots__ = (
        "accept",
        "content_length",
        "content_type",
        "deadline",
        "host",
        "last_event_id",
        "origin",
        "reserved",
        "session_id",
        "version",
    )

    def __init__(self, headers: Iterable[tuple[bytes, bytes]]) -> None:
        self.accept: bytes | None = None
        self.content_type: bytes | None = None
        self.content_length: bytes | None = None
        self.host: bytes | None = None
        self.origin: bytes | None = None
        self.session_id: bytes | None = None
        self.version: bytes | None = None
        self.last_event_id: bytes | None = None
        self.reserved = 0  # bytes of the app's body budget this request holds
        self.deadline: float | None = None  # for its body, once the app waited for a part
        accept: bytes | None = None
        field_of = _REQUEST_FIELDS.get
        for name, value in headers:
            field = field_of(name)
            if field == "accept":
                accept = value if accept is None else accept + b"," + value  # several make one list
            elif field is not None:
                setattr(self, field, value)
        self.accept = accept


# The headers _Request keeps (ASGI gives their names in lower case), by the field they go to.
_REQUEST_FIELDS: Final = {
    b"accept": "accept",
    b"content-type": "content_type",
    b"content-length": "content_length",
    b"host": "host",
    b"origin": "origin",
    b"mcp-session-id": "session_id",
    b"mcp-protocol-version": "version",
    b"last-event-id": "last_event_id",
}


class StreamableHTTPApp:
    """The Streamable HTTP transport of ``server`` as an ASGI 3 application; see the module's
    docstring for the behaviour and :func:`serve_http` to run it.

    Options:

    * ``path``: the MCP endpoint (other paths get 404).
    * ``json_response``: answer requests with ``application/json`` instead of SSE.
    * ``stateless``: no sessions (see the module's docstring).
    * ``get_stream``: whether ``GET`` opens a stream for server-initiated messages (405 if not;
      what the server declares and can send then shrinks: see the module's docstring).
    * ``event_store``: where SSE events are kept for resumption (``None``: not resumable, and no
      priming events); a :class:`~mcpbind.transports.http.events.MemoryEventStore` by default.
    * ``retry_ms``: the ``retry:`` sent to 2025-11-25 sessions with the priming event.
    * ``keepalive_interval``: seconds of silence after which a stream gets a ``: ping`` comment.
    * ``max_body_size``: the largest POST body, in bytes (413 past it).
    * ``max_body_bytes_in_flight``: the bytes of POST bodies all requests together may hold,
      from their reading until their answer (four times ``max_body_size`` by default); a POST
      that would go past it gets 503 with ``Retry-After``.
    * ``body_timeout``: seconds a POST body may take to arrive once the app waits for it
      (408 and the connection closed past it; ``None``: no limit). The ASGI server bounds the
      time to send the request head (see :func:`serve_http`).
    * ``max_sessions``, ``session_idle_timeout`` (seconds, ``None``: never).
    * ``initialization_timeout``: seconds after ``initialize`` within which the client must
      send ``notifications/initialized``, else its session ends (``None``: no limit).
    * ``max_buffered_events`` and ``max_buffered_bytes`` per stream (see the module's docstring
      for what happens past them), ``backlog`` of unrelated messages without a GET stream.
    * ``allowed_hosts``, ``allowed_origins``: DNS-rebinding protection (``None``: no check).
    * ``cors_origins``: answer CORS preflights and let these origins (``"*"``: any) read
      responses, ``Mcp-Session-Id`` included; they are allowed by the Origin check too.
    """

    def __init__(
        self,
        server: Server,
        *,
        path: str = "/mcp",
        json_response: bool = False,
        stateless: bool = False,
        get_stream: bool = True,
        event_store: EventStore | Literal["memory"] | None = "memory",
        retry_ms: int | None = 1000,
        keepalive_interval: float | None = 15.0,
        max_body_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        max_body_bytes_in_flight: int | None = None,
        body_timeout: float | None = 30.0,
        max_sessions: int = 10_000,
        session_idle_timeout: float | None = 1800.0,
        initialization_timeout: float | None = 10.0,
        max_buffered_events: int = 256,
        max_buffered_bytes: int = 1 << 20,
        backlog: int = 256,
        allowed_hosts: Sequence[str] | None = DEFAULT_ALLOWED_HOSTS,
        allowed_origins: Sequence[str] | None = DEFAULT_ALLOWED_ORIGINS,
        cors_origins: Sequence[str] | None = None,
    ) -> None:
        if max_body_size < 1 or max_sessions < 1 or max_buffered_events < 1 or max_buffered_bytes < 1:
            raise ValueError("limits must be positive")
        if max_body_bytes_in_flight is None:
            max_body_bytes_in_flight = 4 * max_body_size
        if max_body_bytes_in_flight < max_body_size:
            raise ValueError("max_body_bytes_in_flight must be at least max_body_size")
        self.server = server
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
        self.get_stream = get_stream and not stateless
        self.event_store: EventStore | None = (
            (MemoryEventStore() if event_store == "memory" else event_store) if not stateless else None
        )
        self.retry_ms = retry_ms
        self.keepalive_interval = keepalive_interval
        self.max_body_size = max_body_size
        self.max_body_bytes_in_flight = max_body_bytes_in_flight
        self.body_timeout = body_timeout
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.initialization_timeout = initialization_timeout
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self.backlog = backlog
        self.allowed_hosts = None if allowed_hosts is None else tuple(h.lower() for h in allowed_hosts)
        self.cors_origins = None if cors_origins is None else tuple(o.lower() for o in cors_origins)
        origins = None if allowed_origins is None else tuple(o.lower() for o in allowed_origins)
        if origins is not None and self.cors_origins is not None:
            origins = (*origins, *self.cors_origins) if "*" not in self.cors_origins else None
        self.allowed_origins = origins
        self.sessions: dict[str, _SessionState] = {}
        # Sessions not yet initialized, by id: when each was made (oldest first).
        self._uninitialized: dict[str, float] = {}
        self._body_bytes = 0  # of POST bodies in progress (see _reserve)
        self._versions = {v.encode(): v for v in server.versions}
        self._task_group: anyio.abc.TaskGroup | None = None
        self.delivery = delivery_for(
            stateless=stateless, json_response=json_response, get_stream=self.get_stream
        )
        methods = "POST" if stateless else ("GET, POST, DELETE" if self.get_stream else "POST, DELETE")
        if self.cors_origins is not None:
            methods += ", OPTIONS"
        self._allow = [(b"allow", methods.encode())]
        self._accept_cache: dict[bytes, tuple[bool, bool]] = {}
        # Stateless mode: a connection made ready once per version, copied for each request.
        self._ready_connections: dict[str, Connection] = {}
        self._host_cache: dict[bytes, bool] = {}

    # -- running ------------------------------------------------------------------------

    @asynccontextmanager
    async def run(self) -> AsyncIterator[StreamableHTTPApp]:
        """Run the sessions' task group (what ASGI lifespan does); on exit every session ends."""
        if self._task_group is not None:
            raise RuntimeError("this app is already running")
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            if not self.stateless and (
                self.session_idle_timeout is not None or self.initialization_timeout is not None
            ):
                tg.start_soon(self._expire)
            try:
                yield self
            finally:
                self._task_group = None
                with anyio.CancelScope(shield=True):
                    for state in list(self.sessions.values()):
                        await self._close_session(state)
                self.sessions.clear()
                tg.cancel_scope.cancel()

    @property
    def running(self) -> bool:
        return self._task_group is not None

    async def _expire(self) -> None:
        idle, initialization = self.session_idle_timeout, self.initialization_timeout
        shortest = min(t for t in (idle, initialization) if t is not None)
        interval = min(max(shortest / 4, 0.01), 5.0)
        while True:
            await anyio.sleep(interval)
            now = time.monotonic()
            if idle is not None:
                self._end_idle(now - idle)
            if initialization is not None:
                self._end_uninitialized(now - initialization)

    def _end_idle(self, deadline: float) -> None:
        # Apart from the sleeping loop, so that no variable of it keeps a session alive.
        for state in list(self.sessions.values()):
            if state.active == 0 and state.last_seen < deadline:
                log.debug("session %s idle since %s: ending it", state.id, state.last_seen)
                self._end_session(state)

    def _end_uninitialized(self, deadline: float) -> None:
        """End the sessions made before ``deadline`` whose client has not yet sent
        ``notifications/initialized``."""
        waiting = self._uninitialized
        for session_id, made in list(waiting.items()):
            state = self.sessions.get(session_id)
            if state is None or state.session.is_ready:
                del waiting[session_id]
            elif made < deadline:
                del waiting[session_id]
                log.debug("session %s was never initialized: ending it", session_id)
                self._end_session(state)
            else:
                break  # made later, as all that follow

    def _end_session(self, state: _SessionState) -> None:
        """End a session from synchronous code: it is gone at once, closed soon."""
        if self.sessions.get(state.id) is state:
            del self.sessions[state.id]
        if self._task_group is not None and not state.ending:
            self._task_group.start_soon(self._close_session, state)

    async def _close_session(self, state: _SessionState) -> None:
        """The session ends: its handlers are cancelled (:meth:`_delete` waits for them), its
        streams and waiting POSTs end, its events go."""
        if self.sessions.get(state.id) is state:
            del self.sessions[state.id]
        if state.ending:
            return
        state.ending = True
        with anyio.CancelScope(shield=True):
            try:
                await self.server.end_session(state.session)
            except Exception:
                log.exception("session %s failed to close", state.id)
            if self.event_store is not None:
                await self.event_store.forget_session(state.id)

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await lifespan(self.run, receive, send, check_startup=True, log=log)
                return
            raise RuntimeError(f"StreamableHTTPApp does not handle {kind!r} connections")
        request = _Request(scope["headers"])
        extra = self._cors_headers(request.origin)
        try:
            if not self._on_path(scope):
                raise _Problem(404, INVALID_REQUEST, f"Not found: the MCP endpoint is {self.path}")
            self._check_origin(request)
            method: str = scope["method"]
            if method == "POST":
                try:
                    await self._post(request, receive, send, extra)
                finally:
                    self._body_bytes -= request.reserved
            elif method == "GET" and self.get_stream:
                await self._get(request, receive, send, extra)
            elif method == "DELETE" and not self.stateless:
                await self._delete(request, send, extra)
            elif method == "OPTIONS" and self.cors_origins is not None:
                await self._preflight(request, send)
            else:
                raise _Problem(405, INVALID_REQUEST, f"Method not allowed: {method}")
        except _Problem as problem:
            headers = [*extra, *self._allow] if problem.status == 405 else extra
            await _answer_error(send, problem, headers)

    def _on_path(self, scope: Scope) -> bool:
        path: str = scope["path"]
        if path == self.path:
            return True
        root: str = scope.get("root_path", "")
        return bool(root) and path.startswith(root) and path[len(root) :] == self.path

    # -- checks -------------------------------------------------------------------------

    def _check_origin(self, request: _Request) -> None:
        if self.allowed_hosts is not None:
            host = request.host
            allowed = self._host_cache.get(host) if host is not None else False
            if allowed is None:
                assert host is not None
                allowed = matches(host.decode("latin-1"), self.allowed_hosts)
                if len(self._host_cache) < 256:
                    self._host_cache[host] = allowed
            if not allowed:
                raise _Problem(403, INVALID_REQUEST, "Forbidden: Host not allowed")
        origin = request.origin
        if origin is not None and self.allowed_origins is not None:
            if not matches(origin.decode("latin-1"), self.allowed_origins):
                raise _Problem(403, INVALID_REQUEST, "Forbidden: Origin not allowed")

    def _accepts(self, accept: bytes | None) -> tuple[bool, bool]:
        """Whether ``Accept`` allows JSON, and SSE."""
        if accept is None:
            return False, False
        known = self._accept_cache.get(accept)
        if known is not None:
            return known
        json_ok = sse_ok = False
        for part in accept.split(b","):
            media = part.split(b";", 1)[0].strip().lower()
            if media in (b"*/*", b"application/json", b"application/*"):
                json_ok = True
            if media in (b"*/*", b"text/event-stream", b"text/*"):
                sse_ok = True
        if len(self._accept_cache) < 256:
            self._accept_cache[accept] = (json_ok, sse_ok)
        return json_ok, sse_ok

    def _version(self, request: _Request) -> str:
        raw = request.version
        if raw is None:
            return ASSUMED_VERSION if ASSUMED_VERSION in self.server.versions else self.server.versions[0]
        version = self._versions.get(raw.strip())
        if version is None:
            supported = ", ".join(self.server.versions)
            raise _Problem(
                400,
                INVALID_REQUEST,
                f"Unsupported MCP-Protocol-Version {raw.decode('latin-1')!r} (supported: {supported})",
            )
        return version

    def _session(self, request: _Request) -> _SessionState:
        if request.session_id is None:
            raise _Problem(400, INVALID_REQUEST, "Bad request: missing Mcp-Session-Id header")
        state = self.sessions.get(request.session_id.decode("latin-1"))
        if state is None:
            raise _Problem(404, SESSION_NOT_FOUND, "Session not found")
        return state

    # -- POST ---------------------------------------------------------------------------

    async def _post(self, request: _Request, receive: Receive, send: Send, extra: Headers) -> None:
        content_type = request.content_type
        if content_type != b"application/json" and (
            content_type is None or content_type.split(b";", 1)[0].strip().lower() != b"application/json"
        ):
            raise _Problem(
                415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
            )
        json_ok, sse_ok = self._accepts(request.accept)
        if not json_ok or not (sse_ok or self.json_response):
            wanted = "application/json" if self.json_response else "application/json and text/event-stream"
            raise _Problem(406, INVALID_REQUEST, f"Not Acceptable: Accept must include {wanted}")
        version = self._version(request)
        limit = self.max_body_size
        declared = request.content_length
        if declared is not None:
            try:
                size = int(declared)
            except ValueError:
                raise _Problem(400, INVALID_REQUEST, "Bad request: invalid Content-Length") from None
            if size > limit:
                raise _Problem(413, INVALID_REQUEST, f"Payload Too Large: the limit is {limit} bytes")
            self._reserve(request, size)
        message = await self._receive_body(receive, request)
        if message["type"] != "http.request":
            return  # the client went away
        body: bytes = message.get("body", b"")
        if message.get("more_body", False) or len(body) > limit:
            read = await self._read_rest(receive, body, message.get("more_body", False), request)
            if read is None:
                return  # the client went away
            body = read
        elif len(body) > request.reserved:  # no Content-Length
            self._reserve(request, len(body) - request.reserved)
        envelope = _decode_envelope(body)
        method, ident = envelope.method, envelope.id
        is_request = not isinstance(method, UnsetType) and not isinstance(ident, UnsetType)
        if is_request and ident is None:
            raise _Problem(400, INVALID_REQUEST, "Invalid request: the id of a request must not be null")
        if self.stateless:
            await self._stateless(method, ident, body, version, receive, send, extra)
            return
        initialize = method == "initialize"
        if initialize:
            if request.session_id is not None:
                raise _Problem(
                    400,
                    INVALID_REQUEST,
                    "Bad request: initialize must not carry an Mcp-Session-Id",
                    None if isinstance(ident, UnsetType) else ident,
                )
            state = self._new_session()
        else:
            state = self._session(request)
        state.active += 1
        try:
            session = state.session
            if session.closed:
                raise _Problem(404, SESSION_NOT_FOUND, "Session ended")
            if not is_request:
                await self._accept(
                    session, body, not isinstance(method, UnsetType), send, [*state.header, *extra]
                )
                return
            assert ident is not None and not isinstance(ident, UnsetType)
            if state.transport.in_flight(ident):
                raise _Problem(400, INVALID_REQUEST, f"Request id {ident!r} is already in use", ident)
            spawn = self._spawner()
            assert spawn is not None
            if self.json_response:
                await self._answer_json(_Post(state, ident, body, receive, send, extra, initialize, spawn))
            else:
                await self._answer_sse(_Post(state, ident, body, receive, send, extra, initialize, spawn))
        finally:
            state.active -= 1
            state.last_seen = time.monotonic()

    async def _accept(
        self, session: Session, body: bytes, notification: bool, send: Send, headers: Headers
    ) -> None:
        """A notification or a response: 202. A response wakes its waiter before the answer; a
        notification's handler runs after it, so that the client is not held by a slow one."""
        if not notification:
            try:
                await session.feed(body)
            except anyio.ClosedResourceError:
                raise _Problem(404, SESSION_NOT_FOUND, "Session ended") from None
        await send({"type": "http.response.start", "status": 202, "headers": headers})
        await send({"type": "http.response.body", "body": b""})
        if notification:
            try:
                await session.feed(body)
            except anyio.ClosedResourceError:
                pass

    def _spawner(self) -> Spawn | None:
        tg = self._task_group
        return tg.start_soon if tg is not None else None

    async def _read_rest(self, receive: Receive, body: bytes, more: bool, request: _Request) -> bytes | None:
        """The rest of a body that came in parts (or its first part is over the limit already);
        ``None`` if the client went away; 413 past the limit, found while reading; 503 past
        the app's budget for bodies in progress (when no Content-Length reserved it before)."""
        limit = self.max_body_size
        parts = [body]
        size = len(body)
        while more and size <= limit:
            if size > request.reserved:
                self._reserve(request, size - request.reserved)
            message = await self._receive_body(receive, request)
            if message["type"] != "http.request":
                return None
            chunk: bytes = message.get("body", b"")
            parts.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
        if size <= limit:
            if size > request.reserved:
                self._reserve(request, size - request.reserved)
            return b"".join(parts)
        # Over the limit: read on, keeping nothing, so the client sees the 413 rather than a
        # connection reset mid-upload; a client sending much more is cut off.
        parts.clear()
        budget = max(limit, 1 << 20)
        while more and budget > 0:
            message = await self._receive_body(receive, request)
            if message["type"] != "http.request":
                return None
            budget -= len(message.get("body", b""))
            more = message.get("more_body", False)
        raise _Problem(413, INVALID_REQUEST, f"Payload Too Large: the limit is {limit} bytes")

    async def _receive_body(self, receive: Receive, request: _Request) -> Message:
        """``receive()`` for a part of ``request``'s body: 408 (and the connection closed) if
        the body is not all there ``body_timeout`` seconds after the app first waited for it.
        A part that has arrived already, as a small body has, costs no timer."""
        timeout = self.body_timeout
        call = receive()
        if timeout is None:
            return await call
        waiting: Awaitable[Message]
        if type(call) is CoroutineType:
            done, value = first_step(call)
            if done:
                message: Message = value
                return message
            waiting = finish(call, value)
        else:
            waiting = call
        deadline = request.deadline
        if deadline is None:
            deadline = request.deadline = anyio.current_time() + timeout
        try:
            with anyio.fail_after(max(deadline - anyio.current_time(), 0.0)):
                return await waiting
        except TimeoutError:
            raise _Problem(
                408,
                INVALID_REQUEST,
                f"Request Timeout: the body did not arrive within {timeout} s",
                headers=_CLOSE,
            ) from None

    def _reserve(self, request: _Request, size: int) -> None:
        """Count ``size`` more bytes of ``request``'s body against the budget of bodies in
        progress (until its POST is answered and its handler done); 503 past it."""
        if self._body_bytes + size > self.max_body_bytes_in_flight:
            raise _Problem(
                503,
                SERVER_BUSY,
                f"Server busy: too many request bodies in progress (limit {self.max_body_bytes_in_flight} "
                "bytes); try again later",
                headers=_RETRY_AFTER,
            )
        self._body_bytes += size
        request.reserved += size

    def _new_session(self) -> _SessionState:
        tg = self._task_group
        if tg is None:
            raise _Problem(
                500,
                INTERNAL_ERROR,
                "The MCP app is not running: serve it with ASGI lifespan enabled, "
                "or wrap the server in `async with app.run():`",
            )
        if len(self.sessions) >= self.max_sessions:
            raise _Problem(
                503,
                SERVER_BUSY,
                f"Too many sessions (limit {self.max_sessions}); try again later",
                headers=_RETRY_AFTER,
            )
        session_id = secrets.token_urlsafe(24)
        delivery = self.delivery
        transport = HttpSessionTransport(
            session_id,
            event_store=self.event_store,
            max_buffered_events=self.max_buffered_events,
            max_buffered_bytes=self.max_buffered_bytes,
            backlog=self.backlog if delivery.unrelated else 0,  # no GET stream would ever take it
            retry_ms=self.retry_ms,
        )
        connection = self.server.connection(delivery=delivery)
        session = self.server.inline_session(transport, spawn=tg.start_soon, connection=connection)
        state = _SessionState(session_id, transport, session)
        self.sessions[session_id] = state
        if self.initialization_timeout is not None:
            self._uninitialized[session_id] = time.monotonic()
        return state

    def _initialized(self, state: _SessionState, answer: bytes) -> bool:
        """Whether the answer to initialize accepted the session (which keeps it), else it ends."""
        try:
            result = _INITIALIZE_ANSWER.decode(answer).result
        except msgspec.DecodeError:
            result = UNSET
        if isinstance(result, UnsetType):
            self._end_session(state)
            return False
        state.transport.protocol_version = result.protocol_version
        return True

    async def _answer_json(self, post: _Post) -> None:
        """The request's handler runs in this task and writes the response to ``send`` itself
        (through the transport). Only if it waits for something does a helper task watch for
        the client going away meanwhile, which cancels it."""
        state, ident, body, receive, send, extra, initialize, spawn = post
        transport = state.transport
        headers = [_JSON, *extra] if initialize else [_JSON, *extra, *state.header]
        on_initialize = (
            (lambda data: list(state.header) if self._initialized(state, data) else [])
            if initialize
            else None
        )
        waiter = transport.wait_json(ident, send, headers, on_initialize)
        helper: _Helper | None = None

        def on_suspend() -> None:
            nonlocal helper
            helper = _Helper()
            spawn(self._watch_json, state, ident, waiter, receive, helper)

        try:
            try:
                await state.session.feed(body, on_suspend)
            except anyio.ClosedResourceError:
                raise _Problem(404, SESSION_NOT_FOUND, "Session ended") from None
            if helper is not None:
                await helper.done.wait()
            elif not waiter.answered:  # cancelled by the client: nothing comes until it goes
                while (await receive())["type"] != "http.disconnect":
                    pass
                waiter.answered = True
                transport.drop_route(ident)
        finally:
            if helper is not None:
                helper.scope.cancel()

    async def _watch_json(
        self, state: _SessionState, ident: RequestId, waiter: _JsonWaiter, receive: Receive, helper: _Helper
    ) -> None:
        try:
            with helper.scope:
                # The ASGI server ends receive() with http.disconnect once the response is
                # written, or when the client goes away first.
                while (await receive())["type"] != "http.disconnect":
                    pass
                if not waiter.answered:
                    waiter.answered = True
                    state.transport.drop_route(ident)
                    state.session.cancel_received(ident)
        finally:
            helper.done.set()

    async def _answer_sse(self, post: _Post) -> None:
        """The request's handler runs in this task; what it sends is collected by its stream. A
        handler that finishes at once leaves its whole answer there, written in one go; one
        that waits for something gets a helper task that writes the stream as it comes (from a
        queue) and watches for the client going away."""
        state, ident, body, receive, send, extra, initialize, spawn = post
        transport = state.transport
        stream = transport.open_stream(ident)
        items = stream.collect()
        headers = [*_SSE_HEADERS, *extra]
        first: list[bytes] = []
        if not initialize:
            headers += state.header
            version = transport.protocol_version
            if transport.event_store is not None and version is not None and version >= POLLING_VERSION:
                first.append(await transport.prime(stream))
            # (An initialize is answered at once, by the core: its headers wait for the answer.)
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        helper: _Helper | None = None
        queue: SseQueue | None = None
        gone = _Flag()

        def on_suspend() -> None:
            nonlocal helper, queue
            helper = _Helper()
            queue = stream.to_queue(items)
            spawn(self._write_sse, state, stream, first, items, queue, receive, send, helper, gone)

        try:
            try:
                await state.session.feed(body, on_suspend)
            except anyio.ClosedResourceError:  # it ended while this POST was being answered
                transport.forget(stream)
                if initialize:
                    raise _Problem(404, SESSION_NOT_FOUND, "Session ended") from None
                await send({"type": "http.response.body", "body": b"".join(first), "more_body": False})
                return
            if helper is not None:
                if queue is not None and not stream.finished:
                    stream.release(queue)  # no response is coming (cancelled): the stream ends
                await helper.done.wait()
                if not gone.set and not helper.ended:
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
                return
        except BaseException:
            if queue is not None:
                stream.release(queue)
            transport.forget(stream)
            raise
        finally:
            if helper is not None:
                helper.scope.cancel()
        # Everything the handler sent was collected: write it all.
        stream.stop_collecting(items)
        outcome: int | None = None
        for _, chunk, kind in items:
            first.append(chunk)
            if kind != MESSAGE:
                outcome = kind
                break
        if initialize:
            if stream.response is None:
                transport.forget(stream)
                raise _Problem(500, INTERNAL_ERROR, "The session ended during initialize", ident)
            if self._initialized(state, stream.response):
                headers += state.header
        if outcome == FINAL:
            await transport.finished(stream)
        elif outcome != CLOSE:
            transport.forget(stream)
        if initialize:
            await send({"type": "http.response.start", "status": 200, "headers": headers})
        await send({"type": "http.response.body", "body": b"".join(first), "more_body": False})

    async def _write_sse(
        self,
        state: _SessionState,
        stream: SseStream,
        first: list[bytes],
        items: list[SseItem],
        queue: SseQueue | None,
        receive: Receive,
        send: Send,
        helper: _Helper,
        gone: _Flag,
    ) -> None:
        """Write a POST's SSE stream while its handler runs in the POST's task: what was
        collected, then what comes in ``queue`` (none: the stream was detached before), and end
        the response once the stream is answered or closed for polling (the POST's task ends it
        otherwise, once its handler returns)."""
        transport = state.transport
        outcome: int | None = None
        try:
            with helper.scope:
                async with anyio.create_task_group() as tg:
                    tg.start_soon(_watch_disconnect, receive, tg.cancel_scope, gone)
                    for chunk in first:
                        await _write(send, chunk)
                    for _, chunk, kind in items:
                        await _write(send, chunk)
                        if kind != MESSAGE:
                            outcome = kind
                            break
                    if outcome is None and queue is not None:
                        outcome = await self._pump(queue, send, set())
                    tg.cancel_scope.cancel()
                if outcome == FINAL:
                    await transport.finished(stream)
                elif outcome != CLOSE and gone.set:
                    if transport.event_store is not None:
                        if queue is not None:
                            stream.release(queue)  # the handler goes on; a GET with Last-Event-ID resumes
                    else:
                        transport.forget(stream)
                        if not stream.finished and stream.request_id is not None:
                            transport.drop_route(stream.request_id)
                            state.session.cancel_received(stream.request_id)
                elif outcome is None:
                    transport.forget(stream)
                if not gone.set and outcome is not None and outcome != MESSAGE:
                    # Answered, or closed for polling while the handler goes on: done now.
                    helper.ended = True
                    await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            if queue is not None:
                stream.release(queue)  # (a stream taken over by a GET meanwhile stays with it)
            helper.done.set()

    async def _pump(self, queue: SseQueue, send: Send, seen: set[str]) -> int | None:
        """Write a stream's events until its response (FINAL), a polling close (CLOSE) or its
        end (``None``: the session ended, another connection took the stream, or this one was
        cut off for falling behind)."""
        interval = self.keepalive_interval
        while True:
            try:
                item = queue.receive_nowait()
            except anyio.WouldBlock:
                try:
                    if interval is None:
                        item = await queue.receive()
                    else:
                        with anyio.fail_after(interval):
                            item = await queue.receive()
                except TimeoutError:
                    await _write(send, PING)
                    continue
                except anyio.EndOfStream:
                    return None
            except anyio.EndOfStream:
                return None
            event_id, chunk, kind = item
            if seen and event_id in seen:
                continue
            if chunk:
                await _write(send, chunk)
            if kind != MESSAGE:
                return kind

    # -- GET ----------------------------------------------------------------------------

    async def _get(self, request: _Request, receive: Receive, send: Send, extra: Headers) -> None:
        if not self._accepts(request.accept)[1]:
            raise _Problem(406, INVALID_REQUEST, "Not Acceptable: Accept must include text/event-stream")
        self._version(request)
        state = self._session(request)
        state.active += 1
        try:
            if request.last_event_id is not None and self.event_store is not None:
                await self._resume(state, request.last_event_id.decode("latin-1"), receive, send, extra)
            else:
                await self._listen(state, None, [], receive, send, extra)
        finally:
            state.active -= 1
            state.last_seen = time.monotonic()

    async def _listen(
        self,
        state: _SessionState,
        stream_id: str | None,
        replay: list[bytes],
        receive: Receive,
        send: Send,
        extra: Headers,
    ) -> None:
        transport = state.transport
        if transport.closed:
            raise _Problem(404, SESSION_NOT_FOUND, "Session ended")
        stream = transport.open_listener(stream_id)
        queue = stream.attach()
        try:
            async with anyio.create_task_group() as tg:
                gone = _Flag()
                tg.start_soon(_watch_disconnect, receive, tg.cancel_scope, gone)
                await send(
                    {
                        "type": "http.response.start",
                        "status": 200,
                        "headers": [*_SSE_HEADERS, *extra, *state.header],
                    }
                )
                version = transport.protocol_version
                if (
                    not replay
                    and self.event_store is not None
                    and version is not None
                    and version >= POLLING_VERSION
                ):
                    await _write(send, await transport.prime(stream))
                for chunk in replay:
                    await _write(send, chunk)
                tg.start_soon(transport.listen, stream)
                await self._pump(queue, send, set())
                tg.cancel_scope.cancel()
        finally:
            transport.stop_listening(stream)
            queue.close()
        if not gone.set:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    async def _resume(
        self, state: _SessionState, last_event_id: str, receive: Receive, send: Send, extra: Headers
    ) -> None:
        transport = state.transport
        assert self.event_store is not None
        found = await self.event_store.replay(state.id, last_event_id)
        if found is None:
            raise _Problem(400, INVALID_REQUEST, f"Bad request: unknown Last-Event-ID {last_event_id!r}")
        stream_id, events = found
        replay = [encode_event(event.id, event.data) for event in events if event.data]
        if stream_id.startswith("g"):
            await self._listen(state, stream_id, replay, receive, send, extra)
            return
        stream = transport.stream(stream_id)
        live = stream is not None and not stream.finished
        queue = stream.attach() if stream is not None and live else None
        outcome: int | None = None
        gone = _Flag()
        async with anyio.create_task_group() as tg:
            tg.start_soon(_watch_disconnect, receive, tg.cancel_scope, gone)
            headers = [*_SSE_HEADERS, *extra, *state.header]
            await send({"type": "http.response.start", "status": 200, "headers": headers})
            for chunk in replay:
                await _write(send, chunk)
            if queue is not None:
                outcome = await self._pump(queue, send, {event.id for event in events})
            tg.cancel_scope.cancel()
        if stream is not None:
            if outcome == FINAL or (not live and not gone.set):
                await transport.finished(stream)  # the response went out, live or replayed
            if queue is not None:
                stream.release(queue)  # (detached unless a newer connection took it over)
        if not gone.set:
            await send({"type": "http.response.body", "body": b"", "more_body": False})

    # -- DELETE, OPTIONS ----------------------------------------------------------------

    async def _delete(self, request: _Request, send: Send, extra: Headers) -> None:
        self._version(request)
        state = self._session(request)
        await self._close_session(state)
        with anyio.move_on_after(5):
            await state.session.wait_closed()  # its handlers have unwound
        await send({"type": "http.response.start", "status": 204, "headers": extra})
        await send({"type": "http.response.body", "body": b""})

    def _cors_headers(self, origin: bytes | None) -> Headers:
        allowed = self.cors_origins
        if allowed is None or origin is None:
            return _EMPTY
        if "*" in allowed:
            value = b"*"
        elif matches(origin.decode("latin-1"), allowed):
            value = origin
        else:
            return _EMPTY
        return [
            (b"access-control-allow-origin", value),
            (b"access-control-expose-headers", b"Mcp-Session-Id, MCP-Protocol-Version"),
            (b"vary", b"Origin"),
        ]

    async def _preflight(self, request: _Request, send: Send) -> None:
        headers = self._cors_headers(request.origin)
        if headers:
            headers = [
                *headers,
                (b"access-control-allow-methods", self._allow[0][1]),
                (
                    b"access-control-allow-headers",
                    b"Content-Type, Accept, Authorization, Mcp-Session-Id, MCP-Protocol-Version, Last-Event-ID",
                ),
                (b"access-control-max-age", b"86400"),
            ]
        await send({"type": "http.response.start", "status": 204, "headers": headers})
        await send({"type": "http.response.body", "body": b""})

    # -- stateless ----------------------------------------------------------------------

    async def _stateless(
        self,
        method: str | UnsetType,
        ident: RequestId | UnsetType | None,
        body: bytes,
        version: str,
        receive: Receive,
        send: Send,
        extra: Headers,
    ) -> None:
        if isinstance(method, UnsetType) or ident is None or isinstance(ident, UnsetType):
            # Nothing can follow a notification or response without a session: accepted, dropped.
            await send({"type": "http.response.start", "status": 202, "headers": extra})
            await send({"type": "http.response.body", "body": b""})
            return
        transport = HttpSessionTransport(
            "",
            event_store=None,
            backlog=0,
            max_buffered_events=self.max_buffered_events,
            max_buffered_bytes=self.max_buffered_bytes,
        )
        transport.protocol_version = version
        spawn = self._spawner()
        if method == "initialize":
            connection = self.server.connection(delivery=self.delivery)
        else:
            # A connection ready at this version, copied from one made once per version.
            ready = self._ready_connections.get(version)
            if ready is None:
                ready = self._ready_connections[version] = self.server.connection(delivery=self.delivery)
                ready.assume_ready(version)
            connection = ready.fresh()
        session = self.server.inline_session(transport, spawn=spawn, register=False, connection=connection)
        state = _SessionState("", transport, session)
        answer = self._answer_json if self.json_response else self._answer_sse
        if spawn is not None:
            await answer(_Post(state, ident, body, receive, send, extra, False, spawn))
            return
        # No lifespan: a task group of this request's own, opened before the handler starts.
        async with anyio.create_task_group() as tg:
            await answer(_Post(state, ident, body, receive, send, extra, False, tg.start_soon))


# -- helpers -------------------------------------------------------------------------------


class _Flag:
    __slots__ = ("set",)

    def __init__(self) -> None:
        self.set = False


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope, gone: _Flag) -> None:
    """Cancel ``scope`` when the client disconnects (the request body was read already)."""
    while (await receive())["type"] != "http.disconnect":
        pass
    gone.set = True
    scope.cancel()


async def _write(send: Send, chunk: bytes) -> None:
    await send({"type": "http.response.body", "body": chunk, "more_body": True})


def _decode_envelope(body: bytes) -> _Envelope:
    try:
        return _ENVELOPE.decode(body)
    except msgspec.ValidationError as exc:
        if body.lstrip()[:1] == b"[":
            try:  # msgspec stopped at the "[": is the rest JSON at all?
                msgspec.json.decode(body, type=msgspec.Raw)
            except msgspec.DecodeError as not_json:
                raise _Problem(400, PARSE_ERROR, f"Parse error: {not_json}") from None
            except RecursionError:
                raise _Problem(400, PARSE_ERROR, "Parse error: JSON nested too deeply") from None
            raise _Problem(
                400, INVALID_REQUEST, "Invalid request: batches (JSON arrays) are not accepted"
            ) from None
        raise _Problem(400, INVALID_REQUEST, f"Invalid request: {exc}", _request_id(body)) from None
    except msgspec.DecodeError as exc:
        raise _Problem(400, PARSE_ERROR, f"Parse error: {exc}", _request_id(body)) from None
    except RecursionError:
        raise _Problem(400, PARSE_ERROR, "Parse error: JSON nested too deeply", _request_id(body)) from None


def _request_id(body: bytes) -> RequestId | None:
    """The id of a request that does not decode, where it can be read (never a response's)."""
    salvaged = salvage_id(body)
    return None if salvaged.response else salvaged.id


async def _answer_error(send: Send, problem: _Problem, headers: Headers) -> None:
    body = Codec.encode_error(problem.ident, problem.code, problem.message)
    await send(
        {
            "type": "http.response.start",
            "status": problem.status,
            "headers": [_JSON, (b"content-length", b"%d" % len(body)), *headers, *problem.headers],
        }
    )
    await send({"type": "http.response.body", "body": body})


# -- running on an embedded server ----------------------------------------------------------


async def serve_http(
    server_or_app: Server | StreamableHTTPApp,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    backend: Literal["asyncio", "trio"] | None = None,
    header_timeout: float | None = 10.0,
    keep_alive_timeout: float = 5.0,
    **app_options: Any,
) -> None:
    """Serve over Streamable HTTP at ``http://host:port/mcp`` until cancelled: on uvicorn under
    asyncio, on hypercorn under trio (``backend`` names the running loop; it is checked).

    ``app_options`` go to :class:`StreamableHTTPApp` (``body_timeout`` bounds the time a POST
    body may take). Bound to a host other than a loopback address, the Host check is off unless
    ``allowed_hosts`` is given (the Origin check stays).

    Slow connections are bounded too: a request head must be complete ``header_timeout``
    seconds after the connection opened or after the previous response (``None``: no limit),
    else the connection is closed; an idle connection is closed after ``keep_alive_timeout``
    seconds (on hypercorn one timer serves both: the shorter counts). Errors of the accept loop
    (out of file descriptors) are logged once per 10 s, with a count of those left out. See
    :mod:`mcpbind.transports.http._embedded`.
    """
    import sniffio

    from mcpbind.transports.http import _embedded

    running = sniffio.current_async_library()
    if backend is not None and backend != running:
        raise RuntimeError(f"serve_http(backend={backend!r}) called from {running}")
    if isinstance(server_or_app, StreamableHTTPApp):
        if app_options:
            raise TypeError("app options are for a Server; this app is built already")
        app = server_or_app
    else:
        if host not in ("127.0.0.1", "localhost", "::1") and "allowed_hosts" not in app_options:
            app_options["allowed_hosts"] = None
        app = StreamableHTTPApp(server_or_app, **app_options)
    serve = _embedded.serve_trio if running == "trio" else _embedded.serve_asyncio
    await serve(app, host, port, header_timeout=header_timeout, keep_alive_timeout=keep_alive_timeout)
