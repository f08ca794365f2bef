"""A stdio server in a child process: spawn it, talk to it over its pipes, shut it down.

:func:`spawn_stdio_server` starts the command (its stderr inherited, discarded or sent where
the caller says) and yields a :class:`StdioClientTransport` over its stdout and stdin, whose
close is a bounded, cancellation-proof shutdown: close stdin, SIGTERM, SIGKILL, reap.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import IO, Any

import anyio
from anyio.abc import ByteReceiveStream, ByteSendStream, Process
from anyio.lowlevel import checkpoint_if_cancelled

from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE
from mcpbind.transports.stdio.fdio import LOOP_WAITS_ON_FDS, READ_SIZE, FdReceiveStream, FdSendStream
from mcpbind.transports.stdio.stream import StdioTransport

__all__ = ["StdioClientTransport", "spawn_stdio_server"]

# A client makes its own pipes to the server process where the event loop can poll them.
_OWN_PIPES = LOOP_WAITS_ON_FDS


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
                await self._receive_stream.receive(READ_SIZE)
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
            streams = (FdReceiveStream(our_in, owned=True), FdSendStream(our_out, owned=True))
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
