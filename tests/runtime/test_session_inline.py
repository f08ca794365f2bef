"""A session driven inline (``Session.start_inline`` / ``feed`` / ``end``): what Streamable HTTP
uses so that a session holds no task of its own. Every test runs on asyncio and on trio."""

from __future__ import annotations

import gc
import json
import warnings
from typing import Any

import anyio
import httpx
import pytest

from mcpbind import fastpath
from mcpbind.protocol.errors import CONNECTION_CLOSED, McpError
from mcpbind.protocol.wire import RequestId
from mcpbind.runtime.session import RequestContext, Session
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp
from tests.http_server_helpers import call, headers, open_session, post

pytestmark = pytest.mark.anyio


class Recorder:
    """A transport that keeps what is sent; an inline session never calls ``receive``."""

    def __init__(self) -> None:
        self.sent: list[tuple[dict[str, Any], RequestId | None, bool]] = []
        self.closed = False
        self.arrived = anyio.Event()

    async def receive(self) -> bytes:
        raise AssertionError("an inline session does not read from its transport")

    async def send(self, message: bytes) -> None:
        await self.send_related(message, None)

    async def send_related(self, message: bytes, related: RequestId | None, final: bool = False) -> None:
        self.sent.append((json.loads(message), related, final))
        self.arrived.set()

    async def aclose(self) -> None:
        self.closed = True

    def answer(self, ident: RequestId) -> dict[str, Any]:
        (found,) = [m for m, _, _ in self.sent if m.get("id") == ident and "method" not in m]
        return found

    async def next_request(self) -> dict[str, Any]:
        """The next request the session sends (waits for it)."""
        while True:
            requests = [m for m, _, _ in self.sent if "method" in m and "id" in m]
            if requests:
                self.sent.remove(next(s for s in self.sent if s[0] is requests[0]))
                return requests[0]
            self.arrived = anyio.Event()
            await self.arrived.wait()


class Gate:
    def __init__(self) -> None:
        self.entered = anyio.Event()
        self.release = anyio.Event()
        self.cancelled = anyio.Event()
        self.calls = 0


def make_server(gate: Gate, **options: Any) -> Server:
    server = Server("inline", "1.0", **options)

    @server.tool()
    async def echo(text: str) -> str:
        return text

    @server.tool()
    async def wait() -> str:
        gate.calls += 1
        gate.entered.set()
        try:
            await gate.release.wait()
        except anyio.get_cancelled_exc_class():
            gate.cancelled.set()
            raise
        return "released"

    @server.tool()
    async def fail_late() -> str:
        await anyio.lowlevel.checkpoint()
        raise ValueError("late")

    @server.tool()
    async def roots(ctx: RequestContext) -> str:
        result = await ctx.list_roots()
        return ",".join(root.uri for root in result.roots)

    return server


def message(ident: RequestId | None, method: str, params: dict[str, Any] | None = None) -> bytes:
    body: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if ident is not None:
        body["id"] = ident
    if params is not None:
        body["params"] = params
    return json.dumps(body).encode()


def tool_call(ident: int, name: str, **arguments: Any) -> bytes:
    return message(ident, "tools/call", {"name": name, "arguments": arguments})


async def ready_session(server: Server, **capabilities: Any) -> tuple[Session, Recorder]:
    transport = Recorder()
    session = server.inline_session(transport)
    init = {
        "protocolVersion": "2025-11-25",
        "capabilities": capabilities,
        "clientInfo": {"name": "t", "version": "1"},
    }
    await session.feed(message(0, "initialize", init))
    assert transport.answer(0)["result"]["protocolVersion"] == "2025-11-25"
    await session.feed(message(None, "notifications/initialized"))
    assert session.is_ready
    return session, transport


def text_of(answer: dict[str, Any]) -> str:
    text: str = answer["result"]["content"][0]["text"]
    return text


async def test_a_quick_handler_answers_in_the_feeding_task_and_starts_nothing() -> None:
    session, transport = await ready_session(make_server(Gate()))
    suspended: list[int] = []
    tasks_before = len(anyio.get_running_tasks())
    await session.feed(tool_call(1, "echo", text="hi"), lambda: suspended.append(1))
    assert text_of(transport.answer(1)) == "hi"
    assert transport.sent[-1][1:] == (1, True)  # sent as the response to request 1
    if fastpath.ENABLED:
        assert suspended == []  # it never waited, so the caller had nothing to watch
    else:
        assert suspended == [1]  # plain: it runs in a task of its own, so the caller is told first
    assert len(anyio.get_running_tasks()) == tasks_before


async def test_a_waiting_handler_calls_on_suspend_once_and_is_cancelled_by_the_peer() -> None:
    gate = Gate()
    session, transport = await ready_session(make_server(gate))
    suspended: list[int] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.feed, tool_call(1, "wait"), lambda: suspended.append(1))
        await gate.entered.wait()
        assert suspended == [1]
        # The peer's cancellation arrives in another feeding task.
        await session.feed(message(None, "notifications/cancelled", {"requestId": 1}))
        with anyio.fail_after(5):
            await gate.cancelled.wait()
    assert [m for m, _, _ in transport.sent if m.get("id") == 1] == []  # no response
    # The id is free again, and the session goes on.
    await session.feed(tool_call(1, "echo", text="again"))
    assert text_of(transport.answer(1)) == "again"


async def test_cancel_received_stops_a_handler_whose_client_went_away() -> None:
    gate = Gate()
    session, transport = await ready_session(make_server(gate))
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.feed, tool_call(7, "wait"), lambda: None)
        await gate.entered.wait()
        assert session.cancel_received(7)
        assert not session.cancel_received(99)
    assert gate.cancelled.is_set()
    assert not [m for m, _, _ in transport.sent if m.get("id") == 7]


async def test_errors_after_waiting_are_answered() -> None:
    session, transport = await ready_session(make_server(Gate()))
    await session.feed(tool_call(3, "fail_late"), lambda: None)
    answer = transport.answer(3)
    assert answer["result"]["isError"] is True  # a tool's error is a result the model reads
    await session.feed(message(4, "no/such/method"))
    assert transport.answer(4)["error"]["code"] == -32601


async def test_a_request_to_the_client_is_answered_by_a_later_feed() -> None:
    session, transport = await ready_session(make_server(Gate()), roots={})
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.feed, tool_call(5, "roots"), lambda: None)
        with anyio.fail_after(5):
            request = await transport.next_request()
        assert request["method"] == "roots/list"
        answer = {"jsonrpc": "2.0", "id": request["id"], "result": {"roots": [{"uri": "file:///a"}]}}
        await session.feed(json.dumps(answer).encode())
    assert text_of(transport.answer(5)) == "file:///a"


async def test_end_cancels_handlers_fails_requests_and_wait_closed_waits_for_them() -> None:
    gate = Gate()
    session, transport = await ready_session(make_server(gate), roots={})
    outcome: list[BaseException] = []

    async def ask() -> None:
        try:
            await session.request(types.methods.ROOTS_LIST, types.RequestParams())
        except McpError as exc:
            outcome.append(exc)

    async with anyio.create_task_group() as tg:
        tg.start_soon(session.feed, tool_call(1, "wait"), lambda: None)
        tg.start_soon(ask)
        await gate.entered.wait()
        await transport.next_request()
        await session.end()
        assert session.closed and transport.closed
        with anyio.fail_after(5):
            await session.wait_closed()  # returns once the cancelled handler has unwound
        assert gate.cancelled.is_set()
    assert isinstance(outcome[0], McpError) and outcome[0].code == CONNECTION_CLOSED
    with pytest.raises(anyio.ClosedResourceError):
        await session.feed(tool_call(2, "echo", text="late"))


async def test_max_concurrent_requests_holds_the_others_back() -> None:
    gate = Gate()
    session, transport = await ready_session(make_server(gate, max_concurrent_requests=1))
    suspended: list[int] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(session.feed, tool_call(1, "wait"), lambda: None)
        await gate.entered.wait()
        tg.start_soon(session.feed, tool_call(2, "echo", text="second"), lambda: suspended.append(2))
        tg.start_soon(session.feed, tool_call(3, "echo", text="third"), lambda: suspended.append(3))
        await anyio.wait_all_tasks_blocked()
        assert sorted(suspended) == [2, 3]  # waiting for a turn is waiting: the caller is told
        assert not [m for m, _, _ in transport.sent if m.get("id") in (2, 3)]
        # A waiting request can be cancelled; the next one runs once the first finishes.
        await session.feed(message(None, "notifications/cancelled", {"requestId": 2}))
        gate.release.set()
    assert text_of(transport.answer(1)) == "released"
    assert text_of(transport.answer(3)) == "third"
    assert not [m for m, _, _ in transport.sent if m.get("id") == 2]


async def test_notifications_run_their_handler_in_the_feeding_task() -> None:
    server = make_server(Gate())
    seen: list[str] = []

    @server.on_notification(types.methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        seen.append(ctx.method)

    session, _ = await ready_session(server)
    await session.feed(message(None, "notifications/roots/list_changed"))
    assert seen == ["notifications/roots/list_changed"]


async def test_an_inline_session_refuses_async_with() -> None:
    session = Server("s", "1").inline_session(Recorder())
    with pytest.raises(RuntimeError, match="inline"):
        async with session:
            pass


async def test_idle_http_sessions_hold_no_tasks(anyio_backend: str) -> None:
    gate = Gate()
    app = StreamableHTTPApp(make_server(gate), json_response=True)
    async with app.run():
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            first = await open_session(client, "/mcp")
            tasks = len(anyio.get_running_tasks())
            ids = [await open_session(client, "/mcp") for _ in range(20)]
            for ident, session_id in enumerate(ids):
                _, answers = await post(client, "/mcp", call(ident, "echo", {"text": "x"}), session_id)
                assert answers[0]["result"]["content"][0]["text"] == "x"
            assert len(app.sessions) == 21
            assert len(anyio.get_running_tasks()) == tasks
            assert (await client.delete("/mcp", headers=headers(first))).status_code == 204


async def test_stateless_without_lifespan_runs_quick_and_waiting_handlers(anyio_backend: str) -> None:
    gate = Gate()
    gate.release.set()  # "wait" waits for an event that is already set: it still goes through the loop
    server = make_server(gate)

    @server.tool()
    async def nap() -> str:
        await anyio.sleep(0.01)
        return "rested"

    for json_response in (True, False):
        app = StreamableHTTPApp(server, stateless=True, json_response=json_response)
        transport = httpx.ASGITransport(app=app)  # no lifespan: no task group of the app's
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            for ident, tool in enumerate(("echo", "nap")):
                _, answers = await post(client, "/mcp", call(ident, tool, {"text": "x"}), None)
                assert answers[-1]["id"] == ident and "result" in answers[-1], answers


async def test_sse_answers_leave_no_stream_unclosed(anyio_backend: str) -> None:
    gate = Gate()
    server = make_server(gate)

    @server.tool()
    async def nap() -> str:
        await anyio.sleep(0.01)
        return "rested"

    app = StreamableHTTPApp(server)
    gc.collect()  # what earlier tests left goes now, not while warnings are recorded
    gc.disable()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", ResourceWarning)
            async with app.run():
                transport = httpx.ASGITransport(app=app)
                async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
                    session_id = await open_session(client, "/mcp")
                    for ident, tool in enumerate(("echo", "nap", "echo")):
                        _, answers = await post(client, "/mcp", call(ident, tool, {"text": "x"}), session_id)
                        assert answers[-1]["id"] == ident
    finally:
        gc.enable()
    unclosed = [w for w in caught if issubclass(w.category, ResourceWarning)]
    assert unclosed == [], [str(w.message) for w in unclosed]
