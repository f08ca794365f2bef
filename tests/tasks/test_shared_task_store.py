"""SharedTaskStore on its own, on a MemoryStore and on a RedisStore: records round-trip,
updates are compare-and-set by revision (a stale or terminal record is refused, and of racing
updates one wins), the store's key expires with the task's TTL, lists page per requestor and
are capped."""

from __future__ import annotations

import secrets
import time
from collections.abc import AsyncIterator

import anyio
import pytest

from mcpbind.server.tasks.shared_store import SharedTaskStore, record_key
from mcpbind.server.tasks.store import TaskRecord
from mcpbind.store import MemoryStore, RedisStore, Store
from tests.redis_harness import STORE_TIMEOUT

pytestmark = pytest.mark.anyio


@pytest.fixture(params=["memory", "redis"])
async def store(request: pytest.FixtureRequest) -> AsyncIterator[Store]:
    if request.param == "memory":
        yield MemoryStore()
        return
    url: str = request.getfixturevalue("redis_url")
    async with RedisStore(url, prefix=f"t{secrets.token_hex(4)}:", timeout=STORE_TIMEOUT) as redis:
        yield redis


def record(task_id: str, requestor: str = "", ttl_ms: int = 60_000) -> TaskRecord:
    now = time.time()
    return TaskRecord(
        task_id=task_id,
        status="working",
        created_at=now,
        last_updated_at=now,
        ttl_ms=ttl_ms,
        poll_interval_ms=100,
        version="2026-07-28",
        requestor=requestor,
        owner="worker-a",
        lease_expires_at=now + 30,
    )


async def test_records_round_trip_and_update_by_revision(store: Store) -> None:
    tasks = SharedTaskStore(store)
    first = record("t1")
    await tasks.create(first)
    with pytest.raises(ValueError, match="exists already"):
        await tasks.create(record("t1", requestor="someone else"))
    assert await tasks.get("t1") == first
    assert await tasks.get("nope") is None
    answered = first.changed(input_responses={"k": 1})
    assert await tasks.update(answered)
    assert not await tasks.update(first.changed(status_message="stale"))  # not the next revision
    done = answered.changed(status="completed", result={"content": []})
    assert await tasks.update(done)
    assert not await tasks.update(done.changed(status="failed"))  # terminal: never changes
    assert await tasks.get("t1") == done
    assert not await tasks.update(record("unknown").changed())
    await tasks.delete("t1")
    assert await tasks.get("t1") is None


async def test_of_racing_updates_one_wins(store: Store) -> None:
    tasks = SharedTaskStore(store)
    base = record("race")
    await tasks.create(base)
    wins: list[int] = []

    async def change(n: int) -> None:
        if await tasks.update(base.changed(status_message=str(n))):
            wins.append(n)

    async with anyio.create_task_group() as tg:
        for n in range(10):
            tg.start_soon(change, n)
    assert len(wins) == 1
    found = await tasks.get("race")
    assert found is not None and found.status_message == str(wins[0])


async def test_a_record_expires_with_its_ttl(store: Store) -> None:
    tasks = SharedTaskStore(store)
    await tasks.create(record("brief", ttl_ms=50))
    with anyio.fail_after(10):
        while await store.get(record_key("brief")) is not None:  # the store's own expiry
            await anyio.sleep(0.01)
    assert await tasks.get("brief") is None


async def test_lists_page_per_requestor_and_are_capped(store: Store) -> None:
    tasks = SharedTaskStore(store, max_listed=5)
    for n in range(4):
        await tasks.create(record(f"ada-{n}", requestor="ada"))
        await tasks.create(record(f"eve-{n}", requestor="eve"))
    await tasks.delete("ada-1")
    seen: list[str] = []
    cursor = None
    while True:
        page, cursor = await tasks.list("ada", cursor, 2)
        assert len(page) <= 2
        seen += [r.task_id for r in page]
        if cursor is None:
            break
    assert seen == ["ada-0", "ada-2", "ada-3"]
    with pytest.raises(KeyError):
        await tasks.list("ada", "not a cursor", 2)
    for n in range(4, 300):
        await tasks.create(record(f"ada-{n}", requestor="ada"))
    listed, _ = await tasks.list("ada", None, 1000)
    # The newest, at least max_listed and far fewer than all (Redis trims by whole nodes).
    assert 5 <= len(listed) < 250
    assert listed[-1].task_id == "ada-299"
