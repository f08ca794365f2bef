"""Stores for the contract tests: the same suite runs against a MemoryStore and a RedisStore
(on the session's real Redis), on asyncio and trio."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

from mcpbind.store import MemoryStore, RedisStore, Store
from tests.redis_harness import STORE_TIMEOUT

# The timeout of the stores of tests that lose Redis: short enough that one waiting for a Redis
# that does not answer is quick (the contract suite's stores, on a Redis that stays up, wait
# longer: STORE_TIMEOUT).
TIMEOUT = 1.0


@pytest.fixture(params=["memory", "redis"])
def backend(request: pytest.FixtureRequest) -> str:
    name: str = request.param
    return name


@pytest.fixture
async def stores(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[tuple[Store, Store]]:
    """Two stores sharing one backend, as two workers see it: the same MemoryStore twice, or two
    RedisStores (two connection pools) on one Redis."""
    if backend == "memory":
        memory = MemoryStore()
        async with memory:
            yield memory, memory
        return
    url: str = request.getfixturevalue("redis_url")
    async with RedisStore(url, timeout=STORE_TIMEOUT) as one, RedisStore(url, timeout=STORE_TIMEOUT) as other:
        yield one, other


@pytest.fixture
def store(stores: tuple[Store, Store]) -> Store:
    return stores[0]
