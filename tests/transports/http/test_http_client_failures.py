"""The Streamable HTTP client transport where a server misbehaves at the edges of a session: the
``initialize`` answered as an SSE stream, as a JSON-RPC error or with a content type that is
neither; the DELETE on close failing; the GET stream that cannot be reconnected. Against the
scripted server of http_fake_server.py, served on 127.0.0.1 (uvicorn on asyncio, hypercorn on
trio)."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.http.client import open_streamable_http
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests.http_harness import serve_asgi
from tests.transports.http.http_client_harness import LIST_CHANGED, TIMEOUT, ListChanges, connect
from tests.transports.http.http_fake_server import (
    HOLD,
    FakeServer,
    Json,
    Seen,
    Sse,
    Status,
    event,
    rpc_error,
)

pytestmark = pytest.mark.anyio

PING = b'{"jsonrpc":"2.0","id":9,"method":"ping"}'


async def connect_fails(fake: FakeServer) -> McpError:
    """The error ``Client.connect`` raises against ``fake``; the transport is closed after."""
    async with serve_asgi(fake) as base:
        with anyio.fail_after(TIMEOUT), pytest.raises(McpError) as info:
            async with (
                open_streamable_http(f"{base}/mcp") as transport,
                Client(versions=HANDSHAKE_VERSIONS).connect(transport),
            ):
                pass
        with pytest.raises(anyio.ClosedResourceError):  # closed on the way out
            await transport.send(PING)
    return info.value


class Watch(logging.Handler):
    """Log records of mcpbind's HTTP client, and an event set by the first one that holds
    ``text``."""

    def __init__(self, text: str) -> None:
        super().__init__(logging.DEBUG)
        self.text = text
        self.records: list[str] = []
        self.seen = anyio.Event()

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        self.records.append(message)
        if self.text in message:
            self.seen.set()


@contextmanager
def watching(text: str) -> Iterator[Watch]:
    logger = logging.getLogger("mcpbind.http.client")
    watch = Watch(text)
    level = logger.level
    logger.setLevel(logging.DEBUG)
    logger.addHandler(watch)
    try:
        yield watch
    finally:
        logger.removeHandler(watch)
        logger.setLevel(level)


# -- the initialize POST ----------------------------------------------------------------------


async def test_an_initialize_answered_as_an_sse_stream_starts_the_session() -> None:
    fake = FakeServer()

    def initialize(seen: Seen) -> Sse:
        answer = fake.initialize_reply(seen)  # opens the session; its id goes in the headers
        return Sse([event(None, id="i0"), event(answer.body, id="i1")], headers=answer.headers)

    fake.post_handlers["initialize"] = initialize
    async with connect(fake) as (session, transport):
        assert session.server_info.name == "fake"
        assert transport.session_id == "session-1"
        assert transport.initialize_status == 200
        assert (await session.list_tools()).tools[0].name == "echo"
    tools_list = fake.requests("POST", "tools/list")[0]
    assert tools_list.headers["mcp-session-id"] == "session-1"
    assert [d.headers["mcp-session-id"] for d in fake.requests("DELETE")] == ["session-1"]


async def test_an_initialize_answered_with_a_json_rpc_error_raises_it() -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Sse(
        [event(rpc_error(seen.rpc_id, INVALID_PARAMS, "clientInfo is required"), id="e1")]
    )
    error = await connect_fails(fake)
    assert (error.code, error.message) == (INVALID_PARAMS, "clientInfo is required")
    # No session was opened, so nothing is deleted and nothing else is sent.
    assert [(s.method, s.rpc_method) for s in fake.seen] == [("POST", "initialize")]


async def test_an_initialize_answered_with_a_json_rpc_error_as_json() -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Json(rpc_error(seen.rpc_id, -32000, "server is full"))
    error = await connect_fails(fake)
    assert (error.code, error.message) == (-32000, "server is full")
    assert [(s.method, s.rpc_method) for s in fake.seen] == [("POST", "initialize")]


@pytest.mark.parametrize(
    ("content_type", "shown"),
    [("text/html; charset=utf-8", "'text/html'"), (None, "'none'")],
    ids=["html", "no-content-type"],
)
async def test_an_initialize_answered_with_an_unknown_content_type(
    content_type: str | None, shown: str
) -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Status(
        200, b"<html>a login page</html>", content_type=content_type
    )
    error = await connect_fails(fake)
    assert error.code == INTERNAL_ERROR
    assert f"content type {shown}" in error.message
    assert "application/json or text/event-stream" in error.message
    assert error.data == {"status": 200, "body": "<html>a login page</html>"}
    assert [(s.method, s.rpc_method) for s in fake.seen] == [("POST", "initialize")]


# -- DELETE on close --------------------------------------------------------------------------


async def test_a_delete_answered_500_still_closes() -> None:
    fake = FakeServer()
    fake.delete_handler = lambda seen: Status(500, b"cannot delete")
    with watching("DELETE of the session answered 500") as watch:
        async with connect(fake) as (session, transport):
            await session.ping()
        assert watch.seen.is_set(), watch.records
    assert [d.status for d in fake.requests("DELETE")] == [500]
    with pytest.raises(anyio.ClosedResourceError):
        await transport.send(PING)


async def test_a_delete_that_never_answers_is_given_up_after_the_timeout() -> None:
    fake = FakeServer()
    deleting = anyio.Event()

    async def never(seen: Seen) -> Status:
        deleting.set()
        await anyio.sleep_forever()
        raise AssertionError

    fake.delete_handler = never
    with watching("DELETE of the session failed") as watch:
        async with connect(fake, timeout=1.0) as (session, _):
            await session.ping()
            started = anyio.current_time()
        waited = anyio.current_time() - started
        assert deleting.is_set() and watch.seen.is_set(), watch.records
    assert waited < TIMEOUT  # the timeout (1 s), with room for a loaded machine


# -- the GET stream ---------------------------------------------------------------------------


async def test_a_get_stream_that_cannot_be_reconnected_is_given_up_and_the_session_goes_on() -> None:
    fake = FakeServer()
    # The first GET opens the stream (a priming event, then it ends); every reconnection is an
    # empty stream that ends at once and delivers nothing, so each counts toward the limit.
    fake.get_handler = lambda seen: (
        Sse([]) if "last-event-id" in seen.headers else Sse([event(None, id="g0", retry=10)])
    )
    with watching("GET stream ended") as watch:
        async with connect(fake, max_reconnects=3) as (session, _):
            with anyio.fail_after(TIMEOUT):
                await watch.seen.wait()
            result = await session.call_tool("echo", {"text": "on"})
            assert result.content == [types.TextContent(text="on")]
    [ended] = [r for r in watch.records if "GET stream ended" in r]
    assert "gave up after 3 reconnections" in ended
    gets = fake.requests("GET")
    assert [g.headers.get("last-event-id") for g in gets] == [None, "g0", "g0", "g0"]


async def test_a_get_reconnection_refused_with_an_error_status_is_not_retried() -> None:
    fake = FakeServer()
    fake.get_handler = lambda seen: (
        Status(503, b"overloaded")
        if "last-event-id" in seen.headers
        else Sse([event(None, id="g0", retry=10)])
    )
    with watching("GET stream ended") as watch:
        async with connect(fake, max_reconnects=5) as (session, _):
            with anyio.fail_after(TIMEOUT):
                await watch.seen.wait()
            await session.ping()
    [ended] = [r for r in watch.records if "GET stream ended" in r]
    assert "HTTP 503" in ended and "overloaded" in ended
    assert [g.status for g in fake.requests("GET")] == [200, 503]


async def test_a_get_stream_whose_server_went_away_reconnects_when_it_is_back() -> None:
    fake = FakeServer()
    back = anyio.Event()

    def get(seen: Seen) -> Sse | Status:
        if "last-event-id" not in seen.headers:
            return Sse([event(None, id="g0", retry=10)])
        if not back.is_set():
            return Sse([])  # ends at once: an attempt that counts
        return Sse([event(LIST_CHANGED, id="g1"), HOLD])

    fake.get_handler = get
    changes = ListChanges()
    async with connect(fake, changes.client, max_reconnects=50):
        await fake.wait_for(lambda s: s.method == "GET" and "last-event-id" in s.headers, count=2)
        back.set()
        await changes.heard.wait()
    resumed = [g for g in fake.requests("GET") if "last-event-id" in g.headers]
    assert all(g.headers["last-event-id"] == "g0" for g in resumed)
    assert 2 <= len(resumed) < 50
