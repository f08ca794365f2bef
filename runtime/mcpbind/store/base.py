"""What a server shares between its workers: :class:`Store`, the few primitives it needs of a
key-value store with publish/subscribe and capped streams.

Two implementations: :class:`~mcpbind.store.memory.MemoryStore` (one process, the default)
and :class:`~mcpbind.store.redis.RedisStore` (every worker of every host given the same Redis).
Keys, channels and streams are plain strings chosen by the server; values are bytes. Every
operation of a store whose backend is lost raises
:class:`~mcpbind.store.errors.StoreUnavailable` within a bounded time, never hangs.

A store is opened by ``async with store:`` (the HTTP app does it in its ASGI lifespan) and
closed at the end of the block; blocks may nest (the outermost one opens and closes it). A
:class:`~mcpbind.store.redis.RedisStore` used outside any raises :class:`RuntimeError`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AbstractAsyncContextManager
from types import TracebackType
from typing import Protocol, TypeVar, runtime_checkable

__all__ = ["Store", "appended_channel", "stream_id_key"]

StoreT = TypeVar("StoreT", bound="Store")


@runtime_checkable
class Store(Protocol):
    """A key-value store with expiry, publish/subscribe and capped streams, shared by every
    worker that opens the same one.

    * ``get(key)``: the value, or ``None`` when there is none (or it expired).
    * ``set(key, value, ttl=...)``: store ``value``, expiring ``ttl`` seconds from now
      (``None``: never).
    * ``set_if_absent(key, value, ttl=...)``: store ``value`` unless the key has one already;
      returns the value stored after the call (ours, or the one that was there), atomically:
      of several workers racing, all get the same value.
    * ``replace_if(key, expected, value, ttl=...)``: store ``value`` (expiring as ``set``
      says) only if the key holds exactly ``expected`` now, atomically (compare-and-set: of
      several workers replacing the same value, one succeeds); whether it did.
    * ``delete(*keys)``; ``expire(key, ttl)``: a new time to live (``False``: no such key).
    * ``publish(channel, message)``: deliver ``message`` to every subscription open on
      ``channel`` now, in any worker (at most once: nothing is kept for a subscriber that is
      not connected).
    * ``subscribe(channel)``: ``async with store.subscribe(channel) as messages: async for
      message in messages: ...``: the messages published from the moment the block is
      entered. When the backend is lost the block is cancelled and the ``async with``
      raises :class:`~mcpbind.store.errors.StoreUnavailable` (subscribe again to go on).
    * ``append(stream, data, max_length=..., ttl=...)``: add an entry to a stream, keep about
      its last ``max_length`` entries (at least that many), and let the whole stream expire
      ``ttl`` seconds after its last entry; returns the entry's id. Ids increase; compare
      them with :func:`stream_id_key` only. The entry's id is published on the channel
      :func:`appended_channel` names, in the same step: a reader waiting for the stream's new
      entries subscribes to it, then reads what it missed (:meth:`read_after`).
    * ``read_after(stream, after_id, limit=...)``: up to ``limit`` entries after the entry
      ``after_id`` (``None``: from the first kept), oldest first, as ``(id, data)``;
      :class:`ValueError` for an id that is not one.
    * ``aclose()``: what leaving the ``async with`` block does.
    """

    async def get(self, key: str) -> bytes | None: ...

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None: ...

    async def set_if_absent(self, key: str, value: bytes, *, ttl: float | None = None) -> bytes: ...

    async def replace_if(
        self, key: str, expected: bytes, value: bytes, *, ttl: float | None = None
    ) -> bool: ...

    async def delete(self, *keys: str) -> None: ...

    async def expire(self, key: str, ttl: float) -> bool: ...

    async def publish(self, channel: str, message: bytes) -> None: ...

    def subscribe(self, channel: str) -> AbstractAsyncContextManager[AsyncIterator[bytes]]: ...

    async def append(self, stream: str, data: bytes, *, max_length: int, ttl: float) -> str: ...

    async def read_after(
        self, stream: str, after_id: str | None, *, limit: int
    ) -> list[tuple[str, bytes]]: ...

    async def aclose(self) -> None: ...

    async def __aenter__(self: StoreT) -> StoreT: ...

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None: ...


def stream_id_key(entry_id: str) -> tuple[int, int]:
    """A stream entry id (``"MILLISECONDS-SEQUENCE"``, as Redis makes them) as a sortable
    pair; :class:`ValueError` for anything else."""
    first, dash, second = entry_id.partition("-")
    if not (dash and first.isascii() and first.isdigit() and second.isascii() and second.isdigit()):
        raise ValueError(f"not a stream entry id: {entry_id[:64]!r}")
    return int(first), int(second)


def appended_channel(stream: str) -> str:
    """The channel each entry appended to ``stream`` is announced on (its id)."""
    return f"appended:{stream}"
