"""The notifications a session received for its handlers: run one at a time, in the order they
came, by one task of the session's, while responses wake their callers at once. The reader
waits when ``max_pending`` are queued (backpressure). :meth:`NotificationQueue.handled` lets a
caller wait for those received before a response it got (a proxy forwarding the log messages a
server sent before its answer)."""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable
from types import CoroutineType
from typing import Any, TypeVar

import anyio

from mcpbind.fastpath import awaited, finish, first_step
from mcpbind.protocol.events import NotificationReceived
from mcpbind.runtime.context import RequestContext

__all__ = ["NotificationQueue", "run_in"]

R = TypeVar("R")
# A notification handler and the event it handles (mcpbind.runtime.handlers' type, not imported:
# it imports this package's context).
Queued = tuple[Callable[[Any, RequestContext[Any]], Awaitable[None]], NotificationReceived]
RunOne = Callable[
    [Callable[[Any, RequestContext[Any]], Awaitable[None]], NotificationReceived, contextvars.Context],
    Awaitable[None],
]


async def run_in(context: contextvars.Context, function: Callable[..., Awaitable[R]], *args: Any) -> R:
    """Await ``function(*args)`` with every step of it run in ``context`` (see
    :func:`~mcpbind.fastpath.first_step`)."""
    run = context.run
    call = run(function, *args)
    if type(call) is not CoroutineType:
        call = awaited(call)
    done, value = first_step(call, run)
    if done:
        result: R = value
        return result
    return await finish(call, value, run)


class NotificationQueue:
    """Notifications waiting for their handlers; :meth:`run` (in the session's task group)
    hands each to ``run_one(handler, event, context)`` with a copy of ``context``."""

    __slots__ = ("_queued", "_receive", "_send")

    def __init__(self, max_pending: int) -> None:
        self._send, self._receive = anyio.create_memory_object_stream[Queued](max_pending)
        self._queued = 0  # queued and not handled yet (marks of handled() not counted)

    async def put(
        self, handler: Callable[[Any, RequestContext[Any]], Awaitable[None]], event: NotificationReceived
    ) -> None:
        self._queued += 1
        await self._send.send((handler, event))

    async def run(self, run_one: RunOne, context: contextvars.Context) -> None:
        async with self._receive:
            async for handler, event in self._receive:
                try:
                    await run_one(handler, event, context.copy())
                finally:
                    if event.method:  # (not a mark of handled())
                        self._queued -= 1

    async def handled(self, timeout: float) -> None:
        """Until the handlers of every notification queued so far have run (at once when none
        is queued; after ``timeout`` seconds if the session ends meanwhile)."""
        if self._queued == 0:
            return
        done = anyio.Event()

        async def mark(params: Any, ctx: RequestContext[Any]) -> None:
            done.set()

        with anyio.move_on_after(timeout):
            try:
                await self._send.send((mark, NotificationReceived("", None)))
            except (anyio.BrokenResourceError, anyio.ClosedResourceError):
                return
            await done.wait()

    def close(self) -> None:
        """No more notifications: :meth:`run` ends once the queue is empty."""
        self._send.close()
