"""Hostile input over HTTP (see tests/test_hostile_input.py for the codec): a body starting
with ``[`` that is not JSON is answered 400 with a -32700 parse error, not a batch refusal.

Servers run on 127.0.0.1 under uvicorn (asyncio) and hypercorn (asyncio, trio).
"""

from __future__ import annotations

import pytest

from mcpbind.errors import INVALID_REQUEST, PARSE_ERROR
from mcpbind.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import headers, make_server, open_session, running

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)

TIMEOUT = 15.0


# -- the Streamable HTTP server -----------------------------------------------------------------


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
