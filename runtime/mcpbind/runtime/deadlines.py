"""The deadlines of the requests a session sent (:class:`Deadlines`), kept by one task, and
what a caller waiting for an answer waits on (:class:`Waiter`)."""

from __future__ import annotations

import heapq
import math
import time
from collections.abc import Awaitable, Callable
from typing import Any, Generic, TypeVar

import anyio

from mcpbind.fastpath import Flag
from mcpbind.protocol.errors import McpError

# What a request's sender is told of its progress: (progress, total, message).
ProgressCallback = Callable[[float, float | None, str | None], Awaitable[None]]


__all__ = ["Deadlines", "ProgressCallback", "Waiter"]

R = TypeVar("R")


class Waiter(Generic[R]):
    __slots__ = ("error", "event", "finished", "progress", "result", "timed_out")

    def __init__(self, progress: ProgressCallback | None, event: Flag) -> None:
        self.event = event
        self.result: R | None = None
        self.error: McpError | None = None
        self.progress = progress
        self.timed_out = False
        self.finished = False  # the request returned or raised: its deadline no longer matters


class Deadlines:
    """The deadlines of requests sent and waiting for their answers, kept by one task of the
    session instead of a timer per request (a cancel scope with a deadline costs a quarter of
    a quick request on the client side). When one passes, its waiter is marked as timed out
    and woken. Entries of finished requests are dropped when they come first, or all at once
    when they outnumber the waiting ones, so memory stays bounded by the requests in flight.
    Deadlines are on ``time.monotonic()`` (the event loop's clock costs more to read), and the
    task sleeps for the time left."""

    __slots__ = ("heap", "next_at", "seq", "stopped", "wake")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, Waiter[Any]]] = []
        self.seq = 0
        self.next_at = math.inf  # when the task wakes up next
        self.wake: Flag | None = None
        self.stopped = False

    def stop(self) -> None:
        """No request waits any more (the input ended): the task ends."""
        self.stopped = True
        if self.wake is not None:
            self.wake.set()

    def add(self, deadline: float, waiter: Waiter[Any], waiting: int) -> None:
        heap = self.heap
        if len(heap) >= 64 and len(heap) > 2 * waiting:
            heap[:] = [entry for entry in heap if not entry[2].finished]
            heapq.heapify(heap)
        self.seq += 1
        heapq.heappush(heap, (deadline, self.seq, waiter))
        if deadline < self.next_at and self.wake is not None:
            self.wake.set()

    async def run(self, new_event: Callable[[], Flag]) -> None:
        heap = self.heap
        while not self.stopped:
            now = time.monotonic()
            while heap and (heap[0][0] <= now or heap[0][2].finished):
                waiter = heapq.heappop(heap)[2]
                if not waiter.finished and not waiter.event.is_set():
                    waiter.timed_out = True
                    waiter.event.set()
            self.next_at = heap[0][0] if heap else math.inf
            self.wake = wake = new_event()
            with anyio.move_on_after(self.next_at - now):
                await wake.wait()
