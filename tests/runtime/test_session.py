"""The runtime core over the in-memory transport: lifecycle, requests both ways, cancellation,
progress, timeouts, errors and limits. Every test runs on asyncio and on trio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.connection import negotiate_version
from mcpbind.protocol.errors import (
    CONNECTION_CLOSED,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    METHOD_NOT_FOUND,
    PARSE_ERROR,
    REQUEST_TIMEOUT,
    McpError,
)
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS

methods = types.methods
pytestmark = pytest.mark.anyio


def echo_server(**kwargs: Any) -> Server:
    server = Server("echo", "1.0", title="Echo Server", instructions="Say something.", **kwargs)

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        if params.name == "echo":
            return types.CallToolResult(content=[types.TextContent(text=str(arguments.get("text", "")))])
        if params.name == "sleep":
            await anyio.sleep(float(arguments.get("seconds", 10)))
            return types.CallToolResult(content=[types.TextContent(text="slept")])
        if params.name == "progress":
            for step in range(1, 4):
                await ctx.report_progress(step, 3, f"step {step}")
            return types.CallToolResult(content=[types.TextContent(text="done")])
        if params.name == "fail":
            raise McpError(INVALID_PARAMS, "no such thing", {"name": params.name})
        if params.name == "crash":
            raise RuntimeError("secret detail")
        if params.name == "sample":
            answer = await ctx.create_message(
                types.CreateMessageRequestParams(
                    max_tokens=10,
                    messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
                )
            )
            assert isinstance(answer, types.CreateMessageResult)
            assert isinstance(answer.content, types.TextContent)
            return types.CallToolResult(content=[answer.content])
        if params.name == "log":
            await ctx.log("warning", {"note": "careful"}, logger="echo")
            await ctx.send_tool_list_changed()
            await ctx.send_resource_updated("file:///watched.txt")
            return types.CallToolResult(content=[])
        raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")

    @server.on(methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, ctx: RequestContext) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="echo", input_schema={"type": "object"})])

    return server


@asynccontextmanager
async def connected(server: Server, client: Client | None = None) -> AsyncIterator[RemoteServer]:
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        async with (client or Client("tester", "0.1", versions=HANDSHAKE_VERSIONS)).connect(
            client_end, timeout=5
        ) as session:
            yield session
        # Closing the client's end ends the server's session by itself.
        with anyio.fail_after(5):
            await anyio.sleep(0)
    assert not tg.cancel_scope.cancel_called


@asynccontextmanager
async def raw_server(server: Server) -> AsyncIterator[MemoryTransport]:
    """A server and the bare transport end of a client that speaks JSON by hand."""
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        yield client_end
        await client_end.aclose()


async def exchange(transport: MemoryTransport, message: dict[str, Any] | bytes) -> dict[str, Any]:
    await transport.send(message if isinstance(message, bytes) else json.dumps(message).encode())
    with anyio.fail_after(5):
        answer: dict[str, Any] = json.loads(await transport.receive())
    return answer


def initialize(version: str = "2025-06-18") -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": version,
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "1"},
        },
    }


INIT = initialize()


# -- lifecycle --------------------------------------------------------------------------------


async def test_handshake_and_a_typed_call() -> None:
    async with connected(echo_server()) as client:
        assert client.protocol_version == HANDSHAKE_VERSIONS[0]
        assert client.server_info.name == "echo" and client.server_info.title == "Echo Server"
        assert client.instructions == "Say something."
        assert client.server_capabilities.tools is not types.UNSET
        result = await client.call_tool("echo", {"text": "hello"})
        assert result.content == [types.TextContent(text="hello")]
        tools = await client.list_tools()
        assert [t.name for t in tools.tools] == ["echo"]
        await client.ping()


@pytest.mark.parametrize("requested", ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25", "1999-01-01"])
async def test_version_negotiation(requested: str) -> None:
    async with raw_server(echo_server()) as transport:
        answer = await exchange(transport, initialize(requested))
        expected = requested if requested in HANDSHAKE_VERSIONS else HANDSHAKE_VERSIONS[0]
        assert answer["result"]["protocolVersion"] == expected == negotiate_version(requested)
        # ``title`` arrived in 2025-06-18: an older version never gets it.
        titled = expected >= "2025-06-18"
        assert answer["result"]["serverInfo"] == {"name": "echo", "version": "1.0"} | (
            {"title": "Echo Server"} if titled else {}
        )


async def test_older_version_gets_only_what_it_knows() -> None:
    async with raw_server(echo_server()) as transport:
        answer = await exchange(transport, initialize("2024-11-05"))
        # 2024-11-05 has no title in Implementation: it is not sent.
        assert answer["result"]["serverInfo"] == {"name": "echo", "version": "1.0"}


async def test_a_client_that_cannot_use_the_answer_closes_with_a_clear_error() -> None:
    client = Client("old", "1", versions=("2024-11-05",))
    server = echo_server(versions=("2025-11-25",))
    server_end, client_end = memory_pair()
    caught: McpError | None = None
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(server.run, server_end)
            try:
                async with client.connect(client_end):
                    pytest.fail("the session must not open")
            except McpError as exc:
                caught = exc
    assert caught is not None and "protocol version '2025-11-25'" in caught.message


async def test_requests_before_initialize_are_rejected_but_ping_is_answered() -> None:
    async with raw_server(echo_server()) as transport:
        early = await exchange(transport, {"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
        assert early["id"] == 1 and early["error"]["code"] == INVALID_REQUEST
        assert "before initialization" in early["error"]["message"]
        pong = await exchange(transport, {"jsonrpc": "2.0", "id": 2, "method": "ping"})
        assert pong == {"jsonrpc": "2.0", "id": 2, "result": {}}
        assert "result" in await exchange(transport, INIT)
        again = await exchange(transport, INIT)
        assert again["error"]["code"] == INVALID_REQUEST


# -- errors -----------------------------------------------------------------------------------


async def test_handler_errors_become_error_responses_and_the_session_goes_on() -> None:
    async with connected(echo_server()) as client:
        with pytest.raises(McpError) as failed:
            await client.call_tool("fail")
        assert (failed.value.code, failed.value.message, failed.value.data) == (
            INVALID_PARAMS,
            "no such thing",
            {"name": "fail"},
        )
        with pytest.raises(McpError) as crashed:
            await client.call_tool("crash")
        assert crashed.value.code == INTERNAL_ERROR
        assert "secret" not in crashed.value.message and "Traceback" not in crashed.value.message
        assert (await client.call_tool("echo", {"text": "still here"})).content[0] == types.TextContent(
            text="still here"
        )


async def test_bad_input_gets_the_right_error() -> None:
    async with raw_server(echo_server()) as transport:
        await exchange(transport, INIT)
        parse = await exchange(transport, b"{nope")
        assert parse["id"] is None and parse["error"]["code"] == PARSE_ERROR
        wrong = await exchange(transport, {"jsonrpc": "1.0", "id": 3, "method": "ping"})
        assert wrong["id"] == 3 and wrong["error"]["code"] == INVALID_REQUEST
        unknown = await exchange(transport, {"jsonrpc": "2.0", "id": 4, "method": "no/such"})
        assert unknown["error"]["code"] == METHOD_NOT_FOUND
        unhandled = await exchange(transport, {"jsonrpc": "2.0", "id": 5, "method": "prompts/list"})
        assert unhandled["error"]["code"] == METHOD_NOT_FOUND
        invalid = await exchange(
            transport, {"jsonrpc": "2.0", "id": 6, "method": "tools/call", "params": {"name": 1}}
        )
        assert invalid["error"]["code"] == INVALID_PARAMS and "params.name" in invalid["error"]["message"]
        # A response nobody asked for and an unknown notification are dropped silently.
        await transport.send(b'{"jsonrpc":"2.0","id":99,"result":{}}')
        await transport.send(b'{"jsonrpc":"2.0","method":"notifications/whatever"}')
        assert await exchange(transport, {"jsonrpc": "2.0", "id": 7, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 7,
            "result": {},
        }


async def test_an_oversized_message_is_refused_and_the_session_goes_on() -> None:
    server = echo_server()
    server_end, client_end = memory_pair(max_message_size=1000)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        await exchange(client_end, INIT)
        big = {
            "jsonrpc": "2.0",
            "id": 8,
            "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "x" * 2000}},
        }
        refused = await exchange(client_end, big)
        assert refused["id"] is None and refused["error"]["code"] == INVALID_REQUEST
        assert "exceeds the limit of 1000 bytes" in refused["error"]["message"]
        assert "result" in await exchange(client_end, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
        await client_end.aclose()


# -- concurrency, cancellation, timeouts --------------------------------------------------------


async def test_a_slow_handler_blocks_neither_ping_nor_other_requests() -> None:
    async with connected(echo_server()) as client, anyio.create_task_group() as tg:
        tg.start_soon(client.call_tool, "sleep", {"seconds": 30})
        with anyio.fail_after(2):
            await client.ping()
            assert (await client.call_tool("echo", {"text": "quick"})).content[0] == types.TextContent(
                text="quick"
            )
        tg.cancel_scope.cancel()


async def test_cancelling_a_call_cancels_the_handler_and_no_response_is_sent() -> None:
    server = echo_server()
    started = anyio.Event()
    stopped = anyio.Event()

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        started.set()
        try:
            await anyio.sleep(30)
        finally:
            stopped.set()
        return types.CallToolResult(content=[])

    async with connected(server) as client:
        with anyio.fail_after(5):
            async with anyio.create_task_group() as tg:
                tg.start_soon(client.call_tool, "anything")
                await started.wait()
                tg.cancel_scope.cancel()
            await stopped.wait()
            assert not client.session.connection._pending
            await client.ping()


async def test_cancellation_from_the_peer_over_the_wire() -> None:
    server = echo_server()
    ended: list[str] = []

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        try:
            await anyio.sleep(30)
        except anyio.get_cancelled_exc_class():
            ended.append("cancelled")
            raise
        ended.append("finished")
        return types.CallToolResult(content=[])

    async with raw_server(server) as transport:
        await exchange(transport, INIT)
        await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
        await transport.send(
            b'{"jsonrpc":"2.0","id":"slow","method":"tools/call","params":{"name":"sleep","arguments":{"seconds":30}}}'
        )
        await anyio.wait_all_tasks_blocked()  # the handler runs (and waits)
        await transport.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"slow","reason":"bored"}}'
        )
        # Cancelled before it started, after it finished, or for an unknown id: all harmless.
        await transport.send(
            b'{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"never"}}'
        )
        # The next answer is the ping's: the cancelled request gets none.
        assert await exchange(transport, {"jsonrpc": "2.0", "id": 1, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 1,
            "result": {},
        }
        # Once every task of the server waits, an answer to it would have been sent: the next
        # message is the next ping's answer.
        await anyio.wait_all_tasks_blocked()
        assert ended == ["cancelled"]
        assert await exchange(transport, {"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {
            "jsonrpc": "2.0",
            "id": 2,
            "result": {},
        }


async def test_a_timeout_raises_and_cancels_the_request_at_the_peer() -> None:
    server = echo_server()
    stopped = anyio.Event()

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        try:
            await anyio.sleep(30)
        finally:
            stopped.set()
        return types.CallToolResult(content=[])

    async with connected(
        server, Client("t", "1", request_timeout=0.2, versions=HANDSHAKE_VERSIONS)
    ) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("slow")
        assert info.value.code == REQUEST_TIMEOUT
        with anyio.fail_after(5):
            await stopped.wait()
        with pytest.raises(McpError) as per_call:
            await client.call_tool("slow", timeout=0.05)
        assert per_call.value.code == REQUEST_TIMEOUT


async def test_a_short_timeout_is_not_held_up_by_a_longer_one_sent_before() -> None:
    # Requests sent at once are timed by one task of the session: a later, shorter deadline
    # must wake it early.
    async with connected(
        echo_server(), Client("t", "1", request_timeout=30, versions=HANDSHAKE_VERSIONS)
    ) as client:
        async with anyio.create_task_group() as tg:
            tg.start_soon(lambda: client.call_tool("sleep", {"seconds": 20}))
            await anyio.wait_all_tasks_blocked()  # the first call is sent and its handler runs
            started = anyio.current_time()
            with pytest.raises(McpError) as info:
                await client.call_tool("sleep", {"seconds": 20}, timeout=0.2)
            assert info.value.code == REQUEST_TIMEOUT
            assert anyio.current_time() - started < 10  # (held up, it would wait 30 s)
            tg.cancel_scope.cancel()
        result = await client.call_tool("echo", {"text": "still fine"}, timeout=5)
        assert result.content == [types.TextContent(text="still fine")]


async def test_finished_requests_leave_no_deadline_behind() -> None:
    async with connected(echo_server()) as client:
        for i in range(300):
            await client.call_tool("echo", {"text": str(i)})

        async def call(i: int) -> None:
            await client.call_tool("echo", {"text": str(i)})

        async with anyio.create_task_group() as tg:
            for i in range(500):
                tg.start_soon(call, i)
        await client.call_tool("echo", {"text": "last"})
        deadlines = client.session._deadlines
        assert deadlines is not None  # these requests were timed by the session's deadline task
        assert len(deadlines.heap) <= 64


class _StuckSends:
    """A transport whose sends hang once ``stuck`` is set, like a pipe the peer stopped reading."""

    def __init__(self, inner: MemoryTransport) -> None:
        self.inner = inner
        self.stuck = False

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        if self.stuck:
            await anyio.sleep_forever()
        await self.inner.send(message)

    async def aclose(self) -> None:
        await self.inner.aclose()


async def test_a_timeout_covers_a_send_that_cannot_complete() -> None:
    server_end, client_end = memory_pair()
    transport = _StuckSends(client_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(echo_server().run, server_end)
        async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(transport, timeout=5) as client:
            transport.stuck = True
            started = anyio.current_time()
            with pytest.raises(McpError) as info:
                await client.call_tool("echo", {"text": "never sent"}, timeout=0.2)
            assert info.value.code == REQUEST_TIMEOUT
            # The cancellation notice cannot go out either; it is given up after a second.
            assert anyio.current_time() - started < 10
            transport.stuck = False
        tg.cancel_scope.cancel()


async def test_concurrency_is_bounded() -> None:
    running = 0
    peak = 0
    release = anyio.Event()
    server = Server("bounded", "1", max_concurrent_requests=2)

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await release.wait()
        running -= 1
        return types.CallToolResult(content=[])

    async with connected(server) as client, anyio.create_task_group() as tg:
        for _ in range(8):
            tg.start_soon(client.call_tool, "x")
        await anyio.wait_all_tasks_blocked()  # every call is sent: two run, the others wait
        assert running == 2
        release.set()
    assert peak == 2


async def test_requests_past_the_pending_limit_are_refused() -> None:
    async with connected(echo_server(max_pending_requests=2)) as client:
        results: list[McpError | None] = []

        async def call() -> None:
            try:
                await client.call_tool("sleep", {"seconds": 0.3})
                results.append(None)
            except McpError as exc:
                results.append(exc)

        async with anyio.create_task_group() as tg:
            for _ in range(4):
                tg.start_soon(call)
        refused = [r for r in results if r is not None]
        assert len(refused) == 2 and all(r.code == INTERNAL_ERROR for r in refused)
        assert "Too many requests" in refused[0].message


# -- progress, server->client requests, notifications -----------------------------------------


async def test_progress_reaches_the_callers_callback_in_order() -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    async with connected(echo_server()) as client:
        result = await client.call_tool("progress", progress=on_progress)
        assert result.content == [types.TextContent(text="done")]
        await client.ping()
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


async def test_progress_is_not_sent_without_a_token() -> None:
    async with connected(echo_server()) as client:
        assert (await client.call_tool("progress")).content == [types.TextContent(text="done")]


async def test_sampling_needs_the_client_capability() -> None:
    async with connected(echo_server()) as client:
        with pytest.raises(McpError) as info:
            await client.call_tool("sample")
        # The handler let the capability error through: it became the call's error response.
        assert info.value.code == INVALID_REQUEST and "'sampling' capability" in info.value.message
    asked: list[types.CreateMessageRequestParams] = []

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        asked.append(params)
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="sampled")
        )

    async with connected(
        echo_server(), Client("t", "1", sampling=sample, versions=HANDSHAKE_VERSIONS)
    ) as client:
        assert (await client.call_tool("sample")).content == [types.TextContent(text="sampled")]
    assert asked[0].max_tokens == 10


async def test_capability_error_is_raised_in_the_handler_before_anything_is_sent() -> None:
    server = Server("caps", "1")
    errors: list[McpError] = []

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        try:
            await ctx.list_roots()
        except McpError as exc:
            errors.append(exc)
        return types.CallToolResult(content=[])

    sent: list[bytes] = []
    async with connected(server) as client:
        original = client.session.transport.receive

        async def spy() -> bytes:
            data = await original()
            sent.append(data)
            return data

        client.session.transport.receive = spy  # type: ignore[method-assign]
        await client.call_tool("x")
    assert "roots" in errors[0].message
    assert not any(b"roots/list" in data for data in sent)


async def test_notifications_both_ways() -> None:
    server = echo_server(logging=True)
    changed = anyio.Event()

    @server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        assert ctx.request_id is None and ctx.method == "notifications/roots/list_changed"
        changed.set()

    logs: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params)

    async def roots(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[])

    client_side = Client("t", "1", logging=on_log, roots=roots, versions=HANDSHAKE_VERSIONS)
    seen: list[str] = []

    @client_side.on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
    async def tools_changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        seen.append(ctx.method)

    @client_side.on_notification(methods.NOTIFICATIONS_RESOURCES_UPDATED)
    async def updated(params: types.ResourceUpdatedNotificationParams, ctx: RequestContext) -> None:
        seen.append(params.uri)

    async with connected(server, client_side) as client:
        await client.send_roots_list_changed()
        with anyio.fail_after(5):
            await changed.wait()
        await client.call_tool("log")
        with anyio.fail_after(5):
            while not logs or len(seen) < 2:
                await anyio.sleep(0.01)
    assert sorted(seen) == ["file:///watched.txt", "notifications/tools/list_changed"]
    assert logs[0].level == "warning" and logs[0].data == {"note": "careful"} and logs[0].logger == "echo"


async def test_pending_requests_fail_when_the_connection_closes() -> None:
    server_end, client_end = memory_pair()
    client = Client("t", "1", versions=HANDSHAKE_VERSIONS)
    reached_the_end = False
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(echo_server().run, server_end)
            async with client.connect(client_end) as session:
                async with anyio.create_task_group() as inner:
                    errors: list[McpError] = []

                    async def call() -> None:
                        try:
                            await session.call_tool("sleep", {"seconds": 30})
                        except McpError as exc:
                            errors.append(exc)

                    inner.start_soon(call)
                    await anyio.wait_all_tasks_blocked()  # the call is sent and its handler runs
                    await server_end.aclose()
                assert errors and errors[0].code == CONNECTION_CLOSED
                with pytest.raises(McpError) as closed:
                    await session.ping()
                assert closed.value.code == CONNECTION_CLOSED
                # The peer going away fails calls; it does not cancel the caller's own code.
                await anyio.sleep(0.01)
                reached_the_end = True
    assert reached_the_end


async def test_a_side_only_handles_what_its_peer_sends() -> None:
    # Type errors too (tests/test_typing.py); the run-time check stays for untyped code.
    with pytest.raises(ValueError, match="does not receive sampling/createMessage"):
        Server("s", "1").on(methods.SAMPLING_CREATE_MESSAGE)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not receive tools/call"):
        Client("c", "1", versions=HANDSHAKE_VERSIONS).on(methods.TOOLS_CALL)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="does not receive notifications/tools/list_changed"):
        Server("s", "1").on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)  # type: ignore[arg-type]
    client = Client("c", "1", versions=HANDSHAKE_VERSIONS)

    @client.on(methods.ROOTS_LIST)
    async def roots(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])

    server = Server("s", "1")
    seen: list[types.ListRootsResult] = []

    @server.on(methods.TOOLS_CALL)
    async def call(params: types.CallToolRequestParams, ctx: RequestContext) -> types.CallToolResult:
        seen.append(await ctx.list_roots())
        return types.CallToolResult(content=[])

    # Registered with ``on`` rather than ``roots=``: the roots capability is not declared, so
    # the server may not ask, and says so.
    async with connected(server, client) as session:
        with pytest.raises(McpError, match="'roots' capability"):
            await session.call_tool("x")
    assert not seen
