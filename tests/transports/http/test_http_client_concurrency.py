"""Many requests in flight over Streamable HTTP, against the real mcpbind server (uvicorn on
asyncio, hypercorn on trio): every call is sent and completes, pings and cancellations are not
held up behind the calls, and cancelled calls end on the server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.client import (
    CONTROL_CONNECTIONS,
    DEFAULT_MAX_REQUESTS_IN_FLIGHT,
    connection_limits,
    open_streamable_http,
)
from mcpbind.transports.http.legacy import LegacySSEApp
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.http_harness import serve_asgi
from tests.transports.http.http_fake_server import HOLD, FakeServer, Seen, Sse, Status, event

pytestmark = pytest.mark.anyio

CALLS = 150
# The most a step may take before the test fails: a bound for a step that would otherwise
# hang (a ping stuck behind the calls, a cancellation lost), not a measure of speed; 150 calls
# at once on a loaded 2-core machine can take several seconds to get through.
DEADLINE = 60.0


class Gate:
    """Slow tools for the server: each call waits until the test opens the gate; the counts
    say how many handlers started, finished and were cancelled, and the most at once."""

    def __init__(self) -> None:
        self.open = anyio.Event()
        self.started = 0
        self.running = 0
        self.most = 0
        self.finished = 0
        self.cancelled = 0

    async def wait_until(self, check: Any, timeout: float = DEADLINE) -> None:
        with anyio.fail_after(timeout):
            while not check():
                await anyio.sleep(0.01)


def build(gate: Gate, max_concurrent_requests: int = 64) -> Server:
    server = Server("busy", "1", max_concurrent_requests=max_concurrent_requests)

    @server.tool()
    async def slow(n: int) -> str:
        gate.started += 1
        gate.running += 1
        gate.most = max(gate.most, gate.running)
        try:
            await gate.open.wait()
        except anyio.get_cancelled_exc_class():
            gate.cancelled += 1
            raise
        finally:
            gate.running -= 1
        gate.finished += 1
        return f"done {n}"

    @server.tool()
    async def quick() -> str:
        return "quick"

    return server


class Arrivals:
    """An ASGI app, counting the POSTs that reached it."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.posts = 0

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["method"] == "POST":
            self.posts += 1
        await self.app(scope, receive, send)


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


@asynccontextmanager
async def connected(app: Any, path: str = "/mcp", **options: Any) -> AsyncIterator[RemoteServer]:
    async with (
        serve_asgi(app) as base,
        # Calls wait in the server's queue until the test opens the gate, with no response
        # head meanwhile: on a loaded machine that can pass the 30 s default of http_timeout.
        Client("t", "1", versions=HANDSHAKE_VERSIONS, request_timeout=None).connect_url(
            base + path, **({"http_timeout": 300.0} | options)
        ) as session,
    ):
        yield session


async def call_all(session: RemoteServer, results: dict[int, str], count: int = CALLS) -> None:
    async def one(n: int) -> None:
        results[n] = text_of(await session.call_tool("slow", {"n": n}))

    async with anyio.create_task_group() as tasks:
        for n in range(count):
            tasks.start_soon(one, n)


async def test_every_call_is_sent_and_a_ping_is_answered_meanwhile() -> None:
    # The server runs up to 200 handlers per session: all 150 calls must reach it at once.
    gate = Gate()
    results: dict[int, str] = {}
    async with connected(StreamableHTTPApp(build(gate, 200))) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call_all, session, results)
            await gate.wait_until(lambda: gate.started == CALLS)
            with anyio.fail_after(DEADLINE):
                await session.ping()
            gate.open.set()
        assert results == {n: f"done {n}" for n in range(CALLS)}


async def test_calls_past_the_servers_limit_wait_there_and_control_traffic_goes_on() -> None:
    # With the server's default of 64 handlers, the other calls queue on the server; a ping
    # still answers at once, and a quick call is sent (the server runs it once a place frees).
    gate = Gate()
    results: dict[int, str] = {}
    app = Arrivals(StreamableHTTPApp(build(gate)))
    async with connected(app) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call_all, session, results)
            await gate.wait_until(lambda: gate.started == 64)
            # The rest arrive and queue (after initialize and notifications/initialized).
            await gate.wait_until(lambda: app.posts == 2 + CALLS)
            with anyio.fail_after(DEADLINE):
                await session.ping()
            assert gate.started == 64
            quick: list[str] = []

            async def call_quick() -> None:
                quick.append(text_of(await session.call_tool("quick", {})))

            tasks.start_soon(call_quick)
            await gate.wait_until(lambda: app.posts == 2 + CALLS + 2)  # (the ping, the quick call)
            gate.open.set()
        assert quick == ["quick"]
        assert results == {n: f"done {n}" for n in range(CALLS)}
        assert gate.most == 64


async def test_cancelled_calls_are_cancelled_on_the_server() -> None:
    gate = Gate()
    async with connected(StreamableHTTPApp(build(gate, 200))) as session:
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call_all, session, {})
                await gate.wait_until(lambda: gate.started == CALLS)
                scope.cancel()
        # Every handler is cancelled by the notifications/cancelled the client sent.
        await gate.wait_until(lambda: gate.cancelled == CALLS, timeout=DEADLINE)
        # The session goes on: the calls' connections and places are free again.
        with anyio.fail_after(DEADLINE):
            await session.ping()
        gate.open.set()
        results: dict[int, str] = {}
        with anyio.fail_after(DEADLINE):
            await call_all(session, results)
        assert len(results) == CALLS
    assert gate.finished == CALLS


async def test_a_limit_of_requests_in_flight_holds_calls_but_not_pings_or_cancellations() -> None:
    gate = Gate()
    results: dict[int, str] = {}
    app = StreamableHTTPApp(build(gate, 200))
    async with connected(app, max_requests_in_flight=10) as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call_all, session, results, 30)
            await gate.wait_until(lambda: gate.started == 10)
            # The ping is answered; the other 20 calls, sent before it if at all, wait on the client
            # (the server would start each at once).
            with anyio.fail_after(DEADLINE):
                await session.ping()
            assert gate.started == 10
            gate.open.set()
        assert len(results) == 30
        assert gate.most == 10
        # Cancelling calls that are in flight and calls that wait for a place.
        gate.open = anyio.Event()
        started = gate.started
        with anyio.CancelScope() as scope:
            async with anyio.create_task_group() as tasks:
                tasks.start_soon(call_all, session, {}, 30)
                await gate.wait_until(lambda: gate.started == started + 10)
                scope.cancel()
        await gate.wait_until(lambda: gate.cancelled == 10, timeout=DEADLINE)
        gate.open.set()
        with anyio.fail_after(DEADLINE):
            assert text_of(await session.call_tool("quick", {})) == "quick"


async def test_a_given_http_client_sized_with_connection_limits() -> None:
    gate = Gate()
    results: dict[int, str] = {}
    async with (
        httpx.AsyncClient(limits=connection_limits(CALLS)) as http,
        serve_asgi(StreamableHTTPApp(build(gate, 200))) as base,
        open_streamable_http(base + "/mcp", http_client=http, max_requests_in_flight=CALLS) as transport,
        Client("t", "1", versions=HANDSHAKE_VERSIONS, request_timeout=None).connect(transport) as session,
    ):
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call_all, session, results)
            await gate.wait_until(lambda: gate.started == CALLS)
            with anyio.fail_after(DEADLINE):
                await session.ping()
            gate.open.set()
        assert len(results) == CALLS


async def test_legacy_sse_many_calls_and_a_ping() -> None:
    gate = Gate()
    results: dict[int, str] = {}
    async with connected(LegacySSEApp(build(gate, 200)), "/sse", transport="sse") as session:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(call_all, session, results)
            await gate.wait_until(lambda: gate.started == CALLS)
            with anyio.fail_after(DEADLINE):
                await session.ping()
            gate.open.set()
        assert len(results) == CALLS


async def test_a_cancelled_requests_stream_is_let_go_when_the_server_keeps_it_open() -> None:
    # A server may keep the stream of a cancelled request open (it sends no response, and the
    # spec does not say to close it): the client stops reading it, freeing its place.
    fake = FakeServer()

    def held(seen: Seen) -> Sse | None:
        if seen.message["params"]["name"] != "hold":
            return None  # echo
        token = seen.message["params"]["_meta"]["progressToken"]
        progress = {"progressToken": token, "progress": 1}
        return Sse([event({"jsonrpc": "2.0", "method": "notifications/progress", "params": progress}), HOLD])

    fake.post_handlers["tools/call"] = held
    streaming = anyio.Event()

    async def on_progress(done: float, total: float | None, message: str | None) -> None:
        streaming.set()

    async with serve_asgi(fake) as base:
        with anyio.fail_after(20):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(
                base + "/mcp", transport="streamable-http", max_requests_in_flight=1
            ) as session:
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tasks:
                        tasks.start_soon(lambda: session.call_tool("hold", {}, progress=on_progress))
                        await streaming.wait()  # the client reads the call's stream
                        [post] = fake.requests("POST", "tools/call")
                        scope.cancel()
                await fake.wait_for(lambda s: s.rpc_method == "notifications/cancelled")
                with anyio.fail_after(5):
                    result = await session.call_tool("echo", {"text": "next"})
                assert text_of(result) == "next"
                with anyio.fail_after(5):
                    while post.finished is None:  # the client closed the held stream
                        await anyio.sleep(0.01)


async def test_cancellations_are_delivered_however_slowly_the_server_takes_them() -> None:
    # More cancellations at once than there are places for control messages, each accepted
    # only after 1.5 s: every one still reaches the server (none is given up on).
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: Sse([event(None, id="e1"), HOLD])

    async def slow_accept(seen: Seen) -> Status:
        await anyio.sleep(1.5)
        return Status(202)

    fake.post_handlers["notifications/cancelled"] = slow_accept
    count = 3 * CONTROL_CONNECTIONS
    async with serve_asgi(fake) as base:
        with anyio.fail_after(30):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_url(
                base + "/mcp", transport="streamable-http"
            ) as session:
                with anyio.CancelScope() as scope:
                    async with anyio.create_task_group() as tasks:
                        for n in range(count):
                            tasks.start_soon(session.call_tool, "hold", {"n": n})
                        await fake.wait_for(lambda s: s.rpc_method == "tools/call", count)
                        scope.cancel()
                cancelled = await fake.wait_for(
                    lambda s: s.rpc_method == "notifications/cancelled" and s.finished is not None, count
                )
                ids = {s.message["params"]["requestId"] for s in cancelled}
                assert ids == {s.rpc_id for s in fake.requests("POST", "tools/call")}


def test_connect_url_has_the_transports_default_limit() -> None:
    import inspect

    default = inspect.signature(Client.connect_url).parameters["max_requests_in_flight"].default
    assert default == DEFAULT_MAX_REQUESTS_IN_FLIGHT
    limits = connection_limits(10)
    assert limits.max_connections is not None and limits.max_connections > 10
    with pytest.raises(ValueError):
        connection_limits(0)
