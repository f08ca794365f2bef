"""The thread fallback of the stdio fd layer: daemon threads that read and write a descriptor.

For what the event loop cannot wait on (a regular file, ``/dev/null``, anything on Windows,
or anyio older than 4.7). The threads block on the descriptor, never the event loop; waiting
for them goes through anyio worker threads in short slices that are never abandoned, so a
cancelled wait loses nothing and no worker thread delays interpreter exit.
"""

from __future__ import annotations

import os
import queue
import select
import threading

import anyio
import anyio.to_thread
from anyio.lowlevel import checkpoint, checkpoint_if_cancelled

__all__ = ["ThreadedReader", "ThreadedWriter"]

# The longest a worker thread (in the thread fallback) waits before giving control back, which
# bounds how late it notices a cancellation and how long it can delay interpreter exit.
_THREAD_WAIT_SLICE = 0.2

# The thread fallback's writer queues up to this many bytes before send() waits for it, and
# on close waits this long at most for the queue to be written.
_WRITE_HIGH_WATER = 256 * 1024
_FLUSH_TIMEOUT = 5.0


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


class ThreadedReader:
    """Reads ``fd`` in a daemon thread, for what the event loop cannot poll.

    The thread reads ahead by a few chunks. Waiting for it goes through anyio worker threads
    in slices of ``_THREAD_WAIT_SLICE`` seconds that are never abandoned, so a cancelled wait
    loses no chunk, and no worker thread stays blocked on stdin to delay interpreter exit
    (the reading thread is a daemon).
    """

    def __init__(self, fd: int, read_size: int) -> None:
        self._fd = fd
        self._read_size = read_size  # what one read in the thread asks for
        self._queue: queue.Queue[bytes | OSError] = queue.Queue(maxsize=4)
        self._thread: threading.Thread | None = None
        self._leftover = b""
        self._final: bytes | OSError | None = None  # EOF (b"") or the error that ended reading
        self.closed = False

    def _run(self) -> None:
        while True:
            try:
                data = _read_blocking(self._fd, self._read_size)
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


class ThreadedWriter:
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
    """Wait for a ``threading.Event`` in never-abandoned slices (see :class:`ThreadedReader`)."""
    while not event.is_set():
        await anyio.to_thread.run_sync(event.wait, _THREAD_WAIT_SLICE)
        await checkpoint_if_cancelled()
