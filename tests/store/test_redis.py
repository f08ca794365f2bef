"""What only the Redis store does: losing Redis and getting it back, key prefixes, opening."""

from __future__ import annotations

import subprocess
import sys

import anyio
import pytest

from mcpbind.store import RedisStore, StoreUnavailable
from tests.redis_harness import RedisServer, free_port
from tests.store.conftest import TIMEOUT

pytestmark = pytest.mark.anyio


async def test_a_lost_redis_fails_fast_then_recovers(redis_server: RedisServer, redis_url: str) -> None:
    async with RedisStore(redis_url, timeout=TIMEOUT) as store:
        await store.set("k", b"v")
        redis_server.stop()
        try:
            with anyio.fail_after(10 * TIMEOUT):  # a guard against hanging, not a measure
                for attempt in (store.get("k"), store.set("k", b"w"), store.publish("c", b"m")):
                    with pytest.raises(
                        StoreUnavailable, match=rf"Redis at redis://127\.0\.0\.1:{redis_server.port}/0"
                    ):
                        await attempt
                with pytest.raises(StoreUnavailable):
                    await store.append("s", b"x", max_length=10, ttl=60)
        finally:
            redis_server.start()
        # Back (empty: it kept nothing), with no reopening.
        with anyio.fail_after(10):
            assert await store.get("k") is None
        await store.set("k", b"again")
        assert await store.get("k") == b"again"


async def test_a_subscription_ends_with_store_unavailable_when_redis_goes(
    redis_server: RedisServer, redis_url: str
) -> None:
    async with RedisStore(redis_url, timeout=TIMEOUT) as store:
        with anyio.fail_after(10 * TIMEOUT):
            with pytest.raises(StoreUnavailable, match="subscription to 'news'"):
                async with store.subscribe("news") as messages:
                    redis_server.stop()
                    async for _ in messages:  # pragma: no cover - nothing is published
                        pass
            with pytest.raises(StoreUnavailable):
                async with store.subscribe("news"):
                    pass  # pragma: no cover - Redis is still away
        redis_server.start()
        async with store.subscribe("news") as messages:
            await store.publish("news", b"back")
            with anyio.fail_after(10):
                assert await anext(messages) == b"back"


async def test_nothing_answering_is_unavailable_not_a_hang() -> None:
    store = RedisStore(f"redis://127.0.0.1:{free_port()}/0", timeout=TIMEOUT)
    async with store:
        with anyio.fail_after(10 * TIMEOUT):
            with pytest.raises(StoreUnavailable, match="is unavailable"):
                await store.get("k")


async def test_prefixes_keep_servers_apart(redis_url: str) -> None:
    async with RedisStore(redis_url, prefix="a:") as a, RedisStore(redis_url, prefix="b:") as b:
        await a.set("k", b"of a")
        assert await b.get("k") is None
        assert await b.set_if_absent("k", b"of b") == b"of b"
        assert await a.get("k") == b"of a"


async def test_blocks_nest_and_a_closed_store_refuses(redis_url: str) -> None:
    store = RedisStore(redis_url)
    with pytest.raises(RuntimeError, match="is not open"):
        await store.get("k")
    async with store:
        async with store:
            await store.set("k", b"v")
        assert await store.get("k") == b"v"  # the inner block did not close it
    with pytest.raises(RuntimeError, match="is not open"):
        await store.get("k")


def test_bad_settings_are_refused() -> None:
    with pytest.raises(ValueError, match="not a Redis URL"):
        RedisStore("http://user:secret@example.com/")
    with pytest.raises(ValueError, match="timeout"):
        RedisStore("redis://127.0.0.1:1/0", timeout=0)
    assert "secret" not in repr(RedisStore("redis://:secret@127.0.0.1:1/0"))


def test_importing_the_store_package_does_not_load_coredis() -> None:
    code = "import sys, mcpbind.store; print('coredis' in sys.modules, 'mcpbind.store.redis' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert out.stdout.split() == ["False", "False"]
