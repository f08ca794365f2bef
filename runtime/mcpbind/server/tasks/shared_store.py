"""Tasks kept in a shared :class:`~mcpbind.store.base.Store`: :class:`SharedTaskStore`, the
:class:`~mcpbind.server.tasks.store.TaskStore` of workers sharing a store (Redis), so that a
task started on one worker is read, answered and cancelled on any other.

Each record is one key, ``task:ID``, holding the record as JSON (msgspec) and expiring with the
task's TTL; :meth:`SharedTaskStore.update` reads the stored value and replaces it only if it is
still the same bytes (:meth:`Store.replace_if <mcpbind.store.base.Store.replace_if>`), so that
a change made meanwhile by another worker is never overwritten. The tasks of a requestor are
listed from a capped stream per requestor, ``tasks-of:HASH`` (the newest ``max_listed`` of
them, expiring ``list_ttl`` seconds after its last task): nothing grows without bound, and a
task whose record expired is left out of the pages.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Final

import msgspec

from mcpbind.server.tasks.store import TaskRecord
from mcpbind.store.base import Store

__all__ = ["SharedTaskStore", "list_key", "record_key"]

_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(TaskRecord)


def record_key(task_id: str) -> str:
    """The store key of the record of ``task_id``."""
    return f"task:{task_id}"


def list_key(requestor: str) -> str:
    """The store stream listing the tasks of ``requestor`` (hashed: a requestor may be any
    text)."""
    import hashlib  # (here: OpenSSL's hashes are not loaded at a stdio server's start-up)

    return "tasks-of:" + hashlib.sha256(requestor.encode()).hexdigest()[:32]


class SharedTaskStore:
    """A :class:`~mcpbind.server.tasks.store.TaskStore` in ``store`` (see the module), open
    while the server serves with it.

    ``max_listed``: the tasks of one requestor that ``tasks/list`` shows at most (the newest;
    older ones stay readable by id until they expire). ``list_ttl``: seconds a requestor's list
    is kept after its last task was created. ``max_ttl``: seconds a record without a TTL of its
    own is kept. ``clock``: seconds since the epoch (``time.time``), the time of the records.
    """

    def __init__(
        self,
        store: Store,
        *,
        max_listed: int = 1000,
        list_ttl: float = 86_400.0,
        max_ttl: float = 86_400.0,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_listed < 1:
            raise ValueError(f"max_listed must be at least 1, not {max_listed}")
        if not (list_ttl > 0 and max_ttl > 0):
            raise ValueError("list_ttl and max_ttl must be positive numbers of seconds")
        self.store = store
        self.max_listed = max_listed
        self.list_ttl = list_ttl
        self.max_ttl = max_ttl
        self.clock = clock

    def __repr__(self) -> str:
        return f"SharedTaskStore({self.store!r})"

    def _ttl(self, record: TaskRecord) -> float:
        """Seconds ``record`` has left to live (at most ``max_ttl``; 0 or less: expired)."""
        if record.ttl_ms is None:
            return self.max_ttl
        return min(record.created_at + record.ttl_ms / 1000 - self.clock(), self.max_ttl)

    async def _read(self, task_id: str) -> tuple[bytes, TaskRecord] | None:
        data = await self.store.get(record_key(task_id))
        if data is None:
            return None
        try:
            record = _DECODER.decode(data)
        except msgspec.DecodeError:  # written by something else: not a task of ours
            return None
        if record.expired(self.clock()):
            return None
        return data, record

    async def create(self, record: TaskRecord) -> None:
        ttl = self._ttl(record)
        if not ttl > 0:
            raise ValueError(f"task {record.task_id!r} is expired already")
        data = _ENCODER.encode(record)
        if await self.store.set_if_absent(record_key(record.task_id), data, ttl=ttl) != data:
            raise ValueError(f"task {record.task_id!r} exists already")
        await self.store.append(
            list_key(record.requestor),
            record.task_id.encode(),
            max_length=self.max_listed,
            ttl=max(self.list_ttl, ttl),
        )

    async def get(self, task_id: str) -> TaskRecord | None:
        found = await self._read(task_id)
        return None if found is None else found[1]

    async def update(self, record: TaskRecord) -> bool:
        found = await self._read(record.task_id)
        if found is None:
            return False
        data, stored = found
        if stored.terminal or stored.revision != record.revision - 1:
            return False
        ttl = self._ttl(record)
        if not ttl > 0:
            return False
        return await self.store.replace_if(record_key(record.task_id), data, _ENCODER.encode(record), ttl=ttl)

    async def list(
        self, requestor: str, cursor: str | None, limit: int
    ) -> tuple[list[TaskRecord], str | None]:
        stream = list_key(requestor)
        page: list[TaskRecord] = []
        after = cursor
        last: str | None = None
        while True:
            try:
                entries = await self.store.read_after(stream, after, limit=limit)
            except ValueError:
                raise KeyError(cursor) from None
            for entry_id, data in entries:
                record = await self.get(data.decode(errors="replace"))
                if record is None or record.requestor != requestor:
                    continue
                if len(page) == limit:
                    return page, last  # one more: the next page starts after ``last``
                page.append(record)
                last = entry_id
            if len(entries) < limit:
                return page, None
            after = entries[-1][0]

    async def delete(self, task_id: str) -> None:
        await self.store.delete(record_key(task_id))
