"""A worker's mark of life in the shared store (mcpbind.transports.http.server.liveness): what
another worker asks before it goes on following a stream the first one writes."""

from __future__ import annotations

import pytest

from mcpbind.store import MemoryStore
from mcpbind.transports.http.server.liveness import WorkerLiveness, owner_tag

pytestmark = pytest.mark.anyio


def test_the_owner_of_a_stream_id() -> None:
    assert owner_tag("p1a2b3c4d.7") == "1a2b3c4d"
    assert owner_tag("g1a2b3c4d.12") == "1a2b3c4d"
    assert owner_tag("p7") is None  # (a worker sharing nothing)
    assert owner_tag("p.7") is None


async def test_a_worker_is_alive_while_it_marks_itself() -> None:
    store = MemoryStore()
    async with store:
        other = WorkerLiveness(store, "other")
        async with WorkerLiveness(store, "mine", ttl=60).running():
            assert await other.alive("mine")
            assert not await other.alive("someone")
        with pytest.raises(ValueError, match="ttl"):
            WorkerLiveness(store, "x", ttl=0)
