"""The store of one process: :class:`MemoryStore`, what a server uses when it is given none."""

from __future__ import annotations

import logging
import math
import time
from collections import deque
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType

import anyio
from anyio.streams.memory import MemoryObjectSendStream

from mcpbind.store.base import appended_channel, stream_id_key

__all__ = ["MemoryStore"]

log = logging.getLogger("mcpbind.store")

# Expired entries are looked for once in this many writes (and each on its own when read).
_SWEEP_EVERY = 256


class _Stream:
    __slots__ = ("deadline", "entries", "last")

    def __init__(self, max_length: int) -> None:
        self.entries: deque[tuple[str, bytes]] = deque(maxlen=max_length)
        self.last = (0, 0)
        self.deadline = math.inf


class MemoryStore:
    """A :class:`~mcpbind.store.base.Store` in this process's memory: nothing is shared with
    another process, and everything is lost when it ends. It needs no opening (``async with``
    is allowed and does nothing).

    Expired keys and streams are dropped when read and, every few writes, all at once.
    ``max_backlog``: the messages a subscription keeps before it is read, past which new ones
    are dropped (with a warning). ``clock``: what tells the time, in seconds (a test may set
    its own).
    """

    def __init__(self, *, max_backlog: int = 1024, clock: Callable[[], float] = time.monotonic) -> None:
        if max_backlog < 1:
            raise ValueError("max_backlog must be positive")
        self.max_backlog = max_backlog
        self.clock = clock
        self._values: dict[str, tuple[bytes, float]] = {}
        self._streams: dict[str, _Stream] = {}
        self._channels: dict[str, set[MemoryObjectSendStream[bytes]]] = {}
        self._writes = 0

    def __repr__(self) -> str:
        return "MemoryStore()"

    # -- keys -----------------------------------------------------------------------------

    def _deadline(self, ttl: float | None) -> float:
        if ttl is None:
            return math.inf
        if not ttl > 0:
            raise ValueError(f"a time to live must be a positive number of seconds, not {ttl!r}")
        return self.clock() + ttl

    def _wrote(self) -> None:
        self._writes += 1
        if self._writes % _SWEEP_EVERY == 0:
            now = self.clock()
            for key in [key for key, (_, deadline) in self._values.items() if deadline <= now]:
                del self._values[key]
            for name in [name for name, stream in self._streams.items() if stream.deadline <= now]:
                del self._streams[name]

    def _live(self, key: str) -> bytes | None:
        entry = self._values.get(key)
        if entry is None:
            return None
        if entry[1] <= self.clock():
            del self._values[key]
            return None
        return entry[0]

    async def get(self, key: str) -> bytes | None:
        await anyio.lowlevel.checkpoint()
        return self._live(key)

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        await anyio.lowlevel.checkpoint()
        self._values[key] = (bytes(value), self._deadline(ttl))
        self._wrote()

    async def set_if_absent(self, key: str, value: bytes, *, ttl: float | None = None) -> bytes:
        await anyio.lowlevel.checkpoint()
        there = self._live(key)
        if there is not None:
            return there
        self._values[key] = (bytes(value), self._deadline(ttl))
        self._wrote()
        return bytes(value)

    async def replace_if(self, key: str, expected: bytes, value: bytes, *, ttl: float | None = None) -> bool:
        await anyio.lowlevel.checkpoint()
        deadline = self._deadline(ttl)
        if self._live(key) != expected:
            return False
        self._values[key] = (bytes(value), deadline)
        self._wrote()
        return True

    async def delete(self, *keys: str) -> None:
        await anyio.lowlevel.checkpoint()
        for key in keys:
            self._values.pop(key, None)
            self._streams.pop(key, None)

    async def expire(self, key: str, ttl: float) -> bool:
        await anyio.lowlevel.checkpoint()
        deadline = self._deadline(ttl)
        if self._live(key) is not None:
            self._values[key] = (self._values[key][0], deadline)
            return True
        stream = self._live_stream(key)
        if stream is not None:
            stream.deadline = deadline
            return True
        return False

    # -- publish/subscribe ------------------------------------------------------------------

    async def publish(self, channel: str, message: bytes) -> None:
        await anyio.lowlevel.checkpoint()
        for subscriber in list(self._channels.get(channel, ())):
            try:
                subscriber.send_nowait(bytes(message))
            except anyio.WouldBlock:
                log.warning(
                    "a subscription to %r is not read: a message dropped (more than %d waiting)",
                    channel,
                    self.max_backlog,
                )
            except anyio.BrokenResourceError:  # pragma: no cover - removed when it closes
                pass

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        send, receive = anyio.create_memory_object_stream[bytes](self.max_backlog)
        subscribers = self._channels.setdefault(channel, set())
        subscribers.add(send)
        try:
            async with receive:
                yield receive
        finally:
            subscribers.discard(send)
            if not subscribers:
                self._channels.pop(channel, None)
            send.close()

    # -- streams ----------------------------------------------------------------------------

    def _live_stream(self, name: str) -> _Stream | None:
        stream = self._streams.get(name)
        if stream is not None and stream.deadline <= self.clock():
            del self._streams[name]
            return None
        return stream

    async def append(self, stream: str, data: bytes, *, max_length: int, ttl: float) -> str:
        await anyio.lowlevel.checkpoint()
        if max_length < 1:
            raise ValueError("max_length must be positive")
        deadline = self._deadline(ttl)
        kept = self._live_stream(stream)
        if kept is None or kept.entries.maxlen != max_length:
            fresh = _Stream(max_length)
            if kept is not None:
                fresh.entries.extend(kept.entries)
                fresh.last = kept.last
            kept = self._streams[stream] = fresh
        millis = int(time.time() * 1000)
        last_ms, last_seq = kept.last
        kept.last = (millis, 0) if millis > last_ms else (last_ms, last_seq + 1)
        entry_id = f"{kept.last[0]}-{kept.last[1]}"
        kept.entries.append((entry_id, bytes(data)))
        kept.deadline = deadline
        self._wrote()
        await self.publish(appended_channel(stream), entry_id.encode("ascii"))
        return entry_id

    async def read_after(self, stream: str, after_id: str | None, *, limit: int) -> list[tuple[str, bytes]]:
        await anyio.lowlevel.checkpoint()
        after = stream_id_key(after_id) if after_id is not None else (-1, -1)
        if limit < 1:
            raise ValueError("limit must be positive")
        kept = self._live_stream(stream)
        if kept is None:
            return []
        found: list[tuple[str, bytes]] = []
        for entry_id, data in kept.entries:
            if stream_id_key(entry_id) > after:
                found.append((entry_id, data))
                if len(found) == limit:
                    break
        return found

    # -- lifetime ---------------------------------------------------------------------------

    async def aclose(self) -> None:
        """Nothing to close (the data stays until the object is dropped)."""

    async def __aenter__(self) -> MemoryStore:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
