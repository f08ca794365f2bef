"""How a worker hears at once that another one changed a task it runs: :class:`TaskSignals`.

Workers sharing a store (see :class:`~mcpbind.server.tasks.shared_store.SharedTaskStore`)
change each other's task records: ``tasks/update`` delivering answers, ``tasks/cancel``. The
worker that changed a record of a task run by another publishes the task's id on the owner's
channel, ``task-owner:WORKER``, which each worker subscribes to while it serves; the owner then
reads the record again (and stops the task if it was cancelled). A signal lost (the store away,
publish/subscribe keeping nothing) only delays this until the owner's next heartbeat, which
reads every record it runs.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import anyio
from anyio.abc import TaskStatus

from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable

__all__ = ["TaskSignals"]

log = logging.getLogger("mcpbind.store")


def owner_channel(worker: str) -> str:
    return f"task-owner:{worker}"


class TaskSignals:
    """The signals of the workers sharing ``store`` (see the module). ``max_retry_delay``: the
    most seconds between two attempts to subscribe again while the store is away."""

    def __init__(self, store: Store, *, max_retry_delay: float = 2.0) -> None:
        self.store = store
        self.max_retry_delay = max_retry_delay

    async def poke(self, owner: str, task_id: str) -> None:
        """Tell worker ``owner`` that the record of ``task_id`` changed (never raises: the
        owner's heartbeat reads it anyway)."""
        try:
            await self.store.publish(owner_channel(owner), task_id.encode())
        except StoreUnavailable as error:
            log.debug("task %s: its worker not told of a change: %s", task_id, error)

    async def watch(
        self,
        worker: str,
        changed: Callable[[str], Awaitable[None]],
        *,
        task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        """Call ``changed`` with the id of each task of ``worker`` that another worker changed,
        until cancelled (subscribing again after the store was away); started once
        subscribed, or once the first attempt failed."""
        started = False
        delay = 0.05
        while True:
            try:
                async with self.store.subscribe(owner_channel(worker)) as messages:
                    delay = 0.05
                    if not started:
                        task_status.started()
                        started = True
                    async for data in messages:
                        await changed(data.decode(errors="replace"))
            except StoreUnavailable as error:
                log.debug("task signals missed while the store is away: %s", error)
            if not started:
                task_status.started()
                started = True
            await anyio.sleep(delay)
            delay = min(delay * 2, self.max_retry_delay)
