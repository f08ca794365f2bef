"""Through the local authorization server: a machine client (client credentials) calling the
protected server as itself, and a server that verifies opaque tokens by introspection (RFC 7662),
where a token revoked at the authorization server stops working at once."""

from __future__ import annotations

import anyio
import pytest

from mcpbind import Client
from mcpbind.client.auth import ClientCredentials, MemoryTokenStore
from mcpbind.protocol.errors import McpError
from tests.auth.approver import Approver
from tests.auth.server import serve_authorization_server
from tests.auth.stack import oauth_for, serve_protected
from tests.auth.test_sign_in import text_of

pytestmark = pytest.mark.anyio

TIMEOUT = 20


async def test_a_machine_client_with_client_credentials() -> None:
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server(algorithm="ES256") as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
        ):
            auth_server.clients.add_confidential("nightly-job", "s3cret")
            auth = ClientCredentials(
                protected.url, client_id="nightly-job", client_secret="s3cret", issuer=auth_server.issuer
            )
            async with Client("e2e", "1.0").connect_url(protected.url, auth=auth) as remote:
                assert text_of(await remote.call_tool("whoami", {})) == "nightly-job nightly-job mcp"
                # It too steps up for a tool needing more.
                assert text_of(await remote.call_tool("write", {"text": "log"})) == "wrote log"
            assert auth_server.grant_types_issued() == ["client_credentials", "client_credentials"]
            assert [token.claims["aud"] for token in auth_server.issued] == [protected.url] * 2
            assert auth_server.authorization_requests == []  # no user involved

            # A wrong secret: the call fails naming the OAuth error, and no token is issued.
            wrong = ClientCredentials(
                protected.url, client_id="nightly-job", client_secret="guess", issuer=auth_server.issuer
            )
            with pytest.raises(McpError, match="invalid_client"):
                async with Client("e2e", "1.0").connect_url(protected.url, auth=wrong) as remote:
                    await remote.call_tool("whoami", {})
            assert len(auth_server.issued) == 2


async def test_introspected_opaque_tokens_and_revocation() -> None:
    approver = Approver()
    store = MemoryTokenStore()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server(token_format="opaque") as auth_server,
            serve_protected(auth_server, introspection=True, required_scopes=["mcp"]) as protected,
            Client("e2e", "1.0").connect_url(
                protected.url, auth=oauth_for(protected.url, approver, store)
            ) as remote,
        ):
            [registration] = auth_server.clients.registrations
            who = text_of(await remote.call_tool("whoami", {}))
            assert who.startswith("alice client-") and who.endswith(" mcp")
            [first] = auth_server.issued
            assert first.token.startswith("opaque-")

            # Revoked at the authorization server: the next request is refused (401), and the
            # client gets a new token with its refresh token, without the user.
            auth_server.revoked.add(first.token)
            assert text_of(await remote.call_tool("whoami", {})) == who
            assert auth_server.grant_types_issued() == ["authorization_code", "refresh_token"]
            assert len(approver.urls) == 1
            assert registration["client_name"] == "mcpbind-e2e"
