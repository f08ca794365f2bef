"""The ``logging`` capability is declared by a server that sends log messages, and only by one:
``Server(logging=True)`` or a ``logging/setLevel`` handler of its own. Without it,
``logging/setLevel`` gets -32601 and the server sends no log message."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INVALID_REQUEST, METHOD_NOT_FOUND, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.log_bridge import forward_logging
from mcpbind.server.server import Server
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.harness import connected, connected_recording

pytestmark = pytest.mark.anyio
methods = types.methods


def server_with_tools(logs: bool | None = None) -> Server:
    server = Server("quiet", "1", logging=logs)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def say(ctx: RequestContext) -> str:
        await ctx.log("info", "said")
        return "ok"

    @server.tool()
    async def bridge(ctx: RequestContext) -> str:
        with forward_logging(ctx, "quiet.app"):
            logging.getLogger("quiet.app").warning("bridged")
        return "ok"

    return server


async def test_a_server_that_does_not_log_does_not_declare_logging(anyio_backend: str) -> None:
    got: list[types.LoggingMessageNotificationParams] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(params)

    async with connected_recording(
        server_with_tools(), Client("c", "1", logging=on_log, versions=HANDSHAKE_VERSIONS)
    ) as (session, sent):
        caps = session.server_capabilities
        assert caps.logging is types.UNSET and caps.tools is not types.UNSET
        with pytest.raises(McpError) as caught:
            await session.set_logging_level("debug")
        assert caught.value.code == METHOD_NOT_FOUND
        assert (await session.call_tool("add", {"a": 1, "b": 2})).structured_content == {"result": 3}
        for tool in ("say", "bridge"):
            with pytest.raises(McpError) as refused:
                await session.call_tool(tool)
            assert refused.value.code == INVALID_REQUEST
            assert "'logging' capability" in refused.value.message and "logging=True" in refused.value.message
        await session.ping()
    assert got == []
    assert not any(b"notifications/message" in data for data in sent)


@pytest.mark.parametrize("how", ["logging=True", "own setLevel handler"])
async def test_a_server_that_logs_declares_logging(anyio_backend: str, how: str) -> None:
    got: list[str] = []
    levels: list[str] = []

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        got.append(str(params.data))

    if how == "logging=True":
        server = server_with_tools(logs=True)
    else:
        server = server_with_tools()

        @server.on(methods.LOGGING_SET_LEVEL)
        async def set_level(params: types.SetLevelRequestParams, ctx: RequestContext) -> types.Result:
            levels.append(params.level)
            ctx.session.log_level = params.level
            return types.Result()

    async with connected(server, Client("c", "1", logging=on_log, versions=HANDSHAKE_VERSIONS)) as session:
        assert session.server_capabilities.logging == {}
        await session.set_logging_level("info")
        await session.call_tool("say")
        await session.call_tool("bridge")
        with anyio.fail_after(5):
            while len(got) < 2:
                await anyio.sleep(0.01)
    assert sorted(got) == ["bridged", "said"]
    assert levels == ([] if how == "logging=True" else ["info"])


async def test_logging_false_and_given_capabilities_are_respected(anyio_backend: str) -> None:
    server = server_with_tools(logs=False)

    @server.on(methods.LOGGING_SET_LEVEL)
    async def set_level(params: types.SetLevelRequestParams, ctx: RequestContext) -> types.Result:
        return types.Result()

    async with connected(server) as session:
        assert session.server_capabilities.logging is types.UNSET
    given = Server("given", "1", capabilities=types.ServerCapabilities(logging={}))
    async with connected(given) as session:
        assert session.server_capabilities.logging == {}
        await session.set_logging_level("error")  # answered: the capability was declared


async def test_a_log_level_that_is_not_the_specifications_is_refused_by_name(anyio_backend: str) -> None:
    """mypy refuses ``ctx.log("verbose", ...)`` (the level is the schema's ``LoggingLevel``, see
    test_typing.py); untyped code gets a ValueError listing the levels, and nothing is sent."""
    server = Server("levels", "1", logging=True, expose_internal_errors=True)

    @server.tool()
    async def chatty(ctx: RequestContext) -> str:
        level: Any = "verbose"
        await ctx.log(level, "hello")
        return "ok"

    async with connected_recording(server) as (session, sent):
        result = await session.call_tool("chatty")
    assert result.is_error is True
    assert result.content == [
        types.TextContent(
            text="Error in tool chatty: unknown logging level 'verbose': one of debug, info, notice,"
            " warning, error, critical, alert, emergency"
        )
    ]
    assert not any(b"notifications/message" in data for data in sent)
