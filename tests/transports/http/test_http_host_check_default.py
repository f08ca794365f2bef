"""The Host check (DNS-rebinding protection) ``serve_http`` and ``Server.run_http`` choose from the
host they are given: on by default for a loopback host (a request naming another host gets
403; another loopback address than 127.0.0.1 is allowed by its own name too), off for any other host unless ``allowed_hosts`` is given, the Origin check staying on.

The server is handed a listening socket of 127.0.0.1 (``sockets=``), which leaves ``host`` to
decide the default only: nothing listens on a public interface.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.transports.http.security import LOCALHOST_HOSTS, LOCALHOST_ORIGINS, loopback_allow_lists, matches
from mcpbind.transports.http.server import serve_http
from tests.http_harness import loopback_socket
from tests.http_server_helpers import headers, initialize, make_server

pytestmark = pytest.mark.anyio

BODY = json.dumps(initialize())


@asynccontextmanager
async def serving(host: str, *, run_http: bool = False, **options: Any) -> AsyncIterator[tuple[str, int]]:
    """``serve_http`` (or ``Server.run_http``) told ``host``, on a loopback socket; its URL and
    port while the block runs."""
    sock = loopback_socket()
    port = sock.getsockname()[1]
    ready = anyio.Event()
    server = make_server()
    options = {"sockets": [sock], "ready": ready.set, "json_response": True, **options}
    run = (
        partial(server.run_http, host, port, **options)
        if run_http
        else partial(serve_http, server, host, port, **options)
    )
    async with anyio.create_task_group() as tg:
        tg.start_soon(run)
        with anyio.fail_after(10):
            await ready.wait()
        try:
            yield f"http://127.0.0.1:{port}/mcp", port
        finally:
            tg.cancel_scope.cancel()


async def status(url: str, timeout: float = 10, **extra: str) -> int:
    async with httpx.AsyncClient(timeout=timeout) as client:
        response = await client.post(url, content=BODY, headers={**headers(version=None), **extra})
        return response.status_code


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost", "::1"])
async def test_on_a_loopback_host_another_host_name_is_refused(host: str) -> None:
    async with serving(host) as (url, port):
        assert await status(url, host="evil.example") == 403
        assert await status(url, host=f"evil.example:{port}") == 403
        assert await status(url, host=f"localhost:{port}") == 200
        assert await status(url) == 200  # 127.0.0.1:PORT, as httpx names it


@pytest.mark.parametrize("host", ["127.0.0.2", "127.1.2.3"])
async def test_on_another_loopback_address_the_check_stays_on_and_names_it(host: str) -> None:
    async with serving(host) as (url, port):
        assert await status(url, host="evil.example") == 403
        assert await status(url, host=f"{host}:{port}") == 200
        assert await status(url, host=f"localhost:{port}") == 200
        assert await status(url, host=f"{host}:{port}", origin=f"http://{host}:{port}") == 200
        assert await status(url, origin="http://evil.example") == 403


@pytest.mark.parametrize(
    ("host", "named"),
    [
        ("127.0.0.1", None),
        ("localhost", None),
        ("LOCALHOST", None),
        ("::1", None),
        ("[::1]", None),
        ("0:0:0:0:0:0:0:1", None),
        ("127.0.0.2", "127.0.0.2"),
    ],
)
def test_the_allow_lists_of_a_loopback_host(host: str, named: str | None) -> None:
    allow = loopback_allow_lists(host)
    assert allow is not None
    hosts, origins = allow
    assert set(LOCALHOST_HOSTS) <= set(hosts) and set(LOCALHOST_ORIGINS) <= set(origins)
    extra = set(hosts) - set(LOCALHOST_HOSTS)
    assert extra == (set() if named is None else {named, f"{named}:*"})
    assert not matches("evil.example", hosts) and not matches("http://evil.example", origins)


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "mcp.example.com", "localhost.example"])
def test_no_allow_lists_for_any_other_host(host: str) -> None:
    assert loopback_allow_lists(host) is None


@pytest.mark.parametrize("host", ["0.0.0.0", "::", "192.0.2.10", "mcp.example.com"])
async def test_on_any_other_host_the_host_check_is_off_and_the_origin_check_stays(host: str) -> None:
    async with serving(host) as (url, port):
        assert await status(url, host="evil.example") == 200
        assert await status(url, host=f"mcp.example.com:{port}") == 200
        assert await status(url, origin="http://evil.example") == 403
        assert await status(url, origin=f"http://localhost:{port}") == 200


async def test_allowed_hosts_given_keep_the_check_on_any_host() -> None:
    async with serving("0.0.0.0", allowed_hosts=["mcp.example.com", "127.0.0.1:*"]) as (url, _):
        assert await status(url, host="evil.example") == 403
        assert await status(url, host="mcp.example.com") == 200
        assert await status(url) == 200


@pytest.mark.parametrize(("host", "expected"), [("127.0.0.1", 403), ("0.0.0.0", 200)])
async def test_run_http_chooses_the_same_way(host: str, expected: int) -> None:
    async with serving(host, run_http=True) as (url, _):
        assert await status(url, host="evil.example") == expected


async def test_serving_again_in_the_same_event_loop(anyio_backend: str) -> None:
    if anyio_backend == "trio":
        pytest.skip("uvicorn serves on asyncio only (hypercorn on trio closes what it listened on)")
    answers: list[int | None] = []
    for _ in range(2):
        async with serving("127.0.0.1") as (url, _):
            try:
                answers.append(await status(url, timeout=3))
            except httpx.ReadTimeout:
                answers.append(None)
    assert answers == [200, 200]
