"""What an app given a store does for its 2025-era sessions, so that the workers sharing the
store serve any of them (issue 16): :class:`SessionSharing`, which brings together the
sessions' records (:mod:`~mcpbind.transports.http.server.shared_sessions`), the client's
messages relayed between workers (:mod:`~mcpbind.transports.http.server.client_relay`), the
following of a stream another worker writes
(:meth:`~mcpbind.transports.http.server.shared_events.StoreEventStore.follow`) and this worker's
mark of life (:mod:`~mcpbind.transports.http.server.liveness`: a followed stream whose worker
is gone is given up at once)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.store.base import Store
from mcpbind.transports.http.endpoint import ServerEndpoint
from mcpbind.transports.http.events import EventStore
from mcpbind.transports.http.server.client_relay import ClientRelay
from mcpbind.transports.http.server.get_streams import Follow
from mcpbind.transports.http.server.liveness import WorkerLiveness
from mcpbind.transports.http.server.sessions import SessionState, SessionTable
from mcpbind.transports.http.server.shared_events import StoreEventStore
from mcpbind.transports.http.server.shared_sessions import DEFAULT_SESSION_TTL, SharedSessions

__all__ = ["SessionSharing"]


class SessionSharing:
    """The sessions of ``table`` shared through ``store`` (see the module's docstring); their
    records expire ``ttl`` seconds (``None``: the default) after they were last used. The app
    asks it for the session a request names (:meth:`find`), tells it of each notification and
    response a session gets (:meth:`received`) and of each ``DELETE`` (:meth:`delete`), and
    runs :meth:`running` for as long as it serves."""

    def __init__(
        self,
        store: Store,
        table: SessionTable,
        server: ServerEndpoint,
        *,
        ttl: float | None,
        event_store: EventStore | None,
    ) -> None:
        self.sessions = SharedSessions(store, table, server, ttl=ttl or DEFAULT_SESSION_TTL)
        self.relay = ClientRelay(store, table)
        # Beside each GET stream: the messages other workers relay for it.
        self.take_relayed = self.sessions.take_relayed
        # A POST stream another worker writes, resumed here (with the store's event log only).
        self.follow: Follow | None = event_store.follow if isinstance(event_store, StoreEventStore) else None
        # This worker's mark in the store, and whether another worker's is there.
        self.liveness = WorkerLiveness(store, table.stream_tag.rstrip("."))
        self.alive = self.liveness.alive

    async def find(self, session_id: bytes | None) -> SessionState:
        """The session an ``Mcp-Session-Id`` header names (from its record)."""
        return await self.sessions.find(session_id)

    async def received(
        self, state: SessionState, method: str | None, ident: RequestId | None, body: bytes
    ) -> bool:
        """The client sent the notification ``method`` (or with ``None`` the response
        ``ident``): recorded or relayed to the other workers as needed; True when it is for
        them only (accepted here, and nothing more)."""
        if method == "notifications/initialized":
            await self.sessions.initialized(state)  # recorded before it is accepted
            return False
        if method is None and ident is None:
            return False
        return await self.relay.relay(state, method, ident, body)

    async def delete(self, state: SessionState) -> None:
        """The client ended the session (``DELETE``)."""
        await self.sessions.delete(state)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Take what the other workers relay, and mark this worker alive, during the block."""
        async with self.liveness.running(), self.relay.running():
            yield
