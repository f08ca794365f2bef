"""What the client sends one worker for a request running on another (workers sharing a
Redis store, issue 16): a cancellation stops it, progress reaches its caller, a
roots/list_changed reaches the handlers of every worker holding the session; and a POST stream
still being written by one worker, resumed with Last-Event-ID on the other, goes on there up
to its response."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import AsyncExitStack, asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.server import Server
from mcpbind.store import RedisStore
from tests.http_harness import serve_asgi
from tests.http_server_helpers import ACCEPT_BOTH, EventReader
from tests.redis_harness import STORE_TIMEOUT
from tests.store.test_shared_sessions import OLD, open_session, raw

pytestmark = pytest.mark.anyio


class Probe:
    """What the workers' handlers saw."""

    def __init__(self) -> None:
        self.started = anyio.Event()
        self.release = anyio.Event()
        self.cancelled: list[str] = []
        self.progress: list[tuple[str, float]] = []
        self.roots_changed: list[str] = []
        self.roots_seen = anyio.Event()


def worker(name: str, probe: Probe) -> Server:
    server = Server("fleet", "1", logging=True)

    @server.tool()
    async def slow() -> str:
        probe.started.set()
        try:
            await anyio.sleep_forever()
        finally:
            probe.cancelled.append(name)
        return name  # pragma: no cover

    @server.tool()
    async def steps(ctx: RequestContext) -> str:
        await ctx.log("info", "one")
        await probe.release.wait()
        await ctx.log("info", "two")
        return name

    @server.tool()
    async def roots(ctx: RequestContext) -> str:
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            probe.progress.append((name, progress))

        methods = types.methods
        result = await ctx.session.request(
            methods.ROOTS_LIST, types.RequestParams(), progress=on_progress, related=ctx.request_id
        )
        return f"{len(result.roots)} roots from {name}"

    @server.on_notification(types.methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: Any, ctx: RequestContext) -> None:
        probe.roots_changed.append(name)
        if len(probe.roots_changed) == 2:
            probe.roots_seen.set()

    return server


@asynccontextmanager
async def two_workers(url: str, probe: Probe) -> AsyncIterator[tuple[str, str]]:
    async with AsyncExitStack() as stack:
        urls = []
        for name in ("A", "B"):
            app = worker(name, probe).http_app(store=RedisStore(url, timeout=STORE_TIMEOUT))
            urls.append(await stack.enter_async_context(serve_asgi(app)) + "/mcp")
        yield urls[0], urls[1]


def headers(session: str) -> dict[str, str]:
    return {
        "content-type": "application/json",
        "accept": ACCEPT_BOTH,
        "mcp-protocol-version": OLD,
        "mcp-session-id": session,
    }


def call(ident: int, tool: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": ident, "method": "tools/call", "params": {"name": tool, "arguments": {}}}


async def test_a_cancellation_sent_to_the_other_worker_stops_the_request(redis_url: str) -> None:
    probe = Probe()
    with anyio.fail_after(60):
        async with two_workers(redis_url, probe) as (first, second), httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, first)
            answered: list[httpx.Response] = []

            async def call_slow() -> None:
                answered.append(await raw(client, first, call(7, "slow"), session))

            async with anyio.create_task_group() as tg:
                tg.start_soon(call_slow)
                await probe.started.wait()
                cancel = {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}
                assert (await raw(client, second, cancel, session)).status_code == 202
            assert probe.cancelled == ["A"]
            [response] = answered
            assert response.status_code == 200
            assert '"result"' not in response.text  # no response to a cancelled request
            # The session goes on, on both workers.
            for url in (first, second):
                assert (
                    await raw(client, url, {"jsonrpc": "2.0", "id": 9, "method": "ping"}, session)
                ).status_code == 200


async def test_progress_and_the_answer_sent_to_the_other_worker_reach_the_request(redis_url: str) -> None:
    probe = Probe()
    with anyio.fail_after(60):
        async with two_workers(redis_url, probe) as (first, second), httpx.AsyncClient(timeout=20) as client:
            initialize = {
                "jsonrpc": "2.0",
                "id": 0,
                "method": "initialize",
                "params": {
                    "protocolVersion": OLD,
                    "capabilities": {"roots": {"listChanged": True}},
                    "clientInfo": {"name": "raw", "version": "1"},
                },
            }
            opened = await raw(client, first, initialize)
            session = opened.headers["mcp-session-id"]
            note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
            assert (await raw(client, first, note, session)).status_code == 202
            body = json.dumps(call(1, "roots"))
            async with client.stream("POST", first, content=body, headers=headers(session)) as response:
                events = EventReader(response)
                asked = await events.next_message()
                assert asked["method"] == "roots/list"
                token = asked["params"]["_meta"]["progressToken"]
                progress = {
                    "jsonrpc": "2.0",
                    "method": "notifications/progress",
                    "params": {"progressToken": token, "progress": 0.5},
                }
                assert (await raw(client, second, progress, session)).status_code == 202
                answer = {"jsonrpc": "2.0", "id": asked["id"], "result": {"roots": []}}
                assert (await raw(client, second, answer, session)).status_code == 202
                result = await events.next_message()
            assert result["result"]["content"][0]["text"] == "0 roots from A"
            assert probe.progress == [("A", 0.5)]


async def test_roots_list_changed_reaches_every_worker_holding_the_session(redis_url: str) -> None:
    probe = Probe()
    with anyio.fail_after(60):
        async with two_workers(redis_url, probe) as (first, second), httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, first)  # held by the first
            ping = {"jsonrpc": "2.0", "id": 1, "method": "ping"}
            assert (await raw(client, second, ping, session)).status_code == 200  # and the second
            changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
            assert (await raw(client, second, changed, session)).status_code == 202
            await probe.roots_seen.wait()
            assert sorted(probe.roots_changed) == ["A", "B"]


async def test_a_live_post_stream_resumed_on_the_other_worker_goes_on_to_its_response(redis_url: str) -> None:
    probe = Probe()
    with anyio.fail_after(60):
        async with two_workers(redis_url, probe) as (first, second), httpx.AsyncClient(timeout=20) as client:
            session = await open_session(client, first)
            body = json.dumps(call(1, "steps"))
            async with client.stream("POST", first, content=body, headers=headers(session)) as response:
                events = EventReader(response)
                while True:
                    event = await events.next()
                    if event.get("data"):
                        break
                assert json.loads(event["data"])["params"]["data"] == "one"
            # The connection is gone; the handler goes on, on the first worker.
            get_headers = {
                "accept": "text/event-stream",
                "mcp-protocol-version": OLD,
                "mcp-session-id": session,
                "last-event-id": event["id"],
            }
            async with client.stream("GET", second, headers=get_headers) as resumed:
                assert resumed.status_code == 200
                probe.release.set()
                rest = [e for e in await EventReader(resumed).rest(20) if e.get("data")]
            messages = [json.loads(e["data"]) for e in rest]
            assert [m.get("params", {}).get("data") for m in messages[:-1]] == ["two"]
            assert messages[-1]["id"] == 1
            assert messages[-1]["result"]["content"][0]["text"] == "A"
            assert all(e["id"].startswith(event["id"].rpartition("_")[0]) for e in rest)
