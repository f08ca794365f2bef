"""The Streamable HTTP client transport against a scripted server
(tests/transports/http/http_fake_server.py), served on 127.0.0.1 by uvicorn (asyncio) or hypercorn
(trio)."""

from __future__ import annotations

import json
import logging
from collections.abc import Generator, Mapping
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import CONNECTION_CLOSED, INTERNAL_ERROR, REQUEST_TIMEOUT, McpError
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.transports.base import MessageTooLarge
from mcpbind.transports.http.client import HTTPTransportError, open_streamable_http
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
    Wait,
    event,
    rpc_result,
)

pytestmark = pytest.mark.anyio


def text_of(result: types.CallToolResult) -> str:
    block = result.content[0]
    assert isinstance(block, types.TextContent)
    return block.text


# What a raw client sends first (ident 1).
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "1"},
    },
}


def notification(method: str, params: Mapping[str, Any] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
    if params is not None:
        message["params"] = dict(params)
    return message


# -- answers: JSON, SSE, 202 ------------------------------------------------------------------


async def test_json_answers_and_the_headers_of_each_post() -> None:
    fake = FakeServer()
    async with connect(fake) as (session, transport):
        assert session.server_info.name == "fake"
        assert text_of(await session.call_tool("echo", {"text": "hello"})) == "hello"
        assert transport.initialize_status == 200
    for post in fake.requests("POST"):
        assert post.headers["content-type"] == "application/json"
        accepted = {part.strip() for part in post.headers["accept"].split(",")}
        assert {"application/json", "text/event-stream"} <= accepted


async def test_sse_answer_with_notifications_before_the_response() -> None:
    fake = FakeServer()
    logged: list[Any] = []

    def call(seen: Seen) -> Sse:
        token = seen.message["params"]["_meta"]["progressToken"]
        progress = {"progressToken": token, "progress": 1, "total": 2, "message": "half"}
        log = {"level": "info", "data": "working"}
        return Sse(
            [
                event(None, id="e0"),
                event(notification("notifications/progress", progress), id="e1"),
                event(notification("notifications/message", log), id="e2"),
                event(rpc_result(seen.rpc_id, {"content": [{"type": "text", "text": "done"}]}), id="e3"),
            ]
        )

    fake.post_handlers["tools/call"] = call
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    async with connect(fake, Client("tester", "1.0", logging=on_log, versions=HANDSHAKE_VERSIONS)) as (
        session,
        _,
    ):
        result = await session.call_tool("echo", {}, progress=on_progress)
        assert text_of(result) == "done"
        assert progress == [(1, 2, "half")]
        with anyio.fail_after(5):
            while not logged:  # notification handlers run in their own task
                await anyio.sleep(0.01)
        assert logged == ["working"]


async def test_notifications_and_responses_get_202_and_nothing_comes_back() -> None:
    fake = FakeServer()
    async with connect(fake) as (session, _):
        await session.send_roots_list_changed()
        assert text_of(await session.call_tool("echo", {"text": "after"})) == "after"
    notes = [s for s in fake.requests("POST") if s.rpc_method and s.rpc_method.startswith("notifications/")]
    assert [(s.rpc_method, s.status) for s in notes] == [
        ("notifications/initialized", 202),
        ("notifications/roots/list_changed", 202),
    ]


async def test_a_json_batch_answer_delivers_every_message() -> None:
    fake = FakeServer()
    logged: list[Any] = []
    fake.post_handlers["tools/call"] = lambda seen: Json(
        [
            notification("notifications/message", {"level": "info", "data": "first"}),
            rpc_result(seen.rpc_id, {"content": [{"type": "text", "text": "second"}]}),
        ]
    )

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)

    async with connect(fake, Client("tester", "1.0", logging=on_log, versions=HANDSHAKE_VERSIONS)) as (
        session,
        _,
    ):
        assert text_of(await session.call_tool("echo", {})) == "second"
        with anyio.fail_after(5):
            while not logged:
                await anyio.sleep(0.01)
        assert logged == ["first"]


# -- session id and protocol version ----------------------------------------------------------


@pytest.mark.parametrize("version", ["2025-11-25", "2025-06-18"])
async def test_session_id_and_negotiated_version_sent_after_initialize(version: str) -> None:
    fake = FakeServer(protocol_version=version)
    async with connect(fake) as (session, transport):
        assert session.protocol_version == version
        await session.list_tools()
        await fake.wait_for(lambda s: s.method == "GET")
        assert (transport.session_id, transport.protocol_version) == ("session-1", version)
    initialize, *later = fake.seen
    assert initialize.rpc_method == "initialize"
    assert "mcp-session-id" not in initialize.headers and "mcp-protocol-version" not in initialize.headers
    assert {s.method for s in later} == {"POST", "GET", "DELETE"}
    for seen in later:
        assert seen.headers["mcp-session-id"] == "session-1", seen
        assert seen.headers["mcp-protocol-version"] == version, seen


async def test_a_server_without_sessions_gets_no_session_header_and_no_delete() -> None:
    fake = FakeServer(sessions=False)
    async with connect(fake) as (session, transport):
        assert text_of(await session.call_tool("echo", {"text": "x"})) == "x"
        assert transport.session_id is None
    assert all("mcp-session-id" not in s.headers for s in fake.seen)
    assert not fake.requests("DELETE")
    assert all(s.headers["mcp-protocol-version"] == "2025-11-25" for s in fake.seen[1:])


# -- the GET stream ---------------------------------------------------------------------------


async def test_get_stream_delivers_server_notifications_and_is_resumed() -> None:
    fake = FakeServer()

    def get(seen: Seen) -> Sse:
        if seen.headers.get("last-event-id") == "g1":
            return Sse([event(LIST_CHANGED, id="g2"), HOLD])
        return Sse([event(None, id="g0", retry=50), event(LIST_CHANGED, id="g1")])  # then closes

    fake.get_handler = get
    changes = ListChanges(times=2)
    async with connect(fake, changes.client, reconnect_delay=30):
        await changes.heard.wait()
    gets = fake.requests("GET")
    assert [g.headers.get("last-event-id") for g in gets] == [None, "g1"]
    assert all(g.headers["accept"] == "text/event-stream" for g in gets)


async def test_the_get_stream_is_open_before_the_first_request_after_initialize() -> None:
    # A server may take a GET that arrives after a request for a reconnection (the conformance
    # suite's sse-retry scenario does): the client's listener GET must come first.
    fake = FakeServer()
    fake.get_handler = lambda seen: Sse([event(None, id="g0"), HOLD])
    async with connect(fake) as (session, _):
        await session.list_tools()
    order = [(s.method, s.rpc_method) for s in fake.seen if s.method != "DELETE"]
    assert order[:4] == [
        ("POST", "initialize"),
        ("POST", "notifications/initialized"),
        ("GET", None),
        ("POST", "tools/list"),
    ]


async def test_get_405_is_tolerated_and_not_retried(caplog: pytest.LogCaptureFixture) -> None:
    fake = FakeServer()
    caplog.set_level(logging.DEBUG, logger="mcpbind.http.client")
    async with connect(fake, reconnect_delay=0.01) as (session, _):
        await fake.wait_for(lambda s: s.method == "GET")
        for _ in range(5):
            await session.ping()
        # The GET stream's task has ended (no retry can come after): (wrong) retries, every 10 ms,
        # would have come before.
        with anyio.fail_after(TIMEOUT):
            while "GET stream ended" not in caplog.text:
                await anyio.sleep(0.01)
    assert "(HTTP 405)" in caplog.text
    assert [g.status for g in fake.requests("GET")] == [405]


async def test_an_oversized_message_on_the_get_stream_is_skipped() -> None:
    fake = FakeServer()
    big = notification("notifications/message", {"level": "info", "data": "x" * 5000})
    small = notification("notifications/message", {"level": "info", "data": "small"})
    fake.get_handler = lambda seen: Sse([event(big, id="g1"), event(small, id="g2"), HOLD])
    logged: list[Any] = []
    got = anyio.Event()

    async def on_log(params: types.LoggingMessageNotificationParams) -> None:
        logged.append(params.data)
        got.set()

    async with connect(
        fake, Client("tester", "1.0", logging=on_log, versions=HANDSHAKE_VERSIONS), max_message_size=1000
    ):
        await got.wait()
        # The session told the server about the message it could not take (id null, -32600).
        reported = await fake.wait_for(lambda s: s.is_response)
    assert logged == ["small"]
    assert reported[0].message["error"]["code"] == -32600


# -- resuming a POST stream -------------------------------------------------------------------


async def test_post_stream_closed_early_is_resumed_after_the_retry_delay() -> None:
    fake = FakeServer()

    def call(seen: Seen) -> Sse:
        token = seen.message["params"]["_meta"]["progressToken"]
        progress = notification("notifications/progress", {"progressToken": token, "progress": 1})
        fake.call_id = seen.rpc_id  # type: ignore[attr-defined]
        # Priming event with retry: 200 ms, one notification, then the connection closes.
        return Sse([event(None, id="e1", retry=200), event(progress, id="e2")])

    def get(seen: Seen) -> Status | Sse:
        if seen.headers.get("last-event-id") == "e2":
            answer = rpc_result(fake.call_id, {"content": [{"type": "text", "text": "resumed"}]})  # type: ignore[attr-defined]
            return Sse([event(answer, id="e3")])
        return Status(405)

    fake.post_handlers["tools/call"] = call
    fake.get_handler = get
    progress: list[float] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(value)

    async with connect(fake, reconnect_delay=30) as (session, _):
        result = await session.call_tool("echo", {}, progress=on_progress)
    assert text_of(result) == "resumed"
    assert progress == [1]
    [post] = fake.requests("POST", "tools/call")
    [resume] = [g for g in fake.requests("GET") if "last-event-id" in g.headers]
    assert post.finished is not None
    waited = resume.time - post.finished
    # The server's 200 ms, not the client's 30 s reconnect_delay (a loaded machine may add seconds).
    assert 0.18 <= waited < 15.0, waited


async def test_resuming_gives_up_after_max_reconnects() -> None:
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: Sse([event(None, id="e1", retry=10)])
    fake.get_handler = lambda seen: Sse([]) if "last-event-id" in seen.headers else Status(405)
    async with connect(fake, max_reconnects=2) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
    assert info.value.code == CONNECTION_CLOSED
    assert "gave up after 2 reconnections" in info.value.message
    assert len([g for g in fake.requests("GET") if "last-event-id" in g.headers]) == 2


async def test_a_stream_without_event_ids_that_ends_early_fails_the_request() -> None:
    fake = FakeServer()
    note = notification("notifications/message", {"level": "info", "data": "x"})
    # Only calls without arguments get the broken stream.
    fake.post_handlers["tools/call"] = lambda seen: (
        None if seen.message["params"]["arguments"] else Sse([event(note)])
    )
    async with connect(fake) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
        assert "cannot be resumed" in info.value.message
        assert text_of(await session.call_tool("echo", {"text": "still fine"})) == "still fine"


async def test_resuming_into_an_expired_session_fails_the_request() -> None:
    fake = FakeServer()

    def call(seen: Seen) -> Sse:
        fake.expire_sessions()
        return Sse([event(None, id="e1", retry=10)])

    fake.post_handlers["tools/call"] = call
    async with connect(fake) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
    assert info.value.code == CONNECTION_CLOSED
    assert "session" in info.value.message and info.value.data == {"status": 404, "body": ""}


# -- server-to-client requests ----------------------------------------------------------------


async def test_a_sampling_request_on_the_post_stream_is_answered_by_post() -> None:
    fake = FakeServer()
    sampling = {
        "jsonrpc": "2.0",
        "id": "s1",
        "method": "sampling/createMessage",
        "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "2+2?"}}],
            "maxTokens": 5,
        },
    }

    def call(seen: Seen) -> Sse:
        answered = fake.response_arrived("s1")
        done = rpc_result(seen.rpc_id, {"content": [{"type": "text", "text": "tool done"}]})
        return Sse([event(None, id="e0"), event(sampling, id="e1"), Wait(answered), event(done, id="e2")])

    fake.post_handlers["tools/call"] = call

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="4"), model="m")

    async with connect(fake, Client("tester", "1.0", sampling=sample, versions=HANDSHAKE_VERSIONS)) as (
        session,
        _,
    ):
        assert text_of(await session.call_tool("echo", {})) == "tool done"
    [answer] = [s for s in fake.requests("POST") if s.is_response]
    assert answer.status == 202
    assert answer.message["id"] == "s1"
    assert answer.message["result"]["content"] == {"type": "text", "text": "4"}
    assert answer.headers["mcp-session-id"] == "session-1"


# -- expired sessions -------------------------------------------------------------------------


async def test_404_starts_a_new_session_transparently() -> None:
    fake = FakeServer()
    async with connect(fake) as (session, transport):
        assert text_of(await session.call_tool("echo", {"text": "one"})) == "one"
        fake.expire_sessions()
        assert text_of(await session.call_tool("echo", {"text": "two"})) == "two"
        assert transport.session_id == "session-2"
        assert text_of(await session.call_tool("echo", {"text": "three"})) == "three"
    first, again = fake.requests("POST", "initialize")
    assert again.rpc_id != first.rpc_id
    assert "mcp-session-id" not in again.headers
    assert again.message["params"] == first.message["params"]
    calls = [
        (c.message["params"]["arguments"]["text"], c.headers["mcp-session-id"], c.status)
        for c in fake.requests("POST", "tools/call")
    ]
    assert calls == [
        ("one", "session-1", 200),
        ("two", "session-1", 404),
        ("two", "session-2", 200),
        ("three", "session-2", 200),
    ]
    initialized = fake.requests("POST", "notifications/initialized")
    assert [s.headers["mcp-session-id"] for s in initialized] == ["session-1", "session-2"]
    assert fake.requests("DELETE")[-1].headers["mcp-session-id"] == "session-2"


async def test_the_new_sessions_initialize_answer_is_not_delivered() -> None:
    fake = FakeServer()
    async with serve_asgi(fake) as base, open_streamable_http(f"{base}/mcp") as transport:
        with anyio.fail_after(TIMEOUT):
            await transport.send(json.dumps(INITIALIZE).encode())
            assert json.loads(await transport.receive())["id"] == 1
            await transport.send(json.dumps(notification("notifications/initialized")).encode())
            fake.expire_sessions()
            await transport.send(json.dumps({"jsonrpc": "2.0", "id": 2, "method": "ping"}).encode())
            assert json.loads(await transport.receive()) == rpc_result(2, {})
            assert transport.session_id == "session-2"


async def test_404_when_no_new_session_can_be_started_fails_the_request() -> None:
    fake = FakeServer()
    async with connect(fake) as (session, _):
        fake.expire_sessions()
        fake.post_handlers["initialize"] = lambda seen: Status(503, b"going away")
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {"text": "x"})
    assert info.value.code == CONNECTION_CLOSED
    assert "session-1" in info.value.message and "could not be started" in info.value.message


async def test_404_again_in_the_new_session_fails_the_request() -> None:
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: Status(404, b"no such tool endpoint")
    async with connect(fake) as (session, transport):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
        assert transport.session_id == "session-2"
    assert info.value.code == CONNECTION_CLOSED
    assert "404 again in the new session" in info.value.message
    assert len(fake.requests("POST", "initialize")) == 2  # one renewal, not a loop


async def test_concurrent_requests_hitting_404_share_one_new_session() -> None:
    fake = FakeServer()
    results: list[str] = []
    async with connect(fake) as (session, _):
        fake.expire_sessions()

        async def call(text: str) -> None:
            results.append(text_of(await session.call_tool("echo", {"text": text})))

        async with anyio.create_task_group() as tg:
            for text in ("a", "b", "c", "d"):
                tg.start_soon(call, text)
    assert sorted(results) == ["a", "b", "c", "d"]
    assert len(fake.requests("POST", "initialize")) == 2
    assert fake.session_count == 2


# -- HTTP errors and bad bodies ---------------------------------------------------------------


async def test_http_500_becomes_an_mcp_error_naming_status_and_body() -> None:
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: (
        None if seen.message["params"]["arguments"] else Status(500, b"database on fire")
    )
    async with connect(fake) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
        assert info.value.code == INTERNAL_ERROR
        assert "HTTP 500 Internal Server Error" in info.value.message
        assert "database on fire" in info.value.message
        assert info.value.data == {"status": 500, "body": "database on fire"}
        assert text_of(await session.call_tool("echo", {"text": "ok"})) == "ok"  # session goes on


@pytest.mark.parametrize(
    ("reply", "expected"),
    [
        (Json(b"<html>oops</html>", raw=True), "not a JSON-RPC message"),
        (Json(rpc_result(999, {})), "holds no response to request"),
        (Status(200, b"hello", content_type="text/plain"), "'text/plain'"),
        (Status(202), "no response to request"),
    ],
    ids=["not-json", "wrong-id", "wrong-content-type", "202-for-a-request"],
)
async def test_an_answer_that_brings_no_response_fails_the_request(
    reply: Json | Status, expected: str
) -> None:
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: reply
    async with connect(fake) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
    assert expected in info.value.message


async def test_a_json_answer_over_the_size_limit_fails_the_request() -> None:
    fake = FakeServer()
    async with connect(fake, max_message_size=2000) as (session, _):
        assert text_of(await session.call_tool("echo", {"text": "small"})) == "small"
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {"text": "x" * 3000})
    assert "exceeds the limit of 2000 bytes" in info.value.message


async def test_an_oversized_message_on_a_request_stream_fails_the_request() -> None:
    fake = FakeServer()
    fake.post_handlers["tools/call"] = lambda seen: Sse(
        [event(rpc_result(seen.rpc_id, {"content": [{"type": "text", "text": "x" * 3000}]}), id="1")]
    )
    async with connect(fake, max_message_size=2000) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
    assert "exceeds the limit of 2000 bytes" in info.value.message


@pytest.mark.parametrize("status", [400, 404, 405])
async def test_initialize_4xx_raises_http_transport_error_for_the_legacy_probe(status: int) -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Status(status, b"no MCP here")
    async with serve_asgi(fake) as base, open_streamable_http(f"{base}/mcp") as transport:
        with anyio.fail_after(TIMEOUT), pytest.raises(HTTPTransportError) as info:
            async with Client(versions=HANDSHAKE_VERSIONS).connect(transport):
                pass
        assert (info.value.status, info.value.body) == (status, "no MCP here")
        assert transport.initialize_status == status


async def test_initialize_5xx_is_an_mcp_error() -> None:
    fake = FakeServer()
    fake.post_handlers["initialize"] = lambda seen: Status(502, b"bad gateway")
    async with serve_asgi(fake) as base, open_streamable_http(f"{base}/mcp") as transport:
        with anyio.fail_after(TIMEOUT), pytest.raises(McpError) as info:
            async with Client(versions=HANDSHAKE_VERSIONS).connect(transport):
                pass
        assert "502" in info.value.message
        assert transport.initialize_status == 502


async def test_no_server_listening_is_an_mcp_error() -> None:
    with anyio.fail_after(TIMEOUT):
        async with serve_asgi(FakeServer()) as base:
            pass  # the port is free again
        async with open_streamable_http(f"{base}/mcp") as transport:
            with pytest.raises(McpError) as info:
                async with Client(versions=HANDSHAKE_VERSIONS).connect(transport):
                    pass
    assert info.value.code == CONNECTION_CLOSED and "ConnectError" in info.value.message


# -- timeouts ---------------------------------------------------------------------------------


async def test_no_answer_within_the_timeout_is_an_error_not_a_hang() -> None:
    fake = FakeServer()

    async def never(seen: Seen) -> Status | None:
        if seen.message["params"]["arguments"]:
            return None  # calls with arguments get the default answer
        await anyio.sleep_forever()
        raise AssertionError

    fake.post_handlers["tools/call"] = never
    async with connect(fake, timeout=0.3) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
        assert info.value.code == REQUEST_TIMEOUT
        assert "0.3 s" in info.value.message
        assert text_of(await session.call_tool("echo", {"text": "next"})) == "next"


async def test_a_silent_sse_stream_times_out() -> None:
    fake = FakeServer()
    note = notification("notifications/message", {"level": "info", "data": "started"})
    fake.post_handlers["tools/call"] = lambda seen: Sse([event(note), HOLD])
    # The read timeout also bounds the wait for the answer's headers: long enough that a loaded
    # machine gets them (and the first event) in time, so that what times out is the silence.
    async with connect(fake, sse_read_timeout=1.0) as (session, _):
        with pytest.raises(McpError) as info:
            await session.call_tool("echo", {})
    assert "cannot be resumed" in info.value.message


# -- closing, headers, auth -------------------------------------------------------------------


async def test_close_deletes_the_session() -> None:
    fake = FakeServer()
    async with connect(fake):
        assert fake.sessions == {"session-1"}
    [delete] = fake.requests("DELETE")
    assert delete.headers["mcp-session-id"] == "session-1" and delete.status == 200
    assert fake.sessions == set()


async def test_delete_405_is_ignored_and_terminate_on_close_false_sends_none() -> None:
    fake = FakeServer()
    fake.delete_handler = lambda seen: Status(405)
    async with connect(fake):
        pass
    assert [d.status for d in fake.requests("DELETE")] == [405]
    fake2 = FakeServer()
    async with connect(fake2, terminate_on_close=False):
        pass
    assert fake2.requests("DELETE") == []


async def test_closing_stops_the_streams_and_ends_receive() -> None:
    fake = FakeServer()
    fake.get_handler = lambda seen: Sse([event(None, id="g0"), HOLD])
    async with serve_asgi(fake) as base, open_streamable_http(f"{base}/mcp") as transport:
        with anyio.fail_after(TIMEOUT):
            async with Client(versions=HANDSHAKE_VERSIONS).connect(transport):
                await fake.wait_for(lambda s: s.method == "GET")
            # The session closed the transport: the GET stream ended with it.
            gets = await fake.wait_for(lambda s: s.method == "GET" and s.finished is not None)
            assert len(gets) == 1
            with pytest.raises((anyio.ClosedResourceError, anyio.EndOfStream)):
                await transport.receive()
            with pytest.raises(anyio.ClosedResourceError):
                await transport.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')


class BearerAuth(httpx.Auth):
    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


async def test_custom_headers_and_auth_go_with_every_request() -> None:
    fake = FakeServer()
    fake.get_handler = lambda seen: Sse([event(None, id="g0"), HOLD])
    headers = {"X-Tenant": "blue", "Accept": "text/plain"}  # Accept is the transport's
    async with connect(fake, headers=headers, auth=BearerAuth("sesame")) as (session, _):
        await session.ping()
        await fake.wait_for(lambda s: s.method == "GET")
    assert {s.method for s in fake.seen} == {"POST", "GET", "DELETE"}
    for seen in fake.seen:
        assert seen.headers["x-tenant"] == "blue"
        assert seen.headers["authorization"] == "Bearer sesame"
        assert seen.headers["accept"] != "text/plain"


async def test_a_given_http_client_is_used_and_left_open() -> None:
    fake = FakeServer()
    async with httpx.AsyncClient(headers={"X-From-Client": "yes"}) as http:
        async with connect(fake, http_client=http) as (session, _):
            await session.ping()
        assert not http.is_closed
    assert all(s.headers["x-from-client"] == "yes" for s in fake.seen)


async def test_message_too_large_type_is_the_transport_protocols() -> None:
    # receive() raises the protocol's MessageTooLarge for an oversized GET-stream message.
    fake = FakeServer()
    big = notification("notifications/message", {"level": "info", "data": "y" * 500})
    fake.get_handler = lambda seen: Sse([event(big, id="g1"), HOLD])
    async with (
        serve_asgi(fake) as base,
        open_streamable_http(f"{base}/mcp", max_message_size=200) as transport,
    ):
        with anyio.fail_after(TIMEOUT):
            await transport.send(json.dumps(INITIALIZE).encode())
            await transport.receive()
            await transport.send(json.dumps(notification("notifications/initialized")).encode())
            with pytest.raises(MessageTooLarge) as info:
                await transport.receive()
            assert info.value.limit == 200 and info.value.size > 200


async def test_an_error_in_the_block_comes_out_as_itself_with_its_cause() -> None:
    async with serve_asgi(FakeServer()) as base:
        with pytest.raises(KeyError) as info:
            async with open_streamable_http(f"{base}/mcp"):
                try:
                    raise ValueError("inner")
                except ValueError as exc:
                    raise KeyError("outer") from exc
    assert isinstance(info.value.__cause__, ValueError)
