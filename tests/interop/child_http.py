"""A peer's HTTP server in a child process for the interop tests: started on a free port of
127.0.0.1, waited for until it listens, stopped when the block ends."""

from __future__ import annotations

import subprocess
from collections.abc import AsyncIterator, Callable, Sequence
from contextlib import asynccontextmanager

import anyio

from tests.http_harness import loopback_socket

__all__ = ["child_http_server"]


@asynccontextmanager
async def child_http_server(
    command: Callable[[int], Sequence[str]], name: str, path: str = "/mcp"
) -> AsyncIterator[str]:
    """Run ``command(port)`` (the argv of a server listening on ``port``) until the block ends;
    yields its MCP URL. ``name`` says whose server it is when it exits early."""
    sock = loopback_socket()
    port = sock.getsockname()[1]
    sock.close()  # the child binds it again
    process = subprocess.Popen(
        list(command(port)), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )
    try:
        with anyio.fail_after(20):
            while True:  # until the child listens (it signals nothing else)
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    assert process.poll() is None, f"the {name} server exited"
                    await anyio.sleep(0.05)
                else:
                    await stream.aclose()
                    break
        yield f"http://127.0.0.1:{port}{path}"
    finally:
        process.terminate()
        process.wait(10)
