"""Context variables over Streamable HTTP (issue 11, item 2): each request's handler runs in a
copy of the context of the HTTP request that carried it, which the ASGI server derives from the
context it was started in (plus what ASGI middleware set); what a handler sets is seen by no
other request, nor by the ASGI server or middleware around the app."""

from __future__ import annotations

import contextvars
from typing import Any

import anyio
import httpx
import pytest

from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName, serve_asgi
from tests.http_server_helpers import call, open_session, post, running

pytestmark = pytest.mark.anyio
# Each test runs under uvicorn (asyncio) and hypercorn (asyncio and trio).
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)

user: contextvars.ContextVar[str] = contextvars.ContextVar("user", default="nobody")
tag: contextvars.ContextVar[str] = contextvars.ContextVar("tag", default="untagged")


def become_server() -> Server:
    server = Server("context", "1.0")

    @server.tool()
    async def become(name: str, pause: bool = False) -> str:
        """Sets ``user`` to ``name``; answers what it was before."""
        before = user.get()
        user.set(name)
        if pause:
            await anyio.sleep(0.01)
        return before

    @server.tool()
    async def read_tag() -> str:
        """Answers ``tag``, as the ASGI middleware set it."""
        return tag.get()

    return server


@pytest.mark.parametrize("mode", ["sse", "json", "stateless"])
async def test_requests_do_not_see_each_others_context_variables(asgi_server: ServerName, mode: str) -> None:
    app = StreamableHTTPApp(become_server(), json_response=mode == "json", stateless=mode == "stateless")
    user.set("root")  # where the server starts
    seen = []
    with anyio.fail_after(30):
        async with running(app, asgi_server) as (url, client):
            session_id = None if mode == "stateless" else await open_session(client, url)
            for ident, (name, pause) in enumerate([("alice", False), ("bob", True), ("carol", False)], 1):
                response, [answer] = await post(
                    client, url, call(ident, "become", {"name": name, "pause": pause}), session_id
                )
                assert response.status_code == 200, response.text
                seen.append(answer["result"]["content"][0]["text"])
    assert seen == ["root", "root", "root"]
    assert user.get() == "root"


@pytest.mark.parametrize("mode", ["sse", "json"])
async def test_handlers_see_middleware_context_and_middleware_not_theirs(
    asgi_server: ServerName, mode: str
) -> None:
    app = StreamableHTTPApp(become_server(), json_response=mode == "json")
    after: list[str] = []

    async def middleware(scope: dict[str, Any], receive: Any, send: Any) -> None:
        """Tags each HTTP request, and records ``user`` once the app has answered it."""
        if scope["type"] != "http":
            await app(scope, receive, send)
            return
        tag.set(f"{scope['method']} {scope['path']}")
        await app(scope, receive, send)
        after.append(user.get())

    user.set("root")
    with anyio.fail_after(30):
        async with serve_asgi(middleware, asgi_server) as base, httpx.AsyncClient(timeout=10) as client:
            url = f"{base}{app.path}"
            session_id = await open_session(client, url)
            _, [answer] = await post(client, url, call(1, "read_tag"), session_id)
            assert answer["result"]["content"][0]["text"] == "POST /mcp"
            _, [answer] = await post(client, url, call(2, "become", {"name": "alice"}), session_id)
            assert answer["result"]["content"][0]["text"] == "root"
            _, [answer] = await post(
                client, url, call(3, "become", {"name": "bob", "pause": True}), session_id
            )
            assert answer["result"]["content"][0]["text"] == "root"
    assert after[-3:] == ["root", "root", "root"]
