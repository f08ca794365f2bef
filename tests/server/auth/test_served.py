"""A protected server on a real ASGI server (uvicorn, hypercorn; asyncio and trio) reached by
mcpbind's own client with a bearer token: the token is in the handlers (``ctx.access_token``),
also after the handler waited (its SSE stream then written by a helper task), and every mode
of the app (SSE, JSON, stateless) is protected."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import Client, types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.auth import ResourceServerAuth
from mcpbind.server.server import Server
from mcpbind.transports.http.client import HTTPTransportError
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName, serve_asgi
from tests.server.auth.tokens import ISSUER, JWKS_URL, RESOURCE, KeySetServer, mint

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)


def whoami_server() -> Server:
    server = Server("served", "1.0")

    @server.tool()
    async def whoami(ctx: RequestContext, pause: bool = False) -> str:
        if pause:
            await anyio.sleep(0.01)
        token = ctx.access_token
        return "anonymous" if token is None else f"{token.subject}/{token.client_id}"

    return server


def text_of(result: types.CallToolResult) -> str:
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize("mode", ["sse", "json", "stateless"])
async def test_mcpbind_client_with_a_bearer_token(asgi_server: ServerName, mode: str) -> None:
    keys = KeySetServer()
    # (The audience is the configured resource: tokens are minted for it, whatever port serves.)
    auth = ResourceServerAuth(ISSUER, RESOURCE, jwks_url=JWKS_URL, http_client=keys.client())
    app = whoami_server().http_app(auth=auth, json_response=mode == "json", stateless=mode == "stateless")
    with anyio.fail_after(30):
        async with serve_asgi(app, asgi_server) as base:
            url = f"{base}/mcp"
            headers = {"authorization": f"Bearer {mint()}"}
            async with Client("c", "1").connect_url(url, headers=headers) as remote:
                assert text_of(await remote.call_tool("whoami", {})) == "alice/client-1"
                assert text_of(await remote.call_tool("whoami", {"pause": True})) == "alice/client-1"
            with pytest.raises(HTTPTransportError, match="HTTP 401"):
                async with Client("c", "1").connect_url(
                    url, headers={"authorization": "Bearer nope"}
                ) as remote:
                    await remote.call_tool("whoami", {})
