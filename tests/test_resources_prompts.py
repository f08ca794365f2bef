"""Resources, resource templates, subscriptions and prompts from functions."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Annotated

import anyio
import msgspec
import pytest

from mcpbind.client import Client, ClientSession
from mcpbind.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server import Server
from mcpbind.session import RequestContext
from tests.harness import connected

pytestmark = pytest.mark.anyio
methods = types.methods

server = Server("library", "1", page_size=2)


@server.resource("config://app", mime_type="application/json", title="App config")
def config() -> dict[str, int]:
    """Settings of the app."""
    return {"retries": 3}


@server.resource("file:///logo.png", mime_type="image/png")
async def logo() -> bytes:
    return b"\x89PNG"


@server.resource("note://today")
def today(ctx: RequestContext) -> str:
    return f"read by {ctx.method}"


@server.resource("users://{id}/profile", description="A user's profile")
async def profile(id: str) -> str:
    return f"profile of {id}"


@server.resource("repo://{owner}/{name}{/path*}")
def repo_file(owner: str, name: str, path: list[str]) -> str:
    return f"{owner}/{name}:{'/'.join(path)}"


@server.prompt(title="Code review")
def review(
    code: str, language: Annotated[str, msgspec.Meta(description="A language name")] = "python"
) -> str:
    """Review a piece of code.

    Args:
        code: The code to review.
        language: Overridden by the Meta description.
    """
    return f"Review this {language} code: {code}"


@server.prompt()
def repeat(word: str, times: int) -> list[object]:
    return [word * times, types.PromptMessage(role="assistant", content=types.TextContent(text="ok"))]


@asynccontextmanager
async def session() -> AsyncIterator[ClientSession]:
    async with connected(server) as client_session:
        yield client_session


async def test_listing_with_pages_and_capabilities() -> None:
    async with session() as client:
        caps = client.server_capabilities
        assert caps.resources is not types.UNSET and caps.resources.subscribe is True
        assert caps.prompts is not types.UNSET
        first = await client.list_resources()
        assert len(first.resources) == 2 and isinstance(first.next_cursor, str)
        resources = {r.uri: r for r in await client.all_resources()}
        assert set(resources) == {"config://app", "file:///logo.png", "note://today"}
        assert resources["config://app"].title == "App config"
        assert resources["config://app"].description == "Settings of the app."
        assert resources["config://app"].mime_type == "application/json"
        templates = [t.uri_template for t in await client.all_resource_templates()]
        assert templates == ["users://{id}/profile", "repo://{owner}/{name}{/path*}"]
        prompts = {p.name: p for p in await client.all_prompts()}
        assert set(prompts) == {"review", "repeat"}
        assert prompts["review"].description == "Review a piece of code."
        assert prompts["review"].arguments == [
            types.PromptArgument(name="code", description="The code to review.", required=True),
            types.PromptArgument(name="language", description="A language name", required=False),
        ]
        assert prompts["repeat"].arguments == [
            types.PromptArgument(name="word", required=True),
            types.PromptArgument(name="times", required=True),
        ]


async def test_reading() -> None:
    async with session() as client:
        assert (await client.read_resource("config://app")).contents == [
            types.TextResourceContents(uri="config://app", text='{"retries":3}', mime_type="application/json")
        ]
        blob = (await client.read_resource("file:///logo.png")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        assert base64.b64decode(blob.blob) == b"\x89PNG" and blob.mime_type == "image/png"
        text = (await client.read_resource("note://today")).contents[0]
        assert isinstance(text, types.TextResourceContents) and text.text == "read by resources/read"
        by_template = (await client.read_resource("users://42/profile")).contents[0]
        assert isinstance(by_template, types.TextResourceContents) and by_template.text == "profile of 42"
        assert by_template.uri == "users://42/profile"
        nested = (await client.read_resource("repo://ada/engine/src/main.py")).contents[0]
        assert isinstance(nested, types.TextResourceContents) and nested.text == "ada/engine:src/main.py"
        for missing in ("config://other", "users://42/settings", "users:///profile/x"):
            with pytest.raises(McpError) as info:
                await client.read_resource(missing)
            assert info.value.code == RESOURCE_NOT_FOUND and info.value.data == {"uri": missing}
        await client.ping()  # the server goes on


async def test_subscriptions() -> None:
    updates: list[str] = []
    client_side = Client("c", "1")

    @client_side.on_notification(methods.RESOURCES_UPDATED)
    async def updated(params: types.ResourceUpdatedNotificationParams, ctx: RequestContext) -> None:
        updates.append(params.uri)

    async with connected(server, client_side) as client:
        await client.subscribe_resource("config://app")
        await server.resource_updated("config://app")
        await server.resource_updated("note://today")  # not subscribed: nothing sent
        await client.unsubscribe_resource("config://app")
        await server.resource_updated("config://app")
        await client.ping()
        while not updates:
            await anyio.sleep(0.01)
        await anyio.sleep(0.05)
    assert updates == ["config://app"]


async def test_prompts() -> None:
    async with session() as client:
        got = await client.get_prompt("review", {"code": "x = 1"})
        assert got.description == "Review a piece of code."
        assert got.messages == [
            types.PromptMessage(role="user", content=types.TextContent(text="Review this python code: x = 1"))
        ]
        twice = await client.get_prompt("repeat", {"word": "ab", "times": "2"})
        assert [m.role for m in twice.messages] == ["user", "assistant"]
        assert twice.messages[0].content == types.TextContent(text="abab")
        with pytest.raises(McpError) as missing:
            await client.get_prompt("review", {})
        assert missing.value.code == INVALID_PARAMS and "code" in missing.value.message
        with pytest.raises(McpError) as bad:
            await client.get_prompt("repeat", {"word": "a", "times": "many"})
        assert bad.value.code == INVALID_PARAMS and "`arguments.times`" in bad.value.message
        with pytest.raises(McpError) as unknown:
            await client.get_prompt("nope")
        assert unknown.value.code == INVALID_PARAMS
