"""Reading a request body within the server apps' limits: its size (413), the time it may take
to arrive (408), and the bytes all bodies in progress may hold together (503).

A body over the size limit is refused whether ``Content-Length`` says so or the body turns out
longer. Before the 413, up to :data:`DRAIN` more bytes of it are read and dropped, so that a
client still sending reads the answer and its connection stays usable; a client that announces
or sends more than that gets the 413 at once, with ``Connection: close``. A ``Content-Length``
that is not a number (ASCII digits) is ignored: the body is read and counted as it comes.
"""

from __future__ import annotations

from collections.abc import Awaitable
from types import CoroutineType
from typing import Final

import anyio

from mcpbind.fastpath import finish, first_step
from mcpbind.protocol.errors import INVALID_REQUEST
from mcpbind.transports.http._asgi import Message, Receive
from mcpbind.transports.http.errors import CLOSE_CONNECTION, EMPTY, RETRY_AFTER, SERVER_BUSY, HttpError

__all__ = ["DRAIN", "BodyProgress", "BodyReader", "content_length"]

# Past the size limit, up to this many more bytes of a body are read and dropped before the 413.
DRAIN: Final = 1 << 20


def content_length(value: bytes) -> int | None:
    """A ``Content-Length`` of ASCII digits as a number (one of over 18 digits as 10**18, over
    any limit: ``int()`` refuses 4,301 digits); ``None`` for anything else."""
    if not value.isascii() or not value.isdigit():
        return None
    return int(value) if len(value) <= 18 else 10**18


class BodyProgress:
    """What one request's body holds while it is read and answered: the bytes of the budget
    it reserved, and the time by which it must have arrived (set when first waited for)."""

    __slots__ = ("deadline", "reserved")

    def __init__(self) -> None:
        self.reserved = 0
        self.deadline: float | None = None


class BodyReader:
    """Reads bodies of at most ``limit`` bytes, each within ``timeout`` seconds (``None``: no
    limit) of the first wait for it; with ``in_flight_limit``, all bodies being read or answered
    together hold at most that many bytes (counted from ``Content-Length`` before reading, else
    as they arrive) until :meth:`release`."""

    __slots__ = ("in_flight", "in_flight_limit", "limit", "timeout")

    def __init__(
        self, limit: int, *, timeout: float | None = None, in_flight_limit: int | None = None
    ) -> None:
        self.limit = limit
        self.timeout = timeout
        self.in_flight_limit = in_flight_limit
        self.in_flight = 0

    async def read(self, receive: Receive, declared: bytes | None, progress: BodyProgress) -> bytes | None:
        """The whole body (``declared``: its ``Content-Length`` header, if any), or ``None`` if
        the client went away; raises :class:`~mcpbind.transports.http.errors.HttpError` for
        413, 408 and 503."""
        limit = self.limit
        if declared is not None:
            size = content_length(declared)
            if size is not None:
                if size > limit:
                    await self._too_large(receive, progress, 0 if size <= limit + DRAIN else None)
                    return None
                self.reserve(progress, size)
        # (receive(), inlined for the first part: most bodies come whole, already there.)
        call = receive()
        message: Message
        if self.timeout is None:
            message = await call
        elif type(call) is CoroutineType:
            done, value = first_step(call)
            message = value if done else await self._timed(finish(call, value), progress)
        else:
            message = await self._timed(call, progress)
        if message["type"] != "http.request":
            return None
        body: bytes = message.get("body", b"")
        if message.get("more_body", False) or len(body) > limit:
            return await self._read_rest(receive, body, message.get("more_body", False), progress)
        if len(body) > progress.reserved:  # no Content-Length
            self.reserve(progress, len(body) - progress.reserved)
        return body

    async def _read_rest(
        self, receive: Receive, body: bytes, more: bool, progress: BodyProgress
    ) -> bytes | None:
        """The rest of a body that came in parts (or whose first part is over the limit)."""
        limit = self.limit
        parts = [body]
        size = len(body)
        while more and size <= limit:
            if size > progress.reserved:
                self.reserve(progress, size - progress.reserved)
            message = await self.receive(receive, progress)
            if message["type"] != "http.request":
                return None
            chunk: bytes = message.get("body", b"")
            parts.append(chunk)
            size += len(chunk)
            more = message.get("more_body", False)
        if size <= limit:
            if size > progress.reserved:
                self.reserve(progress, size - progress.reserved)
            return b"".join(parts)
        parts.clear()
        if not more:
            raise HttpError(413, INVALID_REQUEST, self._too_large_message())
        await self._too_large(receive, progress, size - limit)
        return None

    async def _too_large(self, receive: Receive, progress: BodyProgress, drained: int | None) -> None:
        """Refuse a body over the limit that is still arriving: read and drop up to
        :data:`DRAIN` bytes of it (``drained`` so far; ``None``: none at all) first, else close
        the connection after the 413. Returns (answering nothing) if the client went away."""
        done = False
        while drained is not None and drained <= DRAIN:
            message = await self.receive(receive, progress)
            if message["type"] != "http.request":
                return
            drained += len(message.get("body", b""))
            if not message.get("more_body", False):
                done = True
                break
        raise HttpError(
            413, INVALID_REQUEST, self._too_large_message(), headers=EMPTY if done else CLOSE_CONNECTION
        )

    def _too_large_message(self) -> str:
        return f"Payload Too Large: the limit is {self.limit} bytes"

    async def receive(self, receive: Receive, progress: BodyProgress) -> Message:
        """``receive()`` for a part of a body: 408 (and the connection closed) if the body is not
        all there ``timeout`` seconds after the first wait for it. A part that has arrived
        already, as a small body has, costs no timer."""
        call = receive()
        if self.timeout is None:
            return await call
        if type(call) is CoroutineType:
            done, value = first_step(call)
            if done:
                message: Message = value
                return message
            return await self._timed(finish(call, value), progress)
        return await self._timed(call, progress)

    async def _timed(self, waiting: Awaitable[Message], progress: BodyProgress) -> Message:
        """Await a part of a body that has not arrived yet, up to the body's deadline."""
        timeout = self.timeout
        assert timeout is not None
        deadline = progress.deadline
        if deadline is None:
            deadline = progress.deadline = anyio.current_time() + timeout
        try:
            with anyio.fail_after(max(deadline - anyio.current_time(), 0.0)):
                return await waiting
        except TimeoutError:
            raise HttpError(
                408,
                INVALID_REQUEST,
                f"Request Timeout: the body did not arrive within {timeout} s",
                headers=CLOSE_CONNECTION,
            ) from None

    def reserve(self, progress: BodyProgress, size: int) -> None:
        """Count ``size`` more bytes of a body against the budget of bodies in progress; 503
        past it."""
        budget = self.in_flight_limit
        if budget is None:
            return
        if self.in_flight + size > budget:
            raise HttpError(
                503,
                SERVER_BUSY,
                f"Server busy: too many request bodies in progress (limit {budget} bytes); try again later",
                headers=RETRY_AFTER,
            )
        self.in_flight += size
        progress.reserved += size

    def release(self, progress: BodyProgress) -> None:
        """The request is answered and its handler done: what its body held is free again."""
        self.in_flight -= progress.reserved
        progress.reserved = 0
