"""The contract of a store (mcpbind.store.base.Store), the same for MemoryStore and RedisStore."""

from __future__ import annotations

import anyio
import pytest

from mcpbind.store import Store
from mcpbind.store.base import appended_channel

pytestmark = pytest.mark.anyio


async def wait_for_none(store: Store, key: str) -> None:
    """Poll until ``key`` has expired (a deadline bounds the wait)."""
    with anyio.fail_after(10):
        while await store.get(key) is not None:
            await anyio.sleep(0.01)


async def test_set_get_delete(store: Store) -> None:
    assert await store.get("k") is None
    await store.set("k", b"one")
    assert await store.get("k") == b"one"
    await store.set("k", b"two")
    assert await store.get("k") == b"two"
    await store.delete("k", "missing")
    assert await store.get("k") is None
    await store.delete()  # nothing to delete: nothing happens


async def test_values_expire(store: Store) -> None:
    await store.set("short", b"x", ttl=0.05)
    await store.set("long", b"y", ttl=600)
    await wait_for_none(store, "short")
    assert await store.get("long") == b"y"
    assert await store.expire("long", 0.05)
    await wait_for_none(store, "long")
    assert not await store.expire("long", 10)  # no such key any more


async def test_a_time_to_live_must_be_positive(store: Store) -> None:
    with pytest.raises(ValueError, match="time to live"):
        await store.set("k", b"x", ttl=0)
    with pytest.raises(ValueError, match="time to live"):
        await store.expire("k", -1)


async def test_set_if_absent_keeps_the_first_value(stores: tuple[Store, Store]) -> None:
    one, other = stores
    assert await one.set_if_absent("k", b"first") == b"first"
    assert await other.set_if_absent("k", b"second") == b"first"
    assert await one.get("k") == b"first"


async def test_set_if_absent_racing_workers_agree(stores: tuple[Store, Store]) -> None:
    one, other = stores
    seen: list[bytes] = []

    async def claim(store: Store, value: bytes) -> None:
        seen.append(await store.set_if_absent("race", value, ttl=60))

    async with anyio.create_task_group() as tg:
        for n in range(20):
            tg.start_soon(claim, one if n % 2 else other, str(n).encode())
    assert len(seen) == 20 and len(set(seen)) == 1
    assert await one.get("race") == seen[0]


async def test_subscribers_get_what_another_worker_publishes(stores: tuple[Store, Store]) -> None:
    one, other = stores
    got: list[bytes] = []
    async with one.subscribe("news") as messages, other.subscribe("news") as also:
        await other.publish("elsewhere", b"not for us")
        for n in range(3):
            await other.publish("news", b"m%d" % n)
        with anyio.fail_after(10):
            async for message in messages:
                got.append(message)
                if len(got) == 3:
                    break
            assert [await anext(also) for _ in range(3)] == got
    assert got == [b"m0", b"m1", b"m2"]
    await other.publish("news", b"nobody listens")  # no subscription left: dropped


async def test_streams_keep_entries_in_order(store: Store) -> None:
    ids = [await store.append("log", b"e%d" % n, max_length=100, ttl=60) for n in range(5)]
    assert ids == sorted(ids, key=lambda i: tuple(int(p) for p in i.split("-")))
    assert len(set(ids)) == 5
    entries = await store.read_after("log", None, limit=100)
    assert entries == [(ident, b"e%d" % n) for n, ident in enumerate(ids)]
    assert await store.read_after("log", ids[1], limit=100) == entries[2:]
    assert await store.read_after("log", ids[1], limit=2) == entries[2:4]
    assert await store.read_after("log", ids[-1], limit=100) == []
    assert await store.read_after("no such stream", None, limit=10) == []
    with pytest.raises(ValueError, match="not a stream entry id"):
        await store.read_after("log", "bogus", limit=10)
    with pytest.raises(ValueError, match="limit"):
        await store.read_after("log", None, limit=0)


async def test_each_entry_appended_is_announced(stores: tuple[Store, Store]) -> None:
    one, other = stores
    async with one.subscribe(appended_channel("told")) as announced:
        first = await other.append("told", b"a", max_length=10, ttl=60)
        await other.append("untold", b"b", max_length=10, ttl=60)
        second = await other.append("told", b"c", max_length=10, ttl=60)
        with anyio.fail_after(10):
            assert [await anext(announced), await anext(announced)] == [first.encode(), second.encode()]


async def test_streams_are_capped(store: Store) -> None:
    for n in range(300):
        await store.append("capped", b"%d" % n, max_length=10, ttl=60)
    kept = await store.read_after("capped", None, limit=10_000)
    # At least the last 10, and far fewer than all (Redis trims by whole nodes: "about").
    assert 10 <= len(kept) < 300
    assert kept[-1][1] == b"299"
    assert [int(data) for _, data in kept] == list(range(300 - len(kept), 300))


async def test_streams_expire(store: Store) -> None:
    await store.append("brief", b"x", max_length=10, ttl=0.05)
    with anyio.fail_after(10):
        while await store.read_after("brief", None, limit=10):
            await anyio.sleep(0.01)
    # The next entry starts a new stream, expiring in its turn.
    ident = await store.append("brief", b"y", max_length=10, ttl=600)
    assert await store.read_after("brief", None, limit=10) == [(ident, b"y")]
    await store.delete("brief")
    assert await store.read_after("brief", None, limit=10) == []


async def test_replace_if_replaces_only_the_expected_value(store: Store) -> None:
    assert not await store.replace_if("cas", b"old", b"new")  # no value: nothing to replace
    assert await store.get("cas") is None
    await store.set("cas", b"old")
    assert not await store.replace_if("cas", b"other", b"new")
    assert await store.get("cas") == b"old"
    assert await store.replace_if("cas", b"old", b"new", ttl=600)
    assert await store.get("cas") == b"new"
    assert not await store.replace_if("cas", b"old", b"newer")  # changed since it was read
    assert await store.replace_if("cas", b"new", b"brief", ttl=0.05)
    await wait_for_none(store, "cas")
    with pytest.raises(ValueError, match="time to live"):
        await store.replace_if("cas", b"brief", b"x", ttl=0)


async def test_replace_if_racing_workers_one_wins(stores: tuple[Store, Store]) -> None:
    one, other = stores
    await one.set("counter", b"0", ttl=60)
    wins: list[bytes] = []

    async def bump(store: Store, value: bytes) -> None:
        if await store.replace_if("counter", b"0", value, ttl=60):
            wins.append(value)

    async with anyio.create_task_group() as tg:
        for n in range(1, 21):
            tg.start_soon(bump, one if n % 2 else other, str(n).encode())
    assert len(wins) == 1
    assert await other.get("counter") == wins[0]
