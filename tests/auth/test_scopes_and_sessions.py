"""Through the local authorization server: a tool needing more scope than the token has makes
the client sign in again for it (step-up) and the call succeeds; a scope no one is granted fails
that call only; a session opened with one user's token refuses another's."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest

from mcpbind import Client
from mcpbind.client.auth import MemoryTokenStore
from mcpbind.oauth.challenge import bearer_challenge
from mcpbind.protocol.errors import McpError
from tests.auth.approver import Approver
from tests.auth.server import serve_authorization_server
from tests.auth.stack import oauth_for, serve_protected
from tests.auth.test_sign_in import text_of

pytestmark = pytest.mark.anyio

TIMEOUT = 20
LIST_TOOLS = {"jsonrpc": "2.0", "id": 7, "method": "tools/list"}


@pytest.mark.parametrize("version", ["2026-07-28", "2025-11-25"])
async def test_step_up_for_a_tool_that_needs_more_scope(version: str) -> None:
    """Stateless requests (2026-07-28) and a session (2025-11-25) alike."""
    approver = Approver()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server() as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
            Client("e2e", "1.0", protocol_version=version).connect_url(
                protected.url, auth=oauth_for(protected.url, approver, MemoryTokenStore())
            ) as remote,
        ):
            assert remote.protocol_version == version
            assert text_of(await remote.call_tool("whoami", {})).endswith(" mcp")
            assert text_of(await remote.call_tool("write", {"text": "note"})) == "wrote note"
            # The connection goes on with the larger token (a session: the same one).
            assert text_of(await remote.call_tool("whoami", {})).endswith(" mcp x:write")
            assert len(protected.session_ids()) == (0 if version == "2026-07-28" else 1)

            first, second = (parse_qs(urlsplit(url).query)["scope"] for url in approver.urls)
            assert first == ["mcp"]
            assert second == ["mcp x:write"]
            assert [token.claims["scope"] for token in auth_server.issued] == ["mcp", "mcp x:write"]

            # A scope the authorization server refuses: that call fails, naming why; others go on.
            with pytest.raises(McpError, match="invalid_scope"):
                await remote.call_tool("shutdown", {})
            assert text_of(await remote.call_tool("write", {"text": "again"})) == "wrote again"
            assert "root" not in " ".join(token.claims["scope"] for token in auth_server.issued)


async def test_a_session_refuses_another_users_token() -> None:
    approver = Approver()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server() as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
        ):
            auth_server.user = "bob"
            bob = await oauth_for(protected.url, approver, MemoryTokenStore(), scopes=["mcp"]).login()
            auth_server.user = "alice"
            async with Client("e2e", "1.0", protocol_version="2025-11-25").connect_url(
                protected.url, auth=oauth_for(protected.url, approver, MemoryTokenStore())
            ) as remote:
                assert text_of(await remote.call_tool("whoami", {})).startswith("alice ")
                [session_id] = protected.session_ids()
                headers = {
                    "mcp-session-id": session_id,
                    "mcp-protocol-version": "2025-11-25",
                    "accept": "application/json, text/event-stream",
                }
                async with httpx.AsyncClient() as http:
                    # Bob's token is good (it opens sessions of his own), but not for Alice's.
                    refused = await http.post(
                        protected.url,
                        json=LIST_TOOLS,
                        headers={**headers, "authorization": f"Bearer {bob.access_token}"},
                    )
                    assert refused.status_code == 404
                    assert "whoami" not in refused.text
                    # Without a token: the challenge, not the session.
                    anonymous = await http.post(protected.url, json=LIST_TOOLS, headers=headers)
                    assert anonymous.status_code == 401
                    challenge = bearer_challenge(anonymous.headers["www-authenticate"])
                    assert challenge is not None
                    assert challenge.resource_metadata == (
                        f"{protected.url.removesuffix('/mcp')}/.well-known/oauth-protected-resource/mcp"
                    )
                # Alice's session is unharmed.
                assert text_of(await remote.call_tool("whoami", {})).startswith("alice ")
                assert protected.session_ids() == [session_id]
