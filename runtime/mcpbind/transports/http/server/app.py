"""The ASGI application of the Streamable HTTP server: it checks what an HTTP request says of
itself (path, method, media types, protocol version, body) and hands it to what serves it: the
session table, the answering of a POSTed request (JSON or SSE), the GET streams, stateless
mode. What it does as a whole is told in :mod:`mcpbind.transports.http.server`."""

from __future__ import annotations

import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import AsyncExitStack, asynccontextmanager
from typing import TYPE_CHECKING, Final, Generic, Literal, TypeVar

import anyio
from msgspec import UnsetType

from mcpbind.protocol.errors import INVALID_REQUEST, UNSUPPORTED_PROTOCOL_VERSION
from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.http._asgi import Headers, Receive, Scope, Send, lifespan
from mcpbind.transports.http.body import BodyReader
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import EMPTY, HttpError, send_empty, send_error
from mcpbind.transports.http.events import EventStore
from mcpbind.transports.http.media_types import accepts, is_json
from mcpbind.transports.http.security import LOCALHOST_HOSTS, LOCALHOST_ORIGINS, SecurityMiddleware
from mcpbind.transports.http.server.delivery import delivery_for
from mcpbind.transports.http.server.get_streams import GetStreams
from mcpbind.transports.http.server.modern import ModernPosts
from mcpbind.transports.http.server.post import RequestAnswers
from mcpbind.transports.http.server.request import RequestHead, peek_message, request_id
from mcpbind.transports.http.server.session_posts import SessionPosts
from mcpbind.transports.http.server.sessions import SessionState, SessionTable
from mcpbind.transports.http.server.shared_events import default_event_store, worker_stream_tag
from mcpbind.transports.http.server.sharing import SessionSharing
from mcpbind.transports.http.server.stateless import StatelessPosts
from mcpbind.versions import MODERN_VERSIONS, STREAMABLE_HTTP_ASSUMED_VERSION

__all__ = ["ASSUMED_VERSION", "DEFAULT_ALLOWED_HOSTS", "DEFAULT_ALLOWED_ORIGINS", "StreamableHTTPApp"]

log = logging.getLogger("mcpbind.http")

_ALLOW_POST: Final[Headers] = [(b"allow", b"POST")]
_RETRY_SOON: Final[Headers] = [(b"retry-after", b"1")]

DEFAULT_ALLOWED_HOSTS: Final = LOCALHOST_HOSTS
DEFAULT_ALLOWED_ORIGINS: Final = LOCALHOST_ORIGINS
# What a request without MCP-Protocol-Version is taken to speak (the specification's rule).
ASSUMED_VERSION: Final = STREAMABLE_HTTP_ASSUMED_VERSION

if TYPE_CHECKING:
    # A default (PEP 696) keeps a bare ``StreamableHTTPApp`` meaning one of any server.
    from typing_extensions import TypeVar as _DefaultingTypeVar

    ServerT = _DefaultingTypeVar("ServerT", bound=ServerEndpoint, covariant=True, default=ServerEndpoint)
else:
    ServerT = TypeVar("ServerT", bound=ServerEndpoint, covariant=True)


class StreamableHTTPApp(Generic[ServerT]):
    """The Streamable HTTP transport of ``server`` as an ASGI 3 application; see
    :mod:`mcpbind.transports.http.server` for the behaviour and
    :func:`~mcpbind.transports.http.server.embedded.serve_http` to run it. ``server`` is a
    :class:`mcpbind.server.server.Server`, or anything else that is a
    :class:`~mcpbind.transports.http.endpoint.ServerEndpoint`.

    Requests of MCP 2026-07-28 (the stateless protocol) are served next to the sessions of the
    earlier versions, with no session whatever the options (see
    :mod:`~mcpbind.transports.http.server.modern`).

    Options:

    * ``path``: the MCP endpoint (other paths get 404).
    * ``json_response``: answer requests with ``application/json`` instead of SSE (2026-07-28:
      even those whose handlers send progress or log messages, which are then dropped; a
      ``subscriptions/listen`` is answered with a stream all the same).
    * ``stateless``: no sessions (see :mod:`~mcpbind.transports.http.server`).
    * ``get_stream``: whether ``GET`` opens a stream for server-initiated messages (405 if not;
      what the server declares and can send then shrinks: see :mod:`~mcpbind.transports.http.server`).
    * ``event_store``: where SSE events are kept for resumption (``None``: not resumable, and no
      priming events); by default a :class:`~mcpbind.transports.http.events.MemoryEventStore`,
      or with a ``store`` a :class:`~mcpbind.transports.http.server.shared_events.StoreEventStore`
      in it (any worker resumes any stream; events kept ``session_idle_timeout`` seconds).
      With a store, the sessions are kept in it too, and served by any worker (see
      :mod:`~mcpbind.transports.http.server.shared_sessions`).
    * ``retry_ms``: the ``retry:`` sent to 2025-11-25 sessions with the priming event.
    * ``keepalive_interval``: seconds of silence after which a stream gets a ``: ping`` comment.
    * ``max_body_size``: the largest POST body, in bytes (413 past it).
    * ``max_body_bytes_in_flight``: the bytes of POST bodies all requests together may hold,
      from their reading until their answer (four times ``max_body_size`` by default); a POST
      that would go past it gets 503 with ``Retry-After``.
    * ``body_timeout``: seconds a POST body may take to arrive once the app waits for it
      (408 and the connection closed past it; ``None``: no limit). The ASGI server bounds the
      time to send the request head (see
      :func:`~mcpbind.transports.http.server.embedded.serve_http`).
    * ``max_sessions``, ``session_idle_timeout`` (seconds, ``None``: never).
    * ``initialization_timeout``: seconds after ``initialize`` within which the client must
      send ``notifications/initialized``, else its session ends (``None``: no limit).
    * ``max_buffered_events`` and ``max_buffered_bytes`` per stream (see
      :mod:`~mcpbind.transports.http.server` for what happens past them), ``backlog`` of unrelated messages without a GET stream.
    * ``authorize``: called with each POST's body once it is read, before it is served; it
      raises :class:`~mcpbind.transports.http.errors.HttpError` to refuse it (an authorization
      middleware's scope checks: :mod:`mcpbind.server.auth`).
    * ``allowed_hosts``, ``allowed_origins``: DNS-rebinding protection (``None``: no check).
    * ``cors_origins``: answer CORS preflights and let these origins (``"*"``: any) read
      responses, ``Mcp-Session-Id`` included; they are allowed by the Origin check too.
    * ``store``: what the workers serving the same clients share (a
      :class:`~mcpbind.store.RedisStore`: see :mod:`mcpbind.store`); the app opens it in its
      ASGI lifespan and serves as one of those workers (see
      :meth:`Server.serving <mcpbind.server.server.Server.serving>`). A request that needs the
      store while it is unavailable is answered 503, with a JSON-RPC error saying so.

    The last three are those of the
    :class:`~mcpbind.transports.http.security.SecurityMiddleware` the app runs behind.
    """

    def __init__(
        self,
        server: ServerT,
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
        authorize: Callable[[bytes], None] | None = None,
        store: Store | None = None,
    ) -> None:
        if max_body_size < 1 or max_sessions < 1 or max_buffered_events < 1 or max_buffered_bytes < 1:
            raise ValueError("limits must be positive")
        if max_body_bytes_in_flight is None:
            max_body_bytes_in_flight = 4 * max_body_size
        if max_body_bytes_in_flight < max_body_size:
            raise ValueError("max_body_bytes_in_flight must be at least max_body_size")
        self.server = server
        self.store = store
        self.path = path
        self.json_response = json_response
        self.stateless = stateless
        self.get_stream = get_stream and not stateless
        self.event_store: EventStore | None = (
            default_event_store(store, session_idle_timeout) if event_store == "memory" else event_store
        )
        if stateless:
            self.event_store = None
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
        self.authorize = authorize
        self.delivery = delivery_for(
            stateless=stateless, json_response=json_response, get_stream=self.get_stream
        )
        self._table = SessionTable(
            server,
            delivery=self.delivery,
            event_store=self.event_store,
            max_sessions=max_sessions,
            # (Stateless: no session to end; the table only runs the app's task group.)
            session_idle_timeout=None if stateless else session_idle_timeout,
            initialization_timeout=None if stateless else initialization_timeout,
            max_buffered_events=max_buffered_events,
            max_buffered_bytes=max_buffered_bytes,
            backlog=backlog,
            retry_ms=retry_ms,
            stream_tag=worker_stream_tag(store),
        )
        # With a store, sessions are kept there too, and any worker serves any of them.
        self._sharing = (
            SessionSharing(store, self._table, server, ttl=session_idle_timeout, event_store=self.event_store)
            if store is not None and not stateless
            else None
        )
        # The open sessions by id (the table's own dictionary).
        self.sessions: dict[str, SessionState] = self._table.sessions
        self._bodies = BodyReader(
            max_body_size, timeout=body_timeout, in_flight_limit=max_body_bytes_in_flight
        )
        answers = RequestAnswers(self._table, keepalive_interval)
        self._session_posts = SessionPosts(
            self._table, answers.json if json_response else answers.sse, self._sharing
        )
        sharing = self._sharing
        self._get_streams = GetStreams(
            self.event_store,
            keepalive_interval,
            None if sharing is None else sharing.take_relayed,
            None if sharing is None else sharing.follow,
            alive=None if sharing is None else sharing.alive,
        )
        self._stateless = StatelessPosts(
            server,
            answers,
            delivery=self.delivery,
            json_response=json_response,
            max_buffered_events=max_buffered_events,
            max_buffered_bytes=max_buffered_bytes,
        )
        self._modern_posts = ModernPosts(
            server,
            answers,
            json_response=json_response,
            keepalive=keepalive_interval,
            max_buffered_events=max_buffered_events,
            max_buffered_bytes=max_buffered_bytes,
        )
        self._versions = {v.encode(): v for v in server.versions}
        self._modern = frozenset(v for v in server.versions if v in MODERN_VERSIONS)
        methods = "POST" if stateless else ("GET, POST, DELETE" if self.get_stream else "POST, DELETE")
        if cors_origins is not None:
            methods += ", OPTIONS"
        self._allow = [(b"allow", methods.encode())]
        self.security = SecurityMiddleware(
            self._serve,
            allowed_hosts=allowed_hosts,
            allowed_origins=allowed_origins,
            cors_origins=cors_origins,
            cors_methods=methods,
        )
        self._entry = self._serve if self.security.checks_nothing else self.security

    @property
    def _body_bytes(self) -> int:
        """The bytes POST bodies in progress hold (see ``max_body_bytes_in_flight``)."""
        return self._bodies.in_flight

    # -- running ------------------------------------------------------------------------

    @asynccontextmanager
    async def run(self) -> AsyncIterator[StreamableHTTPApp[ServerT]]:
        """Run the app's task group (what ASGI lifespan does); on exit every session ends."""
        # The server's lifespan (Server(lifespan=...)) spans the app's: entered before the first
        # session, left after the last one ended.
        async with AsyncExitStack() as shared:
            if self.store is not None:  # opened first, closed last
                await shared.enter_async_context(self.store)
            await shared.enter_async_context(self.server.serving(store=self.store))
            await shared.enter_async_context(self._table.run())
            self._modern_posts.new_run()
            shared.callback(self._modern_posts.new_run)
            if self._sharing is not None:
                await shared.enter_async_context(self._sharing.running())
            try:
                yield self
            finally:
                # Listen streams end with their results while their requests' streams are still
                # open (the sessions are torn down next).
                await self.server.end_listen_streams()

    @property
    def running(self) -> bool:
        return self._table.spawn is not None

    # -- ASGI ---------------------------------------------------------------------------

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            # The usual request passes the Host/Origin checks with nothing to check or add:
            # served straight away, its headers read once.
            request = RequestHead(scope["headers"])
            if self.security.passes(request.host, request.origin):
                await self._serve_http(scope, request, receive, send)
                return
        await self._entry(scope, receive, send)

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """The application behind the Host/Origin checks and CORS."""
        kind = scope["type"]
        if kind != "http":
            if kind == "lifespan":
                await lifespan(self.run, receive, send, check_startup=True, log=log)
                return
            raise RuntimeError(f"StreamableHTTPApp does not handle {kind!r} connections")
        await self._serve_http(scope, RequestHead(scope["headers"]), receive, send)

    async def _serve_http(self, scope: Scope, request: RequestHead, receive: Receive, send: Send) -> None:
        """An HTTP request that the Host/Origin checks let through (``request``: its headers)."""
        try:
            if not self._on_path(scope):
                raise HttpError(404, INVALID_REQUEST, f"Not found: the MCP endpoint is {self.path}")
            method: str = scope["method"]
            if method == "POST":
                try:
                    await self._post(request, scope["headers"], receive, send)
                finally:
                    self._bodies.release(request)
            elif request.version is not None and self._version(request) in self._modern:
                # (2026-07-28 has neither GET streams nor sessions to end)
                raise HttpError(405, INVALID_REQUEST, f"Method not allowed: {method}", headers=_ALLOW_POST)
            elif method == "GET" and self.get_stream:
                await self._get(request, receive, send)
            elif method == "DELETE" and not self.stateless:
                await self._delete(request, send)
            else:
                raise HttpError(405, INVALID_REQUEST, f"Method not allowed: {method}")
        except HttpError as problem:
            await send_error(
                send, problem, self._allow if problem.status == 405 and not problem.headers else EMPTY
            )
        except StoreUnavailable as lost:
            log.warning("a request failed, the store being unavailable: %s", lost)
            unavailable = HttpError(503, lost.code, lost.message, headers=_RETRY_SOON)
            await send_error(send, unavailable, EMPTY)

    def _on_path(self, scope: Scope) -> bool:
        path: str = scope["path"]
        if path == self.path:
            return True
        root: str = scope.get("root_path", "")
        return bool(root) and path.startswith(root) and path[len(root) :] == self.path

    # -- checks -------------------------------------------------------------------------

    def _version(self, request: RequestHead) -> str:
        raw = request.version
        if raw is None:
            return ASSUMED_VERSION if ASSUMED_VERSION in self.server.versions else self.server.versions[0]
        version = self._versions.get(raw.strip())
        if version is None:
            requested = raw.strip().decode("latin-1")
            supported = list(self.server.versions)
            raise HttpError(
                400,
                UNSUPPORTED_PROTOCOL_VERSION,
                f"Unsupported MCP-Protocol-Version {requested!r} (supported: {', '.join(supported)})",
                data={"supported": supported, "requested": requested},
            )
        return version

    # -- POST ---------------------------------------------------------------------------

    async def _post(self, request: RequestHead, headers: Headers, receive: Receive, send: Send) -> None:
        if not is_json(request.content_type):
            raise HttpError(
                415, INVALID_REQUEST, "Unsupported Media Type: Content-Type must be application/json"
            )
        json_ok, sse_ok = (False, False) if request.accept is None else accepts(request.accept)
        if not json_ok or not (sse_ok or self.json_response):
            wanted = "application/json" if self.json_response else "application/json and text/event-stream"
            raise HttpError(406, INVALID_REQUEST, f"Not Acceptable: Accept must include {wanted}")
        try:
            version = self._version(request)
        except HttpError as unsupported:
            # The answer names the request it refuses (a client probing versions matches it).
            body = await self._bodies.read(receive, request.content_length, request)
            if body is None:
                return
            unsupported.ident = request_id(body)
            raise
        body = await self._bodies.read(receive, request.content_length, request)
        if body is None:
            return  # the client went away
        if self.authorize is not None:
            self.authorize(body)
        if version in self._modern:
            await self._modern_posts.answer(
                request, headers, version, body, sse_ok, receive, send, self._table.spawn
            )
            return
        peeked = peek_message(body)
        method, ident = peeked.method, peeked.id
        is_request = not isinstance(method, UnsetType) and not isinstance(ident, UnsetType)
        if is_request and ident is None:
            raise HttpError(400, INVALID_REQUEST, "Invalid request: the id of a request must not be null")
        if self.stateless:
            await self._stateless.answer(method, ident, body, version, receive, send, self._table.spawn)
            return
        await self._session_posts.answer(request.session_id, method, ident, body, receive, send)

    # -- GET ----------------------------------------------------------------------------

    async def _get(self, request: RequestHead, receive: Receive, send: Send) -> None:
        if request.accept is None or not accepts(request.accept)[1]:
            raise HttpError(406, INVALID_REQUEST, "Not Acceptable: Accept must include text/event-stream")
        self._version(request)
        state = await self._session_posts.find(request.session_id)
        state.active += 1
        try:
            if request.last_event_id is not None and self.event_store is not None:
                await self._get_streams.resume(state, request.last_event_id.decode("latin-1"), receive, send)
            else:
                await self._get_streams.listen(state, None, [], receive, send)
        finally:
            state.active -= 1
            state.last_seen = time.monotonic()

    # -- DELETE -------------------------------------------------------------------------

    async def _delete(self, request: RequestHead, send: Send) -> None:
        self._version(request)
        state = await self._session_posts.find(request.session_id)
        if self._sharing is not None:
            await self._sharing.delete(state)
        await self._table.close(state)
        with anyio.move_on_after(5):
            await state.session.wait_closed()  # its handlers have unwound
        await send_empty(send, 204, EMPTY)
