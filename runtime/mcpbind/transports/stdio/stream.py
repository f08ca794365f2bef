"""The stdio transport over a pair of byte streams: lines out, lines in, answers batched.

:class:`StdioTransport` is a :class:`~mcpbind.transports.base.Transport` over any anyio
``ByteReceiveStream`` / ``ByteSendStream`` pair, framed by
:class:`~mcpbind.transports.stdio.framing.LineFramer`; :func:`stdio_server_transport` is the
one over this process's own stdin and stdout (the descriptor streams of
:mod:`~mcpbind.transports.stdio.fdio`).
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream
from anyio.lowlevel import checkpoint_if_cancelled

from mcpbind.fastpath import new_lock
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.stdio.fdio import (
    PIPE_BUF,
    READ_SIZE,
    FdReceiveStream,
    FdSendStream,
    ReceiveReadyStream,
    WriteWholeNowaitStream,
)
from mcpbind.transports.stdio.framing import LineFramer

__all__ = ["StdioTransport", "stdio_server_transport"]


# --------------------------------------------------------------------------------------------
# The transport over a byte stream pair
# --------------------------------------------------------------------------------------------


class StdioTransport:
    """A :class:`~mcpbind.transports.base.Transport` framing messages as lines over two byte streams.

    ``send(message)`` writes ``message + b"\\n"`` in one ``send`` on the stream, under a lock,
    so concurrent senders never interleave. ``receive()`` returns the next line; it raises
    ``anyio.EndOfStream`` once the peer closed (after delivering a final unterminated line),
    :class:`~mcpbind.transports.base.MessageTooLarge` for a line over ``max_message_size``
    (which is dropped; the next ``receive()`` goes on with the line after it), and
    ``anyio.ClosedResourceError`` after :meth:`aclose`. A cancelled ``receive()`` loses
    nothing: data already read stays buffered.

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

    Over the descriptor streams of :mod:`~mcpbind.transports.stdio.fdio` (this process's stdin
    and stdout, a client's own pipes to its server) the transport also uses their optional
    features: :meth:`send_nowait` writes a short message at once, and the rest of a large
    message already readable is taken without waiting. Over other streams ``send_nowait``
    returns ``False`` and ``send()`` does the work.
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
        # The streams' optional features, taken up once, here, by the streams' classes.
        self._ready_stream: ReceiveReadyStream | None = (
            receive_stream if isinstance(receive_stream, FdReceiveStream) else None
        )
        self._nowait_stream: WriteWholeNowaitStream | None = (
            send_stream if isinstance(send_stream, FdSendStream) else None
        )
        self._framer = LineFramer(max_message_size)
        self._send_lock = new_lock()  # first come first served (mcpbind.fastpath)
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
                    ready_stream = self._ready_stream
                    if ready_stream is not None:
                        await checkpoint_if_cancelled()
                        chunk = ready_stream.receive_ready(READ_SIZE)
                if chunk is None:
                    chunk = await self._receive_stream.receive(READ_SIZE)
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
        if len(message) >= PIPE_BUF or b"\n" in message:
            return False
        return self._write_whole_nowait(message + b"\n")

    def send_batch_nowait(self, messages: Sequence[bytes]) -> int:
        """Write the first of ``messages`` (each with its newline) in one write, as many as fit
        in ``PIPE_BUF`` bytes, if that needs no waiting: how many were written (0 where
        :meth:`send_nowait` would return ``False``, or for a message containing a newline). A
        client's requests made in one turn of the event loop leave so, in one write."""
        size = 0
        count = 0
        for message in messages:
            if size + len(message) >= PIPE_BUF or b"\n" in message:
                break
            size += len(message) + 1
            count += 1
        if not count:
            return 0
        data = b"\n".join(messages[:count]) + b"\n" if count > 1 else messages[0] + b"\n"
        return count if self._write_whole_nowait(data) else 0

    def _write_whole_nowait(self, data: bytes) -> bool:
        """Write ``data`` (whole lines, at most ``PIPE_BUF`` bytes) whole, now, or write nothing
        and return ``False``: when another send is in progress or held back, or the stream
        cannot write without waiting."""
        nowait_stream = self._nowait_stream
        if (
            nowait_stream is None
            or self._closed
            or self._send_torn
            or self._batching
            or self._pending
            or self._send_lock.locked()
        ):
            return False
        try:
            return nowait_stream.write_whole_nowait(data)
        except OSError:
            return False  # send() meets the error again and says it properly

    async def _flush_before_close(self) -> None:
        """Let a send in progress end and write what is held back, if the peer takes it within
        a second: a message already handed to ``send()`` is not cut off by the close."""
        if self._pending or self._send_lock.locked():
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
    transport = StdioTransport(FdReceiveStream(stdin), FdSendStream(stdout), max_message_size)
    try:
        yield transport
    finally:
        await transport.aclose()
