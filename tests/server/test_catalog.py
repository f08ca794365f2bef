"""What a server offers from functions lives in its catalog (``mcpbind.server.catalog``); the
server's attributes for it are the catalog's own, read and set live."""

from __future__ import annotations

import pytest

from mcpbind.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.server.server import Server
from tests.harness import connected

pytestmark = pytest.mark.anyio


def offering() -> Server:
    server = Server("offers", "1")

    @server.tool()
    def one() -> str:
        return "1"

    @server.tool()
    def two() -> str:
        return "2"

    @server.resource("notes://{name}")
    def note(name: str) -> str:
        return f"note {name}"

    @server.prompt()
    def greet() -> str:
        return "hello"

    return server


def test_the_servers_registries_are_the_same_live_objects() -> None:
    server = offering()
    tools, resources, prompts = server.tools, server.resources, server.prompts
    assert list(tools) == ["one", "two"] and list(prompts) == ["greet"] and resources == {}
    server.remove_tool("one")
    server.remove_prompt("greet")
    assert server.tools is tools and list(tools) == ["two"]
    assert server.prompts is prompts and prompts == {}
    assert server.resources is resources

    templates = server.resource_templates
    assert [str(t.template) for t in templates] == ["notes://{name}"]
    server.remove_resource_template("notes://{name}")
    assert server.resource_templates == [] and templates != []  # a new list at each change


async def test_settings_and_registries_assigned_after_construction_take_effect(anyio_backend: str) -> None:
    server = offering()
    server.page_size = 1
    server.max_uri_length = 20
    assert (server.page_size, server.max_uri_length) == (1, 20)
    async with connected(server) as session:
        first = await session.list_tools()
        assert [t.name for t in first.tools] == ["one"] and isinstance(first.next_cursor, str)
        assert (await session.read_resource("notes://a")).contents[0].text == "note a"  # type: ignore[union-attr]
        with pytest.raises(McpError) as refused:
            await session.read_resource("notes://" + "a" * 20)
        assert refused.value.code == INVALID_PARAMS and "URI too long" in refused.value.message

        server.resource_templates = []
        with pytest.raises(McpError) as missing:
            await session.read_resource("notes://a")
        assert missing.value.code == RESOURCE_NOT_FOUND
        server.tools = {}
        with pytest.raises(McpError, match="Unknown tool: one"):
            await session.call_tool("one")
