"""mcpbind's OAuth client against the official MCP Python SDK as authorization server and
protected MCP server (tests/interop/official_auth_server.py, in a child process on 127.0.0.1):
discovery, dynamic registration, the authorization code flow with PKCE and ``resource``, then
tool calls with the token; a second connection reuses the stored tokens."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from mcpbind.client.auth import FileTokenStore, OAuth
from mcpbind.client.client import Client
from mcpbind.oauth.registration import ClientMetadata
from mcpbind.schema import v2025_11_25 as types
from tests.auth.approver import Approver
from tests.interop.child_http import child_http_server

pytestmark = pytest.mark.anyio

SERVER = Path(__file__).with_name("official_auth_server.py")


def _oauth(url: str, approver: Approver, store: FileTokenStore) -> OAuth:
    return OAuth(
        url,
        client_metadata=ClientMetadata(
            client_name="mcpbind-interop", redirect_uris=["http://127.0.0.1:9/callback"]
        ),
        authorize=approver,
        store=store,
    )


async def test_mcpbind_authorizes_with_the_official_sdk(tmp_path: Path) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    approver = Approver(redirects=(302, 303, 307))  # the SDK's authorization endpoint redirects at once
    command = [sys.executable, str(SERVER)]
    async with child_http_server(lambda port: [*command, str(port)], "official") as url:
        async with Client("mcpbind-interop", "1.0").connect_url(
            url, auth=_oauth(url, approver, store), timeout=20
        ) as server:
            result = await server.call_tool("hello", {"name": "SDK"})
            assert isinstance(result.content[0], types.TextContent)
            assert result.content[0].text == "hello SDK"
        assert len(approver.urls) == 1
        assert "resource=" in approver.urls[0] and "code_challenge_method=S256" in approver.urls[0]
        assert "scope=mcp%3Ause" in approver.urls[0]  # from the resource metadata's scopes_supported
        # A new connection (a new OAuth, the same store): the stored token is used, no new visit.
        async with Client("mcpbind-interop", "1.0").connect_url(
            url, auth=_oauth(url, approver, store), timeout=20
        ) as server:
            assert [tool.name for tool in await server.all_tools()] == ["hello"]
        assert len(approver.urls) == 1
