"""A server serving with a store (mcpbind.server.fanout): the request-state key it takes, and
the changes it sends and receives (here on one MemoryStore shared by two servers in one
process; tests/store/test_two_workers.py has workers on Redis over HTTP)."""

from __future__ import annotations

import secrets

import anyio
import msgspec
import pytest

from mcpbind.runtime.request_state import RequestState, RequestStateSigner
from mcpbind.server.fanout import CHANNEL, Change
from mcpbind.server.server import Server
from mcpbind.store import MemoryStore, shared_key
from mcpbind.store.keys import REQUEST_STATE_KEY_ENV

pytestmark = pytest.mark.anyio


def sealed_by(server: Server) -> str:
    signer = server.rounds_policy.signer
    state = RequestState("tools/call", "p", "", 1, signer.expiry(), [])
    return signer.seal(state)


def opens(key: bytes, token: str) -> bool:
    try:
        RequestStateSigner(key).open(token, "tools/call", "p")
    except Exception:
        return False
    return True


async def test_the_server_signs_with_the_stores_key_while_it_serves(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUEST_STATE_KEY_ENV, raising=False)
    store = MemoryStore()
    server = Server("s", "1")
    async with server.serving(store=store):
        assert opens(await shared_key(store), sealed_by(server))
    assert not opens(await shared_key(store), sealed_by(server))  # the process's key again


async def test_a_key_given_to_the_server_wins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(REQUEST_STATE_KEY_ENV, raising=False)
    key = secrets.token_bytes(32)
    store = MemoryStore()
    server = Server("s", "1", request_state_key=key)
    async with server.serving(store=store):
        token = sealed_by(server)
        assert opens(key, token) and not opens(await shared_key(store), token)


async def test_one_store_per_server() -> None:
    server = Server("s", "1")
    async with server.serving(store=MemoryStore()):
        with pytest.raises(RuntimeError, match="one store per server"):
            async with server.serving(store=MemoryStore()):
                pass  # pragma: no cover


async def test_changes_go_out_tagged_and_others_come_in() -> None:
    store = MemoryStore()
    one, other = Server("s", "1"), Server("s", "1")

    @one.tool()
    async def a() -> None: ...

    @other.tool()
    async def b() -> None: ...

    async with store.subscribe(CHANNEL) as seen, one.serving(store=store), other.serving(store=store):
        await store.publish(CHANNEL, b"not a change")  # ignored (with a warning) by both
        one.remove_tool("a")
        await other.resource_updated("test://x")
        with anyio.fail_after(10):
            got = [await anext(seen) for _ in range(3)]
    assert got[0] == b"not a change"
    # (each worker publishes from a task of its own: in either order)
    changes = [msgspec.json.decode(data, type=Change) for data in got[1:]]
    assert {(c.method, c.uri) for c in changes} == {
        ("notifications/tools/list_changed", ""),
        ("notifications/resources/updated", "test://x"),
    }
    assert len({c.worker for c in changes}) == 2
