"""Tests of mcpbind.transports.stdio.fdio (and fdthreads): stdio_server_transport over OS pipes.

The descriptors are polled by the event loop (with Linux's RWF_NOWAIT, or the portable
poll-then-PIPE_BUF writes) or served by the thread fallback (``fd_mode``); every test runs on
asyncio and on trio (see conftest.py).
"""

from __future__ import annotations

import errno
import os
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path

import anyio
import pytest

from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.stdio import StdioTransport, fdio, stdio_server_transport


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
    turned = threading.Event()  # the loop went on for 10 turns while the send waited
    drained = bytearray()
    with crossed_pipes() as pipes, anyio.fail_after(20):
        async with pipe_transports(pipes) as (a, _):

            def drain_later() -> None:
                turned.wait(5)
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
                    if ticks == 10:
                        turned.set()
                    await anyio.sleep(0.01)
            await anyio.to_thread.run_sync(reader.join, 5)
    assert ticks >= 10  # the loop went on while the pipe was full
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
    turned = threading.Event()  # the loop went on for 10 turns while the second receive waited
    with crossed_pipes() as pipes, anyio.fail_after(20):
        async with pipe_transports(pipes) as (a, b):

            def write_later() -> None:
                turned.wait(5)
                os.write(pipes.a_out, b'{"n":2}\n')

            writer = threading.Thread(target=write_later, daemon=True)
            got: list[bytes] = []

            async def receive_two() -> None:
                # Back to back, as a session's reader does: the second wait starts right after
                # the first line was read, while the loop may still report that data.
                got.append(await b.receive())
                writer.start()
                got.append(await b.receive())

            async with anyio.create_task_group() as tg:
                tg.start_soon(receive_two)
                await anyio.wait_all_tasks_blocked()  # the first receive waits
                await a.send(b'{"n":1}')
                while len(got) < 2:
                    if got:
                        ticks += 1
                        if ticks == 10:
                            turned.set()
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
                await anyio.wait_all_tasks_blocked()  # the receive waits
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
                await anyio.wait_all_tasks_blocked()  # the pipe is full: the send waits for the reader
                tg.start_soon(read)
                await a.aclose()
            assert errors == []
            assert received == [big]


@pytest.mark.skipif(sys.platform != "linux", reason="pipe sizes are Linux's")
def test_a_pipe_written_to_is_grown_on_the_fast_path_only() -> None:
    import fcntl

    from mcpbind import fastpath

    read_end, write_end = os.pipe()
    try:
        before = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
        fdio.FdSendStream(write_end)
        after = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ)
        # (grown unless over this host's limits, never on the plain path)
        assert after in ((before, max(before, fdio.PIPE_SIZE)) if fastpath.ENABLED else (before,))
        if fastpath.ENABLED and int(Path("/proc/sys/fs/pipe-max-size").read_text()) >= fdio.PIPE_SIZE:
            assert after == max(before, fdio.PIPE_SIZE)
    finally:
        os.close(read_end)
        os.close(write_end)
