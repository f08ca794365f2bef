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
port. The checks are :class:`~mcpbind.transports.http.security.SecurityMiddleware`'s, made
before anything else (see there for the patterns).

Errors on the message endpoint carry a JSON-RPC error object (``"id": null``) as body:
``400`` for a missing ``session_id``, malformed JSON (``-32700``, the message is dropped) or a
JSON value that is neither an object nor an array; ``404`` for an unknown or ended session;
``415`` unless ``Content-Type`` is ``application/json``; ``413`` and ``503`` as above (a body
over the limit is read and dropped up to 1 MiB before the ``413``, see
:mod:`~mcpbind.transports.http.body`). A
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
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.transports.http._asgi import (
    Message as Message,  # the ASGI event type, importable from here as before
)
from mcpbind.transports.http._asgi import Receive, Scope, Send, lifespan
from mcpbind.transports.http.body import BodyProgress, BodyReader
from mcpbind.transports.http.disconnect import cancel_on_disconnect
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import HttpError, send_empty, send_error
from mcpbind.transports.http.media_types import accepts, is_json
from mcpbind.transports.http.security import LOCALHOST_HOSTS, LOCALHOST_ORIGINS, SecurityMiddleware
from mcpbind.transports.http.sse import MESSAGE, SseQueue
from mcpbind.transports.http.sse_encode import PING, encode_event

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

_SSE_HEADERS = [
    (b"content-type", b"text/event-stream"),
    (b"cache-control", b"no-store"),
    (b"x-accel-buffering", b"no"),
]
# At most this many queued messages are joined into one write of the SSE stream.
_BATCH = 64
_SESSION_NOT_FOUND = "Session not found (it ended, or never existed)"


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
        event = encode_event(message)
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
        item = ("", encode_event(message), MESSAGE)
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
        server: ServerEndpoint,
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
        self._bodies = BodyReader(max_body_size)
        self.security = SecurityMiddleware(
            self._serve, allowed_hosts=self.allowed_hosts, allowed_origins=self.allowed_origins
        )
        self._entry = self._serve if self.security.checks_nothing else self.security

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
        # The server's lifespan spans the app's, so that every session's Server.run joins it.
        async with self.server.serving():
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
        await self._entry(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The application behind the Host/Origin checks."""
        kind = scope["type"]
        if kind == "http":
            try:
                await self._http(scope, receive, send)
            except HttpError as error:
                await send_error(send, error)
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
                raise HttpError(405, INVALID_REQUEST, "Method not allowed", headers=[(b"allow", b"GET")])
            await self._stream(scope, receive, send, root)
        elif path == self.message_path:
            if method != "POST":
                raise HttpError(405, INVALID_REQUEST, "Method not allowed", headers=[(b"allow", b"POST")])
            await self._post(scope, receive, send)
        else:
            raise HttpError(404, INVALID_REQUEST, "Not found")

    # -- GET: the SSE stream ----------------------------------------------------------------

    async def _stream(self, scope: Scope, receive: Receive, send: Send, root: str) -> None:
        accept = _header(scope, b"accept")
        if accept is not None and not accepts(accept)[1]:
            raise HttpError(406, INVALID_REQUEST, "Not acceptable: the client must accept text/event-stream")
        task_group = self._task_group
        if task_group is None:
            message = "LegacySSEApp is not running: serve it with ASGI lifespan on, or inside `async with app.run()`"
            raise HttpError(500, INTERNAL_ERROR, message)
        if len(self._sessions) >= self.max_sessions:
            raise HttpError(
                503,
                INTERNAL_ERROR,
                f"Too many sessions (limit {self.max_sessions})",
                headers=[(b"retry-after", b"5")],
            )
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
                        "body": encode_event(endpoint.encode(), event=b"endpoint"),
                        "more_body": True,
                    }
                )
                async with anyio.create_task_group() as stream:
                    stream.start_soon(cancel_on_disconnect, receive, stream.cancel_scope)
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
            raise HttpError(400, INVALID_REQUEST, "Bad request: the session_id query parameter is missing")
        session_id = ids[0]
        if session_id not in self._sessions:
            raise HttpError(404, INVALID_REQUEST, _SESSION_NOT_FOUND)
        if not is_json(_header(scope, b"content-type")):
            raise HttpError(
                415, INVALID_REQUEST, "Unsupported media type: Content-Type must be application/json"
            )
        body = await self._bodies.read(receive, _header(scope, b"content-length"), BodyProgress())
        if body is None:
            return  # the client went away
        try:
            first = bytes(msgspec.json.decode(body, type=msgspec.Raw))[:1]
        except msgspec.DecodeError as exc:
            raise HttpError(400, PARSE_ERROR, f"Parse error: {exc}") from None
        except RecursionError:
            raise HttpError(400, PARSE_ERROR, "Parse error: JSON nested too deeply") from None
        if first not in (b"{", b"["):
            raise HttpError(400, INVALID_REQUEST, "Invalid request: expected a JSON-RPC message")
        session = self._sessions.get(session_id)
        if session is None:
            raise HttpError(404, INVALID_REQUEST, _SESSION_NOT_FOUND)
        incoming = session.transport.incoming
        try:
            try:
                incoming.send_nowait(body)
            except anyio.WouldBlock:
                with anyio.move_on_after(self.post_wait) as waited:
                    await incoming.send(body)
                if waited.cancelled_caught:
                    raise HttpError(
                        503,
                        INTERNAL_ERROR,
                        "Session busy: its message queue is full; send again later",
                        headers=[(b"retry-after", b"1")],
                    ) from None
        except (anyio.BrokenResourceError, anyio.ClosedResourceError):
            raise HttpError(404, INVALID_REQUEST, _SESSION_NOT_FOUND) from None
        await send_empty(send, 202, [])


def _header(scope: Scope, name: bytes) -> bytes | None:
    for key, value in scope["headers"]:
        if key == name:
            return bytes(value)
    return None
