"""Registering tools, resources and prompts: decorators versus hand-written handlers."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from mcpbind.methods import RequestSpec
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server import Server
from mcpbind.session import RequestContext
from tests.harness import connected

methods = types.methods


def add_tool(server: Server) -> None:
    @server.tool()
    def echo(text: str) -> str:
        return text


def add_resource(server: Server) -> None:
    @server.resource("note://{id}")
    def note(id: str) -> str:
        return id


def add_static_resource(server: Server) -> None:
    @server.resource("note://today")
    def today() -> str:
        return "today"


def add_prompt(server: Server) -> None:
    @server.prompt()
    def greet(name: str) -> str:
        return f"hello {name}"


async def raw(params: Any, ctx: RequestContext) -> Any:
    raise AssertionError("never called")


CLASHES: list[tuple[str, Callable[[Server], None], RequestSpec[Any, Any]]] = [
    ("tool", add_tool, methods.TOOLS_CALL),
    ("tool", add_tool, methods.TOOLS_LIST),
    ("resource", add_resource, methods.RESOURCES_READ),
    ("resource", add_static_resource, methods.RESOURCES_READ),
    ("resource", add_resource, methods.RESOURCES_LIST),
    ("resource", add_resource, methods.RESOURCES_TEMPLATES_LIST),
    ("prompt", add_prompt, methods.PROMPTS_GET),
    ("prompt", add_prompt, methods.PROMPTS_LIST),
]
IDS = [f"{spec.method}-{add.__name__}" for _, add, spec in CLASHES]


@pytest.mark.parametrize(("decorator", "add", "spec"), CLASHES, ids=IDS)
def test_a_handler_after_the_decorator_is_refused(
    decorator: str, add: Callable[[Server], None], spec: RequestSpec[Any, Any]
) -> None:
    server = Server("clash", "1")
    add(server)
    own = server.request_handlers[spec.method]
    with pytest.raises(ValueError, match=f"{spec.method} is answered by the {decorator}s registered") as info:
        server.on(spec)(raw)
    assert f"@server.{decorator}()" in str(info.value)
    assert server.request_handlers[spec.method] == own  # nothing changed


@pytest.mark.parametrize(("decorator", "add", "spec"), CLASHES, ids=IDS)
def test_the_decorator_after_a_handler_is_refused(
    decorator: str, add: Callable[[Server], None], spec: RequestSpec[Any, Any]
) -> None:
    server = Server("clash", "1")
    server.on(spec)(raw)
    with pytest.raises(
        ValueError, match=f"cannot be used on a server that has its own handler for {spec.method}"
    ):
        add(server)
    assert server.request_handlers[spec.method] is raw
    assert not server.tools and not server.resources and not server.resource_templates and not server.prompts


class ToolHandlers:
    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext
    ) -> types.CallToolResult:
        raise AssertionError("never called")

    async def on_ping(self, params: types.RequestParams, ctx: RequestContext) -> types.Result:
        return types.Result()


def test_add_handlers_clashing_with_a_decorator_is_refused_whole() -> None:
    server = Server("clash", "1")
    add_tool(server)
    with pytest.raises(ValueError, match="tools/call is answered by the tools registered"):
        server.add_handlers(ToolHandlers())
    assert "ping" not in server.request_handlers  # nothing of it was registered
    later = Server("clash", "1")
    later.add_handlers(ToolHandlers())
    with pytest.raises(ValueError, match="own handler for tools/call"):
        add_tool(later)


@pytest.mark.anyio
async def test_decorators_and_unrelated_or_subscription_handlers_work_together() -> None:
    server = Server("mixed", "1")
    subscribed: list[str] = []

    @server.on(methods.RESOURCES_SUBSCRIBE)
    async def subscribe(params: types.SubscribeRequestParams, ctx: RequestContext) -> types.Result:
        subscribed.append(params.uri)
        return types.Result()

    add_tool(server)
    add_resource(server)
    add_prompt(server)

    @server.on(methods.COMPLETION_COMPLETE)
    async def complete(params: types.CompleteRequestParams, ctx: RequestContext) -> types.CompleteResult:
        return types.CompleteResult(completion=types.CompleteResultCompletion(values=["x"]))

    async with connected(server) as client:
        assert [t.name for t in (await client.list_tools()).tools] == ["echo"]
        assert (await client.call_tool("echo", {"text": "hi"})).content == [types.TextContent(text="hi")]
        text = (await client.read_resource("note://7")).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text == "7"
        await client.subscribe_resource("note://7")
        assert subscribed == ["note://7"]  # the hand-written subscribe handler won
        got = await client.get_prompt("greet", {"name": "ada"})
        assert got.messages[0].content == types.TextContent(text="hello ada")
