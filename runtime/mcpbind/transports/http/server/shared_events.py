"""The SSE event log of workers sharing a store (issue 16): :class:`StoreEventStore`, an
:class:`~mcpbind.transports.http.events.EventStore` kept in a :class:`~mcpbind.store.Store`
(Redis), so that a stream written by one worker is resumed (``GET`` with ``Last-Event-ID``)
through any other.

Each SSE stream of a session is a capped store stream named ``events:SESSION:STREAM`` (the
store adds its prefix), holding about its last ``max_events_per_stream`` events and expiring
``ttl`` seconds after its last one. An event id is ``STREAM_ENTRY`` (the stream's id, then the
store's entry id, ``MILLISECONDS-SEQUENCE``): with the session id of the request, it names
where the event is, whichever worker wrote it. Stream ids must be unique within a session
across workers (the app gives each worker's streams a prefix of its own).

A stream being written by one worker is followed by another (:meth:`StoreEventStore.follow`):
its events as they are appended, announced by the store (no polling).

A session that ends drops the streams this worker wrote to (the last ``max_sessions_tracked``
sessions' are remembered); those written by other workers expire by their time to live.
"""

from __future__ import annotations

import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

from mcpbind.store.base import Store, appended_channel, stream_id_key
from mcpbind.transports.http.events import EventStore, MemoryEventStore, StoredEvent

__all__ = ["DEFAULT_EVENT_TTL", "StoreEventStore", "default_event_store", "worker_stream_tag"]

# How long a stream's events are kept after its last one, by default: the default idle time
# of a session.
DEFAULT_EVENT_TTL: Final = 1800.0
# The longest stream id this log accepts in a Last-Event-ID.
_MAX_STREAM_ID: Final = 64


def _valid_stream_id(stream_id: str) -> bool:
    return (
        0 < len(stream_id) <= _MAX_STREAM_ID
        and stream_id.isascii()
        and stream_id.isprintable()
        and (" " not in stream_id and ":" not in stream_id)
    )


class StoreEventStore:
    """The events of the sessions' SSE streams in ``store`` (see the module's docstring).

    ``max_events_per_stream``: the events kept of each stream (at least; the oldest go first).
    ``ttl``: the seconds a stream's events are kept after its last event was written.
    ``max_sessions_tracked``: the sessions whose streams this worker remembers, to delete
    them when the session ends.
    """

    def __init__(
        self,
        store: Store,
        *,
        max_events_per_stream: int = 1024,
        ttl: float = DEFAULT_EVENT_TTL,
        max_sessions_tracked: int = 10_000,
    ) -> None:
        if max_events_per_stream < 1 or max_sessions_tracked < 1:
            raise ValueError("event store bounds must be positive")
        if not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        self.store = store
        self.max_events_per_stream = max_events_per_stream
        self.ttl = ttl
        self.max_sessions_tracked = max_sessions_tracked
        # session id -> the streams this worker wrote to (insertion order: oldest session first)
        self._written: dict[str, set[str]] = {}

    @staticmethod
    def key(session_id: str, stream_id: str) -> str:
        """The store stream holding the events of one SSE stream."""
        return f"events:{session_id}:{stream_id}"

    async def append(self, session_id: str, stream_id: str, data: bytes) -> str:
        entry = await self.store.append(
            self.key(session_id, stream_id), data, max_length=self.max_events_per_stream, ttl=self.ttl
        )
        streams = self._written.get(session_id)
        if streams is None:
            streams = self._written[session_id] = set()
            if len(self._written) > self.max_sessions_tracked:
                del self._written[next(iter(self._written))]
        streams.add(stream_id)
        return f"{stream_id}_{entry}"

    async def replay(self, session_id: str, last_event_id: str) -> tuple[str, list[StoredEvent]] | None:
        stream_id, _, entry = last_event_id.rpartition("_")
        if not _valid_stream_id(stream_id) or len(entry) > 48:
            return None
        try:
            stream_id_key(entry)
        except ValueError:
            return None
        events = await self.store.read_after(
            self.key(session_id, stream_id), entry, limit=self.max_events_per_stream
        )
        return stream_id, [StoredEvent(f"{stream_id}_{ident}", data) for ident, data in events]

    @asynccontextmanager
    async def follow(self, session_id: str, event_id: str) -> AsyncIterator[AsyncIterator[StoredEvent]]:
        """The events of the stream ``event_id`` (an id :meth:`replay` accepted) belongs to,
        from the one after it, as they are appended by any worker: ``async with
        events.follow(session, event_id) as events: async for event in events: ...``. It never
        ends by itself (the caller stops at the stream's last event);
        :class:`~mcpbind.store.errors.StoreUnavailable` when the store is lost."""
        stream_id, _, entry = event_id.rpartition("_")
        key = self.key(session_id, stream_id)
        async with self.store.subscribe(appended_channel(key)) as announced:
            yield self._following(key, stream_id, entry, announced)

    async def _following(
        self, key: str, stream_id: str, entry: str, announced: AsyncIterator[bytes]
    ) -> AsyncIterator[StoredEvent]:
        last = entry
        events = await self.store.read_after(key, last, limit=self.max_events_per_stream)
        if not events and not await self.store.read_after(key, None, limit=1):
            return  # no such stream (any more): nothing will come
        while True:  # subscribed first: an entry appended between two reads is announced
            for ident, data in events:
                last = ident
                yield StoredEvent(f"{stream_id}_{ident}", data)
            try:
                await anext(announced)
            except StopAsyncIteration:
                return
            events = await self.store.read_after(key, last, limit=self.max_events_per_stream)

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        streams = self._written.get(session_id)
        if streams is not None:
            streams.discard(stream_id)
        await self.store.delete(self.key(session_id, stream_id))

    async def forget_session(self, session_id: str) -> None:
        streams = self._written.pop(session_id, None)
        if streams:
            await self.store.delete(*(self.key(session_id, stream_id) for stream_id in streams))


def default_event_store(store: Store | None, idle_timeout: float | None) -> EventStore:
    """The event log of an app given no other: in memory, or in ``store`` when the app has one
    (kept as long as an idle session, ``idle_timeout`` seconds, or :data:`DEFAULT_EVENT_TTL`)."""
    if store is None:
        return MemoryEventStore()
    return StoreEventStore(store, ttl=idle_timeout if idle_timeout is not None else DEFAULT_EVENT_TTL)


def worker_stream_tag(store: Store | None) -> str:
    """What this worker puts in its stream ids (see the module's docstring): nothing without a
    store, else a few random hexadecimal digits and a dot."""
    return "" if store is None else secrets.token_hex(4) + "."
