"""Where the Streamable HTTP server keeps the SSE events it sent, so that a client that lost a
stream can get the rest of it (``GET`` with ``Last-Event-ID``).

Every event the server writes on an SSE stream is first appended here and gets its id from
here. The id names its stream, so a ``Last-Event-ID`` alone says which stream to resume and
from where; ids are unique within a session (and, for the in-memory store, across the store).

:class:`MemoryEventStore` is the bounded default. Another store (shared between processes,
say) implements the :class:`EventStore` protocol.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from typing import Protocol

__all__ = ["EventStore", "MemoryEventStore", "StoredEvent"]

log = logging.getLogger("mcpbind.http")


@dataclass(frozen=True, slots=True)
class StoredEvent:
    """One event as it was sent: its id and its data (empty for a priming event)."""

    id: str
    data: bytes


class EventStore(Protocol):
    """Storage of the events of a session's SSE streams.

    ``session_id`` and ``stream_id`` are opaque strings chosen by the server, made only of
    visible ASCII; event ids returned by :meth:`append` must be visible ASCII too, without
    spaces, and unique within the session.
    """

    async def append(self, session_id: str, stream_id: str, data: bytes) -> str:
        """Keep ``data`` as the next event of the stream; its event id."""
        ...

    async def replay(self, session_id: str, last_event_id: str) -> tuple[str, list[StoredEvent]] | None:
        """The stream ``last_event_id`` belongs to, and its kept events after that one, oldest
        first (none when they were forgotten); ``None`` when the id was never issued."""
        ...

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        """The stream is complete and was delivered: its events are no longer needed."""
        ...

    async def forget_session(self, session_id: str) -> None:
        """The session ended: drop all its events."""
        ...


class MemoryEventStore:
    """The in-memory default: bounded per session and in total, in events and in bytes.

    When a session holds ``max_events_per_session`` events or ``max_bytes_per_session`` bytes
    of data, or the store ``max_events`` or ``max_bytes``, the oldest kept events go first
    (those of the session's oldest stream, or of the oldest session) and a debug message is
    logged; a client resuming after an event that is gone gets what is left of its stream.
    """

    def __init__(
        self,
        *,
        max_events_per_session: int = 1024,
        max_bytes_per_session: int = 4 << 20,
        max_events: int = 65536,
        max_bytes: int = 64 << 20,
    ) -> None:
        if min(max_events_per_session, max_bytes_per_session, max_events, max_bytes) < 1:
            raise ValueError("event store bounds must be positive")
        self.max_events_per_session = max_events_per_session
        self.max_bytes_per_session = max_bytes_per_session
        self.max_events = max_events
        self.max_bytes = max_bytes
        # session id -> stream id -> (sequence number, data) in order; dicts keep insertion
        # order, so the first stream of a session and the first session are the oldest. Plain
        # lists: a stream holds a few events (an empty deque alone costs about 600 bytes), and
        # the oldest go only when a bound is reached.
        self._sessions: dict[str, dict[str, list[tuple[int, bytes]]]] = {}
        # session id -> [events, bytes] it holds
        self._sizes: dict[str, list[int]] = {}
        self._events = 0
        self._bytes = 0
        self._next = 0

    def __len__(self) -> int:
        """How many events are kept, all sessions together."""
        return self._events

    @property
    def size(self) -> int:
        """How many bytes of data are kept, all sessions together."""
        return self._bytes

    @property
    def session_count(self) -> int:
        """How many sessions have events kept."""
        return len(self._sessions)

    async def append(self, session_id: str, stream_id: str, data: bytes) -> str:
        streams = self._sessions.get(session_id)
        if streams is None:
            streams = self._sessions[session_id] = {}
            self._sizes[session_id] = [0, 0]
        events = streams.get(stream_id)
        if events is None:
            events = streams[stream_id] = []
        self._next += 1
        events.append((self._next, data))
        sizes = self._sizes[session_id]
        sizes[0] += 1
        sizes[1] += len(data)
        self._events += 1
        self._bytes += len(data)
        while session_id in self._sizes and (
            sizes[0] > self.max_events_per_session or sizes[1] > self.max_bytes_per_session
        ):
            self._evict(session_id)
        while self._events > self.max_events or self._bytes > self.max_bytes:
            self._evict(next(iter(self._sessions)))
        return f"{stream_id}_{self._next}"

    def _evict(self, session_id: str) -> None:
        """Drop the oldest event of the session's oldest stream."""
        streams = self._sessions[session_id]
        sizes = self._sizes[session_id]
        stream_id, events = next(iter(streams.items()))
        _, data = events.pop(0)
        sizes[0] -= 1
        sizes[1] -= len(data)
        self._events -= 1
        self._bytes -= len(data)
        log.debug("event store full: dropped the oldest event of stream %s", stream_id)
        if not events:
            del streams[stream_id]
            if not streams:
                del self._sessions[session_id]
                del self._sizes[session_id]

    async def replay(self, session_id: str, last_event_id: str) -> tuple[str, list[StoredEvent]] | None:
        stream_id, _, number = last_event_id.rpartition("_")
        # ASCII digits only (``isdigit()`` takes "²" too, which int() refuses), and no more of
        # them than any id issued has: int() refuses over 4,300 digits.
        digits = number.isascii() and number.isdigit()
        if not stream_id or not digits or len(number) > len(str(self._next)):
            return None
        after = int(number)
        if after > self._next:
            return None
        # A stream whose events all went (delivered, or evicted) replays as empty.
        events = self._sessions.get(session_id, {}).get(stream_id, ())
        return stream_id, [StoredEvent(f"{stream_id}_{seq}", data) for seq, data in events if seq > after]

    async def forget_stream(self, session_id: str, stream_id: str) -> None:
        streams = self._sessions.get(session_id)
        if streams is None:
            return
        events = streams.pop(stream_id, None)
        if events is not None:
            size = sum(len(data) for _, data in events)
            sizes = self._sizes[session_id]
            sizes[0] -= len(events)
            sizes[1] -= size
            self._events -= len(events)
            self._bytes -= size
        if not streams:
            del self._sessions[session_id]
            del self._sizes[session_id]

    async def forget_session(self, session_id: str) -> None:
        streams = self._sessions.pop(session_id, None)
        if streams is not None:
            events, size = self._sizes.pop(session_id)
            self._events -= events
            self._bytes -= size
