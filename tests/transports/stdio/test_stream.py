"""Tests of mcpbind.transports.stdio.stream: StdioTransport over in-memory byte streams.

The chunking is under the test's control; every test runs on asyncio and on trio (see
conftest.py). Over OS pipes: test_fdio.py.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.stdio import LineFramer, StdioTransport
from tests.transports.stdio.test_framing import drain


class MemoryByteReceiveStream(ByteReceiveStream):
    """Delivers each chunk sent into the memory stream as one receive()."""

    def __init__(self, stream: MemoryObjectReceiveStream[bytes]) -> None:
        self.stream = stream

    async def receive(self, max_bytes: int = 65536) -> bytes:
        return await self.stream.receive()

    async def aclose(self) -> None:
        await self.stream.aclose()


class MemoryByteSendStream(ByteSendStream):
    def __init__(self, stream: MemoryObjectSendStream[bytes]) -> None:
        self.stream = stream

    async def send(self, item: bytes) -> None:
        await self.stream.send(item)

    async def aclose(self) -> None:
        await self.stream.aclose()


@asynccontextmanager
async def memory_transport(
    max_message_size: int = 1024 * 1024,
) -> AsyncIterator[tuple[StdioTransport, MemoryObjectSendStream[bytes], MemoryObjectReceiveStream[bytes]]]:
    """A transport, the raw chunks going into it, and the raw bytes coming out of it."""
    in_send, in_receive = anyio.create_memory_object_stream[bytes](100)
    out_send, out_receive = anyio.create_memory_object_stream[bytes](100)
    transport = StdioTransport(
        MemoryByteReceiveStream(in_receive), MemoryByteSendStream(out_send), max_message_size
    )
    async with in_send, out_receive:
        try:
            with anyio.fail_after(2):  # bounds the test's body
                yield transport, in_send, out_receive
        finally:
            await transport.aclose()


@pytest.mark.anyio
async def test_transport_round_trip_over_memory_streams() -> None:
    async with memory_transport() as (transport, chunks_in, bytes_out):
        await transport.send('{"x":"é"}'.encode())
        assert await bytes_out.receive() == '{"x":"é"}\n'.encode()
        await chunks_in.send(b'{"id":1}\n{"id"')
        await chunks_in.send(b":2}\r\n\n")
        assert await transport.receive() == b'{"id":1}'
        assert await transport.receive() == b'{"id":2}'
        with pytest.raises(ValueError):
            await transport.send(b'{"a":1}\n{"b":2}')
        await transport.aclose()
        with pytest.raises(anyio.ClosedResourceError):
            await transport.receive()
        with pytest.raises(anyio.ClosedResourceError):
            await transport.send(b"{}")


@pytest.mark.anyio
async def test_send_nowait_needs_a_descriptor_stream() -> None:
    # Only the descriptor streams (fdio) can write a line whole without waiting; over any
    # other stream send_nowait() writes nothing and says so, and send() does the work.
    async with memory_transport() as (transport, _, bytes_out):
        assert not transport.send_nowait(b'{"n":1}')
        await transport.send(b'{"n":2}')
        assert await bytes_out.receive() == b'{"n":2}\n'


@pytest.mark.anyio
async def test_answers_to_a_burst_leave_in_one_write_and_in_order() -> None:
    async with memory_transport() as (transport, chunks_in, bytes_out):
        await chunks_in.send(b"".join(b'{"id":%d}\n' % i for i in range(5)))
        for i in range(5):
            assert await transport.receive() == b'{"id":%d}' % i
            await transport.send(b'{"answer":%d}' % i, i, True)
        # The last line of the burst was handed out: its answer went at once, with the others.
        assert await bytes_out.receive() == b"".join(b'{"answer":%d}\n' % i for i in range(5))
        # A message that is not a response is never held back, and takes what was held with it.
        await chunks_in.send(b'{"id":5}\n{"id":6}\n')
        assert await transport.receive() == b'{"id":5}'
        await transport.send(b'{"answer":5}', 5, True)
        await transport.send(b'{"note":1}')
        assert await bytes_out.receive() == b'{"answer":5}\n{"note":1}\n'
        # What is held back goes out before receive() waits for more input.
        assert await transport.receive() == b'{"id":6}'
        await chunks_in.send(b'{"id":7}\n{"id":8}\n')
        assert await transport.receive() == b'{"id":7}'
        await transport.send(b'{"answer":7}', 7, True)
        assert await transport.receive() == b'{"id":8}'
        async with anyio.create_task_group() as tg:
            tg.start_soon(transport.receive)
            assert await bytes_out.receive() == b'{"answer":7}\n'
            tg.cancel_scope.cancel()


@pytest.mark.anyio
async def test_held_back_answers_are_written_on_close_and_not_past_batch_bytes() -> None:
    async with memory_transport() as (transport, chunks_in, bytes_out):
        transport.batch_bytes = 30
        await chunks_in.send(b'{"id":1}\n{"id":2}\n{"id":3}\n{"id":4}\n')
        assert await transport.receive() == b'{"id":1}'
        await transport.send(b'{"answer":"' + b"a" * 10 + b'"}', 1, True)  # 24 bytes: held
        assert await transport.receive() == b'{"id":2}'
        await transport.send(b'{"answer":"' + b"b" * 10 + b'"}', 2, True)  # past 30: both go
        assert await bytes_out.receive() == b'{"answer":"aaaaaaaaaa"}\n{"answer":"bbbbbbbbbb"}\n'
        assert await transport.receive() == b'{"id":3}'
        await transport.send(b'{"answer":3}', 3, True)
        await transport.aclose()
        assert await bytes_out.receive() == b'{"answer":3}\n'


@pytest.mark.anyio
async def test_transport_end_of_stream_after_final_line() -> None:
    async with memory_transport() as (transport, chunks_in, _):
        await chunks_in.send(b"one\ntwo")
        await chunks_in.aclose()
        assert await transport.receive() == b"one"
        assert await transport.receive() == b"two"
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()
        with pytest.raises(anyio.EndOfStream):
            await transport.receive()


@pytest.mark.anyio
async def test_transport_oversized_message_then_next_one() -> None:
    async with memory_transport(max_message_size=100) as (transport, chunks_in, _):
        await chunks_in.send(b"first\n" + b"x" * 60)
        for _ in range(20):  # 1260 bytes of one line, arriving in pieces
            await chunks_in.send(b"x" * 60)
        await chunks_in.send(b"x\nsecond\n")
        assert await transport.receive() == b"first"
        with pytest.raises(MessageTooLarge) as info:
            await transport.receive()
        assert info.value.limit == 100
        assert await transport.receive() == b"second"


@pytest.mark.anyio
async def test_cancelled_receive_loses_nothing() -> None:
    async with memory_transport() as (transport, chunks_in, _):
        with anyio.move_on_after(0.05) as scope:
            await transport.receive()
        assert scope.cancelled_caught
        await chunks_in.send(b"kept\n")
        assert await transport.receive() == b"kept"


class TearingSendStream(ByteSendStream):
    """Its first send() writes half the data and then hangs, like a send cancelled mid-way."""

    def __init__(self) -> None:
        self.written = bytearray()
        self.calls = 0

    async def send(self, item: bytes) -> None:
        self.calls += 1
        if self.calls == 1:
            self.written += item[: len(item) // 2]
            await anyio.sleep_forever()
        self.written += item

    async def aclose(self) -> None:
        pass


@pytest.mark.anyio
async def test_send_after_a_torn_send_starts_on_a_fresh_line() -> None:
    stream = TearingSendStream()
    never_send, never = anyio.create_memory_object_stream[bytes](1)
    transport = StdioTransport(MemoryByteReceiveStream(never), stream)
    async with never_send, never:
        with anyio.fail_after(2), anyio.move_on_after(0.05):
            await transport.send(b'{"first":1}')
        await transport.send(b'{"second":2}')
    framer = LineFramer()
    framer.feed(bytes(stream.written))
    # The torn message is lost (one malformed line), the next one arrives whole.
    assert drain(framer) == [b'{"firs', b'{"second":2}']  # half of b'{"first":1}\n'


class GatedSendStream(ByteSendStream):
    """Each send() waits for the test to open the gate, so that other senders queue behind it."""

    def __init__(self) -> None:
        self.written: list[bytes] = []
        self.gate = anyio.Event()
        self.entered = anyio.Event()

    async def send(self, item: bytes) -> None:
        self.entered.set()
        await self.gate.wait()
        self.written.append(item)

    async def aclose(self) -> None:
        pass


@pytest.mark.anyio
async def test_senders_queue_in_order_and_a_cancelled_one_leaves_the_queue() -> None:
    stream = GatedSendStream()
    never_send, never = anyio.create_memory_object_stream[bytes](1)
    transport = StdioTransport(MemoryByteReceiveStream(never), stream)
    async with never_send, never:
        with anyio.fail_after(2):
            async with anyio.create_task_group() as tg:
                tg.start_soon(transport.send, b"1")
                await stream.entered.wait()  # "1" holds the lock, inside the stream
                for text in (b"2", b"3"):
                    tg.start_soon(transport.send, text)
                    await anyio.wait_all_tasks_blocked()
                async with anyio.create_task_group() as quitter:
                    quitter.start_soon(transport.send, b"gave up")
                    await anyio.wait_all_tasks_blocked()
                    quitter.cancel_scope.cancel()  # it leaves the queue
                tg.start_soon(transport.send, b"4")
                await anyio.wait_all_tasks_blocked()
                stream.gate.set()
            await transport.send(b"5")  # free again
    assert stream.written == [b"1\n", b"2\n", b"3\n", b"4\n", b"5\n"]
