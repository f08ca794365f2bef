"""Where a server keeps its tasks: the :class:`TaskStore` interface, the :class:`TaskRecord`
it holds, and :class:`MemoryTaskStore`, the default (one process).

A record is plain data (JSON-encodable with msgspec), so that a store shared by several
workers (Redis, say) can hold it as it is. Besides the task's state it names the worker
running it (``owner``) and until when that worker vouches for it (``lease_expires_at``,
renewed by its heartbeat): a task still ``working`` whose lease has run out belongs to a
worker that is gone, and is reported ``failed`` (see :mod:`mcpbind.server.tasks.runner`).

Every record expires ``ttl_ms`` after its creation (``None``: never, which a server does not
give by default); a store drops expired records and never returns them. Terminal states
(``completed``, ``failed``, ``cancelled``) never change: :meth:`TaskStore.update` refuses to
overwrite one. Each change of a record counts one more ``revision``, and :meth:`TaskStore.update`
is a compare-and-set: it refuses a record that is not the next revision of the one stored (one
changed meanwhile by someone else), so that no change made by one worker is lost under another's.

:class:`~mcpbind.server.tasks.shared_store.SharedTaskStore` keeps tasks in a shared
:class:`~mcpbind.store.base.Store` (Redis), for every worker to read.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any, Final, Literal, Protocol

import msgspec

__all__ = ["TERMINAL", "MemoryTaskStore", "TaskRecord", "TaskStore", "TaskStoreFull"]

Status = Literal["working", "input_required", "completed", "failed", "cancelled"]
TERMINAL: Final[frozenset[str]] = frozenset({"completed", "failed", "cancelled"})


class TaskRecord(msgspec.Struct, kw_only=True, frozen=True):
    """One task as a store holds it. Times are seconds since the epoch.

    ``requestor``: who created it (the principal of the access token it came with, ``""``
    without one); only the same requestor lists it (2025-11-25's ``tasks/list``).
    ``result``, ``error``: the final result, or JSON-RPC error object, of a terminal task.
    ``input_requests``: what an ``input_required`` task asks (as the request's protocol
    version embeds them); ``input_responses``: answers delivered by ``tasks/update`` and not
    yet taken by the task. ``cancel_requested``: ``tasks/cancel`` asked the owner to stop it.
    ``revision``: how many times it was changed (see :meth:`changed`).
    """

    task_id: str
    status: Status
    status_message: str | None = None
    created_at: float
    last_updated_at: float
    ttl_ms: int | None
    poll_interval_ms: int
    method: str = "tools/call"
    version: str
    requestor: str = ""
    owner: str
    lease_expires_at: float
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None
    input_requests: dict[str, Any] | None = None
    input_responses: dict[str, Any] | None = None
    cancel_requested: bool = False
    revision: int = 0

    @property
    def terminal(self) -> bool:
        return self.status in TERMINAL

    def expired(self, now: float) -> bool:
        """Whether its TTL has run out at ``now``."""
        return self.ttl_ms is not None and now >= self.created_at + self.ttl_ms / 1000

    def changed(self, **changes: Any) -> TaskRecord:
        """The next revision: a copy with ``changes`` (and ``last_updated_at`` now, unless
        given)."""
        changes.setdefault("last_updated_at", time.time())
        changes["revision"] = self.revision + 1
        return msgspec.structs.replace(self, **changes)


class TaskStoreFull(Exception):
    """The store holds as many tasks as it may (see :class:`MemoryTaskStore`)."""


class TaskStore(Protocol):
    """What a server keeps its tasks in. Every method may be called from any task; each is one
    atomic step for the store (a shared store makes each one a single command or script)."""

    async def create(self, record: TaskRecord) -> None:
        """Add a new record, readable by :meth:`get` once this returns (a task is announced
        only then); :class:`TaskStoreFull` when there is no room."""
        ...

    async def get(self, task_id: str) -> TaskRecord | None:
        """The record of ``task_id``; ``None`` when there is none or it expired."""
        ...

    async def update(self, record: TaskRecord) -> bool:
        """Replace the stored record of ``record.task_id`` with ``record``, atomically, only
        if the stored one is ``record``'s previous revision (``record.revision - 1``) and not
        terminal (nor gone); whether it was replaced."""
        ...

    async def list(
        self, requestor: str, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        """Up to ``limit`` records of ``requestor``, oldest first, from ``cursor`` (the
        previous page's), and the cursor of the next page (``None``: none)."""
        ...

    async def delete(self, task_id: str) -> None:
        """Forget ``task_id`` (nothing if unknown)."""
        ...


class MemoryTaskStore:
    """A :class:`TaskStore` in this process's memory (the default): tasks live as long as the
    process, at most ``max_tasks`` of them at once (expired ones are dropped first; then
    :class:`TaskStoreFull`), and expire with their TTL. ``clock``: the time in seconds since
    the epoch (``time.time``; tests give their own)."""

    def __init__(self, *, max_tasks: int = 10_000, clock: Callable[[], float] = time.time) -> None:
        if max_tasks < 1:
            raise ValueError(f"max_tasks must be at least 1, not {max_tasks}")
        self.max_tasks = max_tasks
        self.clock = clock
        self._records: dict[str, TaskRecord] = {}  # in creation order

    def __len__(self) -> int:
        return len(self._records)

    def _purge(self) -> None:
        now = self.clock()
        for task_id in [t for t, record in self._records.items() if record.expired(now)]:
            del self._records[task_id]

    async def create(self, record: TaskRecord) -> None:
        if record.task_id in self._records:
            raise ValueError(f"task {record.task_id!r} exists already")
        if len(self._records) >= self.max_tasks:
            self._purge()
            if len(self._records) >= self.max_tasks:
                raise TaskStoreFull(f"the task store holds {self.max_tasks} tasks, as many as it may")
        self._records[record.task_id] = record

    async def get(self, task_id: str) -> TaskRecord | None:
        record = self._records.get(task_id)
        if record is not None and record.expired(self.clock()):
            del self._records[task_id]
            return None
        return record

    async def update(self, record: TaskRecord) -> bool:
        stored = await self.get(record.task_id)
        if stored is None or stored.terminal or stored.revision != record.revision - 1:
            return False
        self._records[record.task_id] = record
        return True

    async def list(
        self, requestor: str, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        self._purge()
        ids = [t for t, record in self._records.items() if record.requestor == requestor]
        start = 0
        if cursor is not None:
            try:
                start = ids.index(cursor) + 1
            except ValueError:
                raise KeyError(cursor) from None
        page = ids[start : start + limit]
        more = start + limit < len(ids)
        return [self._records[t] for t in page], (page[-1] if more and page else None)

    async def delete(self, task_id: str) -> None:
        self._records.pop(task_id, None)
