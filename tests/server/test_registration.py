"""Registering tools, resources and prompts: decorators versus hand-written handlers; their
titles and icons, and the server's, by protocol version."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import anyio
import pytest

from mcpbind.protocol.methods import RequestSpec
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.memory import memory_pair
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


CLASHES: list[tuple[str, Callable[[Server], None], RequestSpec[Any, Any, Any]]] = [
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
    decorator: str, add: Callable[[Server], None], spec: RequestSpec[Any, Any, Any]
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
    decorator: str, add: Callable[[Server], None], spec: RequestSpec[Any, Any, Any]
) -> None:
    server = Server("clash", "1")
    server.on(spec)(raw)
    with pytest.raises(
        ValueError, match=f"cannot be used on a server that has its own handler for {spec.method}"
    ):
        add(server)
    assert server.request_handlers[spec.method] is raw
    assert not server.tools and not server.resources and not server.resource_templates and not server.prompts


class ToolHandlers(
    types.stubs.HandlesToolsCall[RequestContext], types.stubs.HandlesCompletionComplete[RequestContext]
):
    async def on_tools_call(
        self, params: types.CallToolRequestParams, ctx: RequestContext, /
    ) -> types.CallToolResult:
        raise AssertionError("never called")

    async def on_completion_complete(
        self, params: types.CompleteRequestParams, ctx: RequestContext, /
    ) -> types.CompleteResult:
        raise AssertionError("never called")


def test_add_handlers_clashing_with_a_decorator_is_refused_whole() -> None:
    server = Server("clash", "1")
    add_tool(server)
    with pytest.raises(ValueError, match="tools/call is answered by the tools registered"):
        server.add_handlers(ToolHandlers())
    assert "completion/complete" not in server.request_handlers  # nothing of it was registered
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


ICON = types.Icon(src="https://example.com/icon.png", mime_type="image/png", sizes=["48x48"], theme="light")
ICON_JSON = {
    "src": "https://example.com/icon.png",
    "mimeType": "image/png",
    "sizes": ["48x48"],
    "theme": "light",
}


def decorated_server() -> Server:
    server = Server(
        "decorated",
        "1.0",
        title="Decorated Server",
        description="Shows every display field",
        icons=[ICON],
        website_url="https://example.com",
    )

    @server.tool(title="Echo", icons=[ICON])
    def echo(text: str) -> str:
        return text

    @server.resource("note://today", title="Today's note", icons=[ICON])
    def today() -> str:
        return "today"

    @server.resource("note://{id}", title="A note", icons=[ICON])
    def note(id: str) -> str:
        return id

    @server.prompt(title="Greeting", icons=[ICON])
    def greet(name: str) -> str:
        return f"hello {name}"

    return server


@pytest.mark.anyio
async def test_title_icons_and_website_reach_a_2025_11_25_client() -> None:
    async with connected(decorated_server()) as client:
        info = client.server_info
        assert (info.title, info.description, info.icons, info.website_url) == (
            "Decorated Server",
            "Shows every display field",
            [ICON],
            "https://example.com",
        )
        [tool] = (await client.list_tools()).tools
        [resource] = (await client.list_resources()).resources
        [template] = (await client.list_resource_templates()).resource_templates
        [prompt] = (await client.list_prompts()).prompts
        shown = [(tool.title, tool.icons), (resource.title, resource.icons), (template.title, template.icons)]
        assert shown + [(prompt.title, prompt.icons)] == [
            ("Echo", [ICON]),
            ("Today's note", [ICON]),
            ("A note", [ICON]),
            ("Greeting", [ICON]),
        ]


async def raw_session(server: Server, version: str, methods_sent: list[str]) -> list[dict[str, Any]]:
    """The JSON results ``server`` answers to initialize at ``version`` and then ``methods_sent``,
    as a client of that version receives them."""
    server_end, client_end = memory_pair()
    results: list[dict[str, Any]] = []
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        with anyio.fail_after(10):
            initialize = {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "raw", "version": "1"},
            }
            for ident, method in enumerate(["initialize", *methods_sent]):
                params = initialize if method == "initialize" else {}
                await client_end.send(
                    json.dumps({"jsonrpc": "2.0", "id": ident, "method": method, "params": params}).encode()
                )
                while "id" not in (answer := json.loads(await client_end.receive())):
                    pass
                results.append(answer["result"])
                if method == "initialize":
                    await client_end.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
        await client_end.aclose()
        tg.cancel_scope.cancel()
    return results


LISTS = ["tools/list", "resources/list", "resources/templates/list", "prompts/list"]


@pytest.mark.anyio
@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"])
async def test_display_fields_are_left_out_for_versions_without_them(version: str) -> None:
    initialized, tools, resources, templates, prompts = await raw_session(decorated_server(), version, LISTS)
    assert initialized["protocolVersion"] == version
    described = [
        initialized["serverInfo"],
        tools["tools"][0],
        resources["resources"][0],
        templates["resourceTemplates"][0],
        prompts["prompts"][0],
    ]
    newest = version == "2025-11-25"
    has_title = version in ("2025-11-25", "2025-06-18")
    for item in described:
        assert ("icons" in item) is newest, item
        if newest:
            assert item["icons"] == [ICON_JSON]
        assert ("title" in item) is has_title, item
    server_info = initialized["serverInfo"]
    assert ("websiteUrl" in server_info) is newest and ("description" in server_info) is newest
    if newest:
        assert server_info["websiteUrl"] == "https://example.com"
        assert server_info["description"] == "Shows every display field"
