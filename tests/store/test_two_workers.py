"""Two workers of one server sharing a Redis store (issue 16): two apps of the same server
definition, each with its own Server instance and RedisStore (as two processes would have),
served on two ports by real ASGI servers. What one worker raises reaches the listen streams held
by the other; an MRTR retry is accepted by either; a lost Redis gives clear errors and the
workers recover when it is back."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import msgspec
import pytest

from mcpbind.client.client import Client
from mcpbind.client.subscriptions import ResourceUpdated, ToolsListChanged
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, PROTOCOL_VERSION
from mcpbind.runtime.context import RequestContext
from mcpbind.server.elicitation import elicit_form
from mcpbind.server.server import Server
from mcpbind.store import MemoryStore, RedisStore, Store
from mcpbind.store.keys import REQUEST_STATE_KEY_ENV
from tests.http_harness import serve_asgi
from tests.http_server_helpers import ACCEPT_BOTH, messages, sse_events
from tests.redis_harness import STORE_TIMEOUT, RedisServer

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
META = {
    PROTOCOL_VERSION: MODERN,
    CLIENT_CAPABILITIES: {"elicitation": {"form": {}}},
    CLIENT_INFO: {"name": "raw", "version": "1"},
}


class Name(msgspec.Struct):
    name: str


def worker(store: Store) -> Server:
    """One worker's server, built the same way by every worker."""
    server = Server("fleet", "1")

    @server.tool()
    async def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def retire(name: str) -> str:
        """Changes the tool list (of this worker: the others hear of it)."""
        server.remove_tool(name)
        return "retired"

    @server.tool()
    async def touch(uri: str) -> str:
        await server.resource_updated(uri)
        return "touched"

    @server.tool()
    async def remember(text: str) -> str:
        """Needs the store: fails when it is away."""
        await store.set("memo", text.encode(), ttl=60)
        return "remembered"

    @server.tool()
    async def who(ctx: RequestContext) -> str:
        outcome = await elicit_form(ctx, "Your name?", Name)
        return "nobody" if outcome.value is None else f"hello {outcome.value.name}"

    @server.resource("test://doc")
    def doc() -> str:
        return "the document"

    return server


@asynccontextmanager
async def workers(stores: list[Store]) -> AsyncIterator[list[str]]:
    """A worker per store, each served on a port of its own; yields their MCP endpoints."""
    async with AsyncExitStack() as stack:
        urls = []
        for store in stores:
            base = await stack.enter_async_context(serve_asgi(worker(store).http_app(store=store)))
            urls.append(base + "/mcp")
        yield urls


def redis_stores(url: str, count: int = 2, timeout: float = STORE_TIMEOUT) -> list[Store]:
    return [RedisStore(url, timeout=timeout) for _ in range(count)]


async def post(url: str, message: dict[str, Any]) -> tuple[int, list[dict[str, Any]]]:
    headers = {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": MODERN,
        "mcp-method": message["method"],
    }
    if message["method"] == "tools/call":
        headers["mcp-name"] = message["params"]["name"]
    async with httpx.AsyncClient(timeout=20) as client:
        response = await client.post(url, json=message, headers=headers)
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return response.status_code, messages(sse_events(response.text))
    return response.status_code, [response.json()] if response.content else []


def call(ident: int, tool: str, arguments: dict[str, Any], **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments, "_meta": META, **params},
    }


async def test_a_change_on_one_worker_reaches_a_listener_on_the_other(redis_url: str) -> None:
    with anyio.fail_after(30):
        async with workers(redis_stores(redis_url)) as (first, second):
            async with Client().connect_url(first) as on_first, Client().connect_url(second) as on_second:
                assert on_first.stateless
                async with on_first.listen(tools=True, resource_uris=["test://doc"]) as changes:
                    assert changes.acknowledged.tools_list_changed is True
                    await on_second.call_tool("retire", {"name": "add"})
                    assert await changes.next(10) == ToolsListChanged()
                    await on_second.call_tool("touch", {"uri": "test://doc"})
                    assert await changes.next(10) == ResourceUpdated("test://doc")
                    # A change raised on the listener's own worker arrives once, not twice.
                    await on_first.call_tool("touch", {"uri": "test://doc"})
                    await on_second.call_tool("retire", {"name": "who"})
                    assert await changes.next(10) == ResourceUpdated("test://doc")
                    assert await changes.next(10) == ToolsListChanged()


async def test_a_2025_session_on_one_worker_hears_the_others_changes(redis_url: str) -> None:
    with anyio.fail_after(30):
        async with workers(redis_stores(redis_url)) as (first, second):
            changed = anyio.Event()

            async def on_change(params: Any, ctx: Any) -> None:
                changed.set()

            old = Client(protocol_version="2025-11-25")
            old.notification_handlers["notifications/tools/list_changed"] = on_change
            async with old.connect_url(first) as session, Client().connect_url(second) as on_second:
                assert not session.stateless
                await on_second.call_tool("retire", {"name": "add"})
                await changed.wait()


async def test_an_mrtr_retry_is_accepted_by_the_other_worker(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(REQUEST_STATE_KEY_ENV, raising=False)
    with anyio.fail_after(30):
        async with workers(redis_stores(redis_url)) as (first, second):
            _, retry = await first_round(first)
            status, [answer] = await post(second, retry)
            assert status == 200
            assert answer["result"]["resultType"] == "complete"
            assert answer["result"]["content"][0]["text"] == "hello Ada"


async def test_without_a_shared_store_the_retry_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """Each worker's own memory store makes its own key: the key is what lets another worker
    accept a retry."""
    monkeypatch.delenv(REQUEST_STATE_KEY_ENV, raising=False)
    with anyio.fail_after(30):
        async with workers([MemoryStore(), MemoryStore()]) as (first, second):
            _, retry = await first_round(first)
            _, [answer] = await post(second, retry)
            assert answer["error"]["data"]["reason"] == "signature"
            _, [answer] = await post(first, retry)  # its own worker accepts it
            assert answer["result"]["content"][0]["text"] == "hello Ada"


async def first_round(url: str) -> tuple[int, dict[str, Any]]:
    """Call ``who`` on ``url``: its input-required answer, and the retry answering it."""
    status, [asked] = await post(url, call(1, "who", {}))
    assert status == 200
    result = asked["result"]
    assert result["resultType"] == "input_required"
    [question] = result["inputRequests"]
    answers = {question: {"action": "accept", "content": {"name": "Ada"}}}
    return status, call(2, "who", {}, inputResponses=answers, requestState=result["requestState"])


async def test_a_lost_redis_gives_clear_errors_and_the_workers_recover(
    redis_server: RedisServer, redis_url: str
) -> None:
    with anyio.fail_after(60):
        async with workers(redis_stores(redis_url, timeout=1.0)) as (first, second):
            async with Client().connect_url(first) as on_first, Client().connect_url(second) as on_second:
                async with on_first.listen(tools=True) as changes:
                    redis_server.stop()
                    try:
                        status, [answer] = await post(second, call(1, "remember", {"text": "x"}))
                        assert status == 200
                        assert answer["error"]["message"].startswith("Service unavailable: Redis at redis://")
                        # The worker is up: what needs no store is served.
                        assert (await on_second.call_tool("add", {"a": 1, "b": 2})).structured_content == {
                            "result": 3
                        }
                    finally:
                        redis_server.start()
                    # Back: the listener is told that anything may have changed (changes made
                    # meanwhile were lost), and the store serves again.
                    assert await changes.next(20) == ToolsListChanged()
                    with anyio.fail_after(20):
                        while True:
                            status, [answer] = await post(second, call(2, "remember", {"text": "y"}))
                            if "result" in answer:
                                break
                            await anyio.sleep(0.05)
                    await on_second.call_tool("retire", {"name": "add"})
                    assert await changes.next(20) == ToolsListChanged()


async def test_a_worker_cannot_start_without_its_store(redis_server: RedisServer, redis_url: str) -> None:
    store = RedisStore(redis_url, timeout=1.0)
    app = worker(store).http_app(store=store)
    redis_server.stop()
    try:
        with anyio.fail_after(20), pytest.raises(Exception) as failed:
            async with app.run():
                pass  # pragma: no cover
        assert "Redis at redis://127.0.0.1" in str(failed.value)
    finally:
        redis_server.start()


async def test_a_request_the_store_fails_before_it_is_served_gets_503() -> None:
    """What the app needs of the store before a request is served (here its authorization)
    failing: 503 with a JSON-RPC error saying so, and Retry-After."""
    from mcpbind.store import StoreUnavailable

    def authorize(body: bytes) -> None:
        raise StoreUnavailable("Redis at redis://127.0.0.1:1/0 did not answer within 1 s (GET)")

    store = MemoryStore()
    with anyio.fail_after(20):
        async with serve_asgi(worker(store).http_app(store=store, authorize=authorize)) as base:
            async with httpx.AsyncClient(timeout=20) as client:
                message = call(1, "add", {"a": 1, "b": 2})
                response = await client.post(
                    base + "/mcp",
                    json=message,
                    headers={
                        "content-type": "application/json",
                        "accept": ACCEPT_BOTH,
                        "mcp-protocol-version": MODERN,
                        "mcp-method": "tools/call",
                        "mcp-name": "add",
                    },
                )
    assert response.status_code == 503
    assert response.headers["retry-after"] == "1"
    assert response.json()["error"]["message"] == (
        "Service unavailable: Redis at redis://127.0.0.1:1/0 did not answer within 1 s (GET)"
    )
