"""mcpbind's client signing in to an mcpbind protected server through the local authorization
server: discovery, dynamic registration, the authorization code flow with PKCE and ``resource``,
the token in the tools, tokens kept and used again, and a refresh when the token has expired."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from mcpbind import Client, types
from mcpbind.client.auth import FileTokenStore, MemoryTokenStore
from tests.auth.approver import Approver
from tests.auth.server import serve_authorization_server
from tests.auth.signing import Algorithm
from tests.auth.stack import oauth_for, serve_protected

pytestmark = pytest.mark.anyio

TIMEOUT = 20


def text_of(result: types.CallToolResult) -> str:
    assert not result.is_error, result
    content = result.content[0]
    assert isinstance(content, types.TextContent)
    return content.text


@pytest.mark.parametrize(("algorithm", "path"), [("RS256", ""), ("ES256", "/tenant/a")])
async def test_first_sign_in_then_the_tokens_are_reused(
    algorithm: Algorithm, path: str, tmp_path: Path
) -> None:
    store = FileTokenStore(tmp_path / "tokens.json")
    approver = Approver()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server(algorithm=algorithm, path=path) as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"]) as protected,
        ):
            async with Client("e2e", "1.0").connect_url(
                protected.url, auth=oauth_for(protected.url, approver, store)
            ) as remote:
                who = text_of(await remote.call_tool("whoami", {}))
                assert text_of(await remote.call_tool("whoami", {})) == who

            [client] = auth_server.clients.clients.values()
            assert who == f"alice {client.client_id} mcp"
            # One visit of the user, with PKCE S256, the resource and the scope the server asked for.
            [url] = approver.urls
            assert url.startswith(f"{auth_server.issuer}/authorize?")
            query = parse_qs(urlsplit(url).query)
            assert query["resource"] == [protected.url]
            assert query["code_challenge_method"] == ["S256"]
            assert query["scope"] == ["mcp"]
            [registration] = auth_server.clients.registrations
            assert registration["application_type"] == "native"
            [issued] = auth_server.issued
            assert issued.grant_type == "authorization_code"
            assert issued.claims["aud"] == protected.url
            assert issued.claims["iss"] == auth_server.issuer

            # Another connection (a new flow, the same store): no sign-in, no new token.
            async with Client("e2e", "1.0").connect_url(
                protected.url, auth=oauth_for(protected.url, approver, store)
            ) as remote:
                assert text_of(await remote.call_tool("whoami", {})) == who
            assert len(approver.urls) == 1
            assert len(auth_server.issued) == 1


async def test_an_expired_access_token_is_refreshed_without_the_user() -> None:
    store = MemoryTokenStore()
    approver = Approver()
    with anyio.fail_after(TIMEOUT):
        async with (
            serve_authorization_server() as auth_server,
            serve_protected(auth_server, required_scopes=["mcp"], leeway=0) as protected,
        ):
            # The user signs in; the token got is stamped an hour ago (the client is told it
            # lasts ten minutes): by the time it is used, the server finds it expired.
            auth_server.clock_offset = -3600
            await oauth_for(protected.url, approver, store, scopes=["mcp"]).login()
            auth_server.clock_offset = 0
            [first] = auth_server.issued
            stored = await store.get_tokens(auth_server.issuer, protected.url)
            assert stored is not None and stored.refresh_token is not None

            async with Client("e2e", "1.0").connect_url(
                protected.url, auth=oauth_for(protected.url, approver, store)
            ) as remote:
                assert text_of(await remote.call_tool("whoami", {})).startswith("alice ")

            assert len(approver.urls) == 1  # no second sign-in
            assert auth_server.grant_types_issued() == ["authorization_code", "refresh_token"]
            assert auth_server.claims_of(first.token) is None
            refreshed = await store.get_tokens(auth_server.issuer, protected.url)
            assert refreshed is not None
            assert refreshed.access_token == auth_server.issued[-1].token
            # The refresh token was rotated: the old one was used up, the new one is stored.
            assert stored.refresh_token in auth_server.grants.used_refresh_tokens
            assert refreshed.refresh_token not in (None, stored.refresh_token)
