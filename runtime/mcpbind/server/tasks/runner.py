"""Running tasks: :class:`TaskRunner` creates a task's record, runs its work in the server's
own task group (at most ``max_running`` at once), records how it ended, and carries what it
asks the client for (``input_required``) and its cancellation.

The record in the :class:`~mcpbind.server.tasks.store.TaskStore` is the truth every worker
reads. The worker running a task owns it: a heartbeat renews the record's lease every third
of ``lease`` seconds, and ends the work of a record that was cancelled or dropped (expired)
meanwhile, wherever that happened. A task still ``working`` (or ``input_required``) whose
lease ran out lost its worker: whoever reads it next records it ``failed``
(:meth:`TaskRunner.read`).
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any, Final

import anyio
import anyio.abc

from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcpbind.server.tasks.shared_store import SharedTaskStore
from mcpbind.server.tasks.signals import TaskSignals
from mcpbind.server.tasks.store import MemoryTaskStore, TaskRecord, TaskStore, TaskStoreFull
from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable

__all__ = ["TaskRunner"]

log = logging.getLogger("mcpbind")

# Called with a task's record after each change of its status (status notifications).
StatusListener = Callable[[TaskRecord], Awaitable[None]]

# How many times a change is tried on a record that others keep changing meanwhile.
_MAX_ATTEMPTS: Final = 64


@dataclass(slots=True)
class _Local:
    """A task this worker runs: its cancel scope, and an event set at each change of its
    record (answers delivered, cancelled, finished), replaced once seen."""

    scope: anyio.CancelScope = field(default_factory=anyio.CancelScope)
    changed: anyio.Event = field(default_factory=anyio.Event)
    listener: StatusListener | None = None
    asked: int = 0
    told: str = "working"  # the status the listener was last told of

    def wake(self) -> None:
        self.changed.set()
        self.changed = anyio.Event()


class TaskRunner:
    """Creates and runs the tasks of one server (see the module).

    ``store``: where tasks are kept (a :class:`MemoryTaskStore` by default). ``max_running``:
    how many tasks this worker runs at once; a request for one more is refused (-32603) until
    one ends. ``default_ttl_ms``: how long a task is kept from its creation, unless a
    2025-11-25 client asks for less (never more than ``max_ttl_ms``). ``poll_interval_ms``:
    the polling interval suggested to clients. ``lease``: seconds a worker vouches for the
    tasks it runs (renewed every third of it). ``worker_id``: this worker's name in the
    records (a random one by default). ``max_listed``: with a shared store (:meth:`sharing`),
    the newest tasks of one requestor that ``tasks/list`` shows (older ones stay readable by
    id until they expire). ``clock``: seconds since the epoch (``time.time``).
    """

    def __init__(
        self,
        store: TaskStore | None = None,
        *,
        max_running: int = 32,
        default_ttl_ms: int = 3_600_000,
        max_ttl_ms: int = 86_400_000,
        poll_interval_ms: int = 1000,
        lease: float = 30.0,
        worker_id: str | None = None,
        max_listed: int = 1000,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if max_running < 1:
            raise ValueError(f"max_running must be at least 1, not {max_running}")
        if not 0 < default_ttl_ms <= max_ttl_ms:
            raise ValueError("default_ttl_ms must be positive and at most max_ttl_ms")
        self.store: TaskStore = store if store is not None else MemoryTaskStore(clock=clock)
        self.store_given = store is not None
        self.signals: TaskSignals | None = None
        # Called with a task's id after each change of its status, by whichever worker made it
        # (never waits): the server's listen streams and the other workers' hear of it.
        self.on_status: Callable[[str], None] | None = None
        self.max_running = max_running
        self.default_ttl_ms = default_ttl_ms
        self.max_ttl_ms = max_ttl_ms
        self.poll_interval_ms = poll_interval_ms
        self.lease = lease
        self.worker_id = worker_id if worker_id is not None else uuid.uuid4().hex
        self.max_listed = max_listed
        self.clock = clock
        self._group: anyio.abc.TaskGroup | None = None
        self._entered = 0
        self._local: dict[str, _Local] = {}

    @property
    def running_tasks(self) -> int:
        """How many tasks this worker runs now."""
        return len(self._local)

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Tasks can be run during the block (the server's ``serving()``): the first block
        entered opens the task group they run in, the others join it. When the first block
        ends, the tasks still running are cancelled and recorded ``failed``."""
        if self._group is not None:
            self._entered += 1
            try:
                yield
            finally:
                self._entered -= 1
            return
        async with anyio.create_task_group() as group:
            self._group = group
            group.start_soon(self._heartbeat)
            try:
                yield
            finally:
                self._group = None
                group.cancel_scope.cancel()

    @asynccontextmanager
    async def sharing(self, store: Store) -> AsyncIterator[None]:
        """During the block this worker shares its tasks with the others serving with ``store``
        (open): unless the runner was given a task store, its tasks are kept in ``store``
        (a :class:`SharedTaskStore`), and the other workers' changes to the tasks it runs are
        heard at once (:class:`TaskSignals`)."""
        if self.store_given:
            yield
            return
        before = self.store
        self.store = SharedTaskStore(
            store, max_listed=self.max_listed, max_ttl=self.max_ttl_ms / 1000, clock=self.clock
        )
        self.signals = TaskSignals(store)
        try:
            async with anyio.create_task_group() as group:
                await group.start(self.signals.watch, self.worker_id, self.changed_elsewhere)
                try:
                    yield
                finally:
                    group.cancel_scope.cancel()
        finally:
            self.store, self.signals = before, None

    # -- creating and running ------------------------------------------------------------

    async def start(
        self,
        work: Callable[[TaskRecord], Awaitable[dict[str, Any]]],
        *,
        version: str,
        requestor: str,
        ttl_ms: int | None = None,
        listener: StatusListener | None = None,
    ) -> TaskRecord:
        """Create a task (durably: readable once this returns) and start ``work`` on it, which
        returns the task's result (builtins); an :class:`McpError` it raises fails the task
        with that error. ``ttl_ms``: the TTL asked for (``None``: the default)."""
        group = self._group
        if group is None:
            raise McpError(INTERNAL_ERROR, "This server runs no tasks now (it is not serving)")
        if len(self._local) >= self.max_running:
            raise McpError(
                INTERNAL_ERROR,
                f"Too many tasks running (this server runs at most {self.max_running}); try again later",
            )
        now = self.clock()
        ttl = self.default_ttl_ms if ttl_ms is None else max(1, min(ttl_ms, self.max_ttl_ms))
        record = TaskRecord(
            task_id=str(uuid.uuid4()),
            status="working",
            created_at=now,
            last_updated_at=now,
            ttl_ms=ttl,
            poll_interval_ms=self.poll_interval_ms,
            version=version,
            requestor=requestor,
            owner=self.worker_id,
            lease_expires_at=now + self.lease,
        )
        try:
            await self.store.create(record)
        except TaskStoreFull as exc:
            raise McpError(INTERNAL_ERROR, f"Cannot create a task now: {exc}") from None
        local = self._local[record.task_id] = _Local(listener=listener)
        group.start_soon(self._run, record, work, local)
        return record

    async def _run(
        self, record: TaskRecord, work: Callable[[TaskRecord], Awaitable[dict[str, Any]]], local: _Local
    ) -> None:
        task_id = record.task_id
        changes: dict[str, Any]
        try:
            with local.scope:
                result = await work(record)
                changes = {"status": "completed", "result": result}
            if local.scope.cancelled_caught:
                changes = {"status": "cancelled", "status_message": "The task was cancelled"}
        except McpError as exc:
            error: dict[str, Any] = {"code": exc.code, "message": exc.message}
            if exc.data is not None:
                error["data"] = exc.data
            changes = {"status": "failed", "status_message": exc.message, "error": error}
        except anyio.get_cancelled_exc_class():
            message = "The server stopped before the task finished"
            with anyio.CancelScope(shield=True):
                await self._finish(task_id, local, _failure(message))
            raise
        except Exception as exc:
            log.exception("task %s failed", task_id)
            changes = _failure(f"Internal error: {type(exc).__name__}")
        with anyio.CancelScope(shield=True):
            await self._finish(task_id, local, changes)

    async def _finish(self, task_id: str, local: _Local, changes: dict[str, Any]) -> None:
        try:
            await self.modify(task_id, lambda _: {"input_requests": None, "input_responses": None, **changes})
        except (StoreUnavailable, McpError) as error:  # read failed once its lease runs out
            log.warning("the end of task %s could not be recorded: %s", task_id, error)
        finally:
            self._local.pop(task_id, None)
            local.wake()

    # -- reading and changing records -------------------------------------------------------

    async def modify(
        self, task_id: str, change: Callable[[TaskRecord], dict[str, Any] | None]
    ) -> TaskRecord | None:
        """Change the record of ``task_id`` by ``change`` (given the record stored, the fields
        to change, or ``None`` to leave it) as one atomic step: a record changed meanwhile
        elsewhere is read again and given to ``change`` again. A terminal record is never
        changed. Returns the record stored after the call (``None``: none). Whoever is
        concerned is told: this worker's waiters on it and its status listener, or the
        worker running it."""
        for _ in range(_MAX_ATTEMPTS):
            record = await self.store.get(task_id)
            if record is None or record.terminal:
                return record
            changes = change(record)
            if changes is None:
                return record
            new = record.changed(**changes)
            if await self.store.update(new):
                if new.status != record.status and self.on_status is not None:
                    self.on_status(task_id)
                await self._changed(new)
                return new
        raise McpError(INTERNAL_ERROR, f"Task {task_id} changes too often to be changed now; try again")

    async def _changed(self, record: TaskRecord) -> None:
        local = self._local.get(record.task_id)
        if local is not None:
            local.wake()
            await self._tell(local, record)
        elif self.signals is not None and record.owner != self.worker_id:
            await self.signals.poke(record.owner, record.task_id)

    async def changed_elsewhere(self, task_id: str) -> None:
        """Another worker changed the record of ``task_id`` (a task this worker may run): its
        waiters read it again, its status listener is told, and a record that became terminal
        (cancelled) stops the task's work."""
        local = self._local.get(task_id)
        if local is None:
            return
        record = await self.store.get(task_id)
        if record is None or record.terminal:
            local.scope.cancel()
        if record is not None:
            await self._tell(local, record)
        local.wake()

    async def read(self, task_id: str, requestor: str) -> TaskRecord:
        """The record of ``task_id`` for ``requestor`` (-32602 when there is none, it expired,
        or it is another requestor's), recorded ``failed`` first if its worker is gone."""
        record = await self.store.get(task_id)
        if record is not None and (
            not record.terminal and record.lease_expires_at < self.clock() and task_id not in self._local
        ):

            def lost(stored: TaskRecord) -> dict[str, Any] | None:
                if stored.lease_expires_at >= self.clock():
                    return None  # renewed meanwhile: its worker is there
                return {
                    **_failure("The worker running the task stopped before it finished (its lease ran out)"),
                    "input_requests": None,
                    "input_responses": None,
                }

            record = await self.modify(task_id, lost)
        if record is None or record.requestor != requestor:
            raise McpError(INVALID_PARAMS, f"Failed to retrieve task: Task not found: {task_id}")
        return record

    async def _tell(self, local: _Local, record: TaskRecord) -> None:
        """Tell the task's status listener of ``record`` if its status is new to it."""
        if local.listener is None or local.told == record.status:
            return
        local.told = record.status
        try:
            await local.listener(record)
        except Exception:  # a client gone, say: status notifications are optional
            log.debug("status notification for task %s not sent", record.task_id, exc_info=True)

    async def cancel(self, record: TaskRecord) -> TaskRecord:
        """Record the task of ``record`` ``cancelled`` now (unless it ended meanwhile) and stop
        its work (here, or on the worker running it, which is told). The record stored."""
        found = await self.modify(
            record.task_id,
            lambda _: {
                "status": "cancelled",
                "status_message": "The task was cancelled by request",
                "input_requests": None,
                "input_responses": None,
            },
        )
        local = self._local.get(record.task_id)
        if local is not None and found is not None and found.status == "cancelled":
            local.scope.cancel()
        return found if found is not None else record

    async def wait_changed(self, task_id: str) -> None:
        """Wait until the record of ``task_id`` may have changed: its change here, or a poll
        interval (changes made by other workers are seen by reading again)."""
        local = self._local.get(task_id)
        with anyio.move_on_after(self.poll_interval_ms / 1000):
            if local is not None:
                await local.changed.wait()
            else:
                await anyio.sleep_forever()

    # -- input_required --------------------------------------------------------------------

    async def ask(self, task_id: str, key_word: str, request: dict[str, Any]) -> Any:
        """Move the task to ``input_required`` asking ``request`` (an embedded request, as
        builtins) and wait for its answer (delivered by ``tasks/update``, on any worker): the
        answer, as received. The task is ``working`` again once it is taken."""
        local = self._local[task_id]
        local.asked += 1
        key = f"{key_word}-{local.asked}"
        changed = local.changed
        record = await self.modify(
            task_id, lambda _: {"status": "input_required", "input_requests": {key: request}}
        )
        while True:
            if record is None or record.terminal:
                local.scope.cancel()  # cancelled or expired meanwhile
                await anyio.sleep_forever()
            assert record is not None
            responses = record.input_responses or {}
            if key in responses:

                def take(stored: TaskRecord) -> dict[str, Any]:
                    rest = {k: v for k, v in (stored.input_responses or {}).items() if k != key}
                    return {"status": "working", "input_requests": None, "input_responses": rest or None}

                await self.modify(task_id, take)
                return responses[key]
            with anyio.move_on_after(self.poll_interval_ms / 1000):
                await changed.wait()
            changed = local.changed  # (before reading: a change meanwhile is not missed)
            record = await self.store.get(task_id)

    async def mark(self, task_id: str, status: str) -> None:
        """Move a task of this worker to ``status`` (``input_required`` or ``working``) with no
        embedded requests (2025-11-25: its requests go to the client on the session)."""
        await self.modify(
            task_id,
            lambda stored: None if stored.status == status else {"status": status, "input_requests": None},
        )

    # -- the heartbeat ---------------------------------------------------------------------

    async def _heartbeat(self) -> None:
        while True:
            await anyio.sleep(self.lease / 3)
            for task_id, local in list(self._local.items()):
                try:
                    record = await self.modify(
                        task_id,
                        lambda stored: {
                            "lease_expires_at": self.clock() + self.lease,
                            "last_updated_at": stored.last_updated_at,
                        },
                    )
                except (StoreUnavailable, McpError) as error:
                    log.warning("the lease of task %s was not renewed: %s", task_id, error)
                    continue
                if record is None or record.terminal:
                    local.scope.cancel()  # cancelled elsewhere, or expired
                    if record is not None:
                        await self._tell(local, record)
                local.wake()  # answers delivered through another worker are read again


def _failure(message: str) -> dict[str, Any]:
    return {
        "status": "failed",
        "status_message": message,
        "error": {"code": INTERNAL_ERROR, "message": message},
    }
