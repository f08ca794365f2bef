"""The store every worker of every host shares: :class:`RedisStore`, on Redis with coredis
(anyio-based: it runs on asyncio and trio). Needs the ``redis`` extra (``coredis``).

Every key, channel and stream is named with the store's ``prefix`` (``"mcpbind:"``), so that
one Redis (one database) may hold other data and other servers' too: give each its own
prefix. Every operation is bounded by ``timeout`` seconds: a Redis that is stopped,
restarting, unreachable or too slow makes it raise
:class:`~mcpbind.store.errors.StoreUnavailable` within that time, never hang; the next
operation connects again, so the store recovers by itself when Redis is back.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Awaitable
from contextlib import AsyncExitStack, asynccontextmanager
from types import TracebackType
from typing import Any, Final, TypeVar
from urllib.parse import urlsplit

import anyio
import coredis
from coredis.exceptions import RedisError, ResponseError

from mcpbind.store.base import appended_channel, stream_id_key
from mcpbind.store.errors import StoreUnavailable

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["RedisStore"]

T = TypeVar("T")

# Appends an entry to a stream capped at about ARGV[1] entries, sets the stream's time to live
# (ARGV[3] milliseconds) and announces the entry's id on the channel ARGV[4], in one step: no
# stream is left without an expiry, and no reader waiting for the entry misses it.
_APPEND: Final = """
local id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[1], '*', 'd', ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
redis.call('PUBLISH', ARGV[4], id)
return id
"""

# Sets KEYS[1] to ARGV[2] (expiring in ARGV[3] milliseconds, or never when it is "0") only if
# it holds ARGV[1] now: 1 if it did, 0 if not.
_REPLACE_IF: Final = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return 0
end
if ARGV[3] == '0' then
  redis.call('SET', KEYS[1], ARGV[2])
else
  redis.call('SET', KEYS[1], ARGV[2], 'PX', ARGV[3])
end
return 1
"""


def _millis(ttl: float) -> int:
    if not ttl > 0:
        raise ValueError(f"a time to live must be a positive number of seconds, not {ttl!r}")
    return max(1, round(ttl * 1000))


def _redacted(url: str) -> str:
    """``url`` without its user name and password (for messages)."""
    parts = urlsplit(url)
    host = parts.hostname or "localhost"
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


# What a lost connection raises in coredis (its own errors, the socket's, and anyio's streams
# closed under it).
_LOST: Final = (
    RedisError,
    OSError,
    TimeoutError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
)


def _redis_errors(group: BaseExceptionGroup[BaseException]) -> BaseException | None:
    """The first error of a lost connection in ``group`` (nested groups searched), if any."""
    stack: list[BaseException] = [group]
    while stack:
        item = stack.pop()
        if isinstance(item, BaseExceptionGroup):
            stack.extend(item.exceptions)
        elif isinstance(item, _LOST):
            return item
    return None


class RedisStore:
    """A :class:`~mcpbind.store.base.Store` in Redis at ``url`` (``redis://HOST:PORT/DB``,
    ``rediss://`` for TLS, ``redis://:PASSWORD@HOST...``).

    ``prefix``: put before every key, channel and stream name. ``timeout``: the most seconds
    an operation (a connection included) may take before it raises
    :class:`~mcpbind.store.errors.StoreUnavailable`. ``max_connections``: of the connection
    pool (commands share connections; each subscription holds one of its own).

    Open it with ``async with store:`` (blocks may nest); the HTTP app does it in its ASGI
    lifespan.
    """

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "mcpbind:",
        timeout: float = 2.0,
        max_connections: int = 64,
    ) -> None:
        if not timeout > 0:
            raise ValueError(f"timeout must be a positive number of seconds, not {timeout!r}")
        scheme = urlsplit(url).scheme
        if scheme not in ("redis", "rediss", "unix"):
            raise ValueError(f"not a Redis URL (redis://HOST:PORT/DB): {_redacted(url)!r}")
        self.url = url
        self.prefix = prefix
        self.timeout = timeout
        self.max_connections = max_connections
        self.where = _redacted(url)
        self._client: coredis.Redis[bytes] | None = None
        self._stack: AsyncExitStack | None = None
        self._depth = 0

    def __repr__(self) -> str:
        return f"RedisStore({self.where!r}, prefix={self.prefix!r})"

    # -- lifetime ---------------------------------------------------------------------------

    async def __aenter__(self) -> RedisStore:
        if self._depth == 0:
            client: coredis.Redis[bytes] = coredis.Redis.from_url(
                self.url,
                connect_timeout=self.timeout,
                stream_timeout=self.timeout,
                pool_timeout=self.timeout,
                max_connections=self.max_connections,
                # Redis 7's "SET NX GET" and streams are all this store uses: no version check.
                verify_version=False,
            )
            stack = AsyncExitStack()
            await stack.enter_async_context(client)
            self._client, self._stack = client, stack
        self._depth += 1
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._depth -= 1
        if self._depth == 0:
            await self.aclose()

    async def aclose(self) -> None:
        """Close the connections (what leaving the outermost ``async with`` does; call it from
        the task that opened the store)."""
        stack, self._stack, self._client, self._depth = self._stack, None, None, 0
        if stack is not None:
            await stack.aclose()

    def _open(self) -> coredis.Redis[bytes]:
        client = self._client
        if client is None:
            raise RuntimeError(f"{self!r} is not open: use it in `async with store:`")
        return client

    def _key(self, name: str) -> str:
        return self.prefix + name

    async def _run(self, what: str, command: Awaitable[T]) -> T:
        """``command``, within the timeout, its failures told as :class:`StoreUnavailable`."""
        try:
            with anyio.fail_after(self.timeout):
                return await command
        except TimeoutError:
            raise StoreUnavailable(
                f"Redis at {self.where} did not answer within {self.timeout:g} s ({what})"
            ) from None
        except ResponseError:
            raise
        except _LOST as error:
            raise StoreUnavailable(f"Redis at {self.where} is unavailable ({what}): {error}") from error

    # -- keys -------------------------------------------------------------------------------

    async def get(self, key: str) -> bytes | None:
        return await self._run("GET", self._open().get(self._key(key)))

    async def set(self, key: str, value: bytes, *, ttl: float | None = None) -> None:
        client = self._open()
        px = None if ttl is None else _millis(ttl)
        await self._run("SET", client.set(self._key(key), value, px=px))

    async def set_if_absent(self, key: str, value: bytes, *, ttl: float | None = None) -> bytes:
        client = self._open()
        px = None if ttl is None else _millis(ttl)
        request = client.set(self._key(key), value, condition=coredis.PureToken.NX, get=True, px=px)
        there = await self._run("SET NX", request)
        return bytes(value) if there is None else there

    async def replace_if(self, key: str, expected: bytes, value: bytes, *, ttl: float | None = None) -> bool:
        px = 0 if ttl is None else _millis(ttl)
        request = self._open().eval(_REPLACE_IF, keys=[self._key(key)], args=[expected, value, px])
        done: Any = await self._run("SET IF", request)
        return bool(done)

    async def delete(self, *keys: str) -> None:
        if keys:
            await self._run("DEL", self._open().delete([self._key(key) for key in keys]))

    async def expire(self, key: str, ttl: float) -> bool:
        return await self._run("PEXPIRE", self._open().pexpire(self._key(key), _millis(ttl)))

    # -- publish/subscribe ------------------------------------------------------------------

    async def publish(self, channel: str, message: bytes) -> None:
        await self._run("PUBLISH", self._open().publish(self._key(channel), message))

    @asynccontextmanager
    async def subscribe(self, channel: str) -> AsyncIterator[AsyncIterator[bytes]]:
        client = self._open()
        pubsub = client.pubsub(
            channels=[self._key(channel)],
            ignore_subscribe_messages=True,
            retry_policy=None,  # a lost connection ends the subscription: the caller decides
            subscription_timeout=self.timeout,
            max_idle_seconds=max(1.0, 5 * self.timeout),
        )
        try:
            async with pubsub:
                yield _messages(pubsub)
        except BaseExceptionGroup as group:
            error = _redis_errors(group)
            if error is None:
                raise
            raise StoreUnavailable(
                f"Redis at {self.where} is unavailable (subscription to {channel!r}): {error}"
            ) from group
        except _LOST as error:
            raise StoreUnavailable(
                f"Redis at {self.where} is unavailable (subscription to {channel!r}): {error}"
            ) from error

    # -- streams ----------------------------------------------------------------------------

    async def append(self, stream: str, data: bytes, *, max_length: int, ttl: float) -> str:
        if max_length < 1:
            raise ValueError("max_length must be positive")
        channel = self._key(appended_channel(stream))
        request = self._open().eval(
            _APPEND, keys=[self._key(stream)], args=[max_length, data, _millis(ttl), channel]
        )
        entry_id: Any = await self._run("XADD", request)
        return entry_id.decode("ascii") if isinstance(entry_id, bytes) else str(entry_id)

    async def read_after(self, stream: str, after_id: str | None, *, limit: int) -> list[tuple[str, bytes]]:
        if limit < 1:
            raise ValueError("limit must be positive")
        if after_id is not None:
            stream_id_key(after_id)  # ValueError for what is not an id
        start = "-" if after_id is None else "(" + after_id
        entries = await self._run("XRANGE", self._open().xrange(self._key(stream), start, "+", count=limit))
        found: list[tuple[str, bytes]] = []
        for entry in entries:
            data = entry.field_values.get(b"d")
            ident = entry.identifier
            if isinstance(data, bytes):
                found.append((ident.decode("ascii") if isinstance(ident, bytes) else ident, data))
        return found


async def _messages(pubsub: coredis.patterns.pubsub.PubSub[bytes]) -> AsyncIterator[bytes]:
    """The data of each message ``pubsub`` receives."""
    async for message in pubsub:
        if message["type"] == "message":
            data = message["data"]
            yield data if isinstance(data, bytes) else str(data).encode()
