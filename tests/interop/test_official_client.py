"""The official MCP Python SDK's client (``mcp.stdio_client`` + ``mcp.ClientSession``) drives an
mcpbind stdio server (tests/interop/our_server.py).

The official client runs on anyio, so it runs here on both anyio backends (the ``anyio_backend``
fixture); our server runs in a child process on both backends too (``server_backend``).
"""

from __future__ import annotations

import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path

import anyio
import mcp
import mcp.types
import pytest
from mcp.shared.exceptions import MCPError
from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

import mcpbind
from mcpbind.protocol.errors import INVALID_PARAMS, REQUEST_TIMEOUT

pytestmark = pytest.mark.anyio

OUR_SERVER = Path(__file__).with_name("our_server.py")

# Every wait is bounded: the longest a single test may take, spawn and shutdown included.
TEST_TIMEOUT = 30.0


def child_env() -> dict[str, str]:
    """PYTHONPATH for a child to import mcpbind as this process does (empty when installed).

    The official client passes a child only a few safe variables plus ``env``, so this is
    needed even though the child is the same interpreter.
    """
    roots = dict.fromkeys(str(Path(entry).resolve().parent) for entry in mcpbind.__path__)
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*roots, *([inherited] if inherited else [])])}


@pytest.fixture(params=["asyncio", "trio"])
def server_backend(request: pytest.FixtureRequest) -> str:
    backend: str = request.param
    return backend


@pytest.fixture
def marker(tmp_path: Path) -> Path:
    return tmp_path / "slow.log"


@asynccontextmanager
async def connect(server_backend: str, marker: Path, tmp_path: Path) -> AsyncIterator[mcp.ClientSession]:
    """The official client, connected to our server over stdio (not yet initialized)."""
    params = mcp.StdioServerParameters(
        command=sys.executable,
        args=[str(OUR_SERVER), "--backend", server_backend, "--marker", str(marker)],
        env=child_env(),
    )
    with (tmp_path / "server.stderr").open("w") as errlog:
        async with (
            mcp.stdio_client(params, errlog=errlog) as (read, write),
            mcp.ClientSession(read, write) as session,
        ):
            yield session


def marks(marker: Path) -> list[str]:
    return marker.read_text().split() if marker.exists() else []


async def wait_for_mark(marker: Path, event: str) -> None:
    while event not in marks(marker):
        await anyio.sleep(0.01)


async def test_initialize_ping_and_list_tools(server_backend: str, marker: Path, tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            result = await session.initialize()
            assert result.server_info.name == "mcpbind-interop"
            assert result.server_info.version == "1.2.3"
            assert result.server_info.title == "mcpbind interop server"
            assert result.instructions == "Call echo, slow or progress."
            # The official client offers its newest handshake version; we have it, so we take it.
            assert result.protocol_version == HANDSHAKE_PROTOCOL_VERSIONS[-1] == "2025-11-25"
            assert session.protocol_version == "2025-11-25"
            assert result.capabilities.tools is not None
            assert result.capabilities.resources is None
            assert result.capabilities.prompts is None

            assert isinstance(await session.send_ping(), mcp.types.EmptyResult)

            listing = await session.list_tools()
            assert [tool.name for tool in listing.tools] == ["echo", "slow", "progress"]
            echo = listing.tools[0]
            assert echo.description == "Says the text back."
            assert echo.input_schema == {
                "type": "object",
                "properties": {"text": {"type": "string"}},
                "required": ["text"],
            }
            assert listing.next_cursor is None


async def test_call_echo(server_backend: str, marker: Path, tmp_path: Path) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            result = await session.call_tool("echo", {"text": "héllo\nwörld ✓"})
            assert result.is_error is False
            assert result.structured_content is None
            assert len(result.content) == 1
            content = result.content[0]
            assert isinstance(content, mcp.types.TextContent)
            assert content.text == "héllo\nwörld ✓"

            # Several calls in flight at once, answered each to its own caller.
            answers: dict[int, str] = {}

            async def call(i: int) -> None:
                result = await session.call_tool("echo", {"text": f"n{i}"})
                block = result.content[0]
                assert isinstance(block, mcp.types.TextContent)
                answers[i] = block.text

            async with anyio.create_task_group() as tg:
                for i in range(20):
                    tg.start_soon(call, i)
            assert answers == {i: f"n{i}" for i in range(20)}


async def test_protocol_errors_reach_the_official_client(
    server_backend: str, marker: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            with pytest.raises(MCPError) as info:
                await session.call_tool("no-such-tool", {})
            assert info.value.code == INVALID_PARAMS
            assert info.value.message == "Unknown tool: no-such-tool"

            with pytest.raises(MCPError) as info:
                await session.call_tool("echo", {"text": 42})
            assert info.value.code == INVALID_PARAMS
            assert "'text'" in info.value.message

            # Resources were never registered: method not found.
            with pytest.raises(MCPError) as info:
                await session.list_resources()
            assert info.value.code == -32601

            assert isinstance(await session.send_ping(), mcp.types.EmptyResult)


async def test_progress_reaches_the_official_callback(
    server_backend: str, marker: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            seen: list[tuple[float, float | None, str | None]] = []

            async def on_progress(progress: float, total: float | None, message: str | None) -> None:
                seen.append((progress, total, message))

            result = await session.call_tool("progress", {}, progress_callback=on_progress)
            block = result.content[0]
            assert isinstance(block, mcp.types.TextContent)
            assert block.text == "progress token: yes"
            # Progress notifications are sent before the response, in order, on one stream.
            assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]

            # Without a callback the official client sends no progressToken: no notifications.
            result = await session.call_tool("progress", {})
            block = result.content[0]
            assert isinstance(block, mcp.types.TextContent)
            assert block.text == "progress token: no"
            assert len(seen) == 3


async def test_official_read_timeout_cancels_our_handler(
    server_backend: str, marker: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            # The official client's read timeout sends notifications/cancelled for the request.
            with pytest.raises(MCPError) as info:
                await session.call_tool("slow", {"seconds": 30}, read_timeout_seconds=0.5)
            assert info.value.code == REQUEST_TIMEOUT
            with anyio.fail_after(5):
                await wait_for_mark(marker, "cancelled")
            assert marks(marker) == ["started", "cancelled"]

            # The server goes on: a ping and a call are answered.
            assert isinstance(await session.send_ping(), mcp.types.EmptyResult)
            result = await session.call_tool("slow", {"seconds": 0})
            assert isinstance(result.content[0], mcp.types.TextContent)
            assert result.content[0].text == "slept"
            assert marks(marker) == ["started", "cancelled", "started", "finished"]


async def test_official_task_cancellation_cancels_our_handler(
    server_backend: str, marker: Path, tmp_path: Path
) -> None:
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            # Cancelling the calling task also sends notifications/cancelled (the request was
            # written): cancel once our handler has started.
            with anyio.CancelScope() as scope:
                async with anyio.create_task_group() as tg:

                    async def cancel_when_started() -> None:
                        await wait_for_mark(marker, "started")
                        scope.cancel()

                    tg.start_soon(cancel_when_started)
                    await session.call_tool("slow", {"seconds": 30})
            assert scope.cancelled_caught
            with anyio.fail_after(5):
                await wait_for_mark(marker, "cancelled")
            assert marks(marker) == ["started", "cancelled"]

            assert isinstance(await session.send_ping(), mcp.types.EmptyResult)
            result = await session.call_tool("echo", {"text": "still here"})
            assert isinstance(result.content[0], mcp.types.TextContent)
            assert result.content[0].text == "still here"


async def test_official_client_close_ends_our_server(
    server_backend: str, marker: Path, tmp_path: Path
) -> None:
    """Leaving stdio_client closes our stdin; our server exits on its own (no signal), well
    within the official client's 2 s grace period before it sends SIGTERM."""
    with anyio.fail_after(TEST_TIMEOUT):
        async with connect(server_backend, marker, tmp_path) as session:
            await session.initialize()
            async with anyio.create_task_group() as tg:
                tg.start_soon(session.call_tool, "slow", {"seconds": 30})
                await wait_for_mark(marker, "started")
                tg.cancel_scope.cancel()
            closing = anyio.current_time()
        assert anyio.current_time() - closing < 1.9
        assert "finished" not in marks(marker)
