"""Client credentials (machine clients) against the tests' own protected MCP server and
authorization server on 127.0.0.1: discovery from the 401, the grant with each client
authentication method, the resource and scope parameters, new grants on expiry, refusal and
step-up, and credentials kept from an authorization server they are not for."""

from __future__ import annotations

import base64
import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest
from joserfc.jwk import ECKey, RSAKey

from mcpbind.client.auth.assertion import CLIENT_ASSERTION_TYPE, PrivateKeyJWT
from mcpbind.client.auth.client_credentials import ClientCredentials
from mcpbind.client.auth.flow import AuthorizationFailed
from mcpbind.client.auth.stores import MemoryTokenStore
from mcpbind.client.client import Client
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.tokens import OAuthError
from tests.client.auth.mock_servers import MockOAuth, OAuthApp, basic
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio


@asynccontextmanager
async def served(oauth: MockOAuth) -> AsyncIterator[MockOAuth]:
    async with serve_asgi(OAuthApp(oauth)) as base:
        oauth.base = base
        yield oauth


async def call_add(oauth: MockOAuth, auth: httpx.Auth) -> int:
    async with Client("machine", "1.0").connect_url(oauth.resource, auth=auth, timeout=10) as server:
        result = await server.call_tool("add", {"a": 2, "b": 3})
    return int(result.structured_content["result"])  # type: ignore[index]


def as_requests(oauth: MockOAuth) -> list[dict[str, str]]:
    return [request.form for request in oauth.requests if request.endpoint == "as"]


async def test_client_secret_basic(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        auth = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, client_secret="machine-secret", issuer=oauth.issuer
        )
        assert await call_add(oauth, auth) == 5
    [request] = oauth.requests
    assert request.form == {
        "grant_type": "client_credentials",
        "resource": oauth.resource,
        "client_id": oauth.client_id,  # allowed beside Basic (RFC 6749 section 3.2.1)
    }
    assert request.headers["authorization"] == basic(oauth.client_id, "machine-secret")
    # Every MCP request after the first 401 carried the one token the grant gave.
    [token] = oauth.tokens
    assert oauth.mcp_authorizations[0] is None
    assert set(oauth.mcp_authorizations[1:]) == {f"Bearer {token}"}


async def test_client_secret_post_when_that_is_what_the_server_supports(anyio_backend: str) -> None:
    async with served(MockOAuth(auth_methods=["client_secret_post"])) as oauth:
        auth = ClientCredentials(oauth.resource, client_id=oauth.client_id, client_secret="machine-secret")
        assert await call_add(oauth, auth) == 5
    [request] = oauth.requests
    assert request.form["client_id"] == oauth.client_id
    assert request.form["client_secret"] == "machine-secret"
    assert "authorization" not in request.headers


@pytest.mark.parametrize("algorithms", [["ES256"], None])
async def test_private_key_jwt(anyio_backend: str, algorithms: list[str] | None) -> None:
    key = ECKey.generate_key("P-256", private=True)
    oauth = MockOAuth(
        client_secret=None, client_key=key, auth_methods=["private_key_jwt"], signing_algs=algorithms
    )
    async with served(oauth):
        pem = key.as_pem(private=True)
        auth = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, private_key=pem, scopes=["mcp:tools"]
        )
        assert await call_add(oauth, auth) == 5
    [request] = oauth.requests
    assert request.form["client_assertion_type"] == CLIENT_ASSERTION_TYPE
    assert request.form.get("client_id", oauth.client_id) == oauth.client_id
    assert request.form["scope"] == "mcp:tools"
    assert request.form["resource"] == oauth.resource
    [claims] = oauth.assertion_claims
    assert claims["header"]["alg"] == "ES256"
    assert claims["aud"] == oauth.issuer
    assert claims["exp"] - claims["iat"] == 300


async def test_a_wrong_secret_is_the_servers_invalid_client(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        auth = ClientCredentials(oauth.resource, client_id=oauth.client_id, client_secret="wrong")
        with pytest.raises(OAuthError) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.post(oauth.resource, json={})
    assert caught.value.error == "invalid_client"
    assert caught.value.status == 401
    assert "wrong" not in str(caught.value)


async def test_credentials_stay_away_from_another_authorization_server(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        auth = ClientCredentials(
            oauth.resource,
            client_id=oauth.client_id,
            client_secret="machine-secret",
            issuer="https://as.example.com",
        )
        with pytest.raises(OAuthError) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.post(oauth.resource, json={})
    assert caught.value.error == "invalid_issuer"
    assert oauth.requests == []  # the secret was never sent


async def test_the_configured_issuer_is_chosen_among_those_named(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        oauth.other_authorization_servers = [oauth.idp_issuer]  # found first, and has metadata
        auth = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, client_secret="machine-secret", issuer=oauth.issuer
        )
        assert await call_add(oauth, auth) == 5
        unpinned = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, client_secret="machine-secret"
        )
        with pytest.raises(AuthorizationFailed):
            async with httpx.AsyncClient(auth=unpinned) as http:
                await http.get(oauth.resource)
    # The pinned flow went to its server; the other sent its secret to the first one named.
    assert [request.endpoint for request in oauth.requests] == ["as", "idp"]


async def test_a_refused_token_means_a_new_grant(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        auth = ClientCredentials(oauth.resource, client_id=oauth.client_id, client_secret="machine-secret")
        async with httpx.AsyncClient(auth=auth) as http:
            assert (await http.get(oauth.resource)).status_code != 401
            oauth.tokens.clear()  # the server forgets (revokes) every token
            assert (await http.get(oauth.resource)).status_code != 401
    assert len(oauth.requests) == 2
    assert len(oauth.tokens) == 1


async def test_an_expiring_token_is_replaced_before_it_is_sent(anyio_backend: str) -> None:
    async with served(MockOAuth(token_lifetime=10)) as oauth:  # within the 30 s margin
        store = MemoryTokenStore()
        auth = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, client_secret="machine-secret", store=store
        )
        async with httpx.AsyncClient(auth=auth) as http:
            await http.get(oauth.resource)
            await http.get(oauth.resource)
        stored = await store.get_tokens(oauth.issuer, oauth.resource)
    assert len(oauth.requests) == 2
    first, second = oauth.tokens
    # The second request did not wait for a 401: it went out with the new token.
    assert oauth.mcp_authorizations == [None, f"Bearer {first}", f"Bearer {second}"]
    assert stored is not None and stored.access_token == second


async def test_insufficient_scope_asks_again_with_the_scopes_named(anyio_backend: str) -> None:
    oauth = MockOAuth(required_scopes=frozenset({"mcp:admin"}), scopes_supported=["mcp:read"])
    async with served(oauth):
        auth = ClientCredentials(oauth.resource, client_id=oauth.client_id, client_secret="machine-secret")
        assert await call_add(oauth, auth) == 5
    assert [form.get("scope") for form in as_requests(oauth)] == ["mcp:read", "mcp:read mcp:admin"]


async def test_step_up_has_a_limit(anyio_backend: str) -> None:
    oauth = MockOAuth(required_scopes=frozenset({"mcp:admin"}))
    async with served(oauth):
        auth = ClientCredentials(
            oauth.resource, client_id=oauth.client_id, client_secret="machine-secret", max_step_ups=0
        )
        with pytest.raises(AuthorizationFailed) as caught:
            async with httpx.AsyncClient(auth=auth) as http:
                await http.get(oauth.resource)
    assert caught.value.error == "insufficient_scope"
    assert caught.value.status == 403
    assert len(oauth.requests) == 1


async def test_concurrent_refusals_make_one_grant(anyio_backend: str) -> None:
    async with served(MockOAuth()) as oauth:
        auth = ClientCredentials(oauth.resource, client_id=oauth.client_id, client_secret="machine-secret")
        statuses: list[int] = []
        async with httpx.AsyncClient(auth=auth) as http:

            async def get() -> None:
                statuses.append((await http.get(oauth.resource)).status_code)

            async with anyio.create_task_group() as group:
                for _ in range(5):
                    group.start_soon(get)
    assert 401 not in statuses and len(statuses) == 5
    assert len(oauth.requests) == 1


def test_it_needs_a_secret_or_a_key() -> None:
    with pytest.raises(ValueError, match="client_secret or a private_key"):
        ClientCredentials("http://127.0.0.1/mcp", client_id="c")
    with pytest.raises(ValueError, match="needs a private_key"):
        ClientCredentials(
            "http://127.0.0.1/mcp", client_id="c", client_secret="s", auth_method="private_key_jwt"
        )


def test_the_method_follows_what_the_server_supports() -> None:
    key = ECKey.generate_key("P-256", private=True)
    both = ClientCredentials(
        "http://x/mcp", client_id="c", client_secret="s", private_key=key.as_dict(private=True)
    )
    metadata = AuthorizationServerMetadata(
        issuer="http://x", token_endpoint_auth_methods_supported=["client_secret_post"]
    )
    assert both.client.choose_method(metadata) == "client_secret_post"
    metadata = AuthorizationServerMetadata(
        issuer="http://x", token_endpoint_auth_methods_supported=["private_key_jwt", "client_secret_basic"]
    )
    assert both.client.choose_method(metadata) == "private_key_jwt"


def test_assertion_algorithm_from_the_server_or_the_key() -> None:
    rsa = PrivateKeyJWT(json.dumps(RSAKey.generate_key(2048, private=True).as_dict(private=True)), kid="k1")
    offered = AuthorizationServerMetadata(
        issuer="https://as", token_endpoint_auth_signing_alg_values_supported=["ES256", "PS256"]
    )
    assert rsa.choose_algorithm(offered) == "PS256"
    assert rsa.choose_algorithm(AuthorizationServerMetadata(issuer="https://as")) == "RS256"
    header = json.loads(
        base64.urlsafe_b64decode(rsa.form("c", offered)["client_assertion"].split(".")[0] + "==")
    )
    assert header == {"alg": "PS256", "typ": "JWT", "kid": "k1"}
    ec = PrivateKeyJWT(ECKey.generate_key("P-256", private=True).as_pem(private=True))
    with pytest.raises(OAuthError, match="signs with ES256"):
        ec.choose_algorithm(
            AuthorizationServerMetadata(
                issuer="https://as", token_endpoint_auth_signing_alg_values_supported=["RS256"]
            )
        )
    assert "PRIVATE" not in repr(ec)


def test_bad_keys_are_refused() -> None:
    public = ECKey.generate_key("P-256", private=True).as_dict(private=False)
    with pytest.raises(ValueError, match="public one"):
        PrivateKeyJWT(public)
    with pytest.raises(ValueError, match="not an unencrypted PEM"):
        PrivateKeyJWT("-----BEGIN PRIVATE KEY-----\nnope\n-----END PRIVATE KEY-----\n")
    with pytest.raises(ValueError, match="not 'oct'"):
        PrivateKeyJWT({"kty": "oct", "k": "c2VjcmV0"})
    with pytest.raises(ValueError, match="cannot sign with RS256"):
        PrivateKeyJWT(ECKey.generate_key("P-256", private=True).as_dict(private=True), algorithm="RS256")
