"""The session table of a Streamable HTTP app: its sessions by id, made on ``initialize`` (up to
``max_sessions``), found by ``Mcp-Session-Id``, and ended on ``DELETE``, when idle for
``session_idle_timeout``, when never initialized within ``initialization_timeout``, or when the
app stops; and the app's task group, which holds what outlives a request (the expiry, sessions
being closed, the helper tasks of POSTs whose handlers wait).

Session ids come from :func:`secrets.token_urlsafe`. A full table answers ``initialize`` with
503 and ``Retry-After`` (existing sessions are never evicted to make room); an unknown or ended
session gets 404.
"""

from __future__ import annotations

import logging
import secrets
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import anyio
import anyio.abc
import msgspec
from msgspec import UNSET, UnsetType

from mcpbind.protocol.connection import Connection, Delivery
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST
from mcpbind.runtime.session import Session, Spawn
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import RETRY_AFTER, SERVER_BUSY, SESSION_NOT_FOUND, HttpError
from mcpbind.transports.http.events import EventStore
from mcpbind.transports.http.server.transport import HttpSessionTransport

__all__ = ["SessionState", "SessionTable"]

log = logging.getLogger("mcpbind.http")


class _InitializeAnswer(msgspec.Struct):
    result: _NegotiatedResult | UnsetType = UNSET


class _NegotiatedResult(msgspec.Struct, rename="camel"):
    protocol_version: str


_INITIALIZE_ANSWER = msgspec.json.Decoder(_InitializeAnswer)


class SessionState:
    """One session of the app: its inline :class:`~mcpbind.runtime.session.Session` (no task of its own:
    each POST runs what it brings in its own task) and its transport."""

    __slots__ = ("active", "ending", "header", "id", "last_seen", "owner", "session", "transport")

    def __init__(self, session_id: str, transport: HttpSessionTransport, session: Session) -> None:
        self.id = session_id
        self.transport = transport
        self.session = session
        self.header: tuple[tuple[bytes, bytes], ...] = (
            ((b"mcp-session-id", session_id.encode()),) if session_id else ()
        )
        self.active = 0  # HTTP requests in progress
        self.last_seen = time.monotonic()
        self.ending = False
        # Whom the session belongs to (set by an authorization middleware: the principal of the
        # access token that opened it), None when the app is not protected.
        self.owner: object = None


class SessionTable:
    """The sessions of one app (see the module's docstring); ``sessions`` maps their ids to
    them. New sessions get transports with the buffer bounds given here, and the connections
    ``server`` makes for ``delivery``."""

    def __init__(
        self,
        server: ServerEndpoint,
        *,
        delivery: Delivery,
        event_store: EventStore | None,
        max_sessions: int,
        session_idle_timeout: float | None,
        initialization_timeout: float | None,
        max_buffered_events: int,
        max_buffered_bytes: int,
        backlog: int,
        retry_ms: int | None,
        stream_tag: str = "",
    ) -> None:
        self.server = server
        self.delivery = delivery
        self.event_store = event_store
        self.max_sessions = max_sessions
        self.session_idle_timeout = session_idle_timeout
        self.initialization_timeout = initialization_timeout
        self.max_buffered_events = max_buffered_events
        self.max_buffered_bytes = max_buffered_bytes
        self.backlog = backlog if delivery.unrelated else 0  # no GET stream would ever take it
        self.retry_ms = retry_ms
        self.stream_tag = stream_tag
        self.sessions: dict[str, SessionState] = {}
        # Told of each session made (new or adopted), and awaited with each session initialized
        # before the answer to its initialize leaves (workers sharing a store record it there).
        self.on_new: Callable[[SessionState], None] | None = None
        self.on_initialized: Callable[[SessionState], Awaitable[None]] | None = None
        # Whether other workers serve these sessions too: one ending here keeps its events.
        self.shared = False
        # Sessions not yet initialized, by id: when each was made (oldest first).
        self._uninitialized: dict[str, float] = {}
        self._task_group: anyio.abc.TaskGroup | None = None

    # -- running --------------------------------------------------------------------------

    @asynccontextmanager
    async def run(self) -> AsyncIterator[None]:
        """Run the app's task group (and the expiry); on exit every session ends."""
        if self._task_group is not None:
            raise RuntimeError("this app is already running")
        async with anyio.create_task_group() as tg:
            self._task_group = tg
            if self.session_idle_timeout is not None or self.initialization_timeout is not None:
                tg.start_soon(self._expire)
            try:
                yield
            finally:
                self._task_group = None
                with anyio.CancelScope(shield=True):
                    for state in list(self.sessions.values()):
                        await self.close(state)
                self.sessions.clear()
                tg.cancel_scope.cancel()

    @property
    def spawn(self) -> Spawn | None:
        """Start a task in the app's task group (``None`` when the app is not running)."""
        tg = self._task_group
        return tg.start_soon if tg is not None else None

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
                self.end(state)

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
                self.end(state)
            else:
                break  # made later, as all that follow

    # -- sessions -------------------------------------------------------------------------

    def new(self) -> SessionState:
        """A new session, for an ``initialize``: 500 if the app is not running, 503 if full."""
        state = self.adopt(secrets.token_urlsafe(24))
        if self.initialization_timeout is not None:
            self._uninitialized[state.id] = time.monotonic()
        return state

    def adopt(self, session_id: str, connection: Connection | None = None) -> SessionState:
        """A session of this app with the id ``session_id`` (a new one, or one that another
        worker sharing the app's store opened: its ``connection`` then is where that worker's
        left it); 500 if the app is not running, 503 if full."""
        tg = self._task_group
        if tg is None:
            raise HttpError(
                500,
                INTERNAL_ERROR,
                "The MCP app is not running: serve it with ASGI lifespan enabled, "
                "or wrap the server in `async with app.run():`",
            )
        if len(self.sessions) >= self.max_sessions:
            raise HttpError(
                503,
                SERVER_BUSY,
                f"Too many sessions (limit {self.max_sessions}); try again later",
                headers=RETRY_AFTER,
            )
        transport = HttpSessionTransport(
            session_id,
            event_store=self.event_store,
            max_buffered_events=self.max_buffered_events,
            max_buffered_bytes=self.max_buffered_bytes,
            backlog=self.backlog,
            retry_ms=self.retry_ms,
            stream_tag=self.stream_tag,
        )
        if connection is None:
            connection = self.server.connection(delivery=self.delivery)
        else:
            transport.protocol_version = connection.protocol_version
        session = self.server.inline_session(transport, spawn=tg.start_soon, connection=connection)
        state = SessionState(session_id, transport, session)
        self.sessions[session_id] = state
        if self.on_new is not None:
            self.on_new(state)
        return state

    def find(self, session_id: bytes | None) -> SessionState:
        """The session an ``Mcp-Session-Id`` header names: 400 without one, 404 if unknown."""
        if session_id is None:
            raise HttpError(400, INVALID_REQUEST, "Bad request: missing Mcp-Session-Id header")
        state = self.sessions.get(session_id.decode("latin-1"))
        if state is None:
            raise HttpError(404, SESSION_NOT_FOUND, "Session not found")
        return state

    def initialized(self, state: SessionState, answer: bytes) -> bool:
        """Whether the answer to initialize accepted the session (which keeps it), else it ends."""
        try:
            result = _INITIALIZE_ANSWER.decode(answer).result
        except msgspec.DecodeError:
            result = UNSET
        if isinstance(result, UnsetType):
            self.end(state)
            return False
        state.transport.protocol_version = result.protocol_version
        return True

    async def record(self, state: SessionState) -> None:
        """A session was initialized (:meth:`initialized`): what must be done before the answer
        leaves (``on_initialized``); the session ends if that fails (the error is raised)."""
        if self.on_initialized is None:
            return
        try:
            await self.on_initialized(state)
        except BaseException:
            self.end(state)
            raise

    def end(self, state: SessionState) -> None:
        """End a session from synchronous code: it is gone at once, closed soon."""
        if self.sessions.get(state.id) is state:
            del self.sessions[state.id]
        if self._task_group is not None and not state.ending:
            self._task_group.start_soon(self.close, state)

    async def close(self, state: SessionState) -> None:
        """The session ends: its handlers are cancelled (``DELETE`` waits for them), its
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
            if self.event_store is not None and not self.shared:
                await self.event_store.forget_session(state.id)
