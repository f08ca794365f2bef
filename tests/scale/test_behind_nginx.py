"""Separate ``mcpbind serve --transport http`` processes (each on its own port) behind nginx, a
plain round-robin load balancer with no affinity: 2026-07-28 requests through it are answered
by every server with nothing shared, and go on while one of them is dead (nginx passes a
request it cannot connect with to the next server). The servers run on the test's backend."""

from __future__ import annotations

import os
import signal
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from tests.scale.clients import call_pid, connected, retrying
from tests.scale.serving import deadline_poll, gone, serve

pytestmark = pytest.mark.anyio

SERVERS = 3


async def test_requests_through_nginx_reach_every_server(
    anyio_backend: str, tmp_path: Path, nginx_balancer: Callable[[Sequence[str]], str]
) -> None:
    with serve(tmp_path, backend=anyio_backend, copies=SERVERS) as servers:
        base = nginx_balancer([served.base_url for served in servers])
        async with connected(f"{base}/mcp") as server:
            assert await retrying(server, "echo", {"text": "through nginx"}) == "through nginx"
            answered = Counter([await call_pid(server) for _ in range(2 * SERVERS)])
    assert answered == dict.fromkeys((served.process.pid for served in servers), 2)  # round-robin


async def test_requests_go_on_while_a_server_is_dead(
    anyio_backend: str, tmp_path: Path, nginx_balancer: Callable[[Sequence[str]], str]
) -> None:
    with serve(tmp_path, backend=anyio_backend, copies=SERVERS) as servers:
        base = nginx_balancer([served.base_url for served in servers])
        dead, *alive = (served.process.pid for served in servers)
        async with connected(f"{base}/mcp") as server:
            assert await call_pid(server) in (dead, *alive)
            os.kill(dead, signal.SIGKILL)
            deadline_poll(lambda: gone(dead) or None, "the server is gone")
            answered = {await call_pid(server) for _ in range(3 * SERVERS)}
    assert answered == set(alive)


async def test_a_retry_on_another_server_needs_a_shared_key(
    anyio_backend: str, tmp_path: Path, nginx_balancer: Callable[[Sequence[str]], str]
) -> None:
    """Without a store, each server signs ``requestState`` with a key of its own: the retry of
    a multi round-trip request, sent by round-robin to the next server, is refused."""
    with serve(tmp_path, backend=anyio_backend, copies=SERVERS) as servers:
        base = nginx_balancer([served.base_url for served in servers])
        async with connected(f"{base}/mcp") as server:
            with pytest.raises(McpError) as refused:
                await server.call_tool("ask")
    assert refused.value.code == INVALID_PARAMS
    assert "request_state_key" in refused.value.message
