"""open_store(url) and the shared request-state key."""

from __future__ import annotations

import base64
import secrets

import pytest

from mcpbind.store import MemoryStore, RedisStore, open_store, shared_key
from mcpbind.store.keys import REQUEST_STATE_KEY_ENV, key_from_text

pytestmark = pytest.mark.anyio


def test_open_store_by_url() -> None:
    assert isinstance(open_store(None), MemoryStore)
    assert isinstance(open_store("memory:"), MemoryStore)
    store = open_store("redis://127.0.0.1:6399/2", prefix="x:", timeout=0.5)
    assert isinstance(store, RedisStore)
    assert (store.prefix, store.timeout, store.where) == ("x:", 0.5, "redis://127.0.0.1:6399/2")
    for bad in ("", "memcached://h", "redis", "postgres://u:pw@h/db"):
        with pytest.raises(ValueError, match="unknown store URL") as refused:
            open_store(bad)
        assert "pw" not in str(refused.value)
    with pytest.raises(TypeError):
        open_store("memory:", prefix="x")


async def test_workers_sharing_a_store_share_the_key(monkeypatch: pytest.MonkeyPatch, redis_url: str) -> None:
    monkeypatch.delenv(REQUEST_STATE_KEY_ENV, raising=False)
    async with RedisStore(redis_url) as one, RedisStore(redis_url) as other:
        key = await shared_key(one)
        assert len(key) == 32
        assert await shared_key(other) == key
        assert await shared_key(other, "another") != key
    # Each memory store is a world of its own.
    assert await shared_key(MemoryStore()) != await shared_key(MemoryStore())


async def test_the_environment_overrides_the_stores_key(monkeypatch: pytest.MonkeyPatch) -> None:
    key = secrets.token_bytes(32)
    monkeypatch.setenv(REQUEST_STATE_KEY_ENV, key.hex())
    store = MemoryStore()
    assert await shared_key(store) == key
    assert await store.get("key:request-state") is None  # the store was not asked
    monkeypatch.setenv(REQUEST_STATE_KEY_ENV, base64.urlsafe_b64encode(key).decode().rstrip("="))
    assert await shared_key(store) == key
    monkeypatch.setenv(REQUEST_STATE_KEY_ENV, "abcd")
    with pytest.raises(ValueError, match="at least 32"):
        await shared_key(store)


def test_keys_from_text() -> None:
    with pytest.raises(ValueError, match="neither hexadecimal nor base64url"):
        key_from_text("not a key!")
    assert key_from_text(" " + "ab" * 32 + "\n") == b"\xab" * 32
