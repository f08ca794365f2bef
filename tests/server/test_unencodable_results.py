"""A handler that returns a value which cannot be encoded (an ``object()`` inside the result,
nesting deeper than the encoder goes): the request gets the JSON-RPC error -32603, the cause is
logged on the server's side only, and the server answers the next request. In memory and over
real stdio pipes to a server child process, on asyncio and trio."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from mcpbind.protocol.errors import INTERNAL_ERROR, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from tests.harness import connected
from tests.transports.stdio.children import SESSION_SERVER, call, raw_server

pytestmark = pytest.mark.anyio

methods = types.methods


def _deep(levels: int) -> Any:
    value: Any = []
    for _ in range(levels):
        value = [value]
    return value


def handler_server() -> Server:
    """tools/call by a handler of its own: ``object`` and ``deep`` answer results that cannot
    be encoded, ``shape`` one of the wrong type; anything else echoes its name."""
    server = Server("unencodable", "1.0")

    @server.on(methods.TOOLS_CALL)
    async def call_tool(params: types.CallToolRequestParams, ctx: RequestContext[Any]) -> Any:
        if params.name == "object":
            return types.CallToolResult(content=[], structured_content={"value": object()})
        if params.name == "deep":
            return types.CallToolResult(content=[], structured_content={"value": _deep(100_000)})
        if params.name == "shape":
            return 42
        return types.CallToolResult(content=[types.TextContent(text=params.name)])

    return server


def text_of(result: types.CallToolResult) -> str:
    [block] = result.content
    assert isinstance(block, types.TextContent)
    return block.text


@pytest.mark.parametrize("name", ["object", "deep"])
async def test_an_unencodable_result_is_an_internal_error_and_the_server_goes_on(
    name: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR, logger="mcpbind")
    async with connected(handler_server()) as remote:
        with pytest.raises(McpError) as failed:
            await remote.call_tool(name, {})
        # The client learns that it failed, not why (the cause stays in the server's log).
        assert (failed.value.code, failed.value.message) == (INTERNAL_ERROR, "Internal error")
        assert text_of(await remote.call_tool("after", {})) == "after"
        await remote.ping()
        with pytest.raises(McpError):  # and again: nothing was left behind by the first failure
            await remote.call_tool(name, {})
        assert text_of(await remote.call_tool("again", {})) == "again"
    logged = [r.getMessage() for r in caplog.records if "cannot be sent" in r.getMessage()]
    assert len(logged) == 2 and all("tools/call" in line for line in logged), logged


async def test_a_result_of_the_wrong_type_fails_the_call_on_the_client() -> None:
    # The server sends what it was given; the client refuses a result that is not the
    # method's, naming the types it expected, and the session goes on.
    async with connected(handler_server()) as remote:
        with pytest.raises(McpError) as failed:
            await remote.call_tool("shape", {})
        assert failed.value.code == INTERNAL_ERROR
        assert "Invalid result" in failed.value.message and "CallToolResult" in failed.value.message
        assert text_of(await remote.call_tool("after", {})) == "after"


async def test_a_tool_function_returning_an_unencodable_value(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.ERROR, logger="mcpbind")
    server = Server("tools", "1.0")

    @server.tool()
    def broken() -> dict[str, Any]:
        return {"value": object()}

    @server.tool()
    def fine() -> str:
        return "fine"

    async with connected(server) as remote:
        with pytest.raises(McpError) as failed:
            await remote.call_tool("broken", {})
        assert (failed.value.code, failed.value.message) == (INTERNAL_ERROR, "Internal error")
        assert "object" not in failed.value.message
        assert text_of(await remote.call_tool("fine", {})) == "fine"
    assert any("tools/call" in r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR)


@pytest.mark.parametrize("server_backend", ["asyncio", "trio"])
async def test_over_stdio_the_error_goes_back_and_the_server_goes_on(
    server_backend: str, tmp_path: Path
) -> None:
    stderr = tmp_path / "stderr.txt"
    async with raw_server(SESSION_SERVER, "--backend", server_backend, stderr_path=stderr) as raw:
        raw.reply_timeout = 25.0  # a child starting on a loaded machine (within the test's 30 s)
        await raw.initialize()
        [answer] = await raw.exchange(call(1, "unsendable"), answers=1)
        assert answer == {
            "jsonrpc": "2.0",
            "id": 1,
            "error": {"code": INTERNAL_ERROR, "message": "Internal error"},
        }
        [answer] = await raw.exchange(call(2, "echo", text="still here"), answers=1)
        assert answer["id"] == 2
        assert answer["result"]["content"] == [{"type": "text", "text": "still here"}]
        # The id of the failed request is free again: a client may reuse it.
        [answer] = await raw.exchange(call(1, "echo", text="reused"), answers=1)
        assert (answer["id"], answer["result"]["content"][0]["text"]) == (1, "reused")
    assert "returned a value that cannot be sent" in stderr.read_text()
