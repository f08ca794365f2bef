"""2025-era sessions shared by the workers of a store (issue 16): :class:`SharedSessions`.

A session lives in the store as a record under ``session:ID`` (the store adds its prefix): the
negotiated protocol version, the client's capabilities and information, whether the client
sent ``notifications/initialized``, its log level and the URIs it subscribed to. The worker
that answers ``initialize`` writes it before the answer leaves; ``notifications/initialized``,
``logging/setLevel``, ``resources/subscribe`` and ``resources/unsubscribe`` write it again
(whichever worker gets them) before they are answered. The record expires ``ttl`` seconds
(the app's ``session_idle_timeout``) after it was last used: every request of the session
reads it, and renews its time to live once in a while (every tenth of it).

A worker holds a local copy of each session it served (a
:class:`~mcpbind.transports.http.server.sessions.SessionState` in its table). A request for a
session it holds no copy of makes one from the record: the session goes on where the other
worker left it, with no new ``initialize``. Each request brings the copy up to date with the
record (log level, subscriptions, initialized); a session whose record is gone (``DELETE`` on
any worker, or expired) is ended here too and answered 404. ``DELETE`` removes the record
(and the events this worker wrote); a local copy that ends otherwise (idle here, or the worker
stopping) leaves both to the other workers.

A protected app's record names the principal of the access token that opened the session; a
request with another principal's token does not find it, on any worker (404).

A request a handler sends to the client (sampling, elicitation, roots) may be answered through
another worker, and a request running on one worker may be cancelled through another: those
messages of the client are relayed
(:mod:`~mcpbind.transports.http.server.client_relay`). Each worker numbers the requests of its
copies from a random number of its own, so that the ids of two workers' requests do not meet.

A message for a GET stream (one related to no request: in JSON-response mode, a handler's
requests to the client and notifications) that a worker's copy of the session has no GET
stream for is published on the session's channel ``to:ID``, which the worker holding a GET
stream of the session listens to while it is open; with none open anywhere it is lost. Each
record written is published there too, so that the copy of the worker holding the GET stream
is brought up to date at once (its log level and subscriptions). List
changes and resource updates are not: every worker's copy hears those through the fan-out.

Two workers changing one session's subscriptions at the same moment: the last to write wins.
"""

from __future__ import annotations

import logging
import secrets
import time
from typing import Any, Final

import msgspec
from anyio.abc import TaskStatus

from mcpbind import types
from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.protocol.peek import peek
from mcpbind.runtime.access import current_access_token
from mcpbind.runtime.context import LOG_LEVELS
from mcpbind.runtime.session import RequestContext, RequestHandler, Session
from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.errors import SESSION_NOT_FOUND, HttpError
from mcpbind.transports.http.server.sessions import SessionState, SessionTable

__all__ = ["DEFAULT_SESSION_TTL", "SessionRecord", "SharedSessions"]

log = logging.getLogger("mcpbind.http")

# How long an unused session is kept in the store without an app's session_idle_timeout.
DEFAULT_SESSION_TTL: Final = 1800.0
# The requests whose effect on the session is recorded before they are answered.
RECORDED_METHODS: Final = frozenset({"logging/setLevel", "resources/subscribe", "resources/unsubscribe"})
_INITIALIZED: Final = b'{"jsonrpc":"2.0","method":"notifications/initialized"}'
_MAX_SESSION_ID: Final = 128
# Starts a message on a session's channel that is its new record, not a message to relay (a
# JSON-RPC message starts with "{").
_RECORD_CHANGED: Final = b"record:"
# The notifications every worker's copy of a session is told of itself (fan-out): never relayed.
_HEARD_EVERYWHERE: Final = frozenset(
    {
        "notifications/tools/list_changed",
        "notifications/prompts/list_changed",
        "notifications/resources/list_changed",
        "notifications/resources/updated",
    }
)


class SessionRecord(msgspec.Struct, omit_defaults=True):
    """A session as the store keeps it (see the module's docstring)."""

    version: str
    capabilities: msgspec.Raw
    client_info: msgspec.Raw
    ready: bool = False
    log_level: str = "debug"
    subscriptions: list[str] = msgspec.field(default_factory=list)
    # The principal (issuer, subject, client) of the access token that opened the session,
    # when the app is protected: only that principal's requests find it.
    owner: list[str | None] | None = None


_ENCODER: Final = msgspec.json.Encoder()
_RECORD: Final = msgspec.json.Decoder(SessionRecord)
_CAPABILITIES: Final = msgspec.json.Decoder(types.ClientCapabilities)
_INFO: Final = msgspec.json.Decoder(types.Implementation)


class SharedSessions:
    """The sessions of ``table`` kept in ``store`` as well (see the module's docstring), each
    record expiring ``ttl`` seconds after it was last used. The app calls :meth:`find` for
    each request naming a session and :meth:`delete` for ``DELETE``; the table tells it of
    each session made and initialized."""

    def __init__(
        self,
        store: Store,
        table: SessionTable,
        server: ServerEndpoint,
        *,
        ttl: float,
    ) -> None:
        if not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        self.store = store
        self.table = table
        self.server = server
        self.ttl = ttl
        # session id -> when its record's time to live was last renewed by this worker
        self._renewed: dict[str, float] = {}
        table.on_new = self._watch
        table.shared = True
        table.on_initialized = self.save

    @staticmethod
    def key(session_id: str) -> str:
        return f"session:{session_id}"

    # -- writing --------------------------------------------------------------------------

    async def save(self, state: SessionState, *, ready: bool | None = None) -> None:
        """Write the session's record as the session stands (``ready``: whether the client
        sent ``notifications/initialized``, if it is known better than the session knows)."""
        session = state.session
        connection = session.connection
        version = connection.protocol_version
        if version is None:  # (never: a session is recorded once initialized)
            return
        record = SessionRecord(
            version=version,
            capabilities=msgspec.Raw(
                _ENCODER.encode(connection.peer.capabilities or types.ClientCapabilities())
            ),
            client_info=msgspec.Raw(_ENCODER.encode(connection.peer.info)),
            ready=session.is_ready if ready is None else ready,
            log_level=session.log_level,
            subscriptions=sorted(self.server.subscriptions_of(session)),
            owner=_owner(state),
        )
        data = _ENCODER.encode(record)
        await self.store.set(self.key(state.id), data, ttl=self.ttl)
        self._renewed_now(state.id)
        # The worker holding a GET stream of the session brings its copy up to date at once
        # (a subscription made elsewhere holds for the updates it hears itself).
        await self.store.publish(self.channel(state.id), _RECORD_CHANGED + data)

    def _renewed_now(self, session_id: str) -> None:
        renewed = self._renewed
        renewed[session_id] = time.monotonic()
        if len(renewed) > 2 * self.table.max_sessions:  # those of sessions no longer held go
            held = self.table.sessions
            self._renewed = {sid: when for sid, when in renewed.items() if sid in held}

    async def initialized(self, state: SessionState) -> None:
        """The client sent ``notifications/initialized`` (to this worker): recorded before it
        is accepted."""
        await self.save(state, ready=True)

    async def delete(self, state: SessionState) -> None:
        """The client ended the session (``DELETE``): its record goes."""
        self._renewed.pop(state.id, None)
        await self.store.delete(self.key(state.id))
        if self.table.event_store is not None:
            await self.table.event_store.forget_session(state.id)

    def _watch(self, state: SessionState) -> None:
        """A session was made here: the requests that change its record write it."""
        session = state.session
        handlers = dict(session.request_handlers)
        for method in RECORDED_METHODS:
            handler = handlers.get(method)
            if handler is not None:
                handlers[method] = self._recording(state, handler)
        session.request_handlers = handlers
        session.connection.number_requests_from(1 + secrets.randbits(48))
        state.transport.relay = lambda message: self._relay(state.id, message)

    def _recording(self, state: SessionState, handler: RequestHandler) -> RequestHandler:
        async def recorded(params: Any, ctx: RequestContext[Any]) -> Any:
            result = await handler(params, ctx)
            await self.save(state)
            return result

        return recorded

    # -- messages for the GET stream another worker holds ---------------------------------------

    @staticmethod
    def channel(session_id: str) -> str:
        """The store channel of the messages for a session's GET stream."""
        return f"to:{session_id}"

    async def _relay(self, session_id: str, message: bytes) -> bool:
        """Publish a message for a GET stream this worker does not hold (False: it stays in
        the backlog here: a change that every worker's copy of the session hears anyway)."""
        try:
            if peek(message).method in _HEARD_EVERYWHERE:
                return False
        except (msgspec.DecodeError, msgspec.ValidationError):
            return False
        try:
            await self.store.publish(self.channel(session_id), message)
        except StoreUnavailable as lost:
            log.warning("a message for a GET stream stays here, the store being unavailable: %s", lost)
            return False
        return True

    async def take_relayed(self, state: SessionState, *, task_status: TaskStatus[None]) -> None:
        """Beside a GET stream of the session: the messages other workers relay for it go to
        it (``task_status`` is told once they are taken)."""
        started = False
        try:
            async with self.store.subscribe(self.channel(state.id)) as messages:
                task_status.started()
                started = True
                async for message in messages:
                    if message.startswith(_RECORD_CHANGED):
                        await self._changed(state, message[len(_RECORD_CHANGED) :])
                    else:
                        await state.transport.take_relayed(message)
        except StoreUnavailable as lost:
            log.warning("a GET stream misses the other workers' messages: %s", lost)
        finally:
            if not started:
                task_status.started()

    async def _changed(self, state: SessionState, data: bytes) -> None:
        """Another worker changed the session's record (to ``data``)."""
        try:
            record = _RECORD.decode(data)
        except msgspec.DecodeError:
            return
        if not state.session.closed:
            await self._update(state, record)

    # -- reading --------------------------------------------------------------------------

    async def find(self, session_id: bytes | None) -> SessionState:
        """The session an ``Mcp-Session-Id`` header names, brought up to date with its record
        or made from it: 400 without one, 404 if the store has no record of it."""
        if session_id is None:
            raise HttpError(400, INVALID_REQUEST, "Bad request: missing Mcp-Session-Id header")
        sid = session_id.decode("latin-1")
        local = self.table.sessions.get(sid)
        if len(sid) > _MAX_SESSION_ID or not sid.isprintable():
            raise HttpError(404, SESSION_NOT_FOUND, "Session not found")
        data = await self.store.get(self.key(sid))
        record = None
        if data is not None:
            try:
                record = _RECORD.decode(data)
            except msgspec.DecodeError:
                log.warning("dropping the unreadable record of session %s", sid)
        token = current_access_token.get()
        if record is not None and token is not None and record.owner != list(token.principal):
            log.warning("a request for a session opened with another principal's token was refused")
            raise HttpError(404, SESSION_NOT_FOUND, "Session not found")
        if record is None:
            self._renewed.pop(sid, None)
            if local is not None:
                self.table.end(local)  # ended elsewhere, or expired
            raise HttpError(404, SESSION_NOT_FOUND, "Session not found")
        if local is None or local.session.closed:
            local = self._rebuild(sid, record)
        await self._update(local, record)
        if time.monotonic() - self._renewed.get(sid, 0.0) > self.ttl / 10:
            await self.store.expire(self.key(sid), self.ttl)
            self._renewed_now(sid)
        return local

    def _rebuild(self, session_id: str, record: SessionRecord) -> SessionState:
        """A local copy of a session another worker opened."""
        connection = self.server.connection(delivery=self.table.delivery)
        try:
            capabilities = _CAPABILITIES.decode(record.capabilities)
            info = _INFO.decode(record.client_info)
            connection.resume_initialized(record.version, info, capabilities)
        except (msgspec.DecodeError, ValueError) as bad:
            log.warning("session %s cannot be taken over: %s", session_id, bad)
            raise HttpError(404, SESSION_NOT_FOUND, "Session not found") from None
        log.debug("taking session %s over from the store", session_id)
        state = self.table.adopt(session_id, connection)
        if record.owner is not None:
            state.owner = tuple(record.owner)
        return state

    async def _update(self, state: SessionState, record: SessionRecord) -> None:
        session: Session = state.session
        level = record.log_level
        if level in LOG_LEVELS and level != session.log_level:
            session.log_level = level
        self.server.restore_subscriptions(session, record.subscriptions)
        if record.ready and not session.is_ready:
            await session.feed(_INITIALIZED)


def _owner(state: SessionState) -> list[str | None] | None:
    """Whom a session belongs to, as its record says it: the principal its state names (the
    authorization middleware binds it), else that of the request's access token."""
    owner = state.owner
    if isinstance(owner, tuple):
        return list(owner)
    token = current_access_token.get()
    return None if token is None else list(token.principal)
