"""Tests of mcpbind.transports.stdio.process: spawn_stdio_server and StdioClientTransport.

Child processes come from tests/transports/stdio/peers.py (among them a server on
stdio_server_transport); every test runs on asyncio and on trio (see conftest.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from contextlib import AbstractAsyncContextManager
from pathlib import Path

import anyio
import pytest

from mcpbind.transports.stdio import StdioClientTransport, spawn_stdio_server
from mcpbind.transports.stdio import process as stdio_process
from tests.transports.stdio.children import child_env

PEERS = str(Path(__file__).with_name("peers.py"))
POSIX_ONLY = pytest.mark.skipif(sys.platform == "win32", reason="POSIX signals and pipes")


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
    assert close_timeout + terminate_timeout - 0.05 <= elapsed < close_timeout + terminate_timeout + 3
    with pytest.raises(ProcessLookupError):  # reaped: the pid is gone, no zombie left
        os.kill(transport.process.pid, 0)


@pytest.mark.anyio
async def test_shutdown_drains_a_child_blocked_writing() -> None:
    # The child is stuck writing output nobody reads; it only sees the end of its stdin, and
    # exits 0 by itself, because the shutdown reads and discards its stdout.
    with Watchdog() as dog, anyio.fail_after(10):
        async with spawn_peer("chatty", close_timeout=5, terminate_timeout=0.5) as transport:
            dog.watch(transport)
            await wait_ready(transport)  # and it goes on writing, until the pipe is full
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
                await anyio.wait_all_tasks_blocked()  # the pipe is full: the send waits
                started = time.monotonic()
                await transport.aclose()
            assert time.monotonic() - started < 5  # (0.4 s of timeouts; the watchdog kills at 8 s)
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


@pytest.mark.anyio
async def test_server_child_echo_oversized_and_eof(anyio_backend: str) -> None:
    # (Under coverage, on a loaded machine, the child takes several seconds to start and to echo.)
    with Watchdog(25) as dog, anyio.fail_after(30):
        async with spawn_stdio_server(
            sys.executable, [PEERS, "server", anyio_backend, "1000"], env=child_env(), close_timeout=10
        ) as transport:
            dog.watch(transport)
            await transport.send(b'{"jsonrpc":"2.0","method":"ping","id":1}')
            assert await transport.receive() == b'{"jsonrpc":"2.0","method":"ping","id":1}'
            await transport.send(b'{"pad":"' + b"x" * 5000 + b'"}')
            assert await transport.receive() == b"TOO_LARGE"
            await transport.send(b'{"after":true}')
            assert await transport.receive() == b'{"after":true}'

            # Many small messages, pipelined: the server reads them in bulk.
            count = 5_000
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
    assert time.monotonic() - closing < 8  # under close_timeout: it exited on its own
