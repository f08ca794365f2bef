"""The legacy HTTP+SSE transport (MCP 2024-11-05): ``LegacySSEApp`` and ``open_legacy_sse``.

Our client against our server over real sockets (uvicorn on asyncio, hypercorn on both
backends), raw HTTP against the server for its status codes and stream format, and the client
against a scripted server for what ours never does (a foreign endpoint, failing POSTs, huge
events).
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import tracemalloc
from collections.abc import AsyncIterator, Generator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from httpx_sse import ServerSentEvent, aconnect_sse

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.http.client import LegacySSEError, LegacySSETransport, open_legacy_sse
from mcpbind.transports.http.legacy import LegacySession, LegacySSEApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.http_harness import ServerName, serve_asgi
from tests.http_server_helpers import Probe as HttpProbe
from tests.raw_asgi import answer_lifespan, read_body

methods = types.methods
TIMEOUT = 15.0

INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2024-11-05",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


class Probe(HttpProbe):
    """What the test server's tools saw; events tests wait on."""

    def __init__(self) -> None:
        super().__init__()
        self.notified = 0


def make_server(probe: Probe, max_pending_requests: int = 64) -> Server:
    server = Server("legacy-test", "1.0", logging=True, max_pending_requests=max_pending_requests)

    @server.tool()
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool()
    async def count(steps: int, ctx: RequestContext) -> str:
        for step in range(1, steps + 1):
            await ctx.report_progress(step, steps, f"step {step}")
        return f"counted {steps}"

    @server.tool()
    async def ask(question: str, ctx: RequestContext) -> str:
        answer = await ctx.create_message(
            types.CreateMessageRequestParams(
                max_tokens=5,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text=question))],
            )
        )
        assert isinstance(answer, types.CreateMessageResult) and isinstance(answer.content, types.TextContent)
        return answer.content.text

    @server.tool()
    async def wait(ctx: RequestContext) -> str:
        await probe.hold()
        return "released"

    @server.tool()
    async def flood(size: int, times: int, ctx: RequestContext) -> str:
        for _ in range(times):
            await ctx.log("info", "x" * size)
        return "flooded"

    @server.on_notification(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED)
    async def roots_changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        probe.notified += 1
        await probe.release.wait()

    return server


@pytest.fixture
def probe() -> Probe:
    return Probe()


@pytest.fixture
def app(probe: Probe) -> LegacySSEApp:
    return LegacySSEApp(make_server(probe))


@asynccontextmanager
async def connected(
    base_url: str, client: Client | None = None, **options: Any
) -> AsyncIterator[tuple[LegacySSETransport, RemoteServer]]:
    async with (
        open_legacy_sse(base_url + "/sse", **options) as transport,
        (client or Client("legacy-tester", "0.1", versions=HANDSHAKE_VERSIONS)).connect(transport) as session,
    ):
        yield transport, session


def only_session(app: LegacySSEApp) -> LegacySession:
    assert len(app.sessions) == 1
    return next(iter(app.sessions.values()))


def text_of(result: types.CallToolResult) -> str:
    assert len(result.content) == 1 and isinstance(result.content[0], types.TextContent)
    return result.content[0].text


# -- our client, our server -------------------------------------------------------------------


@pytest.fixture(params=["uvicorn", "hypercorn"])
def asgi_server(request: pytest.FixtureRequest, anyio_backend: str) -> ServerName:
    name: ServerName = request.param
    if name == "uvicorn" and anyio_backend == "trio":
        pytest.skip("uvicorn runs on asyncio only")
    return name


@pytest.mark.anyio
async def test_initialize_list_and_call_tools(app: LegacySSEApp, asgi_server: ServerName) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app, asgi_server) as base_url:
            async with connected(base_url) as (transport, session):
                assert session.protocol_version == "2025-11-25"
                assert session.server_info.name == "legacy-test"
                assert transport.endpoint.startswith(base_url + "/messages?session_id=")
                session_id = transport.endpoint.rpartition("=")[2]
                assert list(app.sessions) == [session_id]
                names = [tool.name for tool in (await session.list_tools()).tools]
                assert names == ["add", "count", "ask", "wait", "flood"]
                result = await session.call_tool("add", {"a": 2, "b": 40})
                assert result.structured_content == {"result": 42}
                server_side = only_session(app)
            await server_side.wait_closed()
            assert app.sessions == {}


@pytest.mark.anyio
async def test_negotiates_the_legacy_protocol_version(app: LegacySSEApp) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url:
            async with connected(base_url, Client("old", "1", protocol_version="2024-11-05")) as (_, session):
                assert session.protocol_version == "2024-11-05"
                assert text_of(await session.call_tool("count", {"steps": 1})) == "counted 1"


@pytest.mark.anyio
async def test_progress_notifications_arrive_before_the_result(app: LegacySSEApp) -> None:
    seen: list[tuple[float, float | None, str | None]] = []

    async def on_progress(progress: float, total: float | None, message: str | None) -> None:
        seen.append((progress, total, message))

    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, connected(base_url) as (_, session):
            result = await session.call_tool("count", {"steps": 3}, progress=on_progress)
    assert text_of(result) == "counted 3"
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]


@pytest.mark.anyio
async def test_a_sampling_request_from_the_server_is_answered(app: LegacySSEApp) -> None:
    asked: list[str] = []

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        message = params.messages[0].content
        assert isinstance(message, types.TextContent)
        asked.append(message.text)
        return types.CreateMessageResult(
            role="assistant", model="m", content=types.TextContent(text="forty-two")
        )

    with anyio.fail_after(TIMEOUT):
        async with (
            serve_asgi(app) as base_url,
            connected(base_url, Client("s", "1", sampling=sample, versions=HANDSHAKE_VERSIONS)) as (
                _,
                session,
            ),
        ):
            result = await session.call_tool("ask", {"question": "meaning?"})
    assert text_of(result) == "forty-two"
    assert asked == ["meaning?"]


@pytest.mark.anyio
async def test_concurrent_requests_on_one_session(app: LegacySSEApp) -> None:
    results: dict[int, Any] = {}
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, connected(base_url) as (_, session):

            async def call(n: int) -> None:
                results[n] = (await session.call_tool("add", {"a": n, "b": n})).structured_content

            async with anyio.create_task_group() as tg:
                for n in range(20):
                    tg.start_soon(call, n)
    assert results == {n: {"result": 2 * n} for n in range(20)}


@pytest.mark.anyio
async def test_client_disconnect_ends_the_session_and_cancels_its_handlers(
    app: LegacySSEApp, probe: Probe
) -> None:
    # Raw HTTP, so that nothing but the closed stream tells the server (no cancellation).
    wait = {"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "wait", "arguments": {}}}
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with raw_session(http, base_url) as (endpoint, events):
                assert (await http.post(endpoint, json=INITIALIZE)).status_code == 202
                await next_message(events)
                assert (await http.post(endpoint, json=INITIALIZED)).status_code == 202
                assert (await http.post(endpoint, json=wait)).status_code == 202
                await probe.started.wait()
                server_side = only_session(app)
            await server_side.wait_closed()
            await probe.cancelled.wait()
            assert app.sessions == {}
            late = await http.post(endpoint, json=INITIALIZED)
            assert late.status_code == 404


@pytest.mark.anyio
async def test_closing_our_client_frees_the_server_session(app: LegacySSEApp) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url:
            async with connected(base_url) as (_, session):
                await session.ping()
                server_side = only_session(app)
            await server_side.wait_closed()
            assert app.sessions == {}


@pytest.mark.anyio
async def test_the_server_ending_a_session_ends_the_client_session(app: LegacySSEApp, probe: Probe) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, connected(base_url) as (transport, session):
            async with anyio.create_task_group() as tg:

                async def end_soon() -> None:
                    await probe.started.wait()
                    only_session(app).end()

                tg.start_soon(end_soon)
                with pytest.raises(McpError) as info:
                    await session.call_tool("wait")
            assert info.value.code == CONNECTION_CLOSED
            with pytest.raises(McpError) as again:
                await session.call_tool("add", {"a": 1, "b": 1})
            assert again.value.code == CONNECTION_CLOSED
            with pytest.raises((anyio.BrokenResourceError, anyio.ClosedResourceError)):
                await transport.send(json.dumps(INITIALIZED).encode())


@pytest.mark.anyio
async def test_max_sessions(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe), max_sessions=2)
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url:
            async with connected(base_url), connected(base_url):
                with pytest.raises(LegacySSEError) as info:
                    async with open_legacy_sse(base_url + "/sse"):
                        pass
                assert info.value.status == 503
                assert "Too many sessions (limit 2)" in str(info.value)
                leaving = list(app.sessions.values())
            await leaving[0].wait_closed()
            await leaving[1].wait_closed()
            async with connected(base_url) as (_, session):
                await session.ping()


@pytest.mark.anyio
async def test_custom_paths_and_keep_alive(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe), sse_path="/events", message_path="/post", keep_alive=0.05)
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url:
            async with (
                httpx.AsyncClient() as http,
                http.stream("GET", base_url + "/events", headers={"accept": "text/event-stream"}) as response,
            ):
                assert response.headers["content-type"] == "text/event-stream"
                lines = response.aiter_lines()
                assert await anext(lines) == "event: endpoint"
                data = await anext(lines)
                assert data.startswith("data: /post?session_id=")
                assert await anext(lines) == ""
                assert await anext(lines) == ": ping"
            async with (
                open_legacy_sse(base_url + "/events") as transport,
                Client(versions=HANDSHAKE_VERSIONS).connect(transport) as session,
            ):
                assert transport.endpoint.startswith(base_url + "/post?session_id=")
                await session.ping()


# -- raw HTTP against the server ---------------------------------------------------------------


@asynccontextmanager
async def raw_session(
    http: httpx.AsyncClient, base_url: str
) -> AsyncIterator[tuple[str, AsyncIterator[ServerSentEvent]]]:
    """A raw SSE stream: the endpoint URL it announced, and the events after it."""
    async with aconnect_sse(http, "GET", base_url + "/sse") as source:
        events = source.aiter_sse()
        first = await anext(events)
        assert first.event == "endpoint"
        assert first.data.startswith("/messages?session_id=")
        yield base_url + first.data, events


async def next_message(events: AsyncIterator[ServerSentEvent]) -> Any:
    event = await anext(events)
    assert event.event == "message"
    return json.loads(event.data)


def error_of(response: httpx.Response) -> tuple[int, str]:
    assert response.headers["content-type"] == "application/json"
    body = response.json()
    assert body["jsonrpc"] == "2.0" and body["id"] is None
    return body["error"]["code"], body["error"]["message"]


@pytest.mark.anyio
async def test_raw_exchange(app: LegacySSEApp) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with raw_session(http, base_url) as (endpoint, events):
                answer = await http.post(endpoint, json=INITIALIZE)
                assert (answer.status_code, answer.content) == (202, b"")
                response = await next_message(events)
                assert response["id"] == 1 and response["result"]["protocolVersion"] == "2024-11-05"
                assert (await http.post(endpoint, json=INITIALIZED)).status_code == 202
                tools = {"jsonrpc": "2.0", "id": "t", "method": "tools/list"}
                assert (await http.post(endpoint, json=tools)).status_code == 202
                listed = await next_message(events)
                assert listed["id"] == "t" and len(listed["result"]["tools"]) == 5
                # A well-formed message that is no JSON-RPC request is answered on the stream.
                assert (await http.post(endpoint, json={"jsonrpc": "2.0", "id": 7})).status_code == 202
                invalid = await next_message(events)
                assert invalid["error"]["code"] == -32600


@pytest.mark.anyio
async def test_post_errors(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe), max_body_size=1000)
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with raw_session(http, base_url) as (endpoint, events):
                missing = await http.post(base_url + "/messages", json=INITIALIZE)
                assert missing.status_code == 400
                assert error_of(missing) == (-32600, "Bad request: the session_id query parameter is missing")
                unknown = await http.post(base_url + "/messages?session_id=nope", json=INITIALIZE)
                assert unknown.status_code == 404 and "Session not found" in error_of(unknown)[1]
                plain = await http.post(endpoint, content=b"{}", headers={"content-type": "text/plain"})
                assert plain.status_code == 415 and "application/json" in error_of(plain)[1]
                no_type = await http.post(endpoint, content=b"{}")
                assert no_type.status_code == 415
                big = {"jsonrpc": "2.0", "method": "notifications/initialized", "params": {"x": "y" * 1000}}
                declared = await http.post(endpoint, json=big)
                assert declared.status_code == 413 and "1000 bytes" in error_of(declared)[1]

                async def chunked() -> AsyncIterator[bytes]:
                    for _ in range(20):
                        yield b" " * 100

                streamed = await http.post(
                    endpoint, content=chunked(), headers={"content-type": "application/json"}
                )
                assert streamed.status_code == 413
                malformed = await http.post(
                    endpoint, content=b'{"jsonrpc": "2.0",', headers={"content-type": "application/json"}
                )
                assert malformed.status_code == 400 and error_of(malformed)[0] == -32700
                scalar = await http.post(
                    endpoint, content=b"42", headers={"content-type": "application/json"}
                )
                assert scalar.status_code == 400 and error_of(scalar)[0] == -32600
                # None of those reached the session: the first message it answers is this one.
                charset = {"content-type": "application/json; charset=utf-8"}
                assert (
                    await http.post(endpoint, content=json.dumps(INITIALIZE), headers=charset)
                ).status_code == 202
                assert (await next_message(events))["id"] == 1


@pytest.mark.anyio
async def test_routes_methods_and_accept(app: LegacySSEApp) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            wrong_path = await http.get(base_url + "/other")
            assert wrong_path.status_code == 404
            post_sse = await http.post(base_url + "/sse", json={})
            assert (post_sse.status_code, post_sse.headers["allow"]) == (405, "GET")
            get_messages = await http.get(base_url + "/messages?session_id=x")
            assert (get_messages.status_code, get_messages.headers["allow"]) == (405, "POST")
            json_only = await http.get(base_url + "/sse", headers={"accept": "application/json"})
            assert json_only.status_code == 406
            assert app.sessions == {}


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("headers", "status"),
    [
        ({"host": "evil.example"}, 403),
        ({"host": "evil.example:8000"}, 403),
        ({"origin": "http://evil.example"}, 403),
        ({"origin": "http://localhost.evil.example:80"}, 403),
        ({"origin": "http://localhost:3000"}, 200),
        ({"host": "localhost:1234", "origin": "http://127.0.0.1:5"}, 200),
    ],
)
async def test_dns_rebinding_protection(app: LegacySSEApp, headers: dict[str, str], status: int) -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with http.stream("GET", base_url + "/sse", headers=headers) as response:
                assert response.status_code == status
            posted = await http.post(base_url + "/messages?session_id=x", json={}, headers=headers)
            assert posted.status_code == (404 if status == 200 else 403)


@pytest.mark.anyio
async def test_dns_rebinding_protection_can_be_configured(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe), allowed_hosts=["mcp.example.com"], allowed_origins=None)
    public = {"host": "mcp.example.com", "origin": "https://anything.example"}
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            assert (await http.post(base_url + "/messages", json={}, headers=public)).status_code == 400
            assert (await http.post(base_url + "/messages", json={})).status_code == 403


@pytest.mark.anyio
async def test_a_full_session_queue_answers_503(probe: Probe) -> None:
    # The notification handler blocks; with room for one waiting notification in the session
    # and one message in the transport's queue, later POSTs find no room.
    app = LegacySSEApp(make_server(probe, max_pending_requests=1), queue_size=1, post_wait=0.2)
    changed = {"jsonrpc": "2.0", "method": "notifications/roots/list_changed"}
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with raw_session(http, base_url) as (endpoint, events):
                assert (await http.post(endpoint, json=INITIALIZE)).status_code == 202
                await next_message(events)
                assert (await http.post(endpoint, json=INITIALIZED)).status_code == 202
                statuses = []
                for _ in range(8):
                    answer = await http.post(endpoint, json=changed)
                    statuses.append(answer.status_code)
                    if answer.status_code == 503:
                        assert answer.headers["retry-after"] == "1"
                        assert "queue is full" in error_of(answer)[1]
                        break
                assert statuses[0] == 202 and statuses[-1] == 503
                probe.release.set()
                assert (await http.post(endpoint, json=changed)).status_code == 202
                ping = {"jsonrpc": "2.0", "id": "p", "method": "ping"}
                assert (await http.post(endpoint, json=ping)).status_code == 202
                assert (await next_message(events)) == {"jsonrpc": "2.0", "id": "p", "result": {}}


@pytest.mark.anyio
async def test_a_reader_that_stops_reading_loses_its_session(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe), queue_size=1, send_timeout=0.2)
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "flood", "arguments": {"size": 1_000_000, "times": 64}},
    }
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app) as base_url, httpx.AsyncClient() as http:
            async with raw_session(http, base_url) as (endpoint, events):
                assert (await http.post(endpoint, json=INITIALIZE)).status_code == 202
                await next_message(events)
                assert (await http.post(endpoint, json=INITIALIZED)).status_code == 202
                server_side = only_session(app)
                # 64 MB of log notifications, and nobody reads them.
                assert (await http.post(endpoint, json=call)).status_code == 202
                await server_side.wait_closed()
                assert app.sessions == {}
                # The server gave up writing and dropped the connection (or ended the stream).
                with contextlib.suppress(httpx.RemoteProtocolError):
                    async for _ in events:
                        pass


# A long URI, so that each notification about it is big.
BOARD = "note://board?" + "n" * 60_000


def noting_server() -> Server:
    """``write_note`` tells every subscriber of BOARD ``times`` times that it changed;
    ``burst`` tells every session ``times`` times that the tool list changed."""
    server = Server("legacy-notes", "1.0")
    server.max_uri_length = 2 * len(BOARD)

    @server.resource("note://board")
    def board() -> str:
        return "notes"

    @server.tool()
    async def write_note(times: int) -> str:
        for _ in range(times):
            await server.resource_updated(BOARD)
        return f"noted {times}"

    @server.tool()
    async def burst(times: int) -> str:
        for _ in range(times):
            await server.tools_changed()
        return f"burst {times}"

    return server


class RawSseClient:
    """A legacy SSE stream read (or not) on a plain socket with a small receive buffer: what a
    client that stops reading looks like to the server."""

    def __init__(self, sock: socket.socket, base_url: str) -> None:
        self.sock = sock
        self.base_url = base_url
        self.data = b""

    @classmethod
    async def open(cls, base_url: str) -> RawSseClient:
        url = httpx.URL(base_url)
        assert url.host and url.port
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.setblocking(False)
        try:
            sock.connect((url.host, url.port))
        except BlockingIOError:
            await anyio.wait_writable(sock)
        head = f"GET /sse HTTP/1.1\r\nHost: {url.host}:{url.port}\r\nAccept: text/event-stream\r\n\r\n"
        sock.send(head.encode())
        return cls(sock, base_url)

    async def endpoint(self) -> str:
        """Reads until the endpoint event has come: the URL to POST to."""
        pattern = re.compile(rb"event: endpoint\ndata: (\S+)\n\n")
        while (found := pattern.search(self.data)) is None:
            await anyio.wait_readable(self.sock)
            self.data += self.sock.recv(1 << 16)
        return self.base_url + found.group(1).decode()

    async def answer(self, ident: int) -> Any:
        """Reads until the answer to request ``ident`` has come."""
        while True:
            for message in self.messages():
                if message.get("id") == ident:
                    return message
            await anyio.wait_readable(self.sock)
            self.data += self.sock.recv(1 << 16)

    async def read_to_end(self) -> None:
        """Everything until the server ends the response or drops the connection."""
        while not self.data.endswith(b"\r\n0\r\n\r\n"):
            await anyio.wait_readable(self.sock)
            try:
                chunk = self.sock.recv(1 << 16)
            except ConnectionResetError:
                break
            if not chunk:
                break
            self.data += chunk

    def messages(self) -> list[Any]:
        """The JSON-RPC messages that arrived whole."""
        body = self.data.partition(b"\r\n\r\n")[2]
        out = []
        while body:
            size_line, _, rest = body.partition(b"\r\n")
            size = int(size_line.split(b";")[0], 16)
            if size == 0 or len(rest) < size:
                break  # the end, or a chunk cut short
            out.append(rest[:size])
            body = rest[size + 2 :]
        text = b"".join(out).decode()
        return [
            json.loads(block.partition("data: ")[2])
            for block in text.split("\n\n")
            if block.startswith("event: message\n")
        ]

    def close(self) -> None:
        self.sock.close()


@pytest.mark.anyio
async def test_a_stalled_client_holds_back_no_broadcast(asgi_server: ServerName) -> None:
    """A client subscribes and stops reading its stream; another session's handler tells every
    subscriber about a change, again and again. The handler finishes at once (before, it
    waited up to ``send_timeout`` for the stalled client, for each notification), no more than
    the byte bound waits for the stalled client, and its session is ended (there is no
    resumption on this transport) while the other one goes on."""
    limit = 256 << 10
    app = LegacySSEApp(noting_server(), max_buffered_bytes=limit, send_timeout=60, keep_alive=None)
    times = 300  # 18 MB for the stalled client: more than the socket buffers hold
    subscribe = {"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe", "params": {"uri": BOARD}}
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(app, asgi_server) as base_url, httpx.AsyncClient() as http:
            stalled = await RawSseClient.open(base_url)
            try:
                endpoint = await stalled.endpoint()
                for message in (INITIALIZE, INITIALIZED, subscribe):
                    assert (await http.post(endpoint, json=message)).status_code == 202
                (server_side,) = app.sessions.values()
                await stalled.answer(2)  # subscribed; from now on it reads nothing
                async with connected(base_url) as (transport, session):
                    tracemalloc.start()
                    try:
                        before = tracemalloc.get_traced_memory()[0]
                        with anyio.fail_after(10):  # it took minutes before
                            result = await session.call_tool("write_note", {"times": times})
                            assert text_of(result) == f"noted {times}"
                            await server_side.wait_closed()
                        held = tracemalloc.get_traced_memory()[0] - before
                    finally:
                        tracemalloc.stop()
                    # What stays: the write in progress when the client was cut off (at most a
                    # bound's worth and one event, and the HTTP server's framed copy of it on
                    # hypercorn, which lets no write be cancelled), and the message being sent.
                    # (Before, the stalled stream held 64 such events waiting, and a write.)
                    assert held < 4 * limit, held
                    assert list(app.sessions) == [transport.endpoint.rpartition("=")[2]]
                    assert text_of(await session.call_tool("write_note", {"times": 3})) == "noted 3"
                # The stalled client reads again: what was on its way, then the end.
                await stalled.read_to_end()
                notes = [
                    m for m in stalled.messages() if m.get("method") == "notifications/resources/updated"
                ]
                assert len(notes) < times
                assert all(note["params"]["uri"] == BOARD for note in notes)
            finally:
                stalled.close()
            # Its session is gone; a new one works.
            assert (await http.post(endpoint, json=INITIALIZED)).status_code == 404
            async with connected(base_url) as (_, session):
                assert text_of(await session.call_tool("write_note", {"times": 1})) == "noted 1"


@pytest.mark.anyio
async def test_a_reading_client_keeps_up_with_a_burst(asgi_server: ServerName) -> None:
    """More notifications at once than a stream may hold: a client that reads gets them all and
    keeps its session (the stream's writer runs before anyone is deemed stalled)."""
    app = LegacySSEApp(noting_server(), queue_size=16, keep_alive=None)
    times = 300
    got = 0
    all_in = anyio.Event()
    listener = Client("listener", "1", versions=HANDSHAKE_VERSIONS)

    @listener.on_notification(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED)
    async def changed(params: types.NotificationParams, ctx: RequestContext) -> None:
        nonlocal got
        got += 1
        if got == times:
            all_in.set()

    with anyio.fail_after(TIMEOUT):
        async with (
            serve_asgi(app, asgi_server) as base_url,
            connected(base_url, listener) as (_, listening),
            connected(base_url) as (_, writing),
        ):
            assert text_of(await writing.call_tool("burst", {"times": times})) == f"burst {times}"
            await all_in.wait()
            await listening.ping()
            assert len(app.sessions) == 2


@pytest.mark.anyio
async def test_without_lifespan_run_serves_sessions(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe))
    request: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": "/sse",
        "root_path": "",
        "query_string": b"",
        "headers": [(b"host", b"127.0.0.1:1")],
    }
    to_test, sent = anyio.create_memory_object_stream[Any](100)
    disconnect = anyio.Event()

    async def receive() -> Any:
        await disconnect.wait()
        return {"type": "http.disconnect"}

    with anyio.fail_after(TIMEOUT):
        await app(request, receive, to_test.send)
        assert (await sent.receive())["status"] == 500
        assert b"not running" in (await sent.receive())["body"]

        async with anyio.create_task_group() as tg:
            async with app.run():
                tg.start_soon(app, request, receive, to_test.send)
                assert (await sent.receive())["status"] == 200
                assert (await sent.receive())["body"].startswith(
                    b"event: endpoint\ndata: /messages?session_id="
                )
                session = only_session(app)
                disconnect.set()
                assert await sent.receive() == {"type": "http.response.body", "body": b"", "more_body": False}
                await session.wait_closed()
                assert app.sessions == {}
                disconnect = anyio.Event()
                tg.start_soon(app, request, receive, to_test.send)
                assert (await sent.receive())["status"] == 200
                assert (await sent.receive())["body"].startswith(b"event: endpoint")
                session = only_session(app)
            # Leaving run() ends the open session and its stream.
            assert await sent.receive() == {"type": "http.response.body", "body": b"", "more_body": False}
        await session.wait_closed()
        assert app.sessions == {}
        assert not app.running


@pytest.mark.anyio
async def test_mounted_under_a_root_path_the_endpoint_includes_it(probe: Probe) -> None:
    app = LegacySSEApp(make_server(probe))
    request: dict[str, Any] = {
        "type": "http",
        "method": "GET",
        "path": "/api/v1/sse",
        "root_path": "/api/v1",
        "query_string": b"",
        "headers": [(b"host", b"localhost")],
    }
    to_test, sent = anyio.create_memory_object_stream[Any](100)

    async def receive() -> Any:
        await anyio.sleep_forever()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg, app.run():
            tg.start_soon(app, request, receive, to_test.send)
            assert (await sent.receive())["status"] == 200
            body = (await sent.receive())["body"]
            assert body.startswith(b"event: endpoint\ndata: /api/v1/messages?session_id=")


# -- the client against a scripted server ---------------------------------------------------------


class ScriptedServer:
    """A raw ASGI stand-in for a legacy server: its GET answers with ``status`` and sends
    ``endpoint`` (unless None) and whatever the test pushes; each POST is recorded and answered
    with ``post_status``."""

    def __init__(
        self, *, status: int = 200, endpoint: str | None = "/messages?session_id=abc", post_status: int = 202
    ) -> None:
        self.status = status
        self.content_type = b"text/event-stream"
        self.endpoint = endpoint
        self.post_status = post_status
        # Sent in the same body chunk as the endpoint event, before and after it.
        self.around_endpoint = (b"", b"")
        self.get_headers: dict[str, str] = {}
        self.posts: list[tuple[dict[str, str], bytes]] = []
        self.done = anyio.Event()
        self._push: MemoryObjectSendStream[bytes]
        self._pushed: MemoryObjectReceiveStream[bytes]
        self._push, self._pushed = anyio.create_memory_object_stream[bytes](100)

    def push(self, raw: bytes) -> None:
        self._push.send_nowait(raw)

    def end_stream(self) -> None:
        """The GET response ends (after what was pushed)."""
        self._push.close()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await answer_lifespan(receive, send)
            return
        headers = {k.decode(): v.decode() for k, v in scope["headers"]}
        if scope["method"] == "POST":
            body = await read_body(receive)
            self.posts.append((headers, body))
            await send({"type": "http.response.start", "status": self.post_status, "headers": []})
            await send(
                {
                    "type": "http.response.body",
                    "body": b"scripted failure" if self.post_status >= 300 else b"",
                }
            )
            return
        self.get_headers = headers
        if self.status != 200:
            await send({"type": "http.response.start", "status": self.status, "headers": []})
            await send({"type": "http.response.body", "body": b"go away"})
            return
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", self.content_type)],
            }
        )
        if self.endpoint is not None:
            await send(
                {
                    "type": "http.response.body",
                    "body": self.around_endpoint[0]
                    + f"event: endpoint\r\ndata: {self.endpoint}\r\n\r\n".encode()
                    + self.around_endpoint[1],
                    "more_body": True,
                }
            )
        async with anyio.create_task_group() as tg:

            async def watch() -> None:
                while (await receive())["type"] != "http.disconnect":
                    pass
                tg.cancel_scope.cancel()

            tg.start_soon(watch)
            async for raw in self._pushed:
                await send({"type": "http.response.body", "body": raw, "more_body": True})
            await send({"type": "http.response.body", "body": b""})
            tg.cancel_scope.cancel()
        self.done.set()


@pytest.mark.anyio
async def test_client_sends_headers_and_auth_and_closes_the_stream() -> None:
    class Token(httpx.Auth):
        def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
            request.headers["authorization"] = "Bearer t0k3n"
            yield request

    fake = ScriptedServer()
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(fake) as base_url:
            async with open_legacy_sse(
                base_url + "/sse", headers={"x-tenant": "blue"}, auth=Token()
            ) as transport:
                assert transport.endpoint == base_url + "/messages?session_id=abc"
                await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            await fake.done.wait()
    assert fake.get_headers["accept"] == "text/event-stream"
    assert fake.get_headers["x-tenant"] == "blue" and fake.get_headers["authorization"] == "Bearer t0k3n"
    [(headers, body)] = fake.posts
    assert headers["x-tenant"] == "blue" and headers["authorization"] == "Bearer t0k3n"
    assert headers["content-type"] == "application/json"
    assert body == b'{"jsonrpc":"2.0","method":"notifications/initialized"}'


@pytest.mark.anyio
async def test_client_receives_messages_and_reports_oversized_ones() -> None:
    fake = ScriptedServer()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_asgi(fake) as base_url,
            open_legacy_sse(base_url + "/sse", max_message_size=100) as transport,
        ):
            fake.push(b'event: message\ndata: {"jsonrpc":"2.0","method":"a"}\n\n')
            fake.push(b": a comment\n\nevent: message\ndata: " + b"x" * 500 + b"\n\n")
            fake.push(
                b'event: other\ndata: ignored\n\nevent: message\r\ndata: {"jsonrpc":"2.0",\r\ndata: "method":"b"}\r\n\r\n'
            )
            assert await transport.receive() == b'{"jsonrpc":"2.0","method":"a"}'
            with pytest.raises(MessageTooLarge):
                await transport.receive()
            assert await transport.receive() == b'{"jsonrpc":"2.0",\n"method":"b"}'
            fake.end_stream()
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
        await fake.done.wait()


@pytest.mark.anyio
async def test_client_keeps_messages_that_share_the_endpoint_events_chunk() -> None:
    fake = ScriptedServer()
    fake.around_endpoint = (
        b'data: {"jsonrpc":"2.0","method":"early"}\n\n',
        b'event: message\ndata: {"jsonrpc":"2.0","method":"a"}\n\nevent: endpoint\ndata: /other\n\n'
        b'data: {"jsonrpc":"2.0","method":"b"}\n\n',
    )
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_asgi(fake) as base_url,
            open_legacy_sse(base_url + "/sse") as transport,
        ):
            assert transport.endpoint == base_url + "/messages?session_id=abc"  # the first one counts
            for method in ("early", "a", "b"):
                assert await transport.receive() == b'{"jsonrpc":"2.0","method":"%s"}' % method.encode()
            fake.end_stream()
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
        await fake.done.wait()


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("endpoint", "problem"),
    [
        ("http://evil.example/messages", "not on the origin"),
        ("https://127.0.0.1/messages", "not on the origin"),
        (None, "no endpoint event"),
    ],
)
async def test_client_refuses_a_bad_or_missing_endpoint(endpoint: str | None, problem: str) -> None:
    fake = ScriptedServer(endpoint=endpoint)
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(fake) as base_url:
            with pytest.raises(LegacySSEError, match=problem):
                async with open_legacy_sse(base_url + "/sse", timeout=0.3):
                    pass
            await fake.done.wait()


@pytest.mark.anyio
async def test_client_reports_a_failed_get() -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(ScriptedServer(status=404)) as base_url:
            with pytest.raises(LegacySSEError, match="HTTP 404 Not Found: go away") as info:
                async with open_legacy_sse(base_url + "/sse"):
                    pass
            assert info.value.status == 404
        not_sse = ScriptedServer()
        not_sse.content_type = b"application/json"
        async with serve_asgi(not_sse) as base_url:
            with pytest.raises(LegacySSEError, match="answered application/json, not text/event-stream"):
                async with open_legacy_sse(base_url + "/sse"):
                    pass
        with pytest.raises(LegacySSEError, match="could not open"):
            async with open_legacy_sse(base_url + "/sse", timeout=2):
                pass


@pytest.mark.anyio
async def test_failed_posts_fail_the_request_not_the_session() -> None:
    fake = ScriptedServer(post_status=500)
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(fake) as base_url, open_legacy_sse(base_url + "/sse") as transport:
            with pytest.raises(McpError) as info:
                await transport.send(b'{"jsonrpc":"2.0","id":3,"method":"tools/list"}')
            assert info.value.code == INTERNAL_ERROR
            assert "tools/list failed: HTTP 500 Internal Server Error" in info.value.message
            assert "scripted failure" in info.value.message
            # A notification or a response that cannot be delivered is only logged.
            await transport.send(b'{"jsonrpc":"2.0","method":"notifications/initialized"}')
            await transport.send(b'{"jsonrpc":"2.0","id":9,"result":{}}')
            fake.post_status = 404
            with pytest.raises(anyio.BrokenResourceError):
                await transport.send(b'{"jsonrpc":"2.0","id":4,"method":"ping"}')
            with pytest.raises(anyio.EndOfStream):
                await transport.receive()
    assert len(fake.posts) == 4
