"""The tests' nginx load balancer (tests/nginx_harness.py) in front of small upstreams that say
who they are: it spreads requests round-robin, skips an upstream it cannot connect to, streams
SSE as it comes, and never sends a POST to a second upstream once one got it."""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Iterator
from contextlib import ExitStack
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import anyio
import httpx
import pytest

from tests.nginx_harness import running_nginx

pytestmark = pytest.mark.anyio


class Upstream:
    """An HTTP/1.1 server on 127.0.0.1 in a thread of its own: ``GET /who`` answers its name,
    ``GET /sse`` sends one event, waits for :attr:`go_on`, sends another and ends; ``POST``
    is read and the connection closed with no answer. It counts the requests it got."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.requests = 0
        self.go_on = threading.Event()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.02,), daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=10)

    def _count(self) -> None:
        with self._lock:
            self.requests += 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        upstream = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                upstream._count()
                if self.path == "/sse":
                    self.close_connection = True
                    self.send_response(200)
                    self.send_header("Content-Type", "text/event-stream")
                    self.send_header("Connection", "close")
                    self.end_headers()
                    self.wfile.write(b"data: one\n\n")
                    self.wfile.flush()
                    upstream.go_on.wait(timeout=30)
                    self.wfile.write(b"data: two\n\n")
                    return
                body = upstream.name.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/plain")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self) -> None:
                upstream._count()
                self.rfile.read(int(self.headers.get("Content-Length", "0")))
                self.close_connection = True  # no answer: the connection just ends

        return Handler


@pytest.fixture
def upstreams() -> Iterator[list[Upstream]]:
    with ExitStack() as stack:
        servers = [Upstream(name) for name in ("a", "b", "c")]
        for server in servers:
            stack.callback(server.close)
        yield servers


async def test_requests_go_round_robin(anyio_backend: str, upstreams: list[Upstream]) -> None:
    with running_nginx([u.url for u in upstreams]) as nginx:
        async with httpx.AsyncClient(base_url=nginx.url, timeout=10) as client:
            answers = [(await client.get("/who")).text for _ in range(9)]
    assert Counter(answers) == {"a": 3, "b": 3, "c": 3}
    assert all(len(set(answers[turn : turn + 3])) == 3 for turn in (0, 3, 6))  # each turn visits all


async def test_no_access_log_when_turned_off(anyio_backend: str, upstreams: list[Upstream]) -> None:
    with running_nginx([upstreams[0].url], access_log=False) as nginx:
        async with httpx.AsyncClient(base_url=nginx.url, timeout=10) as client:
            answers = [(await client.get("/who")).text for _ in range(3)]
        written = (nginx.folder / "access.log").exists() and nginx.access_log()
    assert answers == ["a"] * 3
    assert not written


async def test_an_upstream_that_refuses_connections_is_skipped(
    anyio_backend: str, upstreams: list[Upstream]
) -> None:
    with running_nginx([u.url for u in upstreams]) as nginx:
        upstreams[1].close()  # connections to it are refused from now on
        async with httpx.AsyncClient(base_url=nginx.url, timeout=10) as client:
            responses = [await client.get("/who") for _ in range(6)]
    assert [r.status_code for r in responses] == [200] * 6
    assert Counter(r.text for r in responses) == {"a": 3, "c": 3}


async def test_sse_events_pass_as_they_come(anyio_backend: str, upstreams: list[Upstream]) -> None:
    with running_nginx([upstreams[0].url]) as nginx:
        async with httpx.AsyncClient(base_url=nginx.url, timeout=10) as client:
            with anyio.fail_after(10):
                async with client.stream("GET", "/sse") as response:
                    lines = response.aiter_lines()
                    assert await anext(lines) == "data: one"  # while the upstream holds the rest
                    upstreams[0].go_on.set()
                    rest = [line async for line in lines]
    assert "data: two" in rest


async def test_a_post_an_upstream_got_is_not_sent_to_another(
    anyio_backend: str, upstreams: list[Upstream]
) -> None:
    with running_nginx([u.url for u in upstreams]) as nginx:
        async with httpx.AsyncClient(base_url=nginx.url, timeout=10) as client:
            response = await client.post("/mcp", json={"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert response.status_code == 502
    assert sum(u.requests for u in upstreams) == 1
