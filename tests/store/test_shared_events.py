"""The SSE event log in a store (issue 16): events written by one worker are replayed by
another, capped and expiring; an app given a store keeps its events there."""

from __future__ import annotations

import anyio
import pytest

from mcpbind.server.server import Server
from mcpbind.store import MemoryStore, Store
from mcpbind.transports.http.events import MemoryEventStore, StoredEvent
from mcpbind.transports.http.server.shared_events import StoreEventStore

pytestmark = pytest.mark.anyio


async def test_events_written_by_one_worker_are_replayed_by_another(stores: tuple[Store, Store]) -> None:
    one, other = StoreEventStore(stores[0]), StoreEventStore(stores[1])
    priming = await one.append("s1", "pA.1", b"")
    first = await one.append("s1", "pA.1", b"first")
    second = await one.append("s1", "pA.1", b"second")
    await one.append("s1", "pA.2", b"another stream")
    await one.append("s2", "pA.1", b"another session")
    assert priming.startswith("pA.1_") and len({priming, first, second}) == 3

    found = await other.replay("s1", priming)
    assert found is not None
    stream_id, events = found
    assert stream_id == "pA.1"
    assert [(event.id, event.data) for event in events] == [(first, b"first"), (second, b"second")]
    assert await other.replay("s1", second) == ("pA.1", [])
    # The stream goes on through the other worker, and the first sees it.
    third = await other.append("s1", "pA.1", b"third")
    found = await one.replay("s1", second)
    assert found is not None and [(e.id, e.data) for e in found[1]] == [(third, b"third")]


async def test_a_stream_is_followed_as_another_worker_appends(stores: tuple[Store, Store]) -> None:
    one, other = StoreEventStore(stores[0]), StoreEventStore(stores[1])
    priming = await one.append("s1", "pA.1", b"")
    first = await one.append("s1", "pA.1", b"first")
    async with other.follow("s1", priming) as events:
        assert await anext(events) == StoredEvent(first, b"first")  # what was there already
        second = await one.append("s1", "pA.1", b"second")
        await one.append("s1", "pA.2", b"another stream")
        third = await one.append("s1", "pA.1", b"third")
        with anyio.fail_after(10):
            assert [await anext(events), await anext(events)] == [
                StoredEvent(second, b"second"),
                StoredEvent(third, b"third"),
            ]
    # A stream that is gone (delivered and forgotten, or expired) has nothing to follow.
    await one.forget_stream("s1", "pA.1")
    async with other.follow("s1", third) as events:
        assert [event async for event in events] == []


async def test_ids_never_issued_and_forgotten_streams(stores: tuple[Store, Store]) -> None:
    one, other = StoreEventStore(stores[0]), StoreEventStore(stores[1])
    event = await one.append("s1", "g1", b"x")
    for bad in (
        "",
        "g1",
        "g1_",
        "g1_12",
        "_1-0",
        "g 1_1-0",
        "a:b_1-0",
        "g1_1-0-0",
        "g1_²-0",
        "x" * 80 + "_1-0",
    ):
        assert await other.replay("s1", bad) is None, bad
    await other.forget_stream("s1", "g1")
    assert await one.replay("s1", event) == ("g1", [])
    priming = await one.append("s1", "g2", b"")
    await one.append("s1", "g2", b"y")
    await one.forget_session("s1")
    assert await other.replay("s1", priming) == ("g2", [])


async def test_streams_are_capped(stores: tuple[Store, Store]) -> None:
    one, other = StoreEventStore(stores[0], max_events_per_stream=3), StoreEventStore(stores[1])
    ids = [await one.append("s", "p1", b"%d" % n) for n in range(200)]
    found = await other.replay("s", ids[0])
    assert found is not None
    # Redis trims "about" to the cap (whole nodes): far fewer than written, the last ones kept.
    assert 3 <= len(found[1]) < 199
    assert found[1][-1].data == b"199"


async def test_streams_expire() -> None:
    now = [0.0]
    store = MemoryStore(clock=lambda: now[0])
    events = StoreEventStore(store, ttl=10)
    priming = await events.append("s", "p1", b"")
    await events.append("s", "p1", b"kept")
    now[0] = 9.0
    found = await events.replay("s", priming)
    assert found is not None and [e.data for e in found[1]] == [b"kept"]
    now[0] = 20.0
    assert await events.replay("s", priming) == ("p1", [])


def test_bad_bounds() -> None:
    with pytest.raises(ValueError):
        StoreEventStore(MemoryStore(), max_events_per_stream=0)
    with pytest.raises(ValueError):
        StoreEventStore(MemoryStore(), ttl=0)


def test_an_app_with_a_store_keeps_its_events_there() -> None:
    store = MemoryStore()
    app = Server("s", "1").http_app(store=store)
    assert isinstance(app.event_store, StoreEventStore) and app.event_store.store is store
    assert isinstance(Server("s", "1").http_app().event_store, MemoryEventStore)
    explicit = MemoryEventStore()
    assert Server("s", "1").http_app(store=store, event_store=explicit).event_store is explicit
    assert Server("s", "1").http_app(store=store, stateless=True).event_store is None
