"""``mcpbind serve --store URL``: every worker (and every separate server) opens the store, and
workers sharing a Redis store share the key that signs ``requestState``, so the retry of a
multi round-trip request succeeds on whichever worker it reaches.

These need ``mcpbind.store`` (issue 16's store, written on another branch): until it is there,
they are skipped.
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from tests.cli_harness import run_mcpbind
from tests.scale.clients import NAME, connected, retrying
from tests.scale.serving import PID_SERVER, serve

pytestmark = pytest.mark.anyio


async def test_retries_reach_any_server_sharing_a_redis_store(
    anyio_backend: str, tmp_path: Path, redis_url: str, nginx_balancer: Callable[[Sequence[str]], str]
) -> None:
    with serve(tmp_path, backend=anyio_backend, copies=3, extra=["--store", redis_url]) as servers:
        base = nginx_balancer([served.base_url for served in servers])
        async with connected(f"{base}/mcp") as server:
            for _ in range(3):  # (each retry goes to the next server round-robin)
                assert await retrying(server, "ask") == f"hello {NAME}"


async def test_retries_reach_any_worker_sharing_a_redis_store(
    anyio_backend: str, tmp_path: Path, redis_url: str
) -> None:
    with serve(tmp_path, workers=3, backend=anyio_backend, extra=["--store", redis_url]) as [served]:
        async with connected(served.url) as server:
            for _ in range(6):
                assert await retrying(server, "ask") == f"hello {NAME}"


@pytest.mark.parametrize("workers", ["1", "3"])
def test_a_store_url_it_does_not_take(workers: str) -> None:
    done = run_mcpbind(
        *("serve", PID_SERVER, "--transport", "http", "--port", "0"),
        *("--workers", workers, "--store", "carrier-pigeon://coop"),
    )
    assert done.returncode == 2
    assert "mcpbind: --store carrier-pigeon://coop: " in done.stderr, done.stderr


@pytest.mark.parametrize("workers", ["1", "3"])
def test_a_store_it_cannot_reach_at_start(workers: str) -> None:
    """Nothing listens on the port: one clear line, exit 1, and no worker started."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as closed:
        closed.bind(("127.0.0.1", 0))  # (bound, never listening: connections are refused)
        port = closed.getsockname()[1]
        done = run_mcpbind(
            *("serve", PID_SERVER, "--transport", "http", "--port", "0"),
            *("--workers", workers, "--store", f"redis://127.0.0.1:{port}/0"),
        )
    assert done.returncode == 1, done.stderr
    assert done.stderr.startswith(f"mcpbind: --store: Redis at redis://127.0.0.1:{port}/0 is unavailable"), (
        done.stderr
    )
    assert len(done.stderr.splitlines()) == 1, done.stderr
