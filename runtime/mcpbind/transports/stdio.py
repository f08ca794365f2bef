"""MCP's stdio transport: newline-delimited JSON-RPC messages over a pair of byte streams.

Each message is one line of UTF-8 JSON ending in ``\\n``; messages never contain a newline
(a JSON encoder escapes them inside strings), so the newline is the whole framing. A trailing
``\\r`` is tolerated and empty lines are skipped. stderr carries logs, never messages.

Four pieces:

* :class:`LineFramer`: the sans-io framing, bytes chunks in, lines out, with a size limit that
  never buffers an oversized line.
* :class:`StdioTransport`: a :class:`~mcpbind.transports.base.Transport` over any anyio
  ``ByteReceiveStream`` / ``ByteSendStream`` pair.
* :func:`stdio_server_transport`: the transport over this process's own stdin and stdout.
* :func:`spawn_stdio_server`: start a server process and talk to it over its stdin and stdout,
  with a bounded, cancellation-proof shutdown (close stdin, SIGTERM, SIGKILL, reap).
"""

from __future__ import annotations

import errno
import os
import queue
import select
import stat
import subprocess
import sys
import threading
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, TYPE_CHECKING, Any, Literal

import anyio
import anyio.to_thread
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from anyio.lowlevel import checkpoint, checkpoint_if_cancelled

from mcpbind.protocol.wire import RequestId
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge

if TYPE_CHECKING:
    import asyncio  # imported only where the backend is asyncio (it costs trio a start-up)

__all__ = [
    "LineFramer",
    "StdioClientTransport",
    "StdioTransport",
    "spawn_stdio_server",
    "stdio_server_transport",
]

# How much one read asks for: large enough that a burst of small messages costs one read.
_READ_SIZE = 65536

# A write of at most PIPE_BUF bytes to a pipe that polls writable does not block: a pipe polls
# writable only with at least a free page (Linux) or PIPE_BUF free bytes (BSD, macOS).
_PIPE_BUF: int = getattr(select, "PIPE_BUF", 512)

# Linux's per-call non-blocking write (pwritev2 with RWF_NOWAIT), and the errors that say a
# descriptor does not support it.
_RWF_NOWAIT: int | None = getattr(os, "RWF_NOWAIT", None) if hasattr(os, "pwritev") else None
_NOWAIT_UNSUPPORTED = frozenset(
    getattr(errno, name)
    for name in ("EOPNOTSUPP", "ENOTSUP", "EINVAL", "ESPIPE", "ENOSYS")
    if hasattr(errno, name)
)

# POLLIN, or the hang-up that ends the stream.
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR if hasattr(select, "POLLIN") else 0

# The longest a worker thread (in the thread fallback) waits before giving control back, which
# bounds how late it notices a cancellation and how long it can delay interpreter exit.
_THREAD_WAIT_SLICE = 0.2

# The thread fallback's writer queues up to this many bytes before send() waits for it, and
# on close waits this long at most for the queue to be written.
_WRITE_HIGH_WATER = 256 * 1024
_FLUSH_TIMEOUT = 5.0

# anyio >= 4.7 waits on any file descriptor; older versions get the thread fallback.
_wait_readable: Callable[[int], Awaitable[None]] | None = getattr(anyio, "wait_readable", None)
_wait_writable: Callable[[int], Awaitable[None]] | None = getattr(anyio, "wait_writable", None)
_notify_closing: Callable[[int], None] | None = getattr(anyio, "notify_closing", None)

# A client makes its own pipes to the server process where the event loop can poll them.
_OWN_PIPES = sys.platform != "win32" and _wait_readable is not None and _wait_writable is not None


# --------------------------------------------------------------------------------------------
# Framing
# --------------------------------------------------------------------------------------------


class LineFramer:
    """Split a byte stream into newline-terminated messages, without I/O.

    ``feed()`` chunks as they arrive, then call ``next_line()`` until it returns ``None`` (it
    needs more data) before feeding again; after ``feed_eof()`` a final unterminated line is
    still delivered, then ``next_line()`` returns ``None`` for good and :attr:`eof` is true.

    A line longer than ``max_message_size`` (not counting its ``\\n`` or ``\\r\\n``) makes
    ``next_line()`` raise :class:`MessageTooLarge` once, at the point of the stream where it
    was, as soon as it is known to be too long; the rest of it, up to its newline, is dropped
    as it arrives and never buffered. Memory stays bounded by the limit plus one fed chunk.

    Each byte is searched for a newline once (a scan offset remembers how far the pending
    line has been searched), so a large line arriving in small chunks costs linear time.
    """

    __slots__ = ("_buffer", "_discarding", "_eof", "_scan", "_start", "max_message_size")

    def __init__(self, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE) -> None:
        if max_message_size < 1:
            raise ValueError("max_message_size must be at least 1")
        self.max_message_size = max_message_size
        self._buffer = bytearray()
        self._start = 0  # where the pending line starts in _buffer
        self._scan = 0  # _buffer[_start:_scan] holds no newline
        self._discarding = False  # dropping the rest of an oversized line already reported
        self._eof = False

    @property
    def eof(self) -> bool:
        """True once ``feed_eof()`` was called and every line has been taken."""
        return self._eof and self._start == len(self._buffer)

    @property
    def buffered(self) -> int:
        """Bytes held that no ``next_line()`` has returned yet."""
        return len(self._buffer) - self._start

    def has_line(self) -> bool:
        """Whether a complete line is buffered (``next_line()`` would return it without more
        data). What it searched is not searched again by ``next_line()``."""
        buffer = self._buffer
        newline = buffer.find(b"\n", self._scan)
        # Either way, no newline lies before where the next search starts.
        self._scan = len(buffer) if newline < 0 else newline
        return newline >= 0

    def feed(self, data: bytes) -> None:
        if self._eof:
            raise RuntimeError("feed() after feed_eof()")
        if self._discarding:
            newline = data.find(b"\n")
            if newline < 0:
                return
            self._discarding = False
            data = data[newline + 1 :]
        self._buffer += data

    def feed_eof(self) -> None:
        self._eof = True
        self._discarding = False

    def next_line(self) -> bytes | None:
        """The next complete line (no ``\\n``, no trailing ``\\r``), or ``None`` if none is ready.

        Raises :class:`MessageTooLarge` for a line over the limit, once per such line.
        """
        buffer = self._buffer
        limit = self.max_message_size
        while True:
            start = self._start
            newline = buffer.find(b"\n", self._scan)
            if newline < 0:
                return self._no_newline(start, limit)
            end = newline - 1 if newline > start and buffer[newline - 1] == 13 else newline
            self._start = self._scan = newline + 1
            size = end - start
            if size == 0:
                continue
            if size > limit:
                raise MessageTooLarge(size, limit)
            return bytes(buffer[start:end])

    def _no_newline(self, start: int, limit: int) -> bytes | None:
        buffer = self._buffer
        pending = len(buffer) - start
        if self._eof:
            # The final line had no newline: deliver it once, then nothing more.
            end = len(buffer) - 1 if pending and buffer[-1] == 13 else len(buffer)
            line = bytes(buffer[start:end])
            buffer.clear()
            self._start = self._scan = 0
            if len(line) > limit:
                raise MessageTooLarge(len(line), limit)
            return line or None
        # One more byte than the limit may still be the ``\r`` of a ``\r\n``.
        if pending > limit + 1:
            buffer.clear()
            self._start = self._scan = 0
            self._discarding = True
            raise MessageTooLarge(pending, limit)
        if start:
            # Drop what has been returned; once per fed chunk, not once per line.
            del buffer[:start]
            self._start = 0
        self._scan = len(buffer)
        return None


# --------------------------------------------------------------------------------------------
# The transport over a byte stream pair
# --------------------------------------------------------------------------------------------


class _SendLock:
    """Mutual exclusion for writers, at the cost of a flag when uncontended: taking it free
    neither yields nor checks for cancellation (anyio's Lock looks up the current task and
    checks for cancellation, more than a whole small write costs). Waiters queue in order,
    and the lock is handed to the first of them."""

    __slots__ = ("_busy", "_waiters")

    def __init__(self) -> None:
        self._busy = False
        self._waiters: deque[anyio.Event] | None = None

    async def acquire(self) -> None:
        if not self._busy:
            self._busy = True
            return
        turn = anyio.Event()
        waiters = self._waiters
        if waiters is None:
            waiters = self._waiters = deque()
        waiters.append(turn)
        try:
            await turn.wait()
        except BaseException:
            if turn.is_set():
                self.release()  # handed the lock while leaving: hand it on
            else:
                waiters.remove(turn)
            raise

    @property
    def busy(self) -> bool:
        return self._busy

    def release(self) -> None:
        if self._waiters:
            self._waiters.popleft().set()  # it stays taken, by the first waiting
        else:
            self._busy = False


class StdioTransport:
    """A :class:`~mcpbind.transports.base.Transport` framing messages as lines over two byte streams.

    ``send(message)`` writes ``message + b"\\n"`` in one ``send`` on the stream, under a lock,
    so concurrent senders never interleave. ``receive()`` returns the next line; it raises
    ``anyio.EndOfStream`` once the peer closed (after delivering a final unterminated line),
    :class:`MessageTooLarge` for a line over ``max_message_size`` (which is dropped; the next
    ``receive()`` goes on with the line after it), and ``anyio.ClosedResourceError`` after
    :meth:`aclose`. A cancelled ``receive()`` loses nothing: data already read stays buffered.

    ``receive()`` returns a line already buffered at once, without yielding to other tasks
    (one read of up to 64 KiB can hold hundreds of messages); it checks for cancellation and
    waits only when it has to read. Likewise an uncontended ``send()`` yields only if the
    stream makes it wait.

    Responses (``send_related(..., final=True)``) sent while more received lines wait to be handed out
    are held back, up to ``batch_bytes``, and written with the next message that is not held:
    the answers to a burst of requests that came in one read leave in one write, rather than
    one write (and one wake-up of the peer) each. Anything else (a request, a notification, a
    response once no line waits) is written at once, after what was held back, so order is
    kept; ``receive()`` writes what is held before it waits for input, and so does
    :meth:`aclose`, which also lets a send in progress end first (for up to a second in all, for
    a peer that does not read). ``batch_bytes=0`` holds nothing back.
    """

    def __init__(
        self,
        receive_stream: ByteReceiveStream,
        send_stream: ByteSendStream,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        batch_bytes: int = 65536,
    ) -> None:
        self._receive_stream = receive_stream
        self._send_stream = send_stream
        self._framer = LineFramer(max_message_size)
        self._send_lock = _SendLock()
        self.batch_bytes = batch_bytes
        # Between handing out a line and waiting for more input, sends are held back here.
        self._batching = False
        self._pending: list[bytes] = []
        self._pending_size = 0
        self._closed = False
        # A send was interrupted and may have left half a line on the wire.
        self._send_torn = False
        # A receive() is reading from the stream (see StdioClientTransport's shutdown).
        self._reading = False
        self._reader_idle: anyio.Event | None = None

    @property
    def max_message_size(self) -> int:
        return self._framer.max_message_size

    async def receive(self) -> bytes:
        framer = self._framer
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            line = framer.next_line()
            if line is not None:
                self._batching = framer.has_line()
                return line
            self._batching = False
            if self._pending:
                await self._flush()  # what was held back goes before this side waits
            if framer.eof:
                raise anyio.EndOfStream
            # A cancellation before or while waiting to read leaves every byte buffered: the
            # stream's receive() is where it lands (our streams' receive() is a cancellation
            # point before it takes anything).
            self._reading = True
            try:
                chunk = None
                if framer.buffered:
                    # In the middle of a line (a large message arriving): take what is already
                    # readable without a trip through the event loop.
                    receive_ready = getattr(self._receive_stream, "receive_ready", None)
                    if receive_ready is not None:
                        await checkpoint_if_cancelled()
                        chunk = receive_ready(_READ_SIZE)
                if chunk is None:
                    chunk = await self._receive_stream.receive(_READ_SIZE)
                elif not chunk:
                    raise anyio.EndOfStream
            except anyio.EndOfStream:
                framer.feed_eof()
                continue
            except (ConnectionResetError, BrokenPipeError) as exc:
                raise anyio.BrokenResourceError from exc
            finally:
                self._reading = False
                if self._reader_idle is not None:
                    self._reader_idle.set()
            framer.feed(chunk)

    async def send_related(
        self, message: bytes, related: RequestId | None = None, final: bool = False
    ) -> None:
        """Write one message and its newline; ``ValueError`` if it contains a newline. A
        response (``final``) may be held back (see the class)."""
        if b"\n" in message:
            raise ValueError("a stdio message must not contain a newline")
        data = message + b"\n"
        if (
            final
            and self._batching
            and not self._closed
            and self._pending_size + len(data) <= self.batch_bytes
        ):
            self._pending.append(data)
            self._pending_size += len(data)
            return
        if self._pending:
            data = self._take_pending() + data
        await self._write(data)

    send = send_related  # (a message sent with ``send`` is not a response: never held back)

    def _take_pending(self) -> bytes:
        data = b"".join(self._pending)
        self._pending.clear()
        self._pending_size = 0
        return data

    async def _flush(self) -> None:
        await self._write(self._take_pending())

    async def _write(self, data: bytes) -> None:
        lock = self._send_lock
        await lock.acquire()
        try:
            if self._closed:
                raise anyio.ClosedResourceError
            if self._send_torn:
                # End whatever the interrupted send left; the peer skips an empty line.
                data = b"\n" + data
            self._send_torn = True
            try:
                await self._send_stream.send(data)
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            self._send_torn = False
        finally:
            lock.release()

    def send_nowait(self, message: bytes) -> bool:
        """Write the message and its newline whole, now, or write nothing and return ``False``:
        when another send is in progress, the stream cannot write without waiting, or the line
        is longer than ``PIPE_BUF`` (only that much is written whole or not at all)."""
        write_whole = getattr(self._send_stream, "write_whole_nowait", None)
        if (
            write_whole is None
            or self._closed
            or self._send_torn
            or self._batching
            or self._pending
            or self._send_lock.busy
            or len(message) >= _PIPE_BUF
            or b"\n" in message
        ):
            return False
        try:
            return bool(write_whole(message + b"\n"))
        except OSError:
            return False  # send() meets the error again and says it properly

    async def _flush_before_close(self) -> None:
        """Let a send in progress end and write what is held back, if the peer takes it within
        a second: a message already handed to ``send()`` is not cut off by the close."""
        if self._pending or self._send_lock.busy:
            with anyio.move_on_after(1.0):
                try:
                    if self._pending:
                        await self._flush()  # after the send in progress, if there is one
                    else:
                        await self._send_lock.acquire()
                        self._send_lock.release()
                except (anyio.BrokenResourceError, anyio.ClosedResourceError, OSError):
                    pass

    async def aclose(self) -> None:
        if self._closed:
            return
        with anyio.CancelScope(shield=True):
            await self._flush_before_close()
            self._closed = True
            try:
                await self._send_stream.aclose()
            finally:
                await self._receive_stream.aclose()


# --------------------------------------------------------------------------------------------
# This process's stdin and stdout
# --------------------------------------------------------------------------------------------


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: pipes, sockets and terminals on Unix.

    Regular files and devices like ``/dev/null`` cannot be polled (epoll refuses them), and on
    Windows only sockets can; those use the thread fallback.
    """
    if sys.platform == "win32" or _wait_readable is None or _wait_writable is None:
        return False
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def _is_fifo(fd: int) -> bool:
    try:
        return stat.S_ISFIFO(os.fstat(fd).st_mode)
    except OSError:
        return False


def _read_blocking(fd: int, max_bytes: int) -> bytes:
    while True:
        try:
            return os.read(fd, max_bytes)
        except BlockingIOError:
            # Someone set O_NONBLOCK on this file: wait for data here, in the worker thread.
            select.select([fd], [], [])


def _write_blocking(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        try:
            view = view[os.write(fd, view) :]
        except BlockingIOError:
            select.select([], [fd], [])


class _ThreadedReader:
    """Reads ``fd`` in a daemon thread, for what the event loop cannot poll.

    The thread reads ahead by a few chunks. Waiting for it goes through anyio worker threads
    in slices of ``_THREAD_WAIT_SLICE`` seconds that are never abandoned, so a cancelled wait
    loses no chunk, and no worker thread stays blocked on stdin to delay interpreter exit
    (the reading thread is a daemon).
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.Queue[bytes | OSError] = queue.Queue(maxsize=4)
        self._thread: threading.Thread | None = None
        self._leftover = b""
        self._final: bytes | OSError | None = None  # EOF (b"") or the error that ended reading
        self.closed = False

    def _run(self) -> None:
        while True:
            try:
                data = _read_blocking(self._fd, _READ_SIZE)
            except OSError as exc:
                self._queue.put(exc)
                return
            self._queue.put(data)
            if not data:
                return

    def _get_slice(self) -> bytes | OSError | None:
        try:
            return self._queue.get(timeout=_THREAD_WAIT_SLICE)
        except queue.Empty:
            return None

    async def read(self, max_bytes: int) -> bytes:
        await checkpoint()
        item: bytes | OSError | None
        if self._leftover:
            item, self._leftover = self._leftover, b""
        elif self._final is not None:
            item = self._final
        else:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="mcpbind stdin", daemon=True)
                self._thread.start()
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                item = None
            while item is None:
                await checkpoint_if_cancelled()
                if self.closed:
                    raise anyio.ClosedResourceError
                item = await anyio.to_thread.run_sync(self._get_slice)
            if isinstance(item, OSError) or not item:
                self._final = item
        if isinstance(item, OSError):
            raise item
        if len(item) > max_bytes:
            item, self._leftover = item[:max_bytes], item[max_bytes:]
        return item


class _ThreadedWriter:
    """Writes ``fd`` in a daemon thread, in order, each message whole.

    Like an asyncio transport, ``write()`` queues and returns at once while fewer than
    ``_WRITE_HIGH_WATER`` bytes wait, else it waits for the thread to catch up; a write error
    is raised by the next ``write()``. A queued message is always written whole, even if its
    ``write()`` was cancelled, so no half line is left. ``close()`` waits (up to
    ``_FLUSH_TIMEOUT``) for the queue to drain, since the daemon thread dies with the process.
    """

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._queue: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()
        self._queued = 0  # bytes queued and not yet written
        self._drained = threading.Event()  # set while _queued is under the high-water mark
        self._drained.set()
        self._idle = threading.Event()  # set while nothing is queued
        self._idle.set()
        self._error: OSError | None = None

    def _run(self) -> None:
        while (data := self._queue.get()) is not None:
            if self._error is None:
                try:
                    _write_blocking(self._fd, data)
                except OSError as exc:
                    self._error = exc
            with self._lock:
                self._queued -= len(data)
                if self._queued < _WRITE_HIGH_WATER:
                    self._drained.set()
                if not self._queued:
                    self._idle.set()

    async def write(self, data: bytes) -> None:
        await checkpoint_if_cancelled()
        if self._error is not None:
            raise self._error
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="mcpbind stdout", daemon=True)
            self._thread.start()
        with self._lock:
            self._queued += len(data)
            self._idle.clear()
            if self._queued >= _WRITE_HIGH_WATER:
                self._drained.clear()
        self._queue.put(data)
        await _wait_thread_event(self._drained)

    async def close(self) -> None:
        if self._thread is None:
            return
        self._queue.put(None)
        with anyio.move_on_after(_FLUSH_TIMEOUT):
            await _wait_thread_event(self._idle)


async def _wait_thread_event(event: threading.Event) -> None:
    """Wait for a ``threading.Event`` in never-abandoned slices (see :class:`_ThreadedReader`)."""
    while not event.is_set():
        await anyio.to_thread.run_sync(event.wait, _THREAD_WAIT_SLICE)
        await checkpoint_if_cancelled()


class _AsyncioWatch:
    """Waits for a descriptor to be readable on an asyncio loop, staying registered with the
    loop between waits: anyio's ``wait_readable`` adds and removes the reader for each wait,
    two ``epoll_ctl`` calls and the selector's bookkeeping per message.

    The loop reports the descriptor for as long as data is unread, so a report with nobody
    waiting is expected once (the reader was woken and has not read yet); after two in a row
    (nobody reads: the session is busy elsewhere) the watch unregisters until the next wait.
    """

    __slots__ = ("_fd", "_idle_reports", "_loop", "_waiter", "_watching")

    def __init__(self, fd: int, loop: asyncio.AbstractEventLoop) -> None:
        self._fd = fd
        self._loop = loop
        self._waiter: asyncio.Future[None] | None = None
        self._watching = False
        self._idle_reports = 0

    def _readable(self) -> None:
        waiter = self._waiter
        if waiter is not None:
            self._waiter = None
            self._idle_reports = 0
            if not waiter.done():
                waiter.set_result(None)
            return
        self._idle_reports += 1
        if self._idle_reports >= 2:
            self._loop.remove_reader(self._fd)
            self._watching = False

    def stale(self) -> bool:
        """Whether this watch belongs to an event loop that is not the one running now."""
        return sys.modules["asyncio"]._get_running_loop() is not self._loop

    async def wait(self) -> None:
        if self._waiter is not None:
            raise anyio.BusyResourceError("reading from")
        waiter = self._waiter = self._loop.create_future()
        if not self._watching:
            self._loop.add_reader(self._fd, self._readable)
            self._watching = True
            self._idle_reports = 0
        try:
            await waiter
        finally:
            if self._waiter is waiter:
                self._waiter = None

    def close(self) -> None:
        if self._watching:
            self._loop.remove_reader(self._fd)
            self._watching = False
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_exception(anyio.ClosedResourceError())


def _watcher(fd: int) -> _AsyncioWatch | Literal[False]:
    """An :class:`_AsyncioWatch` when anyio runs on asyncio here, else ``False`` (anyio's
    ``wait_readable`` then, e.g. on trio)."""
    asyncio_module = sys.modules.get("asyncio")  # not imported: the loop is not asyncio's
    loop = None if asyncio_module is None else asyncio_module._get_running_loop()
    if loop is None or type(anyio.Event()).__module__ != "anyio._backends._asyncio":
        return False
    return _AsyncioWatch(fd, loop)


class _FdReceiveStream(ByteReceiveStream):
    """Reads a file descriptor it does not own: polled by the event loop, else in a thread.

    Polling leaves the descriptor's flags alone (no ``O_NONBLOCK``, which would leak to every
    process sharing the open file): after the loop reports it readable, one ``os.read`` returns
    what is there without blocking.
    """

    def __init__(self, fd: int, *, owned: bool = False) -> None:
        self._fd = fd
        self._owned = owned  # ours alone (a pipe to a child): non-blocking, closed by aclose()
        if owned:
            os.set_blocking(fd, False)
        self._poll = _pollable(fd)
        self._polled = False  # one poll succeeded: later errors are real, not "unpollable"
        self._threaded: _ThreadedReader | None = None
        self._poller = select.poll() if self._poll and not owned and hasattr(select, "poll") else None
        if self._poller is not None:
            self._poller.register(fd, select.POLLIN)
        self._watch: _AsyncioWatch | Literal[False] | None = None  # None: not decided yet
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if not self._poll:
                if self._threaded is None:
                    self._threaded = _ThreadedReader(self._fd)
                try:
                    data = await self._threaded.read(max_bytes)
                except OSError as exc:
                    raise anyio.BrokenResourceError from exc
                break
            assert _wait_readable is not None
            try:
                watch = self._watch
                if watch is None or (watch is not False and watch.stale()):
                    watch = self._watch = _watcher(self._fd)
                if watch is not False:
                    await watch.wait()
                    if self._poller is not None and not self._poller.poll(0):
                        continue  # a report of data someone already read: wait again
                else:
                    await _wait_readable(self._fd)
            except (OSError, NotImplementedError):
                if self._polled:
                    raise
                self._poll = False  # e.g. a terminal under macOS's kqueue
                continue
            self._polled = True
            if self._closed:
                raise anyio.ClosedResourceError
            try:
                data = os.read(self._fd, max_bytes)
            except BlockingIOError:
                continue  # O_NONBLOCK set by someone else, and the data went elsewhere
            except OSError as exc:
                raise anyio.BrokenResourceError from exc
            break
        if not data:
            raise anyio.EndOfStream
        return data

    def receive_ready(self, max_bytes: int) -> bytes | None:
        """What one read returns if the descriptor polls readable now (``b""`` at end of
        file), else ``None``; never blocks and never yields."""
        if self._closed:
            return None
        if not self._owned:
            if self._poller is None or not any(events & _READABLE for _, events in self._poller.poll(0)):
                return None
        try:
            return os.read(self._fd, max_bytes)
        except BlockingIOError:
            return None
        except OSError as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._watch:
                self._watch.close()
            if self._poll and _notify_closing is not None:
                _notify_closing(self._fd)  # wake a receive() waiting on the descriptor
            if self._threaded is not None:
                self._threaded.closed = True  # a receive() waiting on the thread stops soon
            if self._owned:
                os.close(self._fd)
        await checkpoint()


class _FdSendStream(ByteSendStream):
    """Writes a file descriptor it does not own: polled by the event loop, else in a thread.

    The descriptor's flags are left alone (no ``O_NONBLOCK``, which would leak to every process
    sharing the open file), so a plain write could block the event loop. Where Linux offers
    ``RWF_NOWAIT`` for the descriptor (pipes, since 5.x), each write is made non-blocking by
    that flag alone: it writes what fits, the rest waits until the descriptor polls writable.
    Elsewhere a write is kept to ``PIPE_BUF`` bytes and made only after a zero-timeout ``poll``
    says there is room, which is when a pipe has that much.
    """

    def __init__(self, fd: int, *, owned: bool = False) -> None:
        self._fd = fd
        self._owned = owned  # ours alone (a pipe to a child): non-blocking, closed by aclose()
        if owned:
            os.set_blocking(fd, False)
        self._poll = _pollable(fd)
        self._polled = False
        self._threaded: _ThreadedWriter | None = None
        self._poller = select.poll() if self._poll and not owned and hasattr(select, "poll") else None
        if self._poller is not None:
            self._poller.register(fd, select.POLLOUT)
        self._nowait = self._poll and not owned and _RWF_NOWAIT is not None
        self._fifo = _is_fifo(fd)
        self._closed = False

    def _write_now(self, view: memoryview) -> int:
        """Write what the descriptor takes without blocking: the bytes written, maybe 0."""
        if self._owned:
            try:
                return os.write(self._fd, view)
            except BlockingIOError:
                return 0
        if self._nowait:
            assert _RWF_NOWAIT is not None
            try:
                return os.pwritev(self._fd, [view], -1, _RWF_NOWAIT)
            except BlockingIOError:
                return 0
            except OSError as exc:
                if exc.errno not in _NOWAIT_UNSUPPORTED:
                    raise
                self._nowait = False  # e.g. a terminal, or an older kernel: poll, then PIPE_BUF
        if self._poller is None or not any(events & select.POLLOUT for _, events in self._poller.poll(0)):
            return 0
        try:
            return os.write(self._fd, view[:_PIPE_BUF])
        except BlockingIOError:
            return 0

    def write_whole_nowait(self, data: bytes) -> bool:
        """Write ``data`` (at most ``PIPE_BUF`` bytes, which a pipe takes whole or not at all)
        if that needs no waiting; ``False`` if nothing was written."""
        if self._closed or not self._fifo or not self._poll or len(data) > _PIPE_BUF:
            return False
        return self._write_now(memoryview(data)) > 0

    async def send(self, item: bytes) -> None:
        if self._closed:
            raise anyio.ClosedResourceError
        if not self._poll:
            await self._send_threaded(item)
            return
        view = memoryview(item)
        while view:
            try:
                written = self._write_now(view)
            except (BrokenPipeError, ConnectionResetError) as exc:
                raise anyio.BrokenResourceError from exc
            if written:
                view = view[written:]
                continue
            assert _wait_writable is not None
            try:
                await _wait_writable(self._fd)
            except (OSError, NotImplementedError):
                if self._polled:
                    raise
                self._poll = False
                await self._send_threaded(bytes(view))
                return
            self._polled = True
            if self._closed:
                raise anyio.ClosedResourceError

    async def _send_threaded(self, data: bytes) -> None:
        if self._threaded is None:
            self._threaded = _ThreadedWriter(self._fd)
        try:
            await self._threaded.write(data)
        except (BrokenPipeError, ConnectionResetError) as exc:
            raise anyio.BrokenResourceError from exc

    async def aclose(self) -> None:
        if not self._closed:
            self._closed = True
            if self._poll and _notify_closing is not None:
                _notify_closing(self._fd)
            if self._threaded is not None:
                await self._threaded.close()
            if self._owned:
                os.close(self._fd)
        await checkpoint()


@asynccontextmanager
async def stdio_server_transport(
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE, *, stdin: int = 0, stdout: int = 1
) -> AsyncIterator[StdioTransport]:
    """A :class:`StdioTransport` over this process's stdin and stdout, on asyncio or trio.

    Pipes, sockets and terminals (every real MCP client gives pipes) are waited on by the event
    loop itself (``anyio.wait_readable`` / ``wait_writable``), with no threads and without
    changing the descriptors' flags. What the loop cannot poll (a regular file, ``/dev/null``,
    anything on Windows, or anyio older than 4.7) is read and written by daemon threads.

    ``receive()`` raises ``anyio.EndOfStream`` when stdin reaches its end: the client's signal
    to exit. The descriptors are used directly (``stdin`` / ``stdout`` name others) and left
    open on exit: Python's ``sys.stdout`` is flushed first, and nothing should have been read
    from ``sys.stdin`` (its buffer would be skipped). Nothing but messages is written to stdout:
    log to stderr, and never ``print()`` while this runs.
    """
    if stdout == 1 and sys.stdout is not None:
        try:
            sys.stdout.flush()
        except (OSError, ValueError):
            pass
    transport = StdioTransport(_FdReceiveStream(stdin), _FdSendStream(stdout), max_message_size)
    try:
        yield transport
    finally:
        await transport.aclose()


# --------------------------------------------------------------------------------------------
# A server in a child process
# --------------------------------------------------------------------------------------------


class StdioClientTransport(StdioTransport):
    """The transport to a server process: its stdout in, its stdin out.

    :meth:`aclose` shuts the server down, in bounded time, even inside a cancelled scope:
    close its stdin (the polite stop signal for a stdio server), wait up to ``close_timeout``
    seconds for it to exit, then SIGTERM (``terminate()``), wait up to ``terminate_timeout``,
    then SIGKILL (``kill()``), and always wait for the exit so no zombie is left. Meanwhile its
    stdout is read and discarded, so a server blocked writing a reply still sees the end of its
    input. If the server exits on its own, ``receive()`` raises ``anyio.EndOfStream`` and
    ``send()`` ``anyio.BrokenResourceError``.
    """

    def __init__(
        self,
        process: Process,
        *,
        max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
        close_timeout: float = 2.0,
        terminate_timeout: float = 2.0,
        streams: tuple[ByteReceiveStream, ByteSendStream] | None = None,
    ) -> None:
        """``streams``: the server's stdout and stdin when they are not ``process.stdout`` and
        ``process.stdin`` (pipes made by the caller); they are closed with the transport."""
        if streams is None:
            if process.stdin is None or process.stdout is None:
                raise ValueError("the process needs piped stdin and stdout")
            streams = (process.stdout, process.stdin)
        super().__init__(streams[0], streams[1], max_message_size)
        self.process = process
        self.close_timeout = close_timeout
        self.terminate_timeout = terminate_timeout
        self._shutdown_started = False
        self._shutdown_done = anyio.Event()

    @property
    def returncode(self) -> int | None:
        """The server's exit status once it has exited (negative: killed by that signal)."""
        return self.process.returncode

    async def aclose(self) -> None:
        if self._shutdown_started:
            await self._shutdown_done.wait()
            return
        self._shutdown_started = True
        try:
            with anyio.CancelScope(shield=True):
                await self._flush_before_close()
                self._closed = True
                await self._shutdown()
        finally:
            self._shutdown_done.set()

    async def _shutdown(self) -> None:
        process = self.process
        try:
            await self._send_stream.aclose()
        except Exception:  # closing the pipe to a dead process may complain; it is closed
            pass
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._drain_stdout)
            if not await _wait_exit(process, self.close_timeout):
                _signal(process.terminate)
                if not await _wait_exit(process, self.terminate_timeout):
                    _signal(process.kill)
                    await process.wait()
            tg.cancel_scope.cancel()
        # The process is reaped; this closes the remaining pipes and transports.
        await process.aclose()
        await self._receive_stream.aclose()

    async def _drain_stdout(self) -> None:
        while self._reading:  # a receive() in flight reads it already; take over after it
            self._reader_idle = anyio.Event()
            await self._reader_idle.wait()
        try:
            while True:
                await self._receive_stream.receive(_READ_SIZE)
        except (anyio.EndOfStream, anyio.ClosedResourceError, anyio.BrokenResourceError, OSError):
            pass


async def _wait_exit(process: Process, timeout: float) -> bool:
    with anyio.move_on_after(timeout):
        await process.wait()
        return True
    return False


def _signal(send: Callable[[], None]) -> None:
    try:
        send()
    except ProcessLookupError:  # exited in the meantime
        pass


@asynccontextmanager
async def spawn_stdio_server(
    command: str | os.PathLike[str],
    args: Sequence[str] = (),
    env: Mapping[str, str] | None = None,
    cwd: str | os.PathLike[str] | None = None,
    *,
    max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE,
    close_timeout: float = 2.0,
    terminate_timeout: float = 2.0,
    stderr: int | IO[Any] | None = None,
) -> AsyncIterator[StdioClientTransport]:
    """Start ``command args...`` and yield a transport over its stdout and stdin.

    ``env``: ``None`` inherits this process's environment unchanged; a mapping is merged over a
    copy of ``os.environ`` (its entries win), so ``PATH``, ``HOME`` and the like stay set.
    ``cwd``: the server's working directory (``None``: ours). ``stderr``: ``None`` inherits
    ours, or pass an open file, a descriptor, or ``subprocess.DEVNULL``. The command is run
    directly, never through a shell.

    On exit the server is shut down as :class:`StdioClientTransport` describes, even when the
    surrounding scope is cancelled; ``transport.returncode`` then holds its exit status.
    """
    full_env = None if env is None else {**os.environ, **env}
    streams: tuple[ByteReceiveStream, ByteSendStream] | None = None
    with anyio.CancelScope(shield=True):  # a cancellation must not leak a started process
        if _OWN_PIPES:
            # Pipes of our own: our ends are read and written directly (non-blocking, polled by
            # the event loop), without the layers of the backend's process streams.
            child_in, our_out = os.pipe()
            our_in, child_out = os.pipe()
            try:
                process = await anyio.open_process(
                    [command, *args], stdin=child_in, stdout=child_out, stderr=stderr, cwd=cwd, env=full_env
                )
            except BaseException:
                os.close(our_out)
                os.close(our_in)
                raise
            finally:
                os.close(child_in)
                os.close(child_out)
            streams = (_FdReceiveStream(our_in, owned=True), _FdSendStream(our_out, owned=True))
        else:
            process = await anyio.open_process(
                [command, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=stderr,
                cwd=cwd,
                env=full_env,
            )
    transport = StdioClientTransport(
        process,
        max_message_size=max_message_size,
        close_timeout=close_timeout,
        terminate_timeout=terminate_timeout,
        streams=streams,
    )
    try:
        await checkpoint_if_cancelled()
        yield transport
    finally:
        await transport.aclose()
