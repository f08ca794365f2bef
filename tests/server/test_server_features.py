"""Completion, logging levels and list changes at run time."""

from __future__ import annotations

from collections.abc import Iterable

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected

pytestmark = pytest.mark.anyio
methods = types.methods

LANGUAGES = ["python", "pascal", "perl", "rust"] + [f"lang{i}" for i in range(200)]


def build() -> Server:
    server = Server("features", "1", logging=True)

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        return f"{language}: {code}"

    @server.completion()
    async def complete(
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: str,
        value: str,
        context: dict[str, str],
    ) -> Iterable[str]:
        if isinstance(ref, types.PromptReference) and argument == "language":
            return [name for name in LANGUAGES if name.startswith(value)]
        if isinstance(ref, types.ResourceTemplateReference) and argument == "name":
            return [f"{context.get('owner', '?')}/{value}-repo"]
        return []

    @server.tool()
    async def chatter(ctx: RequestContext) -> str:
        for level in ("debug", "info", "warning", "error"):
            await ctx.log(level, f"a {level} message")
        return "done"

    @server.tool()
    def temporary() -> str:
        return "here for now"

    return server


async def test_completion_with_context_and_limits() -> None:
    server = build()
    async with connected(server) as client:
        assert client.server_capabilities.completions is not types.UNSET
        found = await client.complete(types.PromptReference(name="review"), "language", "p")
        assert found.completion.values == ["python", "pascal", "perl"]
        assert found.completion.total == 3 and found.completion.has_more is False
        many = await client.complete(types.PromptReference(name="review"), "language", "lang")
        assert len(many.completion.values) == 100 and many.completion.total == 200
        assert many.completion.has_more is True
        templated = await client.complete(
            types.ResourceTemplateReference(uri="repo://{owner}/{name}"),
            "name",
            "x",
            {"owner": "ada"},
        )
        assert templated.completion.values == ["ada/x-repo"]


async def test_logging_level_filters_messages() -> None:
    server = build()
    logs: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logs.append(params.level)

    async with connected(server, Client("c", "1", logging=on_log, versions=HANDSHAKE_VERSIONS)) as client:
        assert client.server_capabilities.logging is not types.UNSET
        await client.call_tool("chatter")
        await client.set_logging_level("warning")
        await client.call_tool("chatter")
        await client.ping()
        # The messages came before each call's answer: all of them are handled by now.
        await client.session.notifications_handled()
    assert logs == ["debug", "info", "warning", "error", "warning", "error"]


async def test_removing_a_tool_tells_connected_clients() -> None:
    server = build()
    changes: list[str] = []
    client_side = Client("c", "1", versions=HANDSHAKE_VERSIONS)

    @client_side.on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
    async def changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        changes.append(ctx.method)

    async with connected(server, client_side) as client:
        assert client.server_capabilities.tools is not types.UNSET
        assert client.server_capabilities.tools.list_changed is True
        assert "temporary" in [t.name for t in await client.all_tools()]
        server.remove_tool("temporary")  # tells connected clients by itself
        with anyio.fail_after(5):
            while not changes:
                await anyio.sleep(0.01)
        assert "temporary" not in [t.name for t in await client.all_tools()]

        @server.tool()
        def brand_new() -> str:
            return "new"

        with anyio.fail_after(5):
            while len(changes) < 2:
                await anyio.sleep(0.01)
        assert "brand_new" in [t.name for t in await client.all_tools()]
        await server.tools_changed()  # an explicit one, for changes made elsewhere
        with anyio.fail_after(5):
            while len(changes) < 3:
                await anyio.sleep(0.01)
    assert changes == ["notifications/tools/list_changed"] * 3
