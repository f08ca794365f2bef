"""The receiving middleware chain (issue 13, item 6) on both endpoints: a middleware refuses a
request (the peer gets the JSON-RPC error), answers it itself, records it and passes it on,
alters params and results, sees notifications and drops them; two run in the order
registered. In memory here, over stdio and Streamable HTTP at the end."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from typing_extensions import assert_type

from mcpbind import Client, Context, McpError, Server, types
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, METHOD_NOT_FOUND
from mcpbind.runtime.middleware import (
    CallNext,
    IncomingNotification,
    IncomingRequest,
    Middleware,
    NotifyNext,
)
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import child_env, connected
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio

methods = types.methods
PEER = Path(__file__).resolve().parents[1] / "peers" / "middleware_server.py"


def build(*middleware: Middleware) -> Server:
    server = Server("mw", "1.0", middleware=middleware)

    @server.tool()
    def echo(text: str) -> str:
        return text

    @server.tool()
    def secret() -> str:
        return "the secret"

    @server.tool()
    async def ask(ctx: Context) -> str:
        result = await ctx.create_message(
            types.CreateMessageRequestParams(
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="hi"))],
                max_tokens=10,
            )
        )
        assert isinstance(result, types.CreateMessageResult)
        content = result.content
        assert isinstance(content, types.TextContent)
        return content.text

    return server


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


class Refuse(Middleware):
    """Refuses ``tools/call`` of the tool ``secret``."""

    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        call = request.typed(methods.TOOLS_CALL)
        if call is not None and call.params.name == "secret":
            raise McpError(INVALID_REQUEST, "not for you", {"tool": "secret"})
        return await call_next(request)


class Record(Middleware):
    """Records what passes (requests with how long they took, notifications) and passes it on."""

    def __init__(self, name: str = "record", log: list[str] | None = None) -> None:
        self.name = name
        self.log: list[str] = [] if log is None else log
        self.times: list[tuple[str, float]] = []
        self.notifications: list[str] = []

    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        self.log.append(f"{self.name} in {request.method}")
        started = time.perf_counter()
        try:
            return await call_next(request)
        finally:
            self.times.append((request.method, time.perf_counter() - started))
            self.log.append(f"{self.name} out {request.method}")

    async def on_notification(self, notification: IncomingNotification[Any], call_next: NotifyNext) -> None:
        self.notifications.append(notification.method)
        await call_next(notification)


async def test_a_middleware_refuses_a_request(anyio_backend: str) -> None:
    async with connected(build(Refuse())) as session:
        with pytest.raises(McpError) as info:
            await session.call_tool("secret")
        assert (info.value.code, info.value.message, info.value.data) == (
            INVALID_REQUEST,
            "not for you",
            {"tool": "secret"},
        )
        assert text(await session.call_tool("echo", {"text": "hi"})) == "hi"


async def test_a_middleware_answers_itself(anyio_backend: str) -> None:
    """It answers a method the server handles (the handler never runs) and one it has no
    handler for (``completion/complete``, otherwise -32601)."""

    class Answer(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            if request.typed(methods.TOOLS_LIST) is not None:
                return types.ListToolsResult(tools=[types.Tool(name="only", input_schema={"type": "object"})])
            complete = request.typed(methods.COMPLETION_COMPLETE)
            if complete is not None:
                value = complete.params.argument.value
                return types.CompleteResult(completion=types.CompleteResultCompletion(values=[value + "!"]))
            return await call_next(request)

    async with connected(build(Answer())) as session:
        assert [tool.name for tool in (await session.list_tools()).tools] == ["only"]
        done = await session.complete(types.PromptReference(name="p"), "a", "x")
        assert done.completion.values == ["x!"]
        assert text(await session.call_tool("echo", {"text": "on"})) == "on"


async def test_a_middleware_times_and_records_and_passes_on(anyio_backend: str) -> None:
    record = Record()
    async with connected(build(record)) as session:
        assert text(await session.call_tool("echo", {"text": "a"})) == "a"
        await session.list_tools()
        await session.send_roots_list_changed()
        with pytest.raises(McpError) as info:  # no handler: it passes through, then -32601
            await session.list_prompts()
        assert info.value.code == METHOD_NOT_FOUND
        await session.ping()  # answered by the session itself: not seen
        with anyio.fail_after(5):
            while not record.notifications:
                await anyio.sleep(0.01)
    assert [method for method, _ in record.times] == ["tools/call", "tools/list", "prompts/list"]
    assert all(seconds >= 0 for _, seconds in record.times)
    assert record.notifications == ["notifications/roots/list_changed"]


async def test_two_run_in_the_order_registered(anyio_backend: str) -> None:
    """The first registered is the outermost: it sees the request first and the result last;
    ``add_middleware`` adds inside those registered before."""
    log: list[str] = []
    server = build(Record("a", log))
    server.add_middleware(Record("b", log))

    @server.tool()
    def mark() -> str:
        log.append("handler")
        return "ok"

    async with connected(server) as session:
        await session.call_tool("mark")
    assert log == ["a in tools/call", "b in tools/call", "handler", "b out tools/call", "a out tools/call"]


async def test_a_middleware_alters_params_and_result(anyio_backend: str) -> None:
    class Shout(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            call = request.typed(methods.TOOLS_CALL)
            if call is None or call.params.name != "echo":
                return await call_next(request)
            arguments = dict(call.params.arguments) if isinstance(call.params.arguments, dict) else {}
            arguments["text"] = str(arguments.get("text", "")).upper()
            params = types.CallToolRequestParams(name="echo", arguments=arguments)
            result = await call_next(call.with_params(params))
            assert isinstance(result, types.CallToolResult)
            result.content.append(types.TextContent(text="(shouted)"))
            return result

    async with connected(build(Shout())) as session:
        result = await session.call_tool("echo", {"text": "quiet"})
        assert [block.text for block in result.content if isinstance(block, types.TextContent)] == [
            "QUIET",
            "(shouted)",
        ]


async def test_a_middleware_sees_the_meta_and_the_context(anyio_backend: str) -> None:
    """What tracing needs: ``traceparent`` in ``_meta``, the request id, the peer."""
    seen: list[tuple[object, object, str, str]] = []

    class Trace(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            info = request.context.peer_info
            seen.append(
                (
                    request.meta.get("traceparent"),
                    request.id,
                    info.name if info else "",
                    request.context.method,
                )
            )
            return await call_next(request)

    traceparent = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
    async with connected(build(Trace())) as session:
        params = types.CallToolRequestParams(
            name="echo", arguments={"text": "t"}, meta={"traceparent": traceparent}
        )
        await session.request(methods.TOOLS_CALL, params)
        await session.list_tools()
    assert seen[0][0] == traceparent and seen[0][2:] == ("tester", "tools/call")
    assert seen[1][0] is None and seen[1][1] != seen[0][1]


async def test_a_failing_middleware_is_an_internal_error(anyio_backend: str) -> None:
    class Broken(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            raise RuntimeError("bug")

    async with connected(build(Broken())) as session:
        with pytest.raises(McpError) as info:
            await session.list_tools()
        assert (info.value.code, info.value.message) == (INTERNAL_ERROR, "Internal error")


async def test_a_middleware_drops_notifications(anyio_backend: str) -> None:
    """A server middleware drops ``notifications/roots/list_changed``; a client one drops
    some log messages from the server."""
    server_seen: list[str] = []
    client_logs: list[str] = []
    server = Server("mw", "1.0", logging=True)

    @server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: types.NotificationParams, ctx: Context) -> None:
        server_seen.append("roots changed")

    @server.tool()
    async def chat(ctx: Context) -> str:
        await ctx.log("info", "drop me")
        await ctx.log("info", "keep me")
        return "done"

    class DropAll(Middleware):
        async def on_notification(
            self, notification: IncomingNotification[Any], call_next: NotifyNext
        ) -> None:
            return None

    class DropSome(Middleware):
        async def on_notification(
            self, notification: IncomingNotification[Any], call_next: NotifyNext
        ) -> None:
            message = notification.typed(methods.NOTIFICATIONS_MESSAGE)
            if message is not None and message.params.data == "drop me":
                return
            await call_next(notification)

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        client_logs.append(str(params.data))

    server.add_middleware(DropAll())
    client = Client("tester", "0.1", logging=on_log, middleware=[DropSome()], versions=HANDSHAKE_VERSIONS)
    # Only on_notification is overridden: requests go straight to the handlers.
    assert server.session_handlers()[0] is server.request_handlers
    async with connected(server, client) as session:
        await session.send_roots_list_changed()
        assert text(await session.call_tool("chat")) == "done"
        with anyio.fail_after(5):
            while not client_logs:
                await anyio.sleep(0.01)
        await session.ping()
    assert client_logs == ["keep me"]
    assert server_seen == []


async def test_a_client_middleware_on_sampling(anyio_backend: str) -> None:
    """The client's middleware sees the server's sampling request: records it, answers it
    itself, or refuses it (the tool lets the McpError out: the call fails with it)."""
    asked: list[str] = []

    async def sample(params: types.CreateMessageRequestParams, ctx: Context) -> types.CreateMessageResult:
        asked.append("handler")
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="from handler"), model="m"
        )

    class Sampling(Middleware):
        def __init__(self) -> None:
            self.mode = "pass"

        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            create = request.typed(methods.SAMPLING_CREATE_MESSAGE)
            if create is None:
                return await call_next(request)
            asked.append(f"middleware {create.params.max_tokens} {request.context.method}")
            if self.mode == "refuse":
                raise McpError(INVALID_REQUEST, "no sampling now")
            if self.mode == "answer":
                return types.CreateMessageResult(
                    role="assistant", content=types.TextContent(text="from middleware"), model="mw"
                )
            return await call_next(create)

    middleware = Sampling()
    client = Client("tester", "0.1", sampling=sample, middleware=[middleware], versions=HANDSHAKE_VERSIONS)
    async with connected(build(), client) as session:
        assert text(await session.call_tool("ask")) == "from handler"
        middleware.mode = "answer"
        assert text(await session.call_tool("ask")) == "from middleware"
        middleware.mode = "refuse"
        with pytest.raises(McpError) as info:
            await session.call_tool("ask")
        assert (info.value.code, info.value.message) == (INVALID_REQUEST, "no sampling now")
    assert asked == [
        "middleware 10 sampling/createMessage",
        "handler",
        "middleware 10 sampling/createMessage",
        "middleware 10 sampling/createMessage",
    ]


class Typed(Middleware):
    """For mypy (``nox -s typecheck`` checks this file): ``typed`` gives the method's params
    and result types, through ``call_next`` too."""

    async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
        call = request.typed(methods.TOOLS_CALL)
        if call is None:
            return await call_next(request)
        assert_type(call.params, types.CallToolRequestParams)
        result = await call_next(call.with_params(call.params))
        assert_type(result, types.CallToolResultOrCreateTaskResult)
        return result

    async def on_notification(self, notification: IncomingNotification[Any], call_next: NotifyNext) -> None:
        message = notification.typed(methods.NOTIFICATIONS_MESSAGE)
        if message is not None:
            assert_type(message.params, types.LoggingMessageNotificationParams)
        await call_next(notification)


async def test_typed_narrows_and_passes_on(anyio_backend: str) -> None:
    async with connected(
        build(Typed()), Client("c", "1", middleware=[Typed()], versions=HANDSHAKE_VERSIONS)
    ) as session:
        assert text(await session.call_tool("echo", {"text": "typed"})) == "typed"


def test_without_middleware_a_session_gets_the_handlers_themselves() -> None:
    """Zero cost: the mappings a session gets are the registry's own dicts, not views."""
    server = build()
    assert server.session_handlers() == (server.request_handlers, server.notification_handlers)
    assert server.session_handlers()[0] is server.request_handlers
    client = Client("c", "1", versions=HANDSHAKE_VERSIONS)
    assert client.session_handlers()[1] is client.notification_handlers
    server.add_middleware(Middleware())  # overrides nothing: still no chain
    assert server.session_handlers()[0] is server.request_handlers
    server.add_middleware(Refuse())
    requests, notifications = server.session_handlers()
    assert requests is not server.request_handlers and notifications is server.notification_handlers
    assert set(requests) == set(server.request_handlers) and len(requests) == len(server.request_handlers)
    with pytest.raises(KeyError):
        requests["prompts/list"]
    assert requests.get("prompts/list") is requests["tools/call"]
    assert server.session_handlers()[0] is requests  # built once, for every session
    server.add_middleware(Record())
    assert server.session_handlers()[0] is not requests  # and again after a change


async def test_over_stdio(anyio_backend: str, tmp_path: Path) -> None:
    """A child server with a refusing middleware and a lifespan (tests/peers/middleware_server.py)."""
    marker = tmp_path / "lifespan"
    args = [str(PEER), "--backend", anyio_backend, "--marker", str(marker)]
    with anyio.fail_after(30):
        async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect_stdio(
            sys.executable, args, env=child_env(), timeout=10
        ) as session:
            with pytest.raises(McpError) as info:
                await session.call_tool("secret")
            assert (info.value.code, info.value.message) == (INVALID_REQUEST, "not for you")
            assert text(await session.call_tool("state")) == "pool 1"
            assert text(await session.call_tool("state")) == "pool 2"
        while "exited" not in (marker.read_text() if marker.exists() else ""):
            await anyio.sleep(0.02)
    assert marker.read_text().split() == ["entered", "exited"]


async def test_over_streamable_http(anyio_backend: str) -> None:
    """Refused over HTTP, answered itself, and a client middleware on a sampling request."""
    record = Record()
    seen: list[str] = []

    async def sample(params: types.CreateMessageRequestParams, ctx: Context) -> types.CreateMessageResult:
        return types.CreateMessageResult(
            role="assistant", content=types.TextContent(text="sampled"), model="m"
        )

    class Seen(Middleware):
        async def on_request(self, request: IncomingRequest[Any, Any], call_next: CallNext) -> Any:
            seen.append(request.method)
            return await call_next(request)

    app = StreamableHTTPApp(build(record, Refuse()))
    client = Client("t", "1", sampling=sample, middleware=[Seen()], versions=HANDSHAKE_VERSIONS)
    async with serve_asgi(app) as base:
        with anyio.fail_after(30):
            async with client.connect_url(base + "/mcp", transport="streamable-http") as session:
                with pytest.raises(McpError) as info:
                    await session.call_tool("secret")
                assert (info.value.code, info.value.message) == (INVALID_REQUEST, "not for you")
                assert text(await session.call_tool("ask")) == "sampled"
    assert [method for method, _ in record.times] == ["tools/call", "tools/call"]
    assert seen == ["sampling/createMessage"]
