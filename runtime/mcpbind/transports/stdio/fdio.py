"""The file-descriptor layer under stdio: byte streams over raw descriptors, on asyncio or trio.

:class:`FdReceiveStream` and :class:`FdSendStream` read and write a descriptor (this process's
stdin and stdout, or the pipes to a child) without changing its flags where it is shared.
Pipes, sockets and terminals are waited on by the event loop (``anyio.wait_readable`` /
``wait_writable``; on asyncio a reader watch that stays registered between waits); Linux's
``pwritev2`` with ``RWF_NOWAIT`` makes a write non-blocking on its own, elsewhere a write waits
for a zero-timeout ``poll`` and is kept to ``PIPE_BUF`` bytes. What the loop cannot poll (regular
files, ``/dev/null``, Windows, anyio older than 4.7) is read and written by daemon threads
(:mod:`~mcpbind.transports.stdio.fdthreads`).

The streams also offer two optional features, each a small :class:`~typing.Protocol` below
(:class:`ReceiveReadyStream`, :class:`WriteWholeNowaitStream`), which
:class:`~mcpbind.transports.stdio.stream.StdioTransport` takes up once, when it is built.
"""

from __future__ import annotations

import errno
import os
import select
import stat
import sys
from collections.abc import Awaitable, Callable
from typing import Literal, Protocol

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.lowlevel import checkpoint

from mcpbind.fastpath import ENABLED as FASTPATH
from mcpbind.fastpath import ReadableWatch, readable_watch
from mcpbind.transports.stdio.fdthreads import ThreadedReader, ThreadedWriter

__all__ = [
    "LOOP_WAITS_ON_FDS",
    "PIPE_BUF",
    "PIPE_SIZE",
    "READ_SIZE",
    "FdReceiveStream",
    "FdSendStream",
    "ReceiveReadyStream",
    "WriteWholeNowaitStream",
    "grow_pipe",
]

# How much one read asks for: large enough that a burst of small messages costs one read.
READ_SIZE = 65536

# --------------------------------------------------------------------------------------------
# What this platform and this anyio offer: every capability probe of the stdio transport is
# here, made once at import. The rest of the package reads these names, never probes again.
# --------------------------------------------------------------------------------------------

# A write of at most PIPE_BUF bytes to a pipe that polls writable does not block: a pipe polls
# writable only with at least a free page (Linux) or PIPE_BUF free bytes (BSD, macOS).
PIPE_BUF: int = getattr(select, "PIPE_BUF", 512)

# Linux's per-call non-blocking write (pwritev2 with RWF_NOWAIT), and the errors that say a
# descriptor does not support it.
_RWF_NOWAIT: int | None = getattr(os, "RWF_NOWAIT", None) if hasattr(os, "pwritev") else None
_NOWAIT_UNSUPPORTED = frozenset(
    getattr(errno, name)
    for name in ("EOPNOTSUPP", "ENOTSUP", "EINVAL", "ESPIPE", "ENOSYS")
    if hasattr(errno, name)
)

# Linux lets a pipe hold more than its default 64 KiB (F_SETPIPE_SZ, up to
# /proc/sys/fs/pipe-max-size unprivileged): a pipe this side writes to is grown to PIPE_SIZE,
# so that a large message (a listing of a thousand tools, ~180 KB) is written in one call rather
# than a write, a wait for the reader and another write per 64 KiB. Pages are taken only when
# written; the size counts against the user's pipe-user-pages limits, hence no more. Not on the
# plain path (MCPBIND_FASTPATH=0), nor where fcntl lacks it.
PIPE_SIZE = 256 * 1024
_PIPE_SIZE_OPS: tuple[int, int] | None = None
if FASTPATH and sys.platform == "linux":
    import fcntl

    if hasattr(fcntl, "F_GETPIPE_SZ") and hasattr(fcntl, "F_SETPIPE_SZ"):
        _PIPE_SIZE_OPS = (fcntl.F_GETPIPE_SZ, fcntl.F_SETPIPE_SZ)

# poll(2), to ask about a descriptor without waiting (not on Windows); POLLIN, or the hang-up
# that ends the stream.
_HAS_POLL = hasattr(select, "poll")
_READABLE = select.POLLIN | select.POLLHUP | select.POLLERR if hasattr(select, "POLLIN") else 0

# anyio >= 4.7 waits on any file descriptor; older versions get the thread fallback.
_wait_readable: Callable[[int], Awaitable[None]] | None = getattr(anyio, "wait_readable", None)
_wait_writable: Callable[[int], Awaitable[None]] | None = getattr(anyio, "wait_writable", None)
_notify_closing: Callable[[int], None] | None = getattr(anyio, "notify_closing", None)

# Whether the event loop can wait on a descriptor here at all (then pipes, sockets and
# terminals are polled, and a client makes pipes of its own to a server process).
LOOP_WAITS_ON_FDS = sys.platform != "win32" and _wait_readable is not None and _wait_writable is not None


# --------------------------------------------------------------------------------------------
# The optional features of a byte stream that StdioTransport uses when the stream has them
# --------------------------------------------------------------------------------------------


class ReceiveReadyStream(Protocol):
    """A byte stream that can hand over what is readable now, without waiting or yielding
    (:class:`FdReceiveStream` can): the rest of a large message already in the pipe is taken
    without a trip through the event loop."""

    def receive_ready(self, max_bytes: int) -> bytes | None:
        """What one read returns if data is readable now (``b""`` at end of file), else ``None``."""
        ...


class WriteWholeNowaitStream(Protocol):
    """A byte stream that can write a short message whole now or not at all
    (:class:`FdSendStream` can): what ``send_nowait`` of the transport needs."""

    def write_whole_nowait(self, data: bytes) -> bool:
        """Write ``data`` whole if that needs no waiting; ``False`` if nothing was written."""
        ...


# --------------------------------------------------------------------------------------------
# What the event loop can poll (the rest goes to the thread fallback, fdthreads.py)
# --------------------------------------------------------------------------------------------


def _pollable(fd: int) -> bool:
    """Whether the event loop can wait on ``fd``: pipes, sockets and terminals on Unix.

    Regular files and devices like ``/dev/null`` cannot be polled (epoll refuses them), and on
    Windows only sockets can; those use the thread fallback.
    """
    if not LOOP_WAITS_ON_FDS:
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


def grow_pipe(fd: int) -> None:
    """Grow the pipe ``fd`` writes to to :data:`PIPE_SIZE` bytes where Linux allows it (fast
    path only); otherwise leave it as it is."""
    if _PIPE_SIZE_OPS is None:
        return
    import fcntl

    get_size, set_size = _PIPE_SIZE_OPS
    try:
        if fcntl.fcntl(fd, get_size) < PIPE_SIZE:
            fcntl.fcntl(fd, set_size, PIPE_SIZE)
    except OSError:  # over the user's limits: the size it has does
        pass


# --------------------------------------------------------------------------------------------
# The asyncio reader watch
# --------------------------------------------------------------------------------------------


def _watcher(fd: int) -> ReadableWatch | Literal[False]:
    """A :class:`~mcpbind.fastpath.ReadableWatch` when anyio runs on asyncio here and the fast
    path is on, else ``False`` (anyio's ``wait_readable`` then, e.g. on trio)."""
    watch = readable_watch(fd)
    return False if watch is None else watch


# --------------------------------------------------------------------------------------------
# The byte streams over a descriptor
# --------------------------------------------------------------------------------------------


class FdReceiveStream(ByteReceiveStream):
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
        self._threaded: ThreadedReader | None = None
        self._poller = select.poll() if self._poll and not owned and _HAS_POLL else None
        if self._poller is not None:
            self._poller.register(fd, select.POLLIN)
        self._watch: ReadableWatch | Literal[False] | None = None  # None: not decided yet
        self._closed = False

    async def receive(self, max_bytes: int = 65536) -> bytes:
        if max_bytes < 1:
            raise ValueError("max_bytes must be at least 1")
        while True:
            if self._closed:
                raise anyio.ClosedResourceError
            if not self._poll:
                if self._threaded is None:
                    self._threaded = ThreadedReader(self._fd, READ_SIZE)
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


class FdSendStream(ByteSendStream):
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
        self._threaded: ThreadedWriter | None = None
        self._poller = select.poll() if self._poll and not owned and _HAS_POLL else None
        if self._poller is not None:
            self._poller.register(fd, select.POLLOUT)
        self._nowait = self._poll and not owned and _RWF_NOWAIT is not None
        self._fifo = _is_fifo(fd)
        if self._fifo:
            grow_pipe(fd)
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
            return os.write(self._fd, view[:PIPE_BUF])
        except BlockingIOError:
            return 0

    def write_whole_nowait(self, data: bytes) -> bool:
        """Write ``data`` (at most ``PIPE_BUF`` bytes, which a pipe takes whole or not at all)
        if that needs no waiting; ``False`` if nothing was written."""
        if self._closed or not self._fifo or not self._poll or len(data) > PIPE_BUF:
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
            self._threaded = ThreadedWriter(self._fd)
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
