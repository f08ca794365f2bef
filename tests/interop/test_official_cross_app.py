"""Cross-app access against the official MCP Python SDK as the MCP server's authorization server
(tests/interop/official_xaa_server.py in a child process, its identity assertion grant on): the
tests' own identity provider (tests/client/auth/mock_servers.py on 127.0.0.1) exchanges the user's
ID token for an ID-JAG, which mcpbind's ``CrossAppAccess`` presents to the SDK's token endpoint."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from mcpbind.client.auth import CrossAppAccess
from mcpbind.client.client import Client
from mcpbind.schema import v2025_11_25 as types
from tests.client.auth.mock_servers import MockOAuth, OAuthApp
from tests.http_harness import serve_asgi
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("official_xaa_server.py")


async def test_cross_app_access_with_the_official_sdk(anyio_backend: str) -> None:
    idp = MockOAuth(client_id="xaa-client")
    async with serve_asgi(OAuthApp(idp)) as idp_base:
        idp.base = idp_base
        public = json.dumps(idp.jag_key.as_dict(private=False))

        def command(port: int) -> list[str]:
            return [sys.executable, str(SERVER), str(port), idp.idp_issuer, public]

        async with child_http_server(command, "official") as url:
            idp.idp_audience = url.removesuffix("/mcp")  # the SDK's issuer
            auth = CrossAppAccess(
                url,
                id_token=idp.id_token(),
                idp_client_id=idp.idp_client_id,
                idp_issuer=idp.idp_issuer,
                client_id="xaa-client",
                client_secret="xaa-secret",
                issuer=idp.idp_audience,
            )
            async with Client("mcpbind-xaa", "1.0").connect_url(url, auth=auth, timeout=20) as server:
                result = await server.call_tool("hello", {"name": "enterprise"})
    assert isinstance(result.content[0], types.TextContent)
    assert result.content[0].text == "hello enterprise"
    [exchange] = idp.requests
    assert exchange.form["audience"] == idp.idp_audience
    assert exchange.form["resource"] == url
    assert exchange.form["scope"] == "mcp:use"  # the SDK's resource metadata lists it
