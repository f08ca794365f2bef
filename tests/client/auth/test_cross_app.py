"""Cross-app access (enterprise-managed authorization): the ID token exchanged at the identity
provider for an ID-JAG (RFC 8693), the ID-JAG presented to the MCP server's authorization server
(RFC 7523 jwt-bearer grant), against the tests' own servers on 127.0.0.1."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest

from mcpbind.client.auth.cross_app import CrossAppAccess, exchange_for_id_jag
from mcpbind.client.auth.flow import AuthorizationFailed
from mcpbind.client.client import Client
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import OAuthError
from tests.client.auth.mock_servers import (
    ID_JAG,
    ID_TOKEN,
    JWT_BEARER,
    TOKEN_EXCHANGE,
    MockOAuth,
    OAuthApp,
    basic,
)
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def served(oauth: MockOAuth) -> AsyncIterator[MockOAuth]:
    async with serve_asgi(OAuthApp(oauth)) as base:
        oauth.base = base
        yield oauth


def cross_app(oauth: MockOAuth, **options: object) -> CrossAppAccess:
    settings: dict[str, object] = {
        "id_token": oauth.id_token(),
        "idp_client_id": oauth.idp_client_id,
        "idp_token_endpoint": f"{oauth.idp_issuer}/token",
        "client_id": oauth.client_id,
        "client_secret": "machine-secret",
        **options,
    }
    return CrossAppAccess(oauth.resource, **settings)  # type: ignore[arg-type]


async def test_the_complete_flow(anyio_backend: str) -> None:
    async with served(MockOAuth(grant_types=[JWT_BEARER])) as oauth:
        auth = cross_app(oauth, scopes=["mcp:tools"])
        async with Client("xaa", "1.0").connect_url(oauth.resource, auth=auth, timeout=10) as server:
            result = await server.call_tool("add", {"a": 20, "b": 22})
    assert result.structured_content == {"result": 42}
    exchange, grant = oauth.requests
    assert exchange.endpoint == "idp"
    assert exchange.form == {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG,
        "subject_token": auth.id_token,
        "subject_token_type": ID_TOKEN,
        "audience": oauth.issuer,
        "resource": oauth.resource,
        "scope": "mcp:tools",
        "client_id": oauth.idp_client_id,
    }
    assert grant.endpoint == "as"
    assert grant.form["grant_type"] == JWT_BEARER
    assert grant.form["resource"] == oauth.resource
    assert grant.headers["authorization"] == basic(oauth.client_id, "machine-secret")
    assert list(oauth.tokens.values()) == [frozenset({"mcp:tools"})]


async def test_the_idp_found_from_its_issuer_and_the_id_token_from_a_function(anyio_backend: str) -> None:
    async with served(MockOAuth(grant_types=[JWT_BEARER])) as oauth:
        calls: list[str] = []

        async def sign_in() -> str:
            calls.append("signed in")
            return oauth.id_token()

        auth = cross_app(oauth, id_token=sign_in, idp_token_endpoint=None, idp_issuer=oauth.idp_issuer)
        async with httpx.AsyncClient(auth=auth) as http:
            assert (await http.get(oauth.resource)).status_code != 401
            oauth.tokens.clear()  # refused: a new grant, with a new ID token
            assert (await http.get(oauth.resource)).status_code != 401
    assert calls == ["signed in", "signed in"]
    assert [request.endpoint for request in oauth.requests] == ["idp", "as", "idp", "as"]


async def test_a_refused_id_token_is_the_idps_error(anyio_backend: str) -> None:
    async with served(MockOAuth(grant_types=[JWT_BEARER])) as oauth:
        stranger = oauth.id_token(audience="another-client")
        auth = cross_app(oauth, id_token=stranger)
        with pytest.raises(OAuthError) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.get(oauth.resource)
    assert caught.value.error == "invalid_grant"
    assert [request.endpoint for request in oauth.requests] == ["idp"]  # no grant was tried


async def test_an_answer_without_an_id_jag_is_refused(anyio_backend: str) -> None:
    def idp(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            200,
            json={
                "access_token": "x",
                "token_type": "Bearer",
                "issued_token_type": "urn:ietf:params:oauth:token-type:access_token",
            },
        )

    async with httpx.AsyncClient(transport=httpx.MockTransport(idp)) as http:
        with pytest.raises(OAuthError, match="not an ID-JAG"):
            await exchange_for_id_jag(
                http,
                "https://idp.example/token",
                subject_token="t",
                audience="https://as.example",
                resource=None,
                scope=None,
                client=ClientInformation(client_id="c"),
                auth_method="none",
            )


async def test_a_wrong_client_secret_at_the_authorization_server(anyio_backend: str) -> None:
    async with served(MockOAuth(grant_types=[JWT_BEARER])) as oauth:
        auth = cross_app(oauth, client_secret="wrong")
        with pytest.raises(OAuthError) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.get(oauth.resource)
    assert caught.value.error == "invalid_client"
    assert [request.endpoint for request in oauth.requests] == ["idp", "as"]


async def test_the_id_token_goes_to_no_plain_http_idp(anyio_backend: str) -> None:
    async with served(MockOAuth(grant_types=[JWT_BEARER])) as oauth:
        auth = cross_app(oauth, idp_token_endpoint="http://idp.example.com/token")
        with pytest.raises(AuthorizationFailed) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.get(oauth.resource)
    assert caught.value.error == "insecure_endpoint"
    assert oauth.requests == []


def test_it_needs_the_idp() -> None:
    with pytest.raises(ValueError, match="idp_token_endpoint or idp_issuer"):
        CrossAppAccess("http://x/mcp", id_token="t", idp_client_id="i", client_id="c", client_secret="s")
