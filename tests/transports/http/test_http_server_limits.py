"""The Streamable HTTP server under pressure: slow and stalled clients, many or large bodies,
half-open sessions, slow connections; and what its transport refuses to do."""

from __future__ import annotations

import asyncio
import errno
import json
import logging
import resource
import socket
import subprocess
import tempfile
import time
import tracemalloc
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from functools import partial
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.server.server import Server
from mcpbind.transports.http.events import MemoryEventStore
from mcpbind.transports.http.server import HttpSessionTransport, StreamableHTTPApp, serve_http
from mcpbind.transports.http.server.embedded import LogRateLimiter
from mcpbind.transports.http.server.listeners import Listener
from tests import http_server_helpers as helpers
from tests.cli_harness import free_port, mcpbind_command, run_mcpbind, wait_listening
from tests.harness import child_env
from tests.http_harness import ServerName, loopback_socket
from tests.http_server_helpers import call, make_server, open_session, post, request, running

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


# -- the session transport is fed, never read ------------------------------------------------


async def test_the_session_transport_refuses_to_be_read() -> None:
    """The app feeds its sessions each POST's message; nothing is queued for ``receive()``,
    which says so at once instead of waiting for messages that never come."""
    transport = HttpSessionTransport("s", event_store=None)
    with anyio.fail_after(5), pytest.raises(RuntimeError, match=r"Session\.feed"):
        await transport.receive()


def test_there_is_no_inbound_queue_to_bound() -> None:
    with pytest.raises(TypeError):
        StreamableHTTPApp(make_server(), max_queued_messages=16)  # type: ignore[call-arg]
    with pytest.raises(TypeError):
        HttpSessionTransport("s", event_store=None, max_queued_messages=16)  # type: ignore[call-arg]


# -- slow and stalled readers -----------------------------------------------------------------


def _noting_server() -> Server:
    """make_server's tools, and ``write_note``, which tells every subscriber ``times`` times
    that ``note://board`` changed (with a long query, so that each notification is big)."""
    server = make_server()
    server.max_uri_length = 2 * len(BOARD)  # the URI is long to make each notification big

    @server.tool()
    async def write_note(times: int) -> str:
        for _ in range(times):
            await server.resource_updated(BOARD)
        return f"noted {times}"

    @server.tool()
    async def burst(times: int) -> str:
        """Tells every session ``times`` times that the tool list changed, without a pause."""
        for _ in range(times):
            await server.tools_changed()
        return f"burst {times}"

    return server


BOARD = "note://board?" + "n" * 60_000


class RawStream:
    """A GET stream read (or not) on a plain socket with a small receive buffer: what a client
    that stops reading looks like to the server."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""

    @classmethod
    async def open(cls, url: str, session_id: str, last_event_id: str | None = None) -> RawStream:
        parsed = httpx.URL(url)
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        try:
            sock.connect((parsed.host, parsed.port))
        except BlockingIOError:
            await anyio.wait_writable(sock)
        head = [
            f"GET {parsed.path} HTTP/1.1",
            f"Host: {parsed.host}:{parsed.port}",
            "Accept: text/event-stream",
            f"Mcp-Session-Id: {session_id}",
            f"MCP-Protocol-Version: {helpers.LATEST}",
        ]
        if last_event_id is not None:
            head.append(f"Last-Event-ID: {last_event_id}")
        sock.send(("\r\n".join(head) + "\r\n\r\n").encode())
        return cls(sock)

    async def read_to_end(self, timeout: float) -> bytes:
        """Everything until the server closes the response (chunked) or the connection."""
        with anyio.fail_after(timeout):
            while not self.data.endswith(b"\r\n0\r\n\r\n"):
                await anyio.wait_readable(self.sock)
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    break
                self.data += chunk
        return self.data

    def events(self) -> list[dict[str, str]]:
        head, _, body = self.data.partition(b"\r\n\r\n")
        assert head.startswith(b"HTTP/1.1 200"), head
        return helpers.sse_events(_unchunk(body).decode())

    def close(self) -> None:
        self.sock.close()


def _unchunk(body: bytes) -> bytes:
    out = []
    while body:
        size_line, _, rest = body.partition(b"\r\n")
        size = int(size_line.split(b";")[0], 16)
        if size == 0:
            break
        out.append(rest[:size])
        body = rest[size + 2 :]
    return b"".join(out)


async def test_a_stalled_get_stream_holds_back_no_broadcast(asgi_server: ServerName) -> None:
    """One client opens its GET stream and stops reading; another session's handler tells
    every subscriber about a change, again and again. The handler finishes at once, the stalled
    stream holds no more than its byte bound, and its client is disconnected; with the event
    store it resumes with Last-Event-ID."""
    limit = 256 << 10
    store = MemoryEventStore(max_bytes_per_session=2 << 20)
    app = StreamableHTTPApp(
        _noting_server(), max_buffered_bytes=limit, keepalive_interval=None, event_store=store
    )
    times = 300  # 18 MB for the stalled client: more than the socket buffers hold
    async with running(app, asgi_server) as (url, client):
        stalled = await open_session(client, url)
        response, _ = await post(client, url, request(1, "resources/subscribe", {"uri": BOARD}), stalled)
        assert response.status_code == 200
        writer = await open_session(client, url)
        raw = await RawStream.open(url, stalled)
        try:
            with anyio.fail_after(10):
                while not app.sessions[stalled].transport._listeners:
                    await anyio.sleep(0.01)
            tracemalloc.start()
            try:
                before = tracemalloc.get_traced_memory()[0]
                with anyio.fail_after(30):  # it waited for the stalled client for good before
                    _, got = await post(client, url, call(2, "write_note", {"times": times}), writer)
                    assert got[-1]["result"]["content"][0]["text"] == f"noted {times}"
                    # And again: a handler now never waits for that client.
                    _, got = await post(client, url, call(3, "write_note", {"times": 20}), writer)
                    assert got[-1]["result"]["content"][0]["text"] == "noted 20"
                held = tracemalloc.get_traced_memory()[0] - before
            finally:
                tracemalloc.stop()
            # What stays: the events kept in the store and in the backlog (messages with no GET
            # stream), each within its bound; nothing queued for the stalled connection, which
            # was cut off. (A message's bytes take up to about 1.5 times its length.)
            assert held < 2 * (store.max_bytes_per_session + limit), held
            # The client reads again: what was on its way, then the end of the stream.
            await raw.read_to_end(timeout=20)
            seen = [e for e in raw.events() if e.get("data")]
        finally:
            raw.close()
        # Some got through before the client stopped reading; the rest it has to ask for.
        assert len(seen) < times
        assert all(json.loads(e["data"])["params"]["uri"] == BOARD for e in seen)
        last = seen[-1]["id"] if seen else next(e["id"] for e in raw.events() if "id" in e)
        # It resumes from the last event it got, and gets the newest ones from the store.
        resumed = await RawStream.open(url, stalled, last_event_id=last)
        try:
            with anyio.fail_after(10):
                while True:
                    await anyio.wait_readable(resumed.sock)
                    resumed.data += resumed.sock.recv(1 << 16)
                    replayed = [e for e in resumed.events() if e.get("data")]
                    if replayed and replayed[-1]["id"] == _newest(store, stalled):
                        break
        finally:
            resumed.close()
        number = int(last.rpartition("_")[2])
        assert all(int(e["id"].rpartition("_")[2]) > number for e in replayed)
        # Both sessions go on.
        for session_id in (stalled, writer):
            _, got = await post(client, url, call(4, "echo", {"text": "still here"}), session_id)
            assert got[-1]["result"]["content"][0]["text"] == "still here"


def _newest(store: MemoryEventStore, session_id: str) -> str:
    streams = store._sessions[session_id]
    stream_id, events = max(streams.items(), key=lambda item: item[1][-1][0])
    return f"{stream_id}_{events[-1][0]}"


async def test_a_reading_get_stream_keeps_up_with_a_burst(asgi_server: ServerName) -> None:
    """More notifications at once than a stream may hold: a client that reads gets them all,
    on the same connection (the stream's writer runs before anything is cut off)."""
    app = StreamableHTTPApp(_noting_server(), max_buffered_events=16, keepalive_interval=None)
    times = 300
    async with running(app, asgi_server) as (url, client):
        listener = await open_session(client, url)
        writer = await open_session(client, url)
        async with helpers.get_stream(client, url, listener) as stream:
            await stream.next()  # priming
            with anyio.fail_after(10):
                while not app.sessions[listener].transport._listeners:
                    await anyio.sleep(0.01)
            async with anyio.create_task_group() as tg:
                tg.start_soon(post, client, url, call(1, "burst", {"times": times}), writer)
                for _ in range(times):
                    note = await stream.next_message()
                    assert note["method"] == "notifications/tools/list_changed"
        assert app.sessions[listener].transport._listeners  # still the same connection


async def test_a_post_stream_is_bounded_in_bytes(asgi_server: ServerName) -> None:
    """A client that stops reading its POST's stream holds back that request's handler once
    ``max_buffered_bytes`` wait, however few events that is; it gets them all when it reads."""
    limit = 512 << 10
    app = StreamableHTTPApp(make_server(), max_buffered_bytes=limit, keepalive_interval=None)
    # 30 MB: more than the socket buffers hold (loopback's grow to several MB on a busy machine,
    # where 8 MB were once all taken by them and the handler finished).
    count, size = 150, 200_000
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        message = call(1, "chatter", {"count": count, "size": size})
        async with client.stream("POST", url, json=message, headers=helpers.headers(session_id)) as response:
            reader = helpers.EventReader(response)
            await reader.next()  # priming
            await reader.next_message()
            # Not reading: the handler fills the stream until the next event would pass the limit,
            # and waits there (what the sockets hold is not counted).
            (stream,) = app.sessions[session_id].transport._streams.values()
            with anyio.fail_after(20):
                while stream.buffered + size <= limit:
                    await anyio.sleep(0.01)
            for _ in range(20):  # and it stays there, however long nobody reads
                await anyio.sleep(0.01)
                assert not stream.finished  # the handler waits
                assert stream.buffered <= limit + size
            got = 1
            while "id" not in (answer := await reader.next_message(timeout=10)):
                got += 1
        assert answer["result"]["content"][0]["text"] == f"said {count}"
        assert got == count


async def test_the_backlog_is_bounded_in_bytes(asgi_server: ServerName) -> None:
    """Unrelated messages wait for a GET stream in a backlog of at most ``max_buffered_bytes``:
    the newest are kept."""
    limit = 256 << 10
    app = StreamableHTTPApp(_noting_server(), max_buffered_bytes=limit, keepalive_interval=None)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response, _ = await post(client, url, request(1, "resources/subscribe", {"uri": BOARD}), session_id)
        assert response.status_code == 200
        _, got = await post(client, url, call(2, "write_note", {"times": 50}), session_id)
        assert got[-1]["result"]["content"][0]["text"] == "noted 50"
        _, got = await post(client, url, call(3, "burst", {"times": 1}), session_id)
        async with helpers.get_stream(client, url, session_id) as stream:
            notes = []
            while (note := await stream.next_message())["method"] != "notifications/tools/list_changed":
                notes.append(note)
        assert 1 <= len(notes) <= limit // len(BOARD)


# -- many bodies at once, sessions left half-open ---------------------------------------------


class RawConnection:
    """A plain TCP connection to the server, for requests sent as slowly as a test likes."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.data = b""

    @classmethod
    async def open(cls, url: str) -> RawConnection:
        parsed = httpx.URL(url)
        assert parsed.host is not None and parsed.port is not None
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setblocking(False)
        try:
            sock.connect((parsed.host, parsed.port))
        except BlockingIOError:
            await anyio.wait_writable(sock)
        return cls(sock)

    async def send(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            await anyio.wait_writable(self.sock)
            view = view[self.sock.send(view) :]

    async def read_until_closed(self, timeout: float) -> bytes:
        """What the server sends until it closes the connection (TimeoutError if it does not)."""
        with anyio.fail_after(timeout):
            while True:
                await anyio.wait_readable(self.sock)
                try:
                    chunk = self.sock.recv(1 << 16)
                except ConnectionResetError:
                    chunk = b""
                if not chunk:
                    return self.data
                self.data += chunk

    async def read_response(self, timeout: float) -> tuple[int, dict[str, str]]:
        """The status and headers of the response (its head only)."""
        with anyio.fail_after(timeout):
            while b"\r\n\r\n" not in self.data:
                await anyio.wait_readable(self.sock)
                chunk = self.sock.recv(1 << 16)
                if not chunk:
                    raise EOFError(self.data)
                self.data += chunk
        head = self.data.partition(b"\r\n\r\n")[0].decode("latin-1").split("\r\n")
        fields = dict(line.split(":", 1) for line in head[1:])
        return int(head[0].split()[1]), {k.strip().lower(): v.strip() for k, v in fields.items()}

    def close(self) -> None:
        self.sock.close()


def post_head(url: str, session_id: str, length: int | None) -> bytes:
    """The head of a POST of a JSON body of ``length`` bytes (``None``: chunked)."""
    parsed = httpx.URL(url)
    lines = [
        f"POST {parsed.path} HTTP/1.1",
        f"Host: {parsed.host}:{parsed.port}",
        "Content-Type: application/json",
        f"Accept: {helpers.ACCEPT_BOTH}",
        f"Mcp-Session-Id: {session_id}",
        f"MCP-Protocol-Version: {helpers.LATEST}",
        f"Content-Length: {length}" if length is not None else "Transfer-Encoding: chunked",
    ]
    return ("\r\n".join(lines) + "\r\n\r\n").encode()


async def test_bodies_in_progress_share_a_budget(asgi_server: ServerName) -> None:
    """Bodies being read or answered hold at most ``max_body_bytes_in_flight`` bytes together;
    a POST past that gets 503 with Retry-After, and room comes back as they finish."""
    mib = 1 << 20
    app = StreamableHTTPApp(make_server(), max_body_size=mib, max_body_bytes_in_flight=2 * mib)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        small = call(1, "echo", {"text": "hi"})
        # Two clients announce bodies of 1 MiB and send the first bytes of them only.
        slow = [await RawConnection.open(url) for _ in range(2)]
        try:
            for connection in slow:
                await connection.send(post_head(url, session_id, mib) + b'{"jsonrpc": "2.0", ')
            with anyio.fail_after(10):
                while app._body_bytes < 2 * mib:  # (until the server has read both heads)
                    await anyio.sleep(0.02)
            response = await client.post(url, json=small, headers=helpers.headers(session_id))
            assert response.status_code == 503
            assert response.headers["retry-after"] == "1"
            assert response.json()["error"]["message"].startswith("Server busy")
            # A body without Content-Length is counted as it comes: past the budget, 503 too.
            chunked = await RawConnection.open(url)
            try:
                part = b" " * (3 * mib // 4)
                await chunked.send(post_head(url, session_id, None) + b"%x\r\n" % len(part) + part + b"\r\n")
                status, fields = await chunked.read_response(timeout=10)
                assert (status, fields["retry-after"]) == (503, "1")
            finally:
                chunked.close()
        finally:
            slow[0].close()
        # One of them went away: its share is free again.
        try:
            with anyio.fail_after(10):
                while True:
                    response = await client.post(url, json=small, headers=helpers.headers(session_id))
                    if response.status_code == 200:
                        break
                    assert response.status_code == 503
                    await anyio.sleep(0.02)
        finally:
            slow[1].close()
        # One body over max_body_size is still 413.
        big = call(2, "echo", {"text": "x" * (mib + 1)})
        response = await client.post(url, json=big, headers=helpers.headers(session_id))
        assert response.status_code == 413
        with anyio.fail_after(10):
            while app._body_bytes:
                await anyio.sleep(0.02)


async def test_sessions_never_initialized_end_soon(asgi_server: ServerName) -> None:
    """A client that sends initialize but never notifications/initialized holds its place only
    for ``initialization_timeout``: bare initializes cannot keep real clients out for long."""
    app = StreamableHTTPApp(make_server(), max_sessions=3, initialization_timeout=0.3)
    async with running(app, asgi_server) as (url, client):
        ready = await open_session(client, url)
        bare = []
        for _ in range(2):
            response = await client.post(
                url, json=helpers.initialize(), headers=helpers.headers(version=None)
            )
            assert response.status_code == 200
            bare.append(response.headers["mcp-session-id"])
        response = await client.post(url, json=helpers.initialize(), headers=helpers.headers(version=None))
        assert response.status_code == 503
        assert response.headers["retry-after"] == "1"
        with anyio.fail_after(5):
            while any(session_id in app.sessions for session_id in bare):
                await anyio.sleep(0.05)
        # Initialized sessions stay, however long they wait: the one opened before the bare ones
        # would have gone before them.
        assert ready in app.sessions
        response, _ = await post(client, url, call(1, "echo", {"text": "x"}), bare[0])
        assert response.status_code == 404
        await open_session(client, url)
        await open_session(client, url)
        assert ready in app.sessions and len(app.sessions) == 3


# -- slow connections ---------------------------------------------------------------------------


@asynccontextmanager
async def embedded(server: Server, **options: Any) -> AsyncIterator[str]:
    """``serve_http`` (uvicorn on asyncio, hypercorn on trio) on a free loopback port; its URL."""
    sock = loopback_socket()
    port = sock.getsockname()[1]
    sock.close()  # serve_http binds by address; the port was free a moment ago
    async with anyio.create_task_group() as tg:
        tg.start_soon(partial(serve_http, server, "127.0.0.1", port, **options))
        with anyio.fail_after(10):
            while True:
                try:
                    stream = await anyio.connect_tcp("127.0.0.1", port)
                except OSError:
                    await anyio.sleep(0.02)
                else:
                    await stream.aclose()
                    break
        try:
            yield f"http://127.0.0.1:{port}/mcp"
        finally:
            tg.cancel_scope.cancel()


def embedded_only(anyio_backend: str, asgi_server: ServerName) -> None:
    if anyio_backend == "asyncio" and asgi_server == "hypercorn":
        pytest.skip("serve_http runs uvicorn on asyncio")


async def test_a_slow_request_head_is_cut_off(anyio_backend: str, asgi_server: ServerName) -> None:
    """Connections that send nothing, part of a request head, or a head a byte at a time are
    closed ``header_timeout`` after they opened; requests in progress are not (an SSE stream
    outlives it), and the server keeps answering."""
    embedded_only(anyio_backend, asgi_server)
    async with embedded(_noting_server(), header_timeout=0.5, keepalive_interval=None) as url:
        silent, partial_head, dripping = [await RawConnection.open(url) for _ in range(3)]
        try:
            await partial_head.send(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
            async with httpx.AsyncClient(timeout=5) as client:
                session_id = await open_session(client, url)
                async with helpers.get_stream(client, url, session_id) as stream:
                    await stream.next()  # priming
                    started = anyio.current_time()
                    with anyio.fail_after(5):
                        async with anyio.create_task_group() as tg:
                            tg.start_soon(silent.read_until_closed, 5)
                            tg.start_soon(partial_head.read_until_closed, 5)
                            for byte in b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n":
                                try:
                                    await dripping.send(bytes([byte]))
                                except OSError:
                                    break  # closed
                                await anyio.sleep(0.05)
                            await dripping.read_until_closed(5)
                    assert anyio.current_time() - started < 4
                    assert silent.data == partial_head.data == b""
                    # The stream, open longer than header_timeout, still carries messages.
                    _, got = await post(client, url, call(1, "burst", {"times": 1}), session_id)
                    assert got[-1]["result"]["content"][0]["text"] == "burst 1"
                    note = await stream.next_message()
                    assert note["method"] == "notifications/tools/list_changed"
        finally:
            for connection in (silent, partial_head, dripping):
                connection.close()


async def test_without_the_uvicorn_internals_it_uses_the_head_timer_is_left_out(
    anyio_backend: str,
    asgi_server: ServerName,
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """uvicorn's request-head timer uses internals of uvicorn's protocol (``cycle``, ``loop``,
    ``transport``). Under a uvicorn whose protocol has none of them (here: one that hands
    everything to uvicorn's own and shows nothing of it), the server serves as plain uvicorn:
    requests on several connections are answered, a slow head is left alone, and it says so
    once."""
    if asgi_server != "uvicorn":
        pytest.skip("the request-head timer is uvicorn's (hypercorn has one of its own)")
    import uvicorn.protocols.http.auto as auto

    uvicorns = auto.AutoHTTPProtocol

    class Opaque(asyncio.Protocol):
        def __init__(self, **options: Any) -> None:
            self._inner = uvicorns(**options)

        def connection_made(self, transport: asyncio.BaseTransport) -> None:
            self._inner.connection_made(transport)

        def data_received(self, data: bytes) -> None:
            self._inner.data_received(data)

        def eof_received(self) -> bool | None:
            return self._inner.eof_received()

        def connection_lost(self, exc: Exception | None) -> None:
            self._inner.connection_lost(exc)

        def pause_writing(self) -> None:
            self._inner.pause_writing()

        def resume_writing(self) -> None:
            self._inner.resume_writing()

    monkeypatch.setattr(auto, "AutoHTTPProtocol", Opaque)
    caplog.set_level(logging.WARNING, logger="mcpbind.http")
    async with embedded(make_server(), header_timeout=0.2) as url:
        slow = await RawConnection.open(url)
        try:
            await slow.send(b"POST /mcp HTTP/1.1\r\n")  # and the rest of its head much later
            for n in range(3):
                async with httpx.AsyncClient(timeout=5) as client:  # a connection each
                    session_id = await open_session(client, url)
                    _, got = await post(client, url, call(n, "echo", {"text": f"fine {n}"}), session_id)
                    assert got[-1]["result"]["content"][0]["text"] == f"fine {n}"
            await anyio.sleep(0.5)  # (the timer would have closed it by now)
            ping = json.dumps(request(9, "ping")).encode()
            await slow.send(post_head(url, session_id, len(ping)).partition(b"\r\n")[2] + ping)
            status, _ = await slow.read_response(timeout=5)
            assert status == 200  # answered: the connection was left open
        finally:
            slow.close()
    warnings = [r.getMessage() for r in caplog.records if r.name == "mcpbind.http"]
    assert warnings == [
        "this uvicorn's HTTP protocol lacks what mcpbind's request-head timer uses "
        "(cycle, loop, transport): header_timeout is not applied"
    ]


async def test_a_slow_request_body_gets_408(anyio_backend: str, asgi_server: ServerName) -> None:
    """A POST whose body does not all arrive within ``body_timeout`` is answered 408 and its
    connection closed; the server keeps answering."""
    embedded_only(anyio_backend, asgi_server)
    async with embedded(make_server(), body_timeout=0.5) as url:
        async with httpx.AsyncClient(timeout=5) as client:
            session_id = await open_session(client, url)
            nothing, partial_body = [await RawConnection.open(url) for _ in range(2)]
            try:
                await nothing.send(post_head(url, session_id, 100))
                await partial_body.send(post_head(url, session_id, 100) + b'{"jsonrpc": "2.0", ')
                with anyio.fail_after(5):
                    for connection in (nothing, partial_body):
                        status, fields = await connection.read_response(timeout=5)
                        assert status == 408
                        assert fields["connection"] == "close"
                        await connection.read_until_closed(timeout=5)
            finally:
                nothing.close()
                partial_body.close()
            _, got = await post(client, url, call(1, "echo", {"text": "fine"}), session_id)
            assert got[-1]["result"]["content"][0]["text"] == "fine"


async def test_the_body_timeout_under_any_asgi_server(asgi_server: ServerName) -> None:
    app = StreamableHTTPApp(make_server(), body_timeout=0.3)
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        connection = await RawConnection.open(url)
        try:
            await connection.send(post_head(url, session_id, 100) + b"{")
            status, _ = await connection.read_response(timeout=5)
            assert status == 408
            await connection.read_until_closed(timeout=5)
            error = json.loads(connection.data.partition(b"\r\n\r\n")[2])["error"]
            assert error["message"].startswith("Request Timeout")
        finally:
            connection.close()
        with anyio.fail_after(5):
            while app._body_bytes:
                await anyio.sleep(0.02)


# -- the accept loop's log ------------------------------------------------------------------------


def test_log_rate_limiter_lets_one_through_per_interval() -> None:
    now = [0.0]
    limiter = LogRateLimiter(interval=10, burst=2, clock=lambda: now[0])
    assert [limiter.allow() for _ in range(5)] == [0, 0, None, None, None]
    now[0] = 9.9
    assert limiter.allow() is None
    now[0] = 10.0
    assert limiter.allow() == 4  # and it says how many were left out
    assert limiter.allow() == 0
    assert limiter.allow() is None
    with pytest.raises(ValueError):
        LogRateLimiter(interval=0)


def test_a_listener_out_of_descriptors_fails_once_per_pause() -> None:
    """asyncio's accept loop calls accept() up to ``backlog`` times in a row, logging and
    scheduling a retry for each failure: the listening socket fails once, then reports nothing
    to accept, which ends the loop."""

    class Starved(Listener):
        __slots__ = ()

        def _accept(self) -> tuple[int, Any]:
            raise OSError(errno.EMFILE, "Too many open files")

    sock = Starved(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    try:
        with pytest.raises(OSError) as first:
            sock.accept()
        assert first.value.errno == errno.EMFILE
        for _ in range(100):
            with pytest.raises(BlockingIOError):
                sock.accept()
    finally:
        sock.close()


async def test_accept_errors_are_rate_limited(
    anyio_backend: str, asgi_server: ServerName, caplog: pytest.LogCaptureFixture
) -> None:
    """What the accept loop of the running backend reports when out of descriptors (asyncio:
    through the loop's exception handler; trio: the ``trio.serve_listeners`` logger) gets
    through once per interval while the embedded server runs, and as before once it stopped."""
    embedded_only(anyio_backend, asgi_server)
    error = OSError(errno.EMFILE, "Too many open files")
    reported: list[str] = []
    if anyio_backend == "asyncio":
        loop = asyncio.get_running_loop()
        previous = loop.get_exception_handler()
        loop.set_exception_handler(lambda loop, context: reported.append(context["message"]))

        def report() -> None:
            loop.call_exception_handler(
                {"message": "socket.accept() out of system resource", "exception": error}
            )

    else:
        caplog.set_level(logging.ERROR, logger="trio.serve_listeners")

        def report() -> None:
            logging.getLogger("trio.serve_listeners").error("accept returned EMFILE", exc_info=error)

    def passed() -> list[str]:
        return reported if anyio_backend == "asyncio" else [r.getMessage() for r in caplog.records]

    try:
        async with embedded(make_server()):
            for _ in range(1000):
                report()
            assert len(passed()) == 1
        del passed()[:]
        caplog.clear()
        for _ in range(3):  # the server stopped: its limit went with it
            report()
        assert len(passed()) == 3
    finally:
        if anyio_backend == "asyncio":
            loop.set_exception_handler(previous)


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_slow_connections_do_not_lock_clients_out(backend: str) -> None:
    """``mcpbind serve`` with few file descriptors, and more connections than it can hold that
    send part of a request head and wait: each is closed after ``--header-timeout``, so a real
    client gets through soon, and the failing accepts meanwhile leave a few lines of log."""
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    command = mcpbind_command("serve", "examples/everything.py", "--transport", "http")
    command += ["--port", str(port), "--backend", backend, "--header-timeout", "1"]

    def few_descriptors() -> None:
        resource.setrlimit(resource.RLIMIT_NOFILE, (64, 64))

    with tempfile.TemporaryFile() as log_file:
        serve = subprocess.Popen(
            command, env=child_env(), stdout=log_file, stderr=log_file, preexec_fn=few_descriptors
        )
        slow: list[socket.socket] = []
        try:
            wait_listening(port, serve, timeout=20)
            for _ in range(120):
                connection = socket.create_connection(("127.0.0.1", port), timeout=5)
                connection.sendall(b"GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n")
                slow.append(connection)
            time.sleep(1)  # out of descriptors for a while
            started = time.monotonic()
            response = httpx.post(
                url,
                json=helpers.initialize(),
                headers=helpers.headers(version=None),
                timeout=httpx.Timeout(30, connect=30),
            )
            assert response.status_code == 200
            assert time.monotonic() - started < 20
        finally:
            for connection in slow:
                connection.close()
            serve.terminate()
            serve.wait(timeout=10)
        log_file.seek(0)
        log = log_file.read()
    assert len(log) < 20_000, log[-3000:]


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_serving_on_a_taken_port_says_so(backend: str) -> None:
    taken = loopback_socket()
    try:
        port = taken.getsockname()[1]
        done = run_mcpbind(
            "serve",
            "examples/everything.py",
            "--transport",
            "http",
            "--port",
            str(port),
            "--backend",
            backend,
        )
    finally:
        taken.close()
    assert done.returncode == 1
    assert f"cannot serve on 127.0.0.1:{port}" in done.stderr
