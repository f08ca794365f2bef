"""Requests made while others are in flight leave together (Sender.request's batches), and the
event a caller waits on for its answer (fastpath.flag_maker); on asyncio and trio, on both
paths of mcpbind.fastpath."""

from __future__ import annotations

from collections.abc import Sequence

import anyio
import pytest

from mcpbind import fastpath, types
from mcpbind.client.client import Client
from mcpbind.server.server import Server
from mcpbind.transports.base import features
from mcpbind.transports.memory import MemoryTransport, memory_pair
from mcpbind.versions import HANDSHAKE_VERSIONS

pytestmark = pytest.mark.anyio


class BatchingTransport:
    """A memory transport that also takes batches, noting each; ``refuse`` batches are
    refused (0 written), as a full pipe would; ``at_most`` messages are taken per batch."""

    def __init__(self, inner: MemoryTransport, refuse: int = 0, at_most: int = 1000) -> None:
        self.inner = inner
        self.batches: list[int] = []
        self.refuse = refuse
        self.at_most = at_most

    async def receive(self) -> bytes:
        return await self.inner.receive()

    async def send(self, message: bytes) -> None:
        await self.inner.send(message)

    def send_nowait(self, message: bytes) -> bool:
        return self.inner.send_nowait(message)

    async def aclose(self) -> None:
        await self.inner.aclose()

    def send_batch_nowait(self, messages: Sequence[bytes]) -> int:
        if self.refuse:
            self.refuse -= 1
            return 0
        taken = 0
        for message in messages[: self.at_most]:
            if not self.send_nowait(message):
                break
            taken += 1
        if taken:
            self.batches.append(taken)
        return taken


def echo_server() -> Server:
    server = Server("echo", "1")

    @server.tool()
    async def echo(text: str) -> str:
        await anyio.sleep(0)  # answers come after every call of a burst is made
        return text

    return server


async def calls(transport: BatchingTransport, server_end: MemoryTransport, n: int) -> None:
    async with anyio.create_task_group() as tg:
        tg.start_soon(echo_server().run, server_end)
        with anyio.fail_after(10):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(transport) as server:

                async def call(i: int) -> None:
                    result = await server.call_tool("echo", {"text": f"t{i}"})
                    assert result.content == [types.TextContent(text=f"t{i}")]

                async with anyio.create_task_group() as callers:
                    for i in range(n):
                        callers.start_soon(call, i)
                await call(-1)  # alone in flight: written at once, not batched
        tg.cancel_scope.cancel()


async def test_requests_made_in_one_turn_leave_in_one_batch() -> None:
    server_end, client_end = memory_pair()
    transport = BatchingTransport(client_end)
    assert features(transport).batches
    await calls(transport, server_end, 16)
    assert sum(transport.batches) >= 15  # the first of the burst may have gone alone
    assert max(transport.batches) > 1


async def test_a_batch_the_transport_refuses_goes_through_the_session_task() -> None:
    server_end, client_end = memory_pair()
    transport = BatchingTransport(client_end, refuse=3, at_most=2)
    await calls(transport, server_end, 16)
    assert max(transport.batches, default=0) <= 2


async def test_a_cancelled_caller_in_a_batch_loses_none_of_the_others() -> None:
    # Whichever caller of the burst writes the batch, a cancellation of the one cancelled
    # there does not drop the others' requests (the batch is written on the way out).
    server = echo_server()
    release = anyio.Event()
    holding = anyio.Event()

    @server.tool()
    async def hold() -> str:
        holding.set()
        await release.wait()
        return "held"

    server_end, client_end = memory_pair()
    transport = BatchingTransport(client_end)
    async with anyio.create_task_group() as tg:
        tg.start_soon(server.run, server_end)
        with anyio.fail_after(10):
            async with Client("t", "1", versions=HANDSHAKE_VERSIONS).connect(transport) as remote:
                answered: list[str] = []
                cancelled: list[bool] = []

                async def call(i: int) -> None:
                    result = await remote.call_tool("echo", {"text": f"t{i}"})
                    block = result.content[0]
                    assert isinstance(block, types.TextContent)
                    answered.append(block.text)

                async def doomed() -> None:
                    with anyio.CancelScope() as scope:
                        scope.cancel()
                        await call(0)
                    cancelled.append(scope.cancelled_caught)

                async def held() -> None:
                    result = await remote.call_tool("hold")
                    assert result.content == [types.TextContent(text="held")]

                async with anyio.create_task_group() as outer:
                    outer.start_soon(held)  # in flight throughout: the rest are batched
                    await holding.wait()
                    async with anyio.create_task_group() as callers:
                        callers.start_soon(doomed)
                        for i in range(1, 5):
                            callers.start_soon(call, i)
                    release.set()
                assert sorted(answered) == ["t1", "t2", "t3", "t4"]
                assert cancelled == [True]
        tg.cancel_scope.cancel()


@pytest.mark.parametrize("after_a_cancelled_wait", [False, True], ids=["fresh", "after-a-cancelled-wait"])
async def test_a_flag_wakes_its_waiter_once_set(after_a_cancelled_wait: bool) -> None:
    make = fastpath.flag_maker()
    flag = make()
    if fastpath.ENABLED and fastpath.asyncio_loop() is not None:
        assert isinstance(flag, fastpath.LoopFlag)
    else:
        assert isinstance(flag, anyio.Event)
    if after_a_cancelled_wait:
        async with anyio.create_task_group() as tg:
            tg.start_soon(flag.wait)
            await anyio.sleep(0)
            tg.cancel_scope.cancel()  # the wait is cancelled
    assert not flag.is_set()
    with anyio.fail_after(5):
        async with anyio.create_task_group() as tg:
            tg.start_soon(flag.wait)
            await anyio.sleep(0)
            flag.set()
        flag.set()  # (again: nothing more)
        assert flag.is_set()
        await flag.wait()  # set already: returns at once
