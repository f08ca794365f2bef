"""A session with tasks of its own (stdio, memory): the task that reads runs each request's
handler in line and hands reading over only when a handler waits. These tests speak JSON by
hand over the in-memory transport; every one runs on asyncio and on trio."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import pytest

from mcpbind.runtime.session import RequestContext
from mcpbind.server.server import Server
from mcpbind.transports.memory import MemoryTransport, memory_pair

pytestmark = pytest.mark.anyio


class Gates:
    def __init__(self) -> None:
        self.entered: dict[str, anyio.Event] = {}
        self.release: dict[str, anyio.Event] = {}
        self.cancelled: list[str] = []
        self.ran: list[str] = []

    def gate(self, name: str) -> tuple[anyio.Event, anyio.Event]:
        return self.entered.setdefault(name, anyio.Event()), self.release.setdefault(name, anyio.Event())


def make_server(gates: Gates, **options: Any) -> Server:
    server = Server("workers", "1.0", **options)

    @server.tool()
    async def echo(text: str) -> str:
        gates.ran.append(text)
        return text

    @server.tool()
    async def wait(name: str) -> str:
        entered, release = gates.gate(name)
        gates.ran.append(name)
        entered.set()
        try:
            await release.wait()
        except anyio.get_cancelled_exc_class():
            gates.cancelled.append(name)
            raise
        return f"released {name}"

    @server.tool()
    async def cancel_myself(ctx: RequestContext) -> str:
        assert ctx.request_id is not None
        ctx.session.cancel_received(ctx.request_id)
        return "never sent"

    return server


def call(ident: int, tool: str, **arguments: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": ident,
        "method": "tools/call",
        "params": {"name": tool, "arguments": arguments},
    }


def cancel(ident: int) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": ident}}


@asynccontextmanager
async def serving(server: Server, version: str = "2025-11-25") -> AsyncIterator[MemoryTransport]:
    """The server running over a memory pair, initialized; yields the client's end."""
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": version,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        await send(client_end, init)
        assert (await receive(client_end))["id"] == 0
        await send(client_end, {"jsonrpc": "2.0", "method": "notifications/initialized"})
        yield client_end
        await client_end.aclose()


async def send(transport: MemoryTransport, message: dict[str, Any] | list[dict[str, Any]]) -> None:
    await transport.send(json.dumps(message).encode())


async def receive(transport: MemoryTransport) -> dict[str, Any]:
    with anyio.fail_after(5):
        answer: dict[str, Any] = json.loads(await transport.receive())
    return answer


def text(answer: dict[str, Any]) -> str:
    value: str = answer["result"]["content"][0]["text"]
    return value


async def test_quick_requests_start_no_task() -> None:
    gates = Gates()
    async with serving(make_server(gates)) as client:
        await send(client, call(1, "echo", text="warm"))
        await receive(client)
        tasks = len(anyio.get_running_tasks())
        for ident in range(2, 50):
            await send(client, call(ident, "echo", text=str(ident)))
        for ident in range(2, 50):
            assert text(await receive(client)) == str(ident)  # in order: one task ran them all
        assert len(anyio.get_running_tasks()) == tasks


async def test_a_waiting_handler_hands_reading_over() -> None:
    gates = Gates()
    async with serving(make_server(gates)) as client:
        await send(client, call(1, "wait", name="a"))
        await gates.gate("a")[0].wait()
        # The task that read it is held by its handler; another one reads on.
        await send(client, call(2, "echo", text="meanwhile"))
        assert (await receive(client))["id"] == 2
        gates.release["a"].set()
        answer = await receive(client)
        assert (answer["id"], text(answer)) == (1, "released a")
        # The worker that waited goes back to the pool, and requests still flow.
        await send(client, call(3, "echo", text="after"))
        assert text(await receive(client)) == "after"


async def test_a_batch_goes_on_after_a_member_that_waits() -> None:
    gates = Gates()
    async with serving(make_server(gates), version="2025-03-26") as client:
        await send(client, [call(1, "wait", name="a"), call(2, "echo", text="second")])
        answer = await receive(client)
        assert answer["id"] == 2  # the rest of the batch was read by the next worker
        gates.release["a"].set()
        assert (await receive(client))["id"] == 1


async def test_cancelling_a_handler_that_waits_frees_its_place() -> None:
    gates = Gates()
    async with serving(make_server(gates, max_concurrent_requests=1)) as client:
        await send(client, call(1, "wait", name="a"))
        await gates.gate("a")[0].wait()
        await send(client, call(2, "echo", text="queued"))
        await send(client, call(3, "echo", text="cancelled while queued"))
        await send(client, cancel(3))
        await send(client, cancel(1))
        answer = await receive(client)
        assert (answer["id"], text(answer)) == (2, "queued")
        assert gates.cancelled == ["a"]
        assert gates.ran == ["a", "queued"]  # the one cancelled while it waited never ran
        await send(client, {"jsonrpc": "2.0", "id": 4, "method": "ping"})
        assert (await receive(client))["id"] == 4  # nothing came for 1 or 3


async def test_a_waiting_request_runs_when_a_place_frees() -> None:
    gates = Gates()
    async with serving(make_server(gates, max_concurrent_requests=2)) as client:
        await send(client, call(1, "wait", name="a"))
        await send(client, call(2, "wait", name="b"))
        await gates.gate("a")[0].wait()
        await gates.gate("b")[0].wait()
        await send(client, call(3, "wait", name="c"))
        await send(client, {"jsonrpc": "2.0", "id": 9, "method": "ping"})
        assert (await receive(client))["id"] == 9  # reading goes on while all places are taken
        assert "c" not in gates.entered
        gates.release["b"].set()
        assert (await receive(client))["id"] == 2
        await gates.gate("c")[0].wait()  # run by the worker whose handler finished
        gates.release["c"].set()
        gates.release["a"].set()
        assert sorted([(await receive(client))["id"], (await receive(client))["id"]]) == [1, 3]


async def test_a_handler_cancelling_its_own_request_does_not_stop_reading() -> None:
    async with serving(make_server(Gates())) as client:
        await send(client, call(1, "cancel_myself"))
        await send(client, call(2, "echo", text="still here"))
        answer = await receive(client)
        assert (answer["id"], text(answer)) == (2, "still here")


async def test_end_of_input_cancels_handlers_that_wait() -> None:
    gates = Gates()
    server_end, client_end = memory_pair()
    async with anyio.create_task_group() as tg:
        server = make_server(gates)
        server.shutdown_grace_period = 0.2  # what is still running then is cancelled
        tg.start_soon(server.run, server_end)
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": "2025-11-25",
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        await send(client_end, init)
        await receive(client_end)
        await send(client_end, call(1, "wait", name="a"))
        await gates.gate("a")[0].wait()
        await client_end.aclose()
    assert gates.cancelled == ["a"]  # server.run returned: the handler was cancelled, not left behind
