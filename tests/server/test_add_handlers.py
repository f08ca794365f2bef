"""``Server.add_handlers``: an object implementing the generated handler protocols is registered
whole, and each ``on_...`` attribute is checked when it is registered, so that a handler mypy
did not check, or one that could never run, is refused at once rather than failing when called.
(mypy's side of it is in test_typing.py.)"""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.schema.v2025_11_25.stubs import (
    HandlesCompletionComplete,
    HandlesNotificationsRootsListChanged,
    HandlesPing,
    HandlesToolsCall,
    HandlesToolsList,
)
from mcpbind.server.server import Server
from tests.harness import connected

methods = types.methods


class Tools(
    HandlesToolsList[RequestContext],
    HandlesToolsCall[RequestContext],
    HandlesNotificationsRootsListChanged[RequestContext],
):
    def __init__(self) -> None:
        self.roots_changed = anyio.Event()

    async def on_tools_list(
        self, params: types.PaginatedRequestParams, ctx: RequestContext, /
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[types.Tool(name="shout", input_schema={"type": "object"})])

    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[types.TextContent(text=params.name.upper())])

    async def on_notifications_roots_list_changed(
        self, params: types.NotificationParams, ctx: RequestContext, /
    ) -> None:
        self.roots_changed.set()


@pytest.mark.anyio
async def test_a_handler_object_answers_requests_and_notifications(anyio_backend: str) -> None:
    server = Server("handlers", "1")
    tools = Tools()
    server.add_handlers(tools)
    async with connected(server) as session:
        assert [tool.name for tool in await session.all_tools()] == ["shout"]
        assert (await session.call_tool("shout")).content == [types.TextContent(text="SHOUT")]
        await session.send_roots_list_changed()
        with anyio.fail_after(5):
            await tools.roots_changed.wait()


class Misspelt(HandlesToolsCall[RequestContext]):
    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    async def on_tool_list(self, params: Any, ctx: RequestContext) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])


class ClientSide(HandlesToolsCall[RequestContext]):
    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    async def on_sampling_create_message(self, params: Any, ctx: RequestContext) -> Any:
        raise AssertionError("never called")


class Pings(HandlesToolsCall[RequestContext], HandlesPing[RequestContext]):
    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    async def on_ping(self, params: types.RequestParams, ctx: RequestContext, /) -> types.Result:
        return types.Result()


class NotDerived(HandlesToolsCall[RequestContext]):
    """Derives from the tools/call protocol but not from the tools/list one: mypy never
    compared its on_tools_list with the protocol (this one returns the wrong result)."""

    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[])

    async def on_tools_list(self, params: types.PaginatedRequestParams, ctx: RequestContext) -> Any:
        return types.CallToolResult(content=[])


class NotAsync(HandlesToolsList[RequestContext], HandlesToolsCall[RequestContext]):
    async def on_tools_list(
        self, params: types.PaginatedRequestParams, ctx: RequestContext, /
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    def on_tools_call(  # type: ignore[override]
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        return types.CallToolResult(content=[])


class NoContext(HandlesToolsList[RequestContext], HandlesToolsCall[RequestContext]):
    async def on_tools_list(
        self, params: types.PaginatedRequestParams, ctx: RequestContext, /
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])

    async def on_tools_call(self, params: types.CallToolRequestParams) -> types.CallToolResult:  # type: ignore[override]
        return types.CallToolResult(content=[])


class NotCallable(HandlesToolsList[RequestContext], HandlesToolsCall[RequestContext]):
    on_tools_call = None  # type: ignore[assignment]

    async def on_tools_list(
        self, params: types.PaginatedRequestParams, ctx: RequestContext, /
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[])


REFUSED: list[tuple[object, str]] = [
    (Misspelt(), "Misspelt.on_tool_list names no method a server receives (did you mean on_tools_list?)"),
    (
        ClientSide(),
        "ClientSide.on_sampling_create_message: sampling/createMessage is sent by servers to clients",
    ),
    (Pings(), "Pings.on_ping: ping is answered by the session itself; this handler would never run"),
    (
        NotDerived(),
        "NotDerived.on_tools_list handles tools/list, but NotDerived does not subclass HandlesToolsList, so"
        " its signature is not type-checked: derive it from"
        " mcpbind.schema.v2025_11_25.stubs.HandlesToolsList[RequestContext]",
    ),
    (NotAsync(), "NotAsync.on_tools_call must be an async method (async def), as HandlesToolsCall says"),
    (NoContext(), "NoContext.on_tools_call must accept (params, ctx), as HandlesToolsCall says"),
    (NotCallable(), "NotCallable.on_tools_call must be an async method"),
]


@pytest.mark.parametrize(("handlers", "message"), REFUSED, ids=[type(h).__name__ for h, _ in REFUSED])
def test_a_handler_that_cannot_be_registered_is_refused_by_name(handlers: object, message: str) -> None:
    server = Server("refusing", "1")
    before = (dict(server.request_handlers), dict(server.notification_handlers))
    with pytest.raises(TypeError) as refused:
        server.add_handlers(handlers)  # type: ignore[arg-type]
    assert str(refused.value).startswith(message)
    assert (server.request_handlers, server.notification_handlers) == before  # nothing registered


def test_the_protocols_own_declarations_are_not_handlers() -> None:
    """A class may subclass a protocol whose method it does not implement (mypy says it is
    abstract then): the inherited declaration is not registered as a handler."""

    class Partial(
        HandlesToolsCall[RequestContext],
        HandlesCompletionComplete[RequestContext],
        HandlesPing[RequestContext],
    ):
        async def on_tools_call(
            self, params: types.CallToolRequestParams, ctx: RequestContext, /
        ) -> types.CallToolResult:
            return types.CallToolResult(content=[])

    server = Server("partial", "1")
    server.add_handlers(Partial())  # type: ignore[abstract]
    assert methods.TOOLS_CALL.method in server.request_handlers
    assert methods.COMPLETION_COMPLETE.method not in server.request_handlers
    assert methods.PING.method not in server.request_handlers


def test_an_async_callable_attribute_is_a_handler() -> None:
    class Answer:
        async def __call__(
            self, params: types.CallToolRequestParams, ctx: RequestContext, /
        ) -> types.CallToolResult:
            return types.CallToolResult(content=[])

    class Tools(HandlesToolsCall[RequestContext]):
        def __init__(self) -> None:
            self.on_tools_call = Answer()  # type: ignore[method-assign]

    server = Server("callable", "1")
    tools = Tools()  # type: ignore[abstract]
    server.add_handlers(tools)
    assert server.request_handlers[methods.TOOLS_CALL.method] is tools.on_tools_call


@pytest.mark.parametrize("spec", [methods.PING, methods.INITIALIZE], ids=lambda spec: spec.method)
def test_on_refuses_what_the_session_answers_itself(spec: Any) -> None:
    with pytest.raises(ValueError, match=f"{spec.method} is answered by the session itself"):
        Server("s", "1").on(spec)
    if spec is methods.PING:
        with pytest.raises(ValueError, match="ping is answered by the session itself"):
            Client("c", "1").on(spec)


@pytest.mark.parametrize(
    "spec",
    [methods.NOTIFICATIONS_CANCELLED, methods.NOTIFICATIONS_PROGRESS, methods.NOTIFICATIONS_INITIALIZED],
    ids=lambda spec: spec.method,
)
def test_on_notification_refuses_what_the_session_answers_itself(spec: Any) -> None:
    with pytest.raises(ValueError, match=f"{spec.method} is answered by the session itself"):
        Server("s", "1").on_notification(spec)
