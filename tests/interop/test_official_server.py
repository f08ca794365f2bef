"""mcpbind's client drives a stdio server written with the official MCP Python SDK
(tests/interop/official_server.py, an ``MCPServer``).

The official server runs in a child process on asyncio (its default); our client runs here on
both anyio backends (the ``anyio_backend`` fixture).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import pytest

from mcpbind.client.callbacks import LoggingHandler
from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import METHOD_NOT_FOUND, REQUEST_TIMEOUT, McpError
from mcpbind.schema import v2025_11_25 as types
from mcpbind.versions import HANDSHAKE_VERSIONS

pytestmark = pytest.mark.anyio

OFFICIAL_SERVER = Path(__file__).with_name("official_server.py")
TEST_TIMEOUT = 30.0


@asynccontextmanager
async def connect(
    marker: Path | None = None, logging: LoggingHandler | None = None
) -> AsyncIterator[RemoteServer]:
    env = {"OFFICIAL_MARKER": str(marker)} if marker is not None else None
    # The handshake versions (2025-11-25 and older): the era these tests are about.
    client = Client("mcpbind-interop-client", "0.0.1", logging=logging, versions=HANDSHAKE_VERSIONS)
    async with client.connect_stdio(sys.executable, [str(OFFICIAL_SERVER)], env=env, timeout=15) as session:
        yield session


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


def marks(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


async def wait_for_mark(marker: Path, event: str) -> None:
    while event not in marks(marker):
        await anyio.sleep(0.01)


async def test_initialize_and_ping() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            assert session.protocol_version == "2025-11-25"
            info = session.server_info
            assert (info.name, info.version, info.title) == (
                "official-interop",
                "9.8.7",
                "Official SDK interop server",
            )
            assert session.instructions == "Add numbers, count, shout."
            caps = session.server_capabilities
            assert isinstance(caps.tools, types.ServerCapabilitiesTools)
            assert isinstance(caps.resources, types.ServerCapabilitiesResources)
            assert isinstance(caps.prompts, types.ServerCapabilitiesPrompts)
            await session.ping()
            await session.ping(timeout=5)


async def test_list_tools_decodes_schemas() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            listing = await session.list_tools()
            assert isinstance(listing, types.ListToolsResult)
            tools = {tool.name: tool for tool in listing.tools}
            assert set(tools) == {"add", "stats", "count", "shout", "sleep", "fail"}
            assert all(isinstance(tool, types.Tool) for tool in listing.tools)
            add = tools["add"]
            assert add.description == "Adds two integers."
            assert add.input_schema["type"] == "object"
            assert add.input_schema["required"] == ["a", "b"]
            assert add.input_schema["properties"]["a"]["type"] == "integer"
            assert isinstance(add.output_schema, dict)
            assert add.output_schema["properties"]["result"]["type"] == "integer"
            stats = tools["stats"]
            assert isinstance(stats.output_schema, dict)
            assert set(stats.output_schema["properties"]) == {"count", "mean"}
            assert listing.next_cursor is types.UNSET

            # The other listings an MCPServer always serves, empty here.
            assert (await session.list_resources()).resources == []
            assert (await session.list_prompts()).prompts == []


async def test_call_tool_text_and_structured_content() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            result = await session.call_tool("add", {"a": 2, "b": 40})
            assert isinstance(result, types.CallToolResult)
            assert result.is_error is False
            assert text_of(result) == "42"
            assert result.structured_content == {"result": 42}

            result = await session.call_tool("stats", {"values": [1, 2, 3, 6]})
            assert result.is_error is False
            assert result.structured_content == {"count": 4, "mean": 3.0}
            assert '"mean": 3.0' in text_of(result)

            # Non-ASCII text survives both directions.
            result = await session.call_tool("shout", {"message": "grüße ✓"})
            assert text_of(result) == "GRÜSSE ✓"
            assert result.structured_content == {"result": "GRÜSSE ✓"}

            # Concurrent calls, each answered to its own caller.
            sums: dict[int, int | None] = {}

            async def add(i: int) -> None:
                result = await session.call_tool("add", {"a": i, "b": 1000})
                content = result.structured_content
                sums[i] = content.get("result") if isinstance(content, dict) else None

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(add, i)
            assert sums == {i: i + 1000 for i in range(20)}


async def test_progress_callback() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            result = await session.call_tool("count", {"steps": 3}, progress=on_progress)
            assert text_of(result) == "counted 3"
            # Progress is delivered in line, in order, before the response.
            assert seen == [(1, 3, "step 1 of 3"), (2, 3, "step 2 of 3"), (3, 3, "step 3 of 3")]

            # Without a callback no progressToken is sent, and the official server sends nothing.
            result = await session.call_tool("count", {"steps": 2})
            assert text_of(result) == "counted 2"
            assert len(seen) == 3


async def test_logging_notification_reaches_the_logging_callback() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        logs: list[types.LoggingMessageNotificationParams] = []
        arrived = anyio.Event()

        async def on_log(params: types.LoggingMessageNotificationParams) -> None:
            logs.append(params)
            arrived.set()

        async with connect(logging=on_log) as session:
            result = await session.call_tool("shout", {"message": "careful"})
            assert text_of(result) == "CAREFUL"
            # Notification handlers run in their own tasks: the log may be handled after the
            # response, though it was sent before it.
            await arrived.wait()
            assert len(logs) == 1
            log = logs[0]
            assert isinstance(log, types.LoggingMessageNotificationParams)
            assert log.level == "warning"
            assert log.data == "careful"
            assert log.logger == "official"


async def test_tool_error_is_an_is_error_result() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            result = await session.call_tool("fail", {"reason": "on purpose"})
            assert result.is_error is True
            assert "failed: on purpose" in text_of(result)

            # Arguments the official server's validation rejects: also an isError result.
            result = await session.call_tool("add", {"a": "x"})
            assert result.is_error is True
            assert "validation error" in text_of(result)
            await session.ping()


async def test_unknown_tool_and_unknown_method() -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect() as session:
            # The official MCPServer answers an unknown tool with an isError result.
            result = await session.call_tool("no-such-tool", {})
            assert result.is_error is True
            assert text_of(result) == "Unknown tool: no-such-tool"

            # A method it has no handler for is a JSON-RPC error.
            with pytest.raises(McpError) as info:
                await session.complete(types.PromptReference(name="nothing"), "arg", "val")
            assert info.value.code == METHOD_NOT_FOUND
            await session.ping()


async def test_our_timeout_cancels_the_official_handler(tmp_path: Path) -> None:
    marker = tmp_path / "sleep.log"
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(marker) as session:
            with pytest.raises(McpError) as info:
                await session.call_tool("sleep", {"seconds": 30}, timeout=0.5)
            assert info.value.code == REQUEST_TIMEOUT
            # Our notifications/cancelled reached the official server and stopped its handler.
            with anyio.fail_after(5):
                await wait_for_mark(marker, "cancelled")
            assert marks(marker) == ["started", "cancelled"]
            await session.ping()

            # A cancelled caller (not a timeout) sends it too.
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:

                    async def cancel_when_started() -> None:
                        while marks(marker).count("started") < 2:
                            await anyio.sleep(0.01)
                        scope.cancel()

                    tg.start_soon(cancel_when_started)
                    await session.call_tool("sleep", {"seconds": 30})
            assert scope.cancelled_caught
            with anyio.fail_after(5):
                while marks(marker).count("cancelled") < 2:
                    await anyio.sleep(0.01)

            result = await session.call_tool("sleep", {"seconds": 0})
            assert text_of(result) == "slept"
            assert marks(marker) == ["started", "cancelled", "started", "cancelled", "started", "finished"]


@pytest.mark.parametrize("version", HANDSHAKE_VERSIONS)
async def test_every_protocol_version_we_support(version: str) -> None:
    """The official server speaks every handshake version we do: ask for each in turn."""
    with anyio.fail_after(TEST_TIMEOUT):
        client = Client("mcpbind-interop-client", "0.0.1", protocol_version=version)
        async with client.connect_stdio(sys.executable, [str(OFFICIAL_SERVER)], timeout=15) as session:
            assert session.protocol_version == version
            assert session.server_info.name == "official-interop"
            await session.ping()
            assert len((await session.list_tools()).tools) == 6
            result = await session.call_tool("add", {"a": 1, "b": 2})
            assert text_of(result) == "3"
            seen: list[float] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append(progress)

            result = await session.call_tool("count", {"steps": 2}, progress=on_progress)
            assert text_of(result) == "counted 2"
            assert seen == [1, 2]
