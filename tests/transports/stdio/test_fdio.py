"""The stdio transport: framing, the transport over byte streams, this process's stdio, child servers.

Every async test runs on asyncio and on trio (see conftest.py); the framer tests are sans-io.
Child processes come from tests/transports/stdio/peers.py.
"""

from __future__ import annotations

import errno
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager, asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

import mcpbind
from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.stdio import (
    LineFramer,
    StdioClientTransport,
    StdioTransport,
    fdio,
    spawn_stdio_server,
    stdio_server_transport,
)
from mcpbind.transports.stdio import process as stdio_process

PEERS = str(Path(__file__).with_name("peers.py"))
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")


def drain(framer: LineFramer) -> list[bytes]:
    lines = []
    while (line := framer.next_line()) is not None:
        lines.append(line)
    return lines


# --------------------------------------------------------------------------------------------
# LineFramer (sans-io: no event loop involved)
# --------------------------------------------------------------------------------------------


def test_framer_joins_lines_split_across_chunks() -> None:
    framer = LineFramer()
    framer.feed(b'{"a"')
    assert framer.next_line() is None
    framer.feed(b':1}\n{"b":2}\n{')
    assert drain(framer) == [b'{"a":1}', b'{"b":2}']
    framer.feed(b'"c":3')
    assert framer.next_line() is None
    framer.feed(b"}\n")
    assert drain(framer) == [b'{"c":3}']
    assert framer.buffered == 0


def test_framer_strips_crlf_and_skips_empty_lines() -> None:
    framer = LineFramer()
    framer.feed(b"a\r\n\r\n\n\nb\n\r\nc\r")
    assert drain(framer) == [b"a", b"b"]
    framer.feed(b"\nx\ry\n")  # the \r of "c\r\n" arrives in the chunk before its \n
    assert drain(framer) == [b"c", b"x\ry"]  # only a trailing \r is framing


def test_framer_delivers_unterminated_final_line_at_eof() -> None:
    framer = LineFramer()
    framer.feed(b"a\nb")
    assert drain(framer) == [b"a"]
    at_eof_before = framer.eof
    assert not at_eof_before
    framer.feed_eof()
    assert framer.next_line() == b"b"
    assert framer.next_line() is None
    assert framer.eof
    with pytest.raises(RuntimeError):
        framer.feed(b"more")

    framer = LineFramer()
    framer.feed(b"c\r")
    framer.feed_eof()
    assert drain(framer) == [b"c"]
    assert framer.eof

    framer = LineFramer()
    framer.feed(b"d\n")
    framer.feed_eof()
    assert drain(framer) == [b"d"]
    assert framer.eof


def test_framer_limit_boundaries() -> None:
    framer = LineFramer(max_message_size=10)
    framer.feed(b"x" * 10 + b"\n" + b"y" * 10 + b"\r")  # limit+1 pending may be "...\r" of "\r\n"
    assert drain(framer) == [b"x" * 10]
    framer.feed(b"\n" + b"z" * 11 + b"\n")
    assert framer.next_line() == b"y" * 10
    with pytest.raises(MessageTooLarge) as info:
        framer.next_line()
    assert (info.value.size, info.value.limit) == (11, 10)
    assert framer.next_line() is None


def test_framer_discards_a_growing_oversized_line_and_reports_it_once() -> None:
    framer = LineFramer(max_message_size=10)
    framer.feed(b"ok\n" + b"x" * 25)
    assert framer.next_line() == b"ok"
    with pytest.raises(MessageTooLarge) as info:
        framer.next_line()
    assert info.value.size >= 11
    assert info.value.limit == 10
    assert framer.buffered == 0  # dropped, not kept
    for _ in range(100):  # the rest of the line arrives and is dropped as it comes
        framer.feed(b"x" * 1000)
        assert framer.next_line() is None  # no second report
        assert framer.buffered == 0
    framer.feed(b"xxx\nnext\n")
    assert drain(framer) == [b"next"]


def test_framer_oversized_line_at_eof_is_reported() -> None:
    framer = LineFramer(max_message_size=4)
    framer.feed(b"fine\n12345")  # 5 bytes pending: could still be "1234\r"
    assert drain(framer) == [b"fine"]
    framer.feed_eof()
    with pytest.raises(MessageTooLarge):
        framer.next_line()
    assert framer.next_line() is None
    assert framer.eof


def test_framer_delivers_a_1mb_line_in_64kb_chunks_intact() -> None:
    line = bytes(range(256)).replace(b"\n", b"N") * 4096  # 1 MiB, every byte value but \n
    data = line + b"\n" + b"after\n"
    framer = LineFramer()
    lines = []
    for i in range(0, len(data), 65536):
        framer.feed(data[i : i + 65536])
        lines += drain(framer)
    assert lines == [line, b"after"]


def test_framer_has_line_agrees_with_next_line() -> None:
    framer = LineFramer(100)
    framer.feed(b"one\ntwo\npart")
    assert framer.has_line()
    assert framer.next_line() == b"one"
    assert framer.has_line()
    assert framer.next_line() == b"two"
    assert not framer.has_line()
    assert not framer.has_line()  # asking twice changes nothing
    assert framer.next_line() is None
    framer.feed(b"ial\nnext")
    assert framer.has_line()
    assert framer.next_line() == b"partial"
    assert not framer.has_line()
    framer.feed_eof()
    assert framer.next_line() == b"next"


def test_framer_is_linear_on_a_large_line_in_small_chunks() -> None:
    # 16 MiB in 1 KiB chunks: rescanning the pending line on every chunk would search ~128 GB.
    chunk = b"a" * 1024
    framer = LineFramer(max_message_size=32 * 1024 * 1024)
    started = time.perf_counter()
    for _ in range(16 * 1024):
        framer.feed(chunk)
        assert framer.next_line() is None
    framer.feed(b"\n")
    line = framer.next_line()
    elapsed = time.perf_counter() - started
    assert line is not None
    assert len(line) == 16 * 1024 * 1024
    assert elapsed < 1.5, f"{elapsed:.2f}s: the framer is not linear"


def test_framer_is_linear_on_many_small_lines_in_one_chunk() -> None:
    # Copying the rest of the buffer for each line would copy ~40 GB here.
    count = 200_000
    data = b"".join(b'{"n":%08d}\n' % i for i in range(count))  # 4 MB
    framer = LineFramer()
    started = time.perf_counter()
    framer.feed(data)
    lines = drain(framer)
    elapsed = time.perf_counter() - started
    assert len(lines) == count
    assert lines[-1] == b'{"n":%08d}' % (count - 1)
    assert elapsed < 1.0, f"{elapsed:.2f}s: the framer is not linear"


# --------------------------------------------------------------------------------------------
# StdioTransport over in-memory byte streams (chunking under the test's control)
# --------------------------------------------------------------------------------------------


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


# --------------------------------------------------------------------------------------------
# stdio_server_transport over OS pipes, polled by the event loop and in the thread fallback
# --------------------------------------------------------------------------------------------


@pytest.fixture(params=["poll", "poll-pipe-buf", "threads"])
def fd_mode(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """``poll``: writes with Linux's RWF_NOWAIT where the kernel has it; ``poll-pipe-buf``: the
    portable way (a zero-timeout poll, then at most PIPE_BUF bytes); ``threads``: the fallback
    for what cannot be polled."""
    mode: str = request.param
    if mode == "threads":
        monkeypatch.setattr(fdio, "_pollable", lambda fd: False)
    elif sys.platform == "win32":
        pytest.skip("pipes cannot be polled on Windows")
    elif mode == "poll-pipe-buf":
        monkeypatch.setattr(fdio, "_RWF_NOWAIT", None)
    return mode


class Pipes:
    """Two OS pipes crossed between an end ``a`` and an end ``b``."""

    def __init__(self) -> None:
        self.a_in, self.b_out = os.pipe()
        self.b_in, self.a_out = os.pipe()
        self._open = {self.a_in, self.b_out, self.b_in, self.a_out}

    def close(self, fd: int) -> None:
        if fd in self._open:
            self._open.discard(fd)
            os.close(fd)

    def close_all(self) -> None:
        for fd in list(self._open):
            self.close(fd)


@contextmanager
def crossed_pipes() -> Iterator[Pipes]:
    pipes = Pipes()
    try:
        yield pipes
    finally:
        pipes.close_all()


@asynccontextmanager
async def pipe_transports(
    pipes: Pipes, max_message_size: int = 1024 * 1024
) -> AsyncIterator[tuple[StdioTransport, StdioTransport]]:
    async with (
        stdio_server_transport(max_message_size, stdin=pipes.a_in, stdout=pipes.a_out) as a,
        stdio_server_transport(max_message_size, stdin=pipes.b_in, stdout=pipes.b_out) as b,
    ):
        yield a, b


@pytest.mark.anyio
async def test_pipe_round_trip(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(5):
        async with pipe_transports(pipes) as (a, b):
            await a.send(b'{"ping":1}')
            assert await b.receive() == b'{"ping":1}'
            await b.send(b'{"pong":1}')
            assert await a.receive() == b'{"pong":1}'
            big = b'{"data":"' + b"z" * 700_000 + b'"}'  # ten times a pipe's buffer

            async def send_big() -> None:
                await a.send(big)

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                assert await b.receive() == big


@pytest.mark.anyio
async def test_pipe_a_send_waiting_on_a_full_pipe_leaves_the_event_loop_running(fd_mode: str) -> None:
    # Nobody reads for a while: the pipe fills, the send waits without blocking other tasks,
    # then a reader thread drains it and every byte arrives, in order.
    big = b"".join(b"%07d," % i for i in range(100_000))  # 800 KB, distinct content
    ticks = 0
    drained = bytearray()
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, _):

            def drain_later() -> None:
                time.sleep(0.3)
                while len(drained) < len(big) + 1:
                    chunk = os.read(pipes.b_in, 1 << 16)
                    if not chunk:
                        return
                    drained.extend(chunk)

            reader = threading.Thread(target=drain_later, daemon=True)
            reader.start()
            sent = anyio.Event()

            async def send_big() -> None:
                await a.send(big)
                sent.set()

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                while not sent.is_set():
                    ticks += 1
                    await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(reader.join, 5)
    assert ticks >= 10  # the loop went on during the 0.3 s the pipe was full
    assert bytes(drained) == big + b"\n"


@pytest.mark.anyio
async def test_pipe_send_nowait_writes_a_whole_line_or_nothing(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            if fd_mode == "threads":
                assert not a.send_nowait(b'{"n":1}')  # only pollable pipes are written at once
                return
            assert a.send_nowait(b'{"n":1}')
            assert await b.receive() == b'{"n":1}'
            assert not a.send_nowait(b"x" * 5000)  # longer than PIPE_BUF: send() must do it
            assert not a.send_nowait(b"two\nlines")
            fill = b'{"fill":"' + b"f" * 3000 + b'"}'
            sent = 0
            while a.send_nowait(fill):  # until the pipe has no room for another
                sent += 1
            assert sent >= 4
            assert not a.send_nowait(fill)
            received = [await b.receive() for _ in range(sent)]
            assert received == [fill] * sent  # whole lines, none torn by a refused one
            assert a.send_nowait(b'{"n":3}')
            assert await b.receive() == b'{"n":3}'


@pytest.mark.anyio
@pytest.mark.skipif(fdio._RWF_NOWAIT is None, reason="no RWF_NOWAIT on this platform")
async def test_pipe_writes_fall_back_when_rwf_nowait_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    # An older kernel refuses RWF_NOWAIT on pipes (EOPNOTSUPP): the first write finds out and
    # every write from then on polls and writes PIPE_BUF pieces; nothing is lost or doubled.
    calls: list[int] = []

    def refuse(fd: int, buffers: object, offset: int, flags: int = 0) -> int:
        calls.append(fd)
        raise OSError(errno.EOPNOTSUPP, "Operation not supported")

    monkeypatch.setattr(os, "pwritev", refuse)
    big = b'{"data":"' + b"q" * 300_000 + b'"}'
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            assert a.send_nowait(b'{"n":1}')
            await a.send(b'{"n":2}')
            async with anyio.create_task_group() as tg:
                tg.start_soon(a.send, big)
                assert await b.receive() == b'{"n":1}'
                assert await b.receive() == b'{"n":2}'
                assert await b.receive() == big
    assert len(calls) == 1  # asked once, then not again


@pytest.mark.anyio
async def test_pipe_receive_waits_without_blocking_the_loop(fd_mode: str) -> None:
    # The descriptor is not non-blocking: a wake-up for data that was already read must not
    # end in a read that blocks the event loop (the next line comes from a thread, later).
    ticks = 0
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            writer = threading.Timer(0.3, lambda: os.write(pipes.a_out, b'{"n":2}\n'))
            got: list[bytes] = []

            async def receive_two() -> None:
                # Back to back, as a session's reader does: the second wait starts right after
                # the first line was read, while the loop may still report that data.
                got.append(await b.receive())
                writer.start()
                got.append(await b.receive())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive_two)
                await anyio.sleep(0.05)
                await a.send(b'{"n":1}')
                while len(got) < 2:
                    ticks += 1
                    await anyio.sleep(0.01)
            writer.join()
    assert got == [b'{"n":1}', b'{"n":2}']
    assert ticks >= 10


@pytest.mark.anyio
async def test_pipe_unread_data_does_not_spin_the_loop(fd_mode: str) -> None:
    # Data arrives while nobody is receiving (the session is busy elsewhere): the event loop
    # must not keep reporting it, burning a CPU until someone reads.
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            await a.send(b'{"n":1}')
            assert await b.receive() == b'{"n":1}'
            await a.send(b'{"n":2}')
            started = time.process_time()
            await anyio.sleep(0.3)
            spent = time.process_time() - started
            assert await b.receive() == b'{"n":2}'
    assert spent < 0.15


@pytest.mark.anyio
async def test_pipe_concurrent_senders_do_not_interleave(fd_mode: str) -> None:
    messages = {b'{"n":%02d,"pad":"' % i + bytes([65 + i % 26]) * 100_000 + b'"}' for i in range(50)}
    received: list[bytes] = []
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):

            async def receive_all() -> None:
                while len(received) < len(messages):
                    received.append(await b.receive())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive_all)
                for message in messages:
                    tg.start_soon(a.send, message)
    assert len(received) == len(messages)
    assert set(received) == messages


@pytest.mark.anyio
async def test_pipe_end_of_stream_and_oversized(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(5):
        async with pipe_transports(pipes, max_message_size=1000) as (a, b):
            await a.send(b"x" * 5000)
            await a.send(b"next")
            await a.send(b"x" * 1001)
            await a.send(b"last")
            with pytest.raises(MessageTooLarge):
                await b.receive()
            assert await b.receive() == b"next"
            with pytest.raises(MessageTooLarge):
                await b.receive()
            assert await b.receive() == b"last"
            os.write(pipes.a_out, b"unterminated")
            pipes.close(pipes.a_out)  # end of b's input
            assert await b.receive() == b"unterminated"
            with pytest.raises(anyio.EndOfStream):
                await b.receive()


@pytest.mark.anyio
async def test_pipe_cancelled_receive_loses_nothing(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(5):
        async with pipe_transports(pipes) as (a, b):
            for _ in range(3):
                with anyio.move_on_after(0.05) as scope:
                    await b.receive()
                assert scope.cancelled_caught
            await a.send(b"kept")
            assert await b.receive() == b"kept"


@pytest.mark.anyio
async def test_pipe_aclose_wakes_a_waiting_receive(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(5):
        async with pipe_transports(pipes) as (a, _):
            outcome: list[type[BaseException]] = []

            async def receive() -> None:
                try:
                    await a.receive()
                except anyio.ClosedResourceError as exc:
                    outcome.append(type(exc))

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive)
                await anyio.sleep(0.05)
                await a.aclose()
            assert outcome == [anyio.ClosedResourceError]


@pytest.mark.anyio
async def test_fd_stream_honours_max_bytes(fd_mode: str) -> None:
    with crossed_pipes() as pipes, anyio.fail_after(5):
        os.write(pipes.a_out, b"abcdefgh")
        pipes.close(pipes.a_out)
        stream = fdio.FdReceiveStream(pipes.b_in)
        assert [await stream.receive(3) for _ in range(3)] == [b"abc", b"def", b"gh"]
        with pytest.raises(anyio.EndOfStream):
            await stream.receive(3)
        await stream.aclose()


@pytest.mark.anyio
async def test_regular_files_use_the_thread_fallback(tmp_path: Path) -> None:
    source = tmp_path / "in.jsonl"
    source.write_bytes(b'{"a":1}\n\n{"b":2}\r\n{"c":3}')
    target = tmp_path / "out.jsonl"
    with open(source, "rb") as stdin, open(target, "wb") as stdout, anyio.fail_after(5):
        assert not fdio._pollable(stdin.fileno())
        async with stdio_server_transport(stdin=stdin.fileno(), stdout=stdout.fileno()) as t:
            assert [await t.receive() for _ in range(3)] == [b'{"a":1}', b'{"b":2}', b'{"c":3}']
            with pytest.raises(anyio.EndOfStream):
                await t.receive()
            for i in range(1000):
                await t.send(b'{"n":%d}' % i)
    assert target.read_bytes() == b"".join(b'{"n":%d}\n' % i for i in range(1000))


@pytest.mark.anyio
async def test_dev_null_stdin_ends_at_once() -> None:
    with open(os.devnull, "rb") as stdin, anyio.fail_after(5):
        async with stdio_server_transport(stdin=stdin.fileno(), stdout=stdin.fileno()) as t:
            with pytest.raises(anyio.EndOfStream):
                await t.receive()


# --------------------------------------------------------------------------------------------
# spawn_stdio_server
# --------------------------------------------------------------------------------------------


class Watchdog:
    """SIGKILLs the watched child if a test is still running after ``seconds``.

    The shutdown is shielded from cancellation, so ``fail_after`` cannot end a shutdown that
    hangs; killing the child can, and the test then fails on its timing or status checks.
    """

    def __init__(self, seconds: float = 8.0) -> None:
        self._pid: int | None = None
        self._timer = threading.Timer(seconds, self._fire)
        self._timer.daemon = True

    def _fire(self) -> None:
        if self._pid is not None:
            try:
                os.kill(self._pid, signal.SIGKILL if sys.platform != "win32" else signal.SIGTERM)
            except OSError:
                pass

    def watch(self, transport: StdioClientTransport) -> None:
        self._pid = transport.process.pid

    def __enter__(self) -> Watchdog:
        self._timer.start()
        return self

    def __exit__(self, *exc_info: object) -> None:
        self._timer.cancel()


def spawn_peer(
    *args: str, close_timeout: float = 2.0, terminate_timeout: float = 2.0
) -> AbstractAsyncContextManager[StdioClientTransport]:
    return spawn_stdio_server(
        sys.executable, [PEERS, *args], close_timeout=close_timeout, terminate_timeout=terminate_timeout
    )


@pytest.mark.anyio
async def test_echo_child_round_trip_env_and_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPBIND_INHERITED", "from-parent")
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_stdio_server(
            sys.executable,
            [PEERS, "echo"],
            env={"MCPBIND_GIVEN": "given value"},
            cwd=tmp_path,
            close_timeout=5,
        ) as transport:
            dog.watch(transport)
            await transport.send(b'{"jsonrpc":"2.0","method":"ping","id":1}')
            assert await transport.receive() == b'{"jsonrpc":"2.0","method":"ping","id":1}'
            await transport.send(b"!env MCPBIND_GIVEN")
            assert await transport.receive() == b"given value"
            await transport.send(b"!env MCPBIND_INHERITED")  # env is merged over os.environ
            assert await transport.receive() == b"from-parent"
            await transport.send(b"!cwd")
            assert Path(os.fsdecode(await transport.receive())).resolve() == tmp_path.resolve()
            messages = [b'{"n":%d,"pad":"%s"}' % (i, b"p" * 200_000) for i in range(5)]
            async with anyio.create_task_group() as tg:
                for message in messages:
                    tg.start_soon(transport.send, message)
                echoed = [await transport.receive() for _ in messages]
            assert sorted(echoed) == sorted(messages)
            started = time.monotonic()
    # The child exits by itself once its stdin is closed: status 0, no SIGTERM, no waiting.
    assert transport.returncode == 0
    assert time.monotonic() - started < 4


@pytest.mark.anyio
@pytest.mark.parametrize("own_pipes", [True, False], ids=["own-pipes", "backend-streams"])
async def test_spawned_child_large_messages_and_no_descriptor_left_open(
    own_pipes: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The client reads and writes pipes of its own (non-blocking, polled) where it can, the
    # backend's process streams elsewhere: both carry 1 MB lines whole, and close every pipe.
    if own_pipes and not stdio_process._OWN_PIPES:
        pytest.skip("this platform uses the backend's process streams")
    monkeypatch.setattr(stdio_process, "_OWN_PIPES", own_pipes)
    fd_dir = Path("/proc/self/fd")
    before = set(os.listdir(fd_dir)) if fd_dir.is_dir() else None
    message = b'{"pad":"' + b"m" * 1_000_000 + b'"}'
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("echo", close_timeout=5) as transport:
            dog.watch(transport)
            for _ in range(3):
                async with anyio.create_task_group() as tg:
                    tg.start_soon(transport.send, message)
                    assert await transport.receive() == message
    assert transport.returncode == 0
    if before is not None:
        assert set(os.listdir(fd_dir)) <= before


@pytest.mark.anyio
async def test_env_none_inherits_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCPBIND_INHERITED", "inherited")
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("echo") as transport:
            dog.watch(transport)
            await transport.send(b"!env MCPBIND_INHERITED")
            assert await transport.receive() == b"inherited"


@pytest.mark.anyio
async def test_child_that_exits_at_once() -> None:
    started = time.monotonic()
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("exit", "3", close_timeout=5, terminate_timeout=5) as transport:
            dog.watch(transport)
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
            assert await transport.process.wait() == 3
            with pytest.raises(anyio.BrokenResourceError):
                await transport.send(b'{"jsonrpc":"2.0","method":"ping","id":1}')
            with pytest.raises(anyio.BrokenResourceError):
                await transport.send(b"{}")
    assert transport.returncode == 3
    assert time.monotonic() - started < 5  # no timeout was waited out


async def wait_ready(transport: StdioClientTransport) -> None:
    assert await transport.receive() == b"ready"


@POSIX_ONLY
@pytest.mark.anyio
async def test_child_ignoring_sigterm_and_stdin_is_killed_in_bounded_time() -> None:
    close_timeout, terminate_timeout = 0.3, 0.3
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer(
            "stubborn", close_timeout=close_timeout, terminate_timeout=terminate_timeout
        ) as transport:
            dog.watch(transport)
            await wait_ready(transport)
            started = time.monotonic()
    elapsed = time.monotonic() - started
    assert transport.returncode == -signal.SIGKILL
    assert close_timeout + terminate_timeout - 0.05 <= elapsed < close_timeout + terminate_timeout + 1.5
    with pytest.raises(ProcessLookupError):  # reaped: the pid is gone, no zombie left
        os.kill(transport.process.pid, 0)


@pytest.mark.anyio
async def test_shutdown_drains_a_child_blocked_writing() -> None:
    # The child is stuck writing output nobody reads; it only sees the end of its stdin, and
    # exits 0 by itself, because the shutdown reads and discards its stdout.
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("chatty", close_timeout=5, terminate_timeout=0.5) as transport:
            dog.watch(transport)
            await anyio.sleep(0.2)
            started = time.monotonic()
    assert transport.returncode == 0
    assert time.monotonic() - started < 4


@POSIX_ONLY
@pytest.mark.anyio
async def test_shutdown_while_a_send_is_stuck_on_a_full_pipe() -> None:
    errors: list[type[BaseException]] = []
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("stubborn", close_timeout=0.2, terminate_timeout=0.2) as transport:
            dog.watch(transport)
            await wait_ready(transport)

            async def send_big() -> None:
                try:
                    await transport.send(b"x" * 4_000_000)  # far more than the pipe holds
                except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
                    errors.append(type(exc))

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                await anyio.sleep(0.1)
                started = time.monotonic()
                await transport.aclose()
            assert time.monotonic() - started < 2
    assert transport.returncode == -signal.SIGKILL
    assert len(errors) == 1


@POSIX_ONLY
@pytest.mark.anyio
async def test_shutdown_completes_when_the_surrounding_scope_is_cancelled() -> None:
    with Watchdog() as dog, anyio.fail_after(10):
        with anyio.CancelScope() as scope:
            async with spawn_peer("stubborn", close_timeout=0.2, terminate_timeout=0.2) as transport:
                dog.watch(transport)
                await wait_ready(transport)
                scope.cancel()
                await anyio.sleep(5)
        assert scope.cancelled_caught
        assert transport.returncode == -signal.SIGKILL

        with anyio.move_on_after(0.3):  # cancelled by a deadline, with a well-behaved child
            async with spawn_peer("echo", close_timeout=5) as echo:
                dog.watch(echo)
                await anyio.sleep_forever()
        assert echo.returncode == 0


@pytest.mark.anyio
async def test_stderr_can_be_discarded() -> None:
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_stdio_server(
            sys.executable,
            ["-c", "import sys; sys.stderr.write('noise\\n'); print('{}')"],
            stderr=subprocess.DEVNULL,
        ) as transport:
            dog.watch(transport)
            assert await transport.receive() == b"{}"
    assert transport.returncode == 0


# --------------------------------------------------------------------------------------------
# stdio_server_transport in a real server process
# --------------------------------------------------------------------------------------------


def child_env() -> dict[str, str]:
    """PYTHONPATH for a child to import mcpbind as this test does (a source checkout)."""
    roots = dict.fromkeys(str(Path(entry).resolve().parent) for entry in mcpbind.__path__)
    inherited = os.environ.get("PYTHONPATH")
    return {"PYTHONPATH": os.pathsep.join([*roots, *([inherited] if inherited else [])])}


@pytest.mark.anyio
async def test_server_child_echo_oversized_and_eof(anyio_backend: str) -> None:
    with Watchdog() as dog, anyio.fail_after(15):
        async with spawn_stdio_server(
            sys.executable, [PEERS, "server", anyio_backend, "1000"], env=child_env()
        ) as transport:
            dog.watch(transport)
            await transport.send(b'{"jsonrpc":"2.0","method":"ping","id":1}')
            assert await transport.receive() == b'{"jsonrpc":"2.0","method":"ping","id":1}'
            await transport.send(b'{"pad":"' + b"x" * 5000 + b'"}')
            assert await transport.receive() == b"TOO_LARGE"
            await transport.send(b'{"after":true}')
            assert await transport.receive() == b'{"after":true}'

            # Many small messages, pipelined: the server reads them in bulk.
            count = 20_000
            started = time.monotonic()

            async def send_all() -> None:
                for i in range(count):
                    await transport.send(b'{"n":%d}' % i)

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_all)
                for i in range(count):
                    assert await transport.receive() == b'{"n":%d}' % i
            assert time.monotonic() - started < 10
            closing = time.monotonic()
    # Closing its stdin ends the server cleanly: no signal needed.
    assert transport.returncode == 0
    assert time.monotonic() - closing < 1.9  # under close_timeout: it exited on its own


@pytest.mark.anyio
async def test_pipe_aclose_lets_a_send_in_progress_end(fd_mode: str) -> None:
    # A message being written (an answer, say) when the transport is closed is written whole
    # first, not cut off: the peer reads all of it.
    big = b'{"data":"' + b"z" * 700_000 + b'"}'  # ten times a pipe's buffer
    with crossed_pipes() as pipes, anyio.fail_after(10):
        async with pipe_transports(pipes) as (a, b):
            errors: list[BaseException] = []
            received: list[bytes] = []

            async def send_big() -> None:
                try:
                    await a.send(big)
                except Exception as exc:
                    errors.append(exc)

            async def read() -> None:
                received.append(await b.receive())

            async with anyio.create_task_group() as tg:
                tg.start_soon(send_big)
                await anyio.sleep(0.05)  # the pipe is full: the send waits for the reader
                tg.start_soon(read)
                await a.aclose()
            assert errors == []
            assert received == [big]
