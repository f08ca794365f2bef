"""The pieces the two HTTP server apps share, on their own: the Host/Origin/CORS middleware around
any ASGI app, the body reader's limits, the Accept parser and the SSE framing."""

from __future__ import annotations

import json
from typing import Any

import anyio
import pytest

from mcpbind.transports.http._asgi import Message, Receive, Scope, Send
from mcpbind.transports.http.body import DRAIN, BodyProgress, BodyReader, content_length
from mcpbind.transports.http.errors import HttpError
from mcpbind.transports.http.media_types import accepts, is_json
from mcpbind.transports.http.security import LOCALHOST_HOSTS, SecurityMiddleware, matches
from mcpbind.transports.http.sse_encode import encode_event

pytestmark = pytest.mark.anyio


class Inner:
    """An ASGI app answering 200 with ``ok``, recording the scopes it saw."""

    def __init__(self) -> None:
        self.seen: list[Scope] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        self.seen.append(scope)
        if scope["type"] == "http":
            await send({"type": "http.response.start", "status": 200, "headers": [(b"x-inner", b"1")]})
            await send({"type": "http.response.body", "body": b"ok"})


async def call(app: SecurityMiddleware, method: str = "GET", **headers: str) -> list[Message]:
    scope = {
        "type": "http",
        "method": method,
        "path": "/anything",
        "headers": [(name.encode(), value.encode("latin-1")) for name, value in headers.items()],
    }
    sent: list[Message] = []

    async def receive() -> Message:
        return {"type": "http.disconnect"}

    async def send(message: Message) -> None:
        sent.append(message)

    await app(scope, receive, send)
    return sent


def header(start: Message, name: bytes) -> bytes | None:
    values = [value for key, value in start["headers"] if key == name]
    return values[-1] if values else None


def test_a_port_pattern_needs_a_port() -> None:
    assert matches("localhost:8000", ["localhost:*"])
    assert not matches("localhost", ["localhost:*"])
    assert matches("LOCALHOST", ["localhost"])
    assert not matches("localhost:8000x", ["localhost:*"])
    assert not matches("localhost:\xb2", ["localhost:*"])  # "²".isdigit(), not ASCII
    assert not matches("localhost.evil:80", ["localhost:*"])


async def test_host_and_origin_checks(anyio_backend: str) -> None:
    inner = Inner()
    app = SecurityMiddleware(inner)
    for host in ("localhost", "localhost:1", "127.0.0.1:8000", "[::1]", "[::1]:9"):
        assert (await call(app, host=host))[0]["status"] == 200, host
    refused = await call(app, host="evil.example:80")
    assert refused[0]["status"] == 403
    error = json.loads(refused[1]["body"])
    assert error["id"] is None and error["error"]["code"] == -32600
    assert (await call(app))[0]["status"] == 403  # no Host at all
    assert (await call(app, host="localhost", origin="http://localhost:3000"))[0]["status"] == 200
    assert (await call(app, host="localhost", origin="http://evil.example"))[0]["status"] == 403
    open_app = SecurityMiddleware(inner, allowed_hosts=None, allowed_origins=None)
    assert open_app.checks_nothing
    assert (await call(open_app, host="evil.example", origin="http://evil.example"))[0]["status"] == 200
    assert len(inner.seen) == 7


async def test_other_connections_pass_unchecked(anyio_backend: str) -> None:
    inner = Inner()
    app = SecurityMiddleware(inner)

    async def receive() -> Message:
        return {"type": "lifespan.startup"}

    async def send(message: Message) -> None:
        raise AssertionError(message)

    await app({"type": "lifespan"}, receive, send)
    assert [scope["type"] for scope in inner.seen] == ["lifespan"]


async def test_cors(anyio_backend: str) -> None:
    inner = Inner()
    app = SecurityMiddleware(inner, cors_origins=["https://app.example"], cors_methods="POST, OPTIONS")
    preflight = await call(app, "OPTIONS", host="localhost", origin="https://app.example")
    assert preflight[0]["status"] == 204
    assert header(preflight[0], b"access-control-allow-origin") == b"https://app.example"
    assert header(preflight[0], b"access-control-allow-methods") == b"POST, OPTIONS"
    answered = await call(app, host="localhost", origin="https://app.example")
    assert answered[0]["status"] == 200
    assert header(answered[0], b"x-inner") == b"1"
    assert header(answered[0], b"access-control-allow-origin") == b"https://app.example"
    assert header(answered[0], b"vary") == b"Origin"
    # A loopback origin passes the Origin check but gets no CORS headers.
    local = await call(app, host="localhost", origin="http://localhost")
    assert local[0]["status"] == 200 and header(local[0], b"access-control-allow-origin") is None
    other = await call(app, "OPTIONS", host="localhost", origin="http://localhost")
    assert other[0]["status"] == 204 and header(other[0], b"access-control-allow-origin") is None
    assert len(inner.seen) == 2  # the preflights never reached it
    anyone = SecurityMiddleware(inner, cors_origins=["*"])
    answered = await call(anyone, host="localhost", origin="https://anywhere.example")
    assert answered[0]["status"] == 200
    assert header(answered[0], b"access-control-allow-origin") == b"*"


def test_the_default_hosts_are_the_loopback_names() -> None:
    for name in ("127.0.0.1", "localhost", "[::1]"):
        assert name in LOCALHOST_HOSTS and f"{name}:*" in LOCALHOST_HOSTS


def parts(*chunks: bytes) -> Receive:
    messages: list[Message] = [
        {"type": "http.request", "body": chunk, "more_body": i < len(chunks) - 1}
        for i, chunk in enumerate(chunks)
    ]

    async def receive() -> Message:
        if messages:
            return messages.pop(0)
        await anyio.sleep_forever()
        raise AssertionError

    return receive


async def test_the_body_reader(anyio_backend: str) -> None:
    reader = BodyReader(10, in_flight_limit=15)
    progress = BodyProgress()
    assert await reader.read(parts(b"12345", b"678"), None, progress) == b"12345678"
    assert reader.in_flight == 8
    with pytest.raises(HttpError) as busy:
        await reader.read(parts(b"1234567890"), b"10", BodyProgress())
    assert busy.value.status == 503
    reader.release(progress)
    assert reader.in_flight == 0
    # Over the limit, declared or found while reading: 413 once the rest was read and dropped.
    for declared, chunks in ((b"11", (b"12345678901",)), (None, (b"123456", b"789012"))):
        with pytest.raises(HttpError) as large:
            await reader.read(parts(*chunks), declared, BodyProgress())
        assert large.value.status == 413 and not large.value.headers
    # Far over it: at once, and the connection is closed.
    with pytest.raises(HttpError) as huge:
        await reader.read(parts(b"x"), b"%d" % (10 + DRAIN + 1), BodyProgress())
    assert huge.value.status == 413 and huge.value.headers == [(b"connection", b"close")]
    # A Content-Length that is not a number is ignored.
    assert await reader.read(parts(b"{}"), b"\xb2", BodyProgress()) == b"{}"
    assert content_length(b"1" * 5000) == 10**18


async def test_a_slow_body_gets_408(anyio_backend: str) -> None:
    reader = BodyReader(100, timeout=0.05)
    first: list[Message] = [{"type": "http.request", "body": b"{", "more_body": True}]

    async def receive() -> Message:
        if first:
            return first.pop()
        # (Not sleep_forever: on trio it opens a cancel scope before its first suspension, which
        # the reader's stepping of receive() by hand does not allow; see runtime/stepping.py.)
        await anyio.Event().wait()
        raise AssertionError

    with pytest.raises(HttpError) as slow:
        await reader.read(receive, b"2", BodyProgress())
    assert slow.value.status == 408 and slow.value.headers == [(b"connection", b"close")]


def test_accept_and_content_type() -> None:
    assert accepts(b"application/json, text/event-stream") == (True, True)
    assert accepts(b"*/*;q=0.5") == (True, True)
    assert accepts(b"text/*") == (False, True)
    assert accepts(b"") == (False, False)
    assert is_json(b"application/json; charset=utf-8") and is_json(b"Application/JSON")
    assert not is_json(None) and not is_json(b"text/plain")


@pytest.mark.parametrize(
    ("args", "framed"),
    [
        ((b'{"a":1}',), b'event: message\ndata: {"a":1}\n\n'),
        ((b"x", "p1_2"), b"event: message\nid: p1_2\ndata: x\n\n"),
        ((b"/m?s=1", None, b"endpoint"), b"event: endpoint\ndata: /m?s=1\n\n"),
        ((b"a\r\nb", "7"), b"event: message\nid: 7\ndata: a\ndata: b\n\n"),
    ],
)
def test_sse_framing(args: Any, framed: bytes) -> None:
    assert encode_event(*args) == framed
