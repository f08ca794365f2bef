"""The HTTP+SSE transport of MCP 2024-11-05, server side: a raw ASGI 3 application.

Deprecated by Streamable HTTP since 2025-03-26, and still what many clients speak. A client opens
an SSE stream with ``GET <sse_path>``; the first event on it is ``endpoint``, whose data is the
URI to POST messages to (``<message_path>?session_id=<token>``). Every message the server sends
for that session then arrives on the same stream as an ``event: message`` with the JSON as data;
the client POSTs each of its messages, one per request, and gets ``202 Accepted`` back. The
session lives as long as the SSE stream: when the client disconnects it ends, and its running
handlers are cancelled.

::

    app = LegacySSEApp(server)            # uvicorn app:app, hypercorn app:app, ...

Sessions run in a task group that the app opens in the ASGI ``lifespan`` startup; for hosts that
do not send lifespan events, wrap the serving in ``async with app.run():``. Without either, the
SSE endpoint answers 500 and says why. Leaving ``run()`` (lifespan shutdown) ends every session
and its stream. uvicorn waits for open connections before it sends the lifespan shutdown, and
an SSE stream stays open as long as its client: give it ``timeout_graceful_shutdown`` so that
it stops with clients still connected (hypercorn has ``graceful_timeout``).

Limits, all keyword arguments of :class:`LegacySSEApp`:

* ``max_sessions`` open at once; one more ``GET`` is answered ``503``.
* ``max_body_size`` of one POSTed message; a larger one is answered ``413`` (checked on
  ``Content-Length`` and again while the body arrives).
* ``queue_size`` messages may wait in each direction of a session. A POST that finds the
  incoming queue full waits up to ``post_wait`` seconds for room, then gets ``503`` with
  ``Retry-After`` and the message is dropped (the client may send it again).
* A slow SSE reader: at most ``queue_size`` messages and ``max_buffered_bytes`` bytes of
  events (or a single larger event) wait for its stream. Past that, a message from the
  handler of one of this client's requests (its answer, progress, log messages) waits for
  room, holding back that handler only, for up to ``send_timeout`` seconds. A message any
  handler may be sending, of any session (a list change, a resource update), waits for no
  client: if the queue is still full once the stream's writer had a chance to run (a burst
  fills it before the writer gets the CPU), the writer is waiting for its client, and the
  client is disconnected. Either way, a client past the bound loses its connection and its
  session ends (running handlers are cancelled, what was queued for it is dropped): this
  transport has no resumption, and a client that does not read can neither make the server
  buffer without bound nor hold back other sessions. It may connect again, as a new session.
* ``keep_alive`` seconds of silence on a stream before a ``: ping`` comment is sent
  (``None``: never).

DNS-rebinding protection (the spec's MUST for this transport): ``Host`` must match one of
``allowed_hosts`` and ``Origin``, when present, one of ``allowed_origins``; otherwise ``403``.
Both default to the loopback names (``127.0.0.1``, ``localhost``, ``[::1]``, any port), right
for a server bound to localhost. A public deployment passes its own names, or ``None`` to switch
a check off (e.g. behind a proxy that already does it). A pattern ending in ``:*`` matches any
port.

Errors on the message endpoint carry a JSON-RPC error object (``"id": null``) as body:
``400`` for a missing ``session_id``, malformed JSON (``-32700``, the message is dropped) or a
JSON value that is neither an object nor an array; ``404`` for an unknown or ended session;
``415`` unless ``Content-Type`` is ``application/json``; ``413`` and ``503`` as above. A
well-formed message that is not a valid JSON-RPC message is accepted (202) and the session
answers it on the stream, as on any other transport.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator, Iterable, Mapping
from contextlib import asynccontextmanager
from types import MappingProxyType
from urllib.parse import parse_qs, quote

import anyio
import anyio.abc
import msgspec
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR
from mcpbind.protocol.wire import Codec, RequestId
from mcpbind.server.server import Server
from mcpbind.transports.http._asgi import (
    Message as Message,  # the ASGI event type, importable from here as before
)
from mcpbind.transports.http._asgi import Receive, Scope, Send, lifespan, matches
from mcpbind.transports.http.sse import MESSAGE, PING, SseQueue

__all__ = [
    "DEFAULT_MAX_BODY_SIZE",
    "LOCALHOST_HOSTS",
    "LOCALHOST_ORIGINS",
    "LegacySSEApp",
    "LegacySession",
]

log = logging.getLogger("mcpbind.http.legacy")

# 4 MiB: ample for any ordinary MCP message sent to a server.
DEFAULT_MAX_BODY_SIZE = 4 * 1024 * 1024

LOCALHOST_HOSTS: tuple[str, ...] = (
    "127.0.0.1",
    "127.0.0.1:*",
    "localhost",
    "localhost:*",
    "[::1]",
    "[::1]:*",
)
LOCALHOST_ORIGINS: tuple[str, ...] = tuple(
    f"{scheme}://{host}" for scheme in ("http", "https") for host in LOCALHOST_HOSTS
)

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]
_JSON = [(b"content-type", b"application/json")]
# At most this many queued messages are joined into one write of the SSE stream.
_BATCH = 64


def _sse_event(event: bytes, data: bytes) -> bytes:
    """One SSE event; data with line breaks becomes several ``data:`` lines."""
    if b"\n" in data or b"\r" in data:
        lines = data.replace(b"\r\n", b"\n").replace(b"\r", b"\n").split(b"\n")
        return b"event: " + event + b"\n" + b"".join(b"data: " + line + b"\n" for line in lines) + b"\n"
    return b"event: " + event + b"\ndata: " + data + b"\n\n"


class _SessionTransport:
    """The transport a session runs over: POSTs feed ``receive``, ``send`` feeds the SSE stream
    (framed events in ``outgoing``, bounded in messages and bytes; see the module's docstring
    for a reader past the bound)."""

    # A message for no request never waits for the client (see send): a server telling every
    # session something sends it in line (see mcpbind.transports.base.Transport).
    unrelated_send_waits_for_peer = False

    def __init__(self, queue_size: int, send_timeout: float, max_buffered_bytes: int = 1 << 20) -> None:
        self.incoming: MemoryObjectSendStream[bytes]
        self._incoming: MemoryObjectReceiveStream[bytes]
        self.incoming, self._incoming = anyio.create_memory_object_stream[bytes](queue_size)
        self.outgoing = SseQueue(queue_size, max_buffered_bytes)
        self.send_timeout = send_timeout
        # Around the writing of the SSE stream; cancelled when its reader stalls.
        self.stream_scope = anyio.CancelScope()

    async def receive(self) -> bytes:
        try:
            return await self._incoming.receive()
        except anyio.EndOfStream:
            # Closed only when the client is gone or the session is over, never because the
            # client is done sending: the session cancels its handlers rather than let them
            # finish for a client that cannot read their answers.
            raise anyio.BrokenResourceError from None

    def send_nowait(self, message: bytes) -> bool:
        """Queue the message for the stream if there is room now; ``False`` (nothing queued)
        if the queue is full or the client is gone (``send`` then says which)."""
        queue = self.outgoing
        event = _sse_event(b"message", message)
        if queue.closed or not queue.has_room(len(event)):
            return False
        queue.put_nowait(("", event, MESSAGE))
        return True

    async def send_related(
        self, message: bytes, related: RequestId | None = None, final: bool = False
    ) -> None:
        # Every message goes on the one stream; ``related`` says who may wait for room.
        queue = self.outgoing
        if queue.closed:
            raise anyio.BrokenResourceError
        item = ("", _sse_event(b"message", message), MESSAGE)
        size = len(item[1])
        if queue.has_room(size):
            queue.put_nowait(item)
            return
        if related is not None:
            # From the handler of this client's request: only that handler waits for it.
            with anyio.move_on_after(self.send_timeout):
                await queue.put(item)
                if queue.closed:
                    raise anyio.BrokenResourceError
                return
            why = f"its stream was full for {self.send_timeout} s"
        else:
            # From any handler, of any session: it waits for the stream's writer, not the client.
            if await queue.room_soon(size):
                queue.put_nowait(item)
                return
            if queue.closed:
                raise anyio.BrokenResourceError
            why = "its stream is full and its client does not read"
        # The stream's writer is stuck in a write the client does not read: give up on it.
        log.warning("SSE reader too slow (%s, %d bytes waiting): ending its session", why, queue.size)
        self.cut()
        raise anyio.BrokenResourceError

    send = send_related  # (a message related to no request)

    def cut(self) -> None:
        """The client reads too slowly: drop what waits for it, drop its connection (the
        stream's writer is cancelled mid-write), end its session."""
        self.disconnect()
        self.stream_scope.cancel()

    def disconnect(self) -> None:
        """The client is gone: the session's ``receive`` sees the end, its sends fail, what
        was queued for the stream is dropped."""
        self.incoming.close()
        self.outgoing.close(drop=True)

    def finish(self) -> None:
        """The session is over: POSTs find it gone; the stream delivers what is queued, then ends."""
        self.incoming.close()
        self._incoming.close()
        self.outgoing.close()

    async def aclose(self) -> None:
        self.finish()


class LegacySession:
    """One client's session on a :class:`LegacySSEApp`, from its ``GET`` until its end."""

    def __init__(self, session_id: str, transport: _SessionTransport) -> None:
        self.id = session_id
        self.transport = transport
        self.cancel_scope = anyio.CancelScope()
        self._closed = anyio.Event()

    @property
    def closed(self) -> bool:
        return self._closed.is_set()

    async def wait_closed(self) -> None:
        """Until the session has ended and left the app's registry."""
        await self._closed.wait()

    def end(self) -> None:
        """End the session now: running handlers are cancelled, the stream closes."""
        self.transport.disconnect()
        self.cancel_scope.cancel()


class LegacySSEApp:
    """An ASGI application serving ``server`` over the 2024-11-05 HTTP+SSE transport.

    See the module documentation for the endpoints, the limits and the errors.
    """

    def __init__(
        self,
        server: Server,
        *,
        sse_path: str = "/sse",
        message_path: str = "/messages",
        max_sessions: int = 1000,
        max_body_size: int = DEFAULT_MAX_BODY_SIZE,
        queue_size: int = 64,
        max_buffered_bytes: int = 1 << 20,
        post_wait: float = 5.0,
        send_timeout: float = 30.0,
        keep_alive: float | None = 15.0,
        allowed_hosts: Iterable[str] | None = LOCALHOST_HOSTS,
        allowed_origins: Iterable[str] | None = LOCALHOST_ORIGINS,
    ) -> None:
        for name, path in (("sse_path", sse_path), ("message_path", message_path)):
            if not path.startswith("/") or "?" in path or "#" in path:
                raise ValueError(f"{name} must be a path starting with '/', without query: {path!r}")
        if sse_path == message_path:
            raise ValueError("sse_path and message_path must differ")
        if max_sessions < 1 or max_body_size < 1 or queue_size < 1 or max_buffered_bytes < 1:
            raise ValueError(
                "max_sessions, max_body_size, queue_size and max_buffered_bytes must be positive"
            )
        self.server = server
        self.sse_path = sse_path
        self.message_path = message_path
        self.max_sessions = max_sessions
        self.max_body_size = max_body_size
        self.queue_size = queue_size
        self.max_buffered_bytes = max_buffered_bytes
        self.post_wait = post_wait
        self.send_timeout = send_timeout
        self.keep_alive = keep_alive
        self.allowed_hosts = None if allowed_hosts is None else tuple(allowed_hosts)
        self.allowed_origins = None if allowed_origins is None else tuple(allowed_origins)
        self._sessions: dict[str, LegacySession] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- lifetime -------------------------------------------------------------------------

    @property
    def sessions(self) -> Mapping[str, LegacySession]:
        """The open sessions by id (a read-only view)."""
        return MappingProxyType(self._sessions)

    @property
    def running(self) -> bool:
        return self._task_group is not None

    @asynccontextmanager
    async def run(self) -> AsyncIterator[LegacySSEApp]:
        """Serve sessions until the block ends; then every session ends. The ASGI lifespan does
        this by itself; use it for hosts that do not send lifespan events."""
        if self._task_group is not None:
            raise RuntimeError("this LegacySSEApp is already running")
        task_group = anyio.create_task_group()
        await task_group.__aenter__()
        self._task_group = task_group
        try:
            yield self
        finally:
            self._task_group = None
            for session in list(self._sessions.values()):
                session.end()
            task_group.cancel_scope.cancel()
            await task_group.__aexit__(None, None, None)

    async def _run_session(self, session: LegacySession) -> None:
        try:
            with session.cancel_scope:
                await self.server.run(session.transport)
        except Exception:
            log.exception("legacy SSE session %s failed", session.id)
        finally:
            session.transport.finish()
            if self._sessions.get(session.id) is session:
                del self._sessions[session.id]
            session._closed.set()

    # -- ASGI -----------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope["type"]
        if kind == "http":
            await self._http(scope, receive, send)
        elif kind == "lifespan":
            await lifespan(self.run, receive, send, check_startup=False, log=None)
        elif kind == "websocket":
            await send({"type": "websocket.close", "code": 1008})

    async def _http(self, scope: Scope, receive: Receive, send: Send) -> None:
        root: str = scope.get("root_path", "") or ""
        path: str = scope["path"]
        if root and path.startswith(root):
            path = path[len(root) :] or "/"
        method: str = scope["method"]
        if path == self.sse_path:
            if method != "GET":
                await _error(send, 405, INVALID_REQUEST, "Method not allowed", [(b"allow", b"GET")])
            elif await self._trusted(scope, send):
                await self._stream(scope, receive, send, root)
        elif path == self.message_path:
            if method != "POST":
                await _error(send, 405, INVALID_REQUEST, "Method not allowed", [(b"allow", b"POST")])
            elif await self._trusted(scope, send):
                await self._post(scope, receive, send)
        else:
            await _error(send, 404, INVALID_REQUEST, "Not found")

    async def _trusted(self, scope: Scope, send: Send) -> bool:
        """The DNS-rebinding check: answers 403 and says False for an untrusted Host/Origin."""
        if self.allowed_hosts is None and self.allowed_origins is None:
            return True
        host = origin = None
        for name, value in scope["headers"]:
            if name == b"host":
                host = value.decode("latin-1")
            elif name == b"origin":
                origin = value.decode("latin-1")
        # Here a pattern ending in ``:*`` needs a port (the defaults list the bare names too).
        allowed_hosts = self.allowed_hosts
        if allowed_hosts is not None and (
            host is None or not matches(host, map(str.lower, allowed_hosts), bare_host=False)
        ):
            await _error(send, 403, INVALID_REQUEST, f"Forbidden: Host {host!r} is not allowed")
            return False
        if self.allowed_origins is not None and origin is not None:
            if not matches(origin, map(str.lower, self.allowed_origins), bare_host=False):
                await _error(send, 403, INVALID_REQUEST, f"Forbidden: Origin {origin!r} is not allowed")
                return False
        return True

    # -- GET: the SSE stream ----------------------------------------------------------------

    async def _stream(self, scope: Scope, receive: Receive, send: Send, root: str) -> None:
        accept = _header(scope, b"accept")
        if accept is not None and not _accepts_sse(accept):
            await _error(
                send, 406, INVALID_REQUEST, "Not acceptable: the client must accept text/event-stream"
            )
            return
        task_group = self._task_group
        if task_group is None:
            message = "LegacySSEApp is not running: serve it with ASGI lifespan on, or inside `async with app.run()`"
            await _error(send, 500, INTERNAL_ERROR, message)
            return
        if len(self._sessions) >= self.max_sessions:
            await _error(
                send,
                503,
                INTERNAL_ERROR,
                f"Too many sessions (limit {self.max_sessions})",
                [(b"retry-after", b"5")],
            )
            return
        session_id = secrets.token_urlsafe(24)
        session = LegacySession(
            session_id, _SessionTransport(self.queue_size, self.send_timeout, self.max_buffered_bytes)
        )
        self._sessions[session_id] = session
        task_group.start_soon(self._run_session, session, name=f"mcpbind legacy SSE session {session_id}")
        endpoint = quote(root.rstrip("/") + self.message_path) + "?session_id=" + session_id
        try:
            # Cancelled only for a stalled reader: the response is then left unfinished and
            # the server drops the connection.
            with session.transport.stream_scope:
                await send({"type": "http.response.start", "status": 200, "headers": _SSE_HEADERS})
                await send(
                    {
                        "type": "http.response.body",
                        "body": _sse_event(b"endpoint", endpoint.encode()),
                        "more_body": True,
                    }
                )
                async with anyio.create_task_group() as stream:
                    stream.start_soon(_watch_disconnect, receive, stream.cancel_scope)
                    await self._pump(session.transport.outgoing, send)
                    stream.cancel_scope.cancel()
                await send({"type": "http.response.body", "body": b"", "more_body": False})
        except OSError:  # the client went away while we wrote
            pass
        finally:
            if self._sessions.get(session_id) is session:
                del self._sessions[session_id]
            session.end()

    async def _pump(self, outgoing: SseQueue, send: Send) -> None:
        """Write what the session sends, several queued events per write (no more than the
        queue holds), until it ends."""
        keep_alive = self.keep_alive
        while True:
            event: bytes | None = None
            try:
                if keep_alive is None:
                    event = (await outgoing.receive())[1]
                else:
                    with anyio.move_on_after(keep_alive):
                        event = (await outgoing.receive())[1]
            except anyio.EndOfStream:
                return
            if event is None:
                await send({"type": "http.response.body", "body": PING, "more_body": True})
                continue
            chunks = [event]
            ended = False
            while len(chunks) < _BATCH:
                try:
                    chunks.append(outgoing.receive_nowait()[1])
                except anyio.WouldBlock:
                    break
                except anyio.EndOfStream:
                    ended = True
                    break
            # (Only the joined copy stays alive during a write that may wait for the client.)
            body = event if len(chunks) == 1 else b"".join(chunks)
            event = None
            chunks.clear()
            await send({"type": "http.response.body", "body": body, "more_body": True})
            del body
            if ended:
                return

    # -- POST: one message ------------------------------------------------------------------

    async def _post(self, scope: Scope, receive: Receive, send: Send) -> None:
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        ids = query.get("session_id")
        if not ids or not ids[0]:
            await _error(send, 400, INVALID_REQUEST, "Bad request: the session_id query parameter is missing")
            return
        session_id = ids[0]
        if session_id not in self._sessions:
            await _error(send, 404, INVALID_REQUEST, "Session not found (it ended, or never existed)")
            return
        content_type = _header(scope, b"content-type")
        if content_type is None or content_type.partition(";")[0].strip().lower() != "application/json":
            await _error(
                send, 415, INVALID_REQUEST, "Unsupported media type: Content-Type must be application/json"
            )
            return
        body = await self._read_body(scope, receive, send)
        if body is None:
            return
        try:
            first = bytes(msgspec.json.decode(body, type=msgspec.Raw))[:1]
        except msgspec.DecodeError as exc:
            await _error(send, 400, PARSE_ERROR, f"Parse error: {exc}")
            return
        except RecursionError:
            await _error(send, 400, PARSE_ERROR, "Parse error: JSON nested too deeply")
            return
        if first not in (b"{", b"["):
            await _error(send, 400, INVALID_REQUEST, "Invalid request: expected a JSON-RPC message")
            return
        session = self._sessions.get(session_id)
        if session is None:
            await _error(send, 404, INVALID_REQUEST, "Session not found (it ended, or never existed)")
            return
        incoming = session.transport.incoming
        try:
            try:
                incoming.send_nowait(body)
            except anyio.WouldBlock:
                with anyio.move_on_after(self.post_wait) as waited:
                    await incoming.send(body)
                if waited.cancelled_caught:
                    await _error(
                        send,
                        503,
                        INTERNAL_ERROR,
                        "Session busy: its message queue is full; send again later",
                        [(b"retry-after", b"1")],
                    )
                    return
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            await _error(send, 404, INVALID_REQUEST, "Session not found (it ended, or never existed)")
            return
        await send({"type": "http.response.start", "status": 202, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    async def _read_body(self, scope: Scope, receive: Receive, send: Send) -> bytes | None:
        """The request body, or None after answering 413 (or when the client went away)."""
        limit = self.max_body_size
        declared = _header(scope, b"content-length")
        length = _content_length(declared)
        if length is not None and length > limit:
            await _too_large(send, limit, receive, 0 if length <= limit + _DRAIN else None)
            return None
        chunks: list[bytes] = []
        size = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return None
            chunk: bytes = message.get("body", b"")
            size += len(chunk)
            more: bool = message.get("more_body", False)
            if size > limit:
                if more:
                    await _too_large(send, limit, receive, size - limit)
                else:
                    await _error(send, 413, INVALID_REQUEST, _too_large_message(limit))
                return None
            chunks.append(chunk)
            if not more:
                return chunks[0] if len(chunks) == 1 else b"".join(chunks)


async def _watch_disconnect(receive: Receive, scope: anyio.CancelScope) -> None:
    while (await receive())["type"] != "http.disconnect":
        pass
    scope.cancel()


def _content_length(value: str | None) -> int | None:
    """A Content-Length of ASCII digits as a number (one of over 18 digits as 10**18, over any
    limit: int() refuses 4,301 digits); ``None`` for anything else."""
    if value is None or not value.isascii() or not value.isdigit():
        return None  # ("²".isdigit() is true, and int() refuses it)
    return int(value) if len(value) <= 18 else 10**18


def _header(scope: Scope, name: bytes) -> str | None:
    for key, value in scope["headers"]:
        if key == name:
            return str(value.decode("latin-1"))
    return None


def _accepts_sse(accept: str) -> bool:
    for item in accept.split(","):
        media = item.partition(";")[0].strip().lower()
        if media in ("text/event-stream", "text/*", "*/*"):
            return True
    return False


# Past the limit, up to this much more of a body is read and dropped before the 413 is sent,
# so that the client (which may be busy sending it) reads the answer and the connection stays
# usable; a client that announces or sends more than that gets the 413 at once and the
# connection is closed.
_DRAIN = 1024 * 1024


def _too_large_message(limit: int) -> str:
    return f"Payload too large: the limit is {limit} bytes"


async def _too_large(send: Send, limit: int, receive: Receive, drained: int | None) -> None:
    """Answer 413 to a body still arriving: read and drop up to ``_DRAIN`` bytes of it
    (``drained`` so far; None: none at all) first, else close the connection after."""
    done = False
    while drained is not None and drained <= _DRAIN:
        event = await receive()
        if event["type"] == "http.disconnect":
            return
        drained += len(event.get("body", b""))
        if not event.get("more_body", False):
            done = True
            break
    close = [] if done else [(b"connection", b"close")]
    await _error(send, 413, INVALID_REQUEST, _too_large_message(limit), close)


async def _error(
    send: Send, status: int, code: int, message: str, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    body = Codec.encode_error(None, code, message)
    await send({"type": "http.response.start", "status": status, "headers": _JSON + (headers or [])})
    await send({"type": "http.response.body", "body": body})
