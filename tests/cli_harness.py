"""The ``mcpbind`` command in a child process: its command line, a run of it to the end,
``mcpbind serve`` (or ``proxy``) on a free port of 127.0.0.1 (waiting until it listens, stopping
it), and, for a child started with :func:`anyio.open_process`, the sign-in URL ``mcpbind call``
prints and what it printed in the end."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from anyio.abc import Process

from tests.harness import child_env

__all__ = [
    "finish",
    "free_port",
    "mcpbind_command",
    "mcpbind_listening",
    "mcpbind_serving",
    "printed_url",
    "run_mcpbind",
    "stop",
    "wait_listening",
]


def mcpbind_command(*args: str) -> list[str]:
    """``python -m mcpbind ARGS`` with this interpreter."""
    return [sys.executable, "-m", "mcpbind", *args]


def run_mcpbind(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """``mcpbind ARGS`` run to its end (at most a minute) with no input; what it printed, as
    text, and its exit code. ``env``: the environment (default :func:`~tests.harness.child_env`)."""
    return subprocess.run(
        mcpbind_command(*args),
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=env or child_env(),
        timeout=60,
        check=False,
    )


def free_port() -> int:
    """A TCP port of 127.0.0.1 that was free a moment ago (for a child process to listen on)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def wait_listening(port: int, serving: subprocess.Popen[Any], timeout: float = 30.0) -> None:
    """Until something accepts connections on 127.0.0.1:``port``; fails the test when
    ``serving`` exits first (with what it printed, if it was captured) or ``timeout`` passes."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            return
        except OSError:
            if serving.poll() is not None:
                raise AssertionError(
                    f"the server did not start (exit code {serving.returncode}): {serving.communicate()}"
                ) from None
            assert time.monotonic() < deadline, (
                f"the server did not listen on port {port} within {timeout:g} s"
            )
            time.sleep(0.05)


def stop(process: subprocess.Popen[Any]) -> None:
    """Kill ``process`` if it still runs, and wait for it."""
    if process.poll() is None:
        process.kill()
    process.wait(timeout=30)


@contextmanager
def mcpbind_serving(*args: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``mcpbind serve ARGS --port PORT`` (``ARGS`` naming the HTTP transport), from when it
    listens on 127.0.0.1:``port`` until the block ends, when it is killed; what it prints is
    dropped."""
    with mcpbind_listening("serve", *args, "--port", str(port), port=port) as serving:
        yield serving


@contextmanager
def mcpbind_listening(*args: str, port: int) -> Iterator[subprocess.Popen[bytes]]:
    """``mcpbind ARGS`` (``ARGS`` telling it to listen on ``port``: ``serve``, ``proxy``), from
    when it listens on 127.0.0.1:``port`` until the block ends, when it is killed; what it
    prints is dropped."""
    serving = subprocess.Popen(
        mcpbind_command(*args),
        env=child_env(),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        wait_listening(port, serving)
        yield serving
    finally:
        stop(serving)


async def printed_url(process: Process) -> tuple[str, str]:
    """The URL ``mcpbind call`` printed on stderr for the user to open (the first whole line
    starting with ``http``), and all it printed on stderr so far."""
    assert process.stderr is not None
    seen = ""
    while True:
        seen += (await process.stderr.receive()).decode()
        complete = seen.split("\n")[:-1]
        urls = [line.strip() for line in complete if line.strip().startswith("http")]
        if urls:
            return urls[0], seen


async def finish(process: Process) -> tuple[int, str, str]:
    """Once ``process`` has printed all it prints: its exit code, stdout and (the rest of) its
    stderr."""
    assert process.stdout is not None and process.stderr is not None
    out, err = b"", b""
    async for chunk in process.stdout:
        out += chunk
    async for chunk in process.stderr:
        err += chunk
    return await process.wait(), out.decode(), err.decode()
