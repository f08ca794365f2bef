"""The task store and runner on their own: TTL, the bound, terminal states that never change,
listing, and a task whose worker is gone reported failed."""

from __future__ import annotations

import pytest

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.server.tasks import MemoryTaskStore, TaskRecord, TaskStoreFull
from mcpbind.server.tasks.runner import TaskRunner

pytestmark = pytest.mark.anyio


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def record(task_id: str, clock: Clock, **changes: object) -> TaskRecord:
    fields: dict[str, object] = {
        "task_id": task_id,
        "status": "working",
        "created_at": clock.now,
        "last_updated_at": clock.now,
        "ttl_ms": 10_000,
        "poll_interval_ms": 100,
        "version": "2026-07-28",
        "owner": "worker-a",
        "lease_expires_at": clock.now + 30,
    }
    fields.update(changes)
    return TaskRecord(**fields)  # type: ignore[arg-type]


async def test_records_expire_with_their_ttl() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock=clock)
    await store.create(record("a", clock))
    await store.create(record("b", clock, ttl_ms=None))
    clock.now += 9.9
    assert await store.get("a") is not None
    clock.now += 0.2
    assert await store.get("a") is None
    assert await store.get("b") is not None  # unlimited
    assert len(store) == 1


async def test_the_store_is_bounded_and_drops_expired_records_first() -> None:
    clock = Clock()
    store = MemoryTaskStore(max_tasks=2, clock=clock)
    await store.create(record("a", clock, ttl_ms=1000))
    await store.create(record("b", clock))
    with pytest.raises(TaskStoreFull):
        await store.create(record("c", clock))
    clock.now += 2
    await store.create(record("c", clock))
    assert [r.task_id for r in (await store.list("", None, 10))[0]] == ["b", "c"]


async def test_terminal_records_never_change() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock=clock)
    first = record("a", clock)
    await store.create(first)
    assert await store.update(first.changed(status="cancelled"))
    assert not await store.update(first.changed(status="completed", result={"content": []}))
    found = await store.get("a")
    assert found is not None and found.status == "cancelled"
    assert not await store.update(record("unknown", clock))


async def test_listing_pages_by_requestor() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock=clock)
    for name in "abc":
        await store.create(record(name, clock, requestor="alice"))
    await store.create(record("d", clock, requestor="bob"))
    page, cursor = await store.list("alice", None, 2)
    assert [r.task_id for r in page] == ["a", "b"] and cursor == "b"
    page, cursor = await store.list("alice", cursor, 2)
    assert [r.task_id for r in page] == ["c"] and cursor is None
    with pytest.raises(KeyError):
        await store.list("alice", "zzz", 2)


async def test_a_task_whose_worker_is_gone_is_reported_failed() -> None:
    clock = Clock()
    store = MemoryTaskStore(clock=clock)
    # Written by another worker, which stopped renewing its lease.
    await store.create(
        record("lost", clock, ttl_ms=None, owner="worker-gone", lease_expires_at=clock.now + 30)
    )
    runner = TaskRunner(store, clock=clock, worker_id="worker-b")
    assert (await runner.read("lost", "")).status == "working"
    clock.now += 31
    found = await runner.read("lost", "")
    assert found.status == "failed"
    assert found.error is not None and "stopped" in found.error["message"]
    assert (await runner.read("lost", "")).status == "failed"
    with pytest.raises(McpError) as caught:
        await runner.read("lost", "someone-else")
    assert caught.value.code == INVALID_PARAMS


def test_options_are_checked() -> None:
    with pytest.raises(ValueError):
        TaskRunner(max_running=0)
    with pytest.raises(ValueError):
        TaskRunner(default_ttl_ms=10, max_ttl_ms=5)
    with pytest.raises(ValueError):
        MemoryTaskStore(max_tasks=0)
