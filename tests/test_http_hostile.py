"""Hostile input over HTTP (see tests/test_hostile_input.py for the codec): bodies nested too
deeply for msgspec, ``[`` that is not JSON, escaped lone surrogates. The Streamable HTTP server
answers 400 with the JSON-RPC error (and the id when it can be read), never 500; the client
fails the call a broken response answers at once.

Servers run on 127.0.0.1 under uvicorn (asyncio) and hypercorn (asyncio, trio).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest

from mcpbind.client import Client, ClientSession
from mcpbind.errors import INTERNAL_ERROR, INVALID_REQUEST, PARSE_ERROR, McpError
from mcpbind.http.client import open_streamable_http
from mcpbind.http.legacy import LegacySSEApp
from mcpbind.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_fake_server import FakeServer, Json, Seen, Sse, event
from tests.http_harness import ServerName, serve_asgi
from tests.http_server_helpers import headers, make_server, open_session, running

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


# -- the Streamable HTTP client -------------------------------------------------------------------


@asynccontextmanager
async def connect(fake: FakeServer, server: ServerName) -> AsyncIterator[ClientSession]:
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
