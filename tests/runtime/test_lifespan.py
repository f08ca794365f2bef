"""A server's lifespan (issue 13, item 6): ``Server(lifespan=...)`` is entered once when the
server starts serving and left when it stops; handlers read what it yielded as
``ctx.lifespan_state``. In memory (``Server.run``, ``Server.serving``) and over HTTP (the ASGI
lifespan of the Streamable HTTP app, stateful and stateless, and of the legacy SSE app)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind import Client, Context, Server, types
from mcpbind.transports.http.legacy import LegacySSEApp
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.transports.memory import memory_pair
from tests.harness import connected
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio


class Pool:
    """Stands in for what a lifespan sets up (a database pool)."""

    def __init__(self, server: Server) -> None:
        self.name = server.info.name
        self.calls = 0
        self.open = True


def build(events: list[str], *, fail: bool = False, ticker: bool = False) -> Server:
    @asynccontextmanager
    async def lifespan(server: Server) -> AsyncIterator[Pool]:
        events.append("enter")
        if fail:
            raise OSError("no database")
        pool = Pool(server)
        try:
            if ticker:  # a background task the lifespan owns: left in the task that entered it
                async with anyio.create_task_group() as tg:
                    tg.start_soon(anyio.sleep_forever)
                    yield pool
                    tg.cancel_scope.cancel()
            else:
                yield pool
        finally:
            pool.open = False
            events.append("exit")

    server = Server("life", "1.0", lifespan=lifespan)

    @server.tool()
    def use(ctx: Context) -> str:
        pool: Pool = ctx.lifespan_state
        assert pool.open
        pool.calls += 1
        return f"{pool.name} {pool.calls}"

    return server


def text(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


async def test_entered_once_visible_in_a_tool_and_exited(anyio_backend: str) -> None:
    events: list[str] = []
    server = build(events)
    async with connected(server) as session:
        assert events == ["enter"]
        assert text(await session.call_tool("use")) == "life 1"
        assert text(await session.call_tool("use")) == "life 2"
    assert events == ["enter", "exit"]
    # Served again: entered again, with a fresh state.
    async with connected(server) as session:
        assert text(await session.call_tool("use")) == "life 1"
    assert events == ["enter", "exit", "enter", "exit"]


async def test_several_runs_share_one_lifespan_in_serving(anyio_backend: str) -> None:
    """Inside ``server.serving()`` each ``run`` joins the lifespan: one state for all of them,
    and a lifespan owning a task group is left in its own task."""
    events: list[str] = []
    server = build(events, ticker=True)
    async with server.serving():
        assert events == ["enter"]
        async with connected(server) as first, connected(server) as second:
            assert text(await first.call_tool("use")) == "life 1"
            assert text(await second.call_tool("use")) == "life 2"
        async with connected(server) as third:
            assert text(await third.call_tool("use")) == "life 3"
        assert events == ["enter"]
    assert events == ["enter", "exit"]


async def test_runs_starting_together_enter_it_once(anyio_backend: str) -> None:
    events: list[str] = []
    server = build(events)
    results: list[str] = []
    all_in = anyio.Event()

    async def serve_one() -> None:
        async with connected(server) as session:
            results.append(text(await session.call_tool("use")))
            if len(results) == 3:
                all_in.set()
            with anyio.fail_after(5):
                await all_in.wait()  # the three runs overlap

    async with server.serving():
        async with anyio.create_task_group() as tg:
            for _ in range(3):
                tg.start_soon(serve_one)
    assert sorted(results) == ["life 1", "life 2", "life 3"]
    assert events == ["enter", "exit"]


async def test_the_first_to_serve_leaving_ends_it_for_the_others(
    anyio_backend: str, caplog: pytest.LogCaptureFixture
) -> None:
    """A ``run`` that joined outlives the serving that entered the lifespan: the lifespan ends
    anyway (in its own task), with a warning, and the state is gone for the run left."""
    events: list[str] = []
    server = build(events)
    leave = anyio.Event()

    async def own() -> None:
        async with server.serving():
            await leave.wait()

    async with anyio.create_task_group() as tg:
        tg.start_soon(own)
        with anyio.fail_after(5):
            while events != ["enter"]:
                await anyio.sleep(0.01)
        async with connected(server) as session:
            assert text(await session.call_tool("use")) == "life 1"
            leave.set()
            with anyio.fail_after(5):
                while events != ["enter", "exit"]:
                    await anyio.sleep(0.01)
            assert (await session.call_tool("use")).is_error
    assert "the server's lifespan ends while 1 other serving blocks still run" in caplog.text


async def test_a_lifespan_that_fails_fails_the_run(anyio_backend: str) -> None:
    events: list[str] = []
    server = build(events, fail=True)
    server_end, client_end = memory_pair()
    with pytest.raises(OSError, match="no database"):
        await server.run(server_end)
    await client_end.aclose()
    assert events == ["enter"]
    with pytest.raises(OSError, match="no database"):
        async with server.serving():
            pass


async def test_the_state_outside_the_lifespan(anyio_backend: str) -> None:
    """No lifespan, or reading it when it is not running: ``RuntimeError`` saying why."""
    messages: list[str] = []
    server = Server("plain", "1.0")

    @server.tool()
    def peek(ctx: Context) -> str:
        try:
            _ = ctx.lifespan_state
        except RuntimeError as exc:
            messages.append(str(exc))
        return "ok"

    async with connected(server) as session:
        await session.call_tool("peek")
    assert "Server(lifespan=...)" in messages[0]
    async with server.serving():  # nothing to enter: a no-op
        pass

    events: list[str] = []
    with_lifespan = build(events)
    raw = with_lifespan.session(memory_pair()[0])
    assert raw.lifespan is not None
    with pytest.raises(RuntimeError, match="not running"):
        _ = raw.lifespan.state


@pytest.mark.parametrize("stateless", [False, True], ids=["sessions", "stateless"])
async def test_over_streamable_http(anyio_backend: str, stateless: bool) -> None:
    """Entered at the ASGI lifespan's startup, before any client; every session (or stateless
    request) sees the one state; left at shutdown."""
    events: list[str] = []
    app = StreamableHTTPApp(build(events), stateless=stateless)
    async with serve_asgi(app) as base:
        assert events == ["enter"]
        for expected in ("life 1", "life 2"):
            async with Client("t", "1").connect_url(base + "/mcp", transport="streamable-http") as session:
                assert text(await session.call_tool("use")) == expected
        assert events == ["enter"]
    assert events == ["enter", "exit"]


async def test_over_legacy_sse(anyio_backend: str) -> None:
    """The legacy SSE app runs each session with ``Server.run``: they join the lifespan its
    ASGI lifespan entered, and ending one leaves it running for the others."""
    events: list[str] = []
    app = LegacySSEApp(build(events))
    async with serve_asgi(app) as base:
        async with Client("t", "1").connect_url(base + "/sse", transport="sse") as first:
            async with Client("t", "1").connect_url(base + "/sse", transport="sse") as second:
                assert text(await second.call_tool("use")) == "life 1"
            assert text(await first.call_tool("use")) == "life 2"
        assert events == ["enter"]
    assert events == ["enter", "exit"]


def test_the_factory_is_typed_with_the_server() -> None:
    """For mypy: a lifespan is a callable taking the server and giving an async context
    manager; anything else is a type error."""

    @asynccontextmanager
    async def good(server: Server) -> AsyncIterator[dict[str, Any]]:
        yield {}

    async def bad(server: Server) -> None: ...

    Server("t", "1", lifespan=good)
    Server("t", "1", lifespan=bad)  # type: ignore[arg-type]
