"""Hostile input over HTTP (see tests/protocol/test_hostile_input.py for the codec): bodies nested too
deeply for msgspec, ``[`` that is not JSON, escaped lone surrogates, and numbers in headers and
SSE fields that ``int()`` refuses (over 4,300 digits, or digits such as "²" that ``isdigit()``
takes). The Streamable HTTP server answers 400 with the JSON-RPC error (and the id when it can
be read), never 500; the client fails the call a broken response answers at once.

Servers run on 127.0.0.1 under uvicorn (asyncio) and hypercorn (asyncio, trio).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.client.client import Client
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, McpError
from mcpbind.transports.http.client import open_streamable_http
from mcpbind.transports.http.legacy import LegacySSEApp
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName, serve_asgi
from tests.http_server_helpers import get_stream, headers, make_server, open_session, running
from tests.transports.http.http_fake_server import FakeServer, Json, Seen, Sse, event, rpc_result

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)

DEPTHS = [1_000, 10_000, 100_000]
TIMEOUT = 15.0


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def deep_call(ident: int, depth: int) -> bytes:
    return (
        b'{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":%s}}}'
        % (ident, nested(depth))
    )


# -- the Streamable HTTP server -----------------------------------------------------------------


async def test_a_body_nested_too_deeply_gets_400_and_a_parse_error(asgi_server: ServerName) -> None:
    """Item 14: HTTP 500 before."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        for depth in DEPTHS:
            for body, ident in [(deep_call(depth, depth), depth), (nested(depth), None)]:
                response = await client.post(url, content=body, headers=headers(session_id))
                assert response.status_code == 400, response.text
                answer = response.json()
                assert (answer["id"], answer["error"]["code"]) == (ident, PARSE_ERROR), answer
        # The session goes on.
        _, answers = await helpers.post(client, url, helpers.call(1, "echo", {"text": "still"}), session_id)
        assert answers[-1]["result"]["content"][0]["text"] == "still"


@pytest.mark.parametrize("body", [b"[", b"[1,", b'[{"jsonrpc":"2.0"', b"[1] x"])
async def test_a_body_starting_with_a_bracket_that_is_not_json(asgi_server: ServerName, body: bytes) -> None:
    """Item 15 over HTTP: a batch refusal (-32600) before, for what is not JSON at all."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        response = await client.post(url, content=body, headers=headers(session_id))
        assert response.status_code == 400
        assert response.json()["error"]["code"] == PARSE_ERROR
        # A batch that is JSON is still refused as one.
        response = await client.post(url, content=b"[1]", headers=headers(session_id))
        assert (response.status_code, response.json()["error"]["code"]) == (400, INVALID_REQUEST)


async def test_a_lone_surrogate_gets_400_and_a_parse_error_with_the_id(asgi_server: ServerName) -> None:
    """Item 17: a null id before, so the caller could not tell which request failed."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        for body, ident in [
            (
                b'{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"a\\udfff"}}}',
                7,
            ),
            (b'{"jsonrpc":"2.0","method":"ping","params":{"_meta":{"x":"\\ud800"}},"id":"eight"}', "eight"),
            (b'{"jsonrpc":"2.0","id":"\\udfff","method":"ping"}', None),
        ]:
            response = await client.post(url, content=body, headers=headers(session_id))
            assert response.status_code == 400
            answer = response.json()
            assert (answer["id"], answer["error"]["code"]) == (ident, PARSE_ERROR), answer


@pytest.mark.parametrize(
    "last_event_id",
    [b"p1_" + b"1" * 5_000, b"p1_\xb2", b"p1_" + b"9" * 40],
    ids=["5000-digits", "superscript-two", "40-digits"],
)
async def test_a_last_event_id_that_is_no_number_gets_400(
    asgi_server: ServerName, last_event_id: bytes
) -> None:
    """Item 16: HTTP 500 before (``isdigit()`` then ``int()``)."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        session_id = await open_session(client, url)
        async with get_stream(client, url, session_id) as stream:
            priming = await stream.next()
            issued = priming["id"]
            stream_id = issued.rpartition("_")[0].encode()
        hdrs: dict[str, Any] = {**headers(session_id), "accept": "text/event-stream"}
        del hdrs["content-type"]
        hdrs["last-event-id"] = stream_id + last_event_id[2:]  # the issued stream, a bad number
        response = await client.get(url, headers=hdrs)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["code"] == INVALID_REQUEST


async def test_a_host_with_a_port_of_other_digits_is_refused(asgi_server: ServerName) -> None:
    """``"²".isdigit()`` is true: such a "port" matched ``127.0.0.1:*`` before."""
    app = StreamableHTTPApp(make_server())
    async with running(app, asgi_server) as (url, client):
        init = json.dumps(helpers.initialize()).encode()
        hdrs: dict[str, Any] = {**headers(version=None), "host": b"127.0.0.1:\xb2"}
        response = await client.post(url, content=init, headers=hdrs)
        assert response.status_code == 403


async def test_the_legacy_server_answers_deep_nesting_with_400(asgi_server: ServerName) -> None:
    """Item 14 on the legacy HTTP+SSE server: HTTP 500 before."""
    app = LegacySSEApp(make_server())
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_asgi(app, asgi_server) as base_url,
            httpx.AsyncClient() as http,
            http.stream("GET", base_url + "/sse") as stream,
        ):
            lines = stream.aiter_lines()
            async for line in lines:
                if line.startswith("data: "):
                    endpoint = base_url + line[6:]
                    break
            for depth in DEPTHS:
                response = await http.post(
                    endpoint, content=deep_call(1, depth), headers={"content-type": "application/json"}
                )
                assert response.status_code == 400, response.text
                assert response.json()["error"]["code"] == PARSE_ERROR


@pytest.mark.parametrize("content_length", [b"1" * 5_000, b"\xb2"], ids=["5000-digits", "superscript-two"])
async def test_the_legacy_server_takes_no_odd_content_length_for_a_number(content_length: bytes) -> None:
    """``isdigit()`` then ``int()`` of Content-Length: 500 before. (ASGI servers built on h11
    refuse such a header themselves; the app must not rely on that.)"""
    app = LegacySSEApp(make_server())
    to_test, sent = anyio.create_memory_object_stream[Any](100)

    async def never() -> Any:
        await anyio.sleep_forever()

    def scope(method: str, path: str, query: bytes, extra: list[tuple[bytes, bytes]]) -> dict[str, Any]:
        return {
            "type": "http",
            "method": method,
            "path": path,
            "root_path": "",
            "query_string": query,
            "headers": [(b"host", b"127.0.0.1:1"), *extra],
        }

    body = json.dumps(helpers.initialize("2024-11-05")).encode()
    posted = [{"type": "http.request", "body": body, "more_body": False}]

    async def receive_body() -> Any:
        return posted.pop() if posted else await never()

    with anyio.fail_after(TIMEOUT):
        async with anyio.create_task_group() as tg, app.run():
            tg.start_soon(app, scope("GET", "/sse", b"", []), never, to_test.send)
            assert (await sent.receive())["status"] == 200
            announced = (await sent.receive())["body"]
            query = announced.split(b"?", 1)[1].split(b"\n", 1)[0]
            extra = [(b"content-type", b"application/json"), (b"content-length", content_length)]
            await app(scope("POST", "/messages", query, extra), receive_body, to_test.send)
            start = await sent.receive()
            # Not a number: the header is ignored and the body read (202); a huge one: 413.
            assert start["status"] in (202, 413), start
            tg.cancel_scope.cancel()


# -- the Streamable HTTP client -------------------------------------------------------------------


@asynccontextmanager
async def connect(fake: FakeServer, server: ServerName) -> AsyncIterator[RemoteServer]:
    async with serve_asgi(fake, server) as base:
        with anyio.fail_after(TIMEOUT):
            async with (
                open_streamable_http(f"{base}/mcp") as transport,
                Client("tester", "1.0").connect(transport) as session,
            ):
                yield session


BROKEN = [
    *((f"nested {depth}", b'{"jsonrpc":"2.0","id":%s,"result":' + nested(depth) + b"}") for depth in DEPTHS),
    ("nested, id last", b'{"jsonrpc":"2.0","result":{"content":' + nested(2_000) + b'},"id":%s}'),
    ("lone surrogate", b'{"jsonrpc":"2.0","id":%s,"result":{"content":[{"type":"text","text":"\\udfff"}]}}'),
    ("lone surrogate in an error", b'{"jsonrpc":"2.0","id":%s,"error":{"code":1,"message":"a\\ud800"}}'),
]


@pytest.mark.parametrize("sse", [False, True], ids=["json", "sse"])
@pytest.mark.parametrize(("what", "template"), BROKEN, ids=[what for what, _ in BROKEN])
async def test_the_client_fails_the_call_a_broken_response_answers_at_once(
    asgi_server: ServerName, sse: bool, what: str, template: bytes
) -> None:
    """Items 14 and 17 on the client's side: the call waited for its timeout before."""
    fake = FakeServer()

    def broken(seen: Seen) -> Json | Sse:
        body = template % json.dumps(seen.rpc_id).encode()
        return Sse([event(body, id="e1", raw=True)]) if sse else Json(body, raw=True)

    fake.post_handlers["tools/call"] = broken
    async with connect(fake, asgi_server) as session:
        with anyio.fail_after(5), pytest.raises(McpError) as info:
            await session.call_tool("echo", {"text": "x"}, timeout=60)
        assert info.value.code == INTERNAL_ERROR
        assert "Parse error" in info.value.message, info.value.message
        await session.ping(timeout=5)


async def test_the_client_takes_a_huge_sse_retry_in_its_stride(asgi_server: ServerName) -> None:
    """Item 16's class of bug in the client's SSE parser: ``int()`` of a 5,000-digit
    ``retry:`` raised ValueError and the stream of the call was lost."""
    fake = FakeServer()

    def answer(seen: Seen) -> Sse:
        result = rpc_result(seen.rpc_id, {"content": [{"type": "text", "text": "fine"}]})
        return Sse([b"retry: " + b"1" * 5_000 + b"\n\n", event(result, id="e1")])

    fake.post_handlers["tools/call"] = answer
    async with connect(fake, asgi_server) as session:
        with anyio.fail_after(5):
            result = await session.call_tool("echo", {}, timeout=60)
        assert result.content[0].text == "fine"  # type: ignore[union-attr]


@pytest.mark.parametrize("content_length", [b"1" * 5_000, b"\xb2"], ids=["5000-digits", "superscript-two"])
async def test_the_client_takes_no_odd_content_length_for_a_number(content_length: bytes) -> None:
    """httpx over h11 refuses such a header itself; another httpx transport may not."""

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method != "POST":
            return httpx.Response(405 if request.method == "GET" else 200)
        message = json.loads(request.content)
        if "id" not in message:
            return httpx.Response(202)
        result: dict[str, Any] = {"content": [{"type": "text", "text": "ok"}]}
        if message["method"] == "initialize":
            result = {
                "protocolVersion": "2025-11-25",
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "mock", "version": "0"},
            }
        body = json.dumps(rpc_result(message["id"], result)).encode()
        hdrs = [(b"content-type", b"application/json")]
        if message["method"] == "tools/call":
            hdrs.append((b"content-length", content_length))
        return httpx.Response(200, headers=hdrs, content=body)

    with anyio.fail_after(TIMEOUT):
        async with (
            httpx.AsyncClient(transport=httpx.MockTransport(handler)) as http,
            open_streamable_http("http://mock/mcp", http_client=http) as transport,
            Client("tester", "1.0").connect(transport) as session,
        ):
            if content_length.isdigit():  # a number, over the limit: the call fails at once
                with pytest.raises(McpError, match="exceeds the limit"):
                    await session.call_tool("echo", {}, timeout=5)
            else:  # not a number: ignored, the body is read
                result = await session.call_tool("echo", {}, timeout=5)
                assert result.content[0].text == "ok"  # type: ignore[union-attr]
            await session.ping(timeout=5)
