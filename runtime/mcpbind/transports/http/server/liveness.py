"""Which of the workers sharing a store are alive (issue 16): :class:`WorkerLiveness`.

Each worker writes a mark of its own, ``worker:TAG`` (the store adds its prefix; ``TAG`` is
what the worker puts in its stream ids), every third of ``ttl`` seconds, expiring ``ttl``
seconds later. A worker that stopped writing it (killed, say) is taken for dead within
``ttl`` seconds: another worker following one of its streams for a client
(:mod:`~mcpbind.transports.http.server.followed`) stops waiting for a response that will not
come. A worker that cannot reach the store is taken for alive (nothing is known).
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
from anyio.abc import TaskStatus

from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable

__all__ = ["WORKER_TTL", "WorkerLiveness", "owner_tag"]

log = logging.getLogger("mcpbind.http")

# How long a worker's mark lasts after it was last written (seconds).
WORKER_TTL: Final = 6.0


def owner_tag(stream_id: str) -> str | None:
    """The tag of the worker that made a stream id (``p`` or ``g``, the tag, a dot, a
    number), or ``None`` for an id of no worker's."""
    tag, dot, _ = stream_id[1:].partition(".")
    return tag if dot and tag else None


class WorkerLiveness:
    """This worker's mark in ``store`` (``tag``: its own; see the module's docstring), and
    the question whether another's is there."""

    def __init__(self, store: Store, tag: str, *, ttl: float = WORKER_TTL) -> None:
        if not ttl > 0:
            raise ValueError(f"ttl must be a positive number of seconds, not {ttl!r}")
        self.store = store
        self.tag = tag
        self.ttl = ttl

    @staticmethod
    def key(tag: str) -> str:
        return f"worker:{tag}"

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Write this worker's mark during the block (the first time before it starts)."""
        async with anyio.create_task_group() as tg:
            await tg.start(self._mark)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _mark(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        failing = started = False
        while True:
            try:
                await self.store.set(self.key(self.tag), b"1", ttl=self.ttl)
                failing = False
            except StoreUnavailable as lost:
                if not failing:
                    log.warning("this worker cannot tell the others it is alive: %s", lost)
                failing = True
            if not started:
                task_status.started()
                started = True
            await anyio.sleep(self.ttl / 3)

    async def alive(self, tag: str) -> bool:
        """Whether the worker ``tag`` wrote its mark within the last ``ttl`` seconds (True when
        the store cannot say)."""
        try:
            return await self.store.get(self.key(tag)) is not None
        except StoreUnavailable:
            return True
