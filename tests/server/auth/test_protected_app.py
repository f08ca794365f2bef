"""A server protected with ``http_app(auth=...)``, driven over HTTP in process: the Protected
Resource Metadata (path-aware and root), and the 401/400/403/503 answers with their challenges,
saying nothing of the token or of why it failed."""

from __future__ import annotations

from collections.abc import Callable

import httpx
import pytest

from mcpbind.oauth.metadata import decode_protected_resource_metadata
from mcpbind.server.auth import ResourceServerAuth
from tests import http_server_helpers as helpers
from tests.server.auth.app_helpers import (
    bearer,
    challenge_of,
    protected,
    protected_server,
)
from tests.server.auth.tokens import ISSUER, JWKS_URL, RESOURCE, KeySetServer, ec_key, mint, unsigned

pytestmark = pytest.mark.anyio


# -- the metadata ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "path", ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]
)
async def test_the_metadata_is_served_path_aware_and_at_the_root(anyio_backend: str, path: str) -> None:
    async with protected(scopes_supported=None, resource_name="Demo") as client:
        response = await client.get(path)
    assert response.status_code == 200
    document = decode_protected_resource_metadata(response.content)
    assert document.resource == RESOURCE
    assert document.authorization_servers == [ISSUER]  # exactly as configured: no slash added
    assert document.bearer_methods_supported == ["header"]
    assert document.resource_name == "Demo"
    # Every scope the server requires: of all requests, and of its tools, resources and prompts.
    assert document.scopes_supported == ["admin", "files", "mcp", "prompts", "secret"]


async def test_an_issuer_with_a_path_is_named_as_configured(anyio_backend: str) -> None:
    keys = KeySetServer()
    auth = ResourceServerAuth(
        "https://auth.example.com/tenant1",
        RESOURCE,
        jwks_url=JWKS_URL,
        http_client=keys.client(),
        scopes_supported=["x"],
    )
    app = protected_server().http_app(auth=auth)
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        document = (await client.get("/.well-known/oauth-protected-resource/mcp")).json()
        assert (await client.post("/.well-known/oauth-protected-resource/mcp")).status_code == 405
    assert document["authorization_servers"] == ["https://auth.example.com/tenant1"]
    assert document["scopes_supported"] == ["x"]


# -- refusals ----------------------------------------------------------------------------------


async def test_no_token_gets_401_naming_the_metadata(anyio_backend: str) -> None:
    async with protected() as client:
        response = await client.post("/mcp", json=helpers.initialize(), headers=helpers.headers())
        other_scheme = await client.post(
            "/mcp", json=helpers.initialize(), headers=helpers.headers(authorization="Basic YTpi")
        )
        get = await client.get("/mcp", headers=helpers.headers())
    for refused in (response, other_scheme, get):
        assert refused.status_code == 401
        challenge = challenge_of(refused)
        assert challenge.error is None
        assert challenge.scope == "mcp"


BAD_TOKENS: dict[str, Callable[[], str]] = {
    "expired": lambda: mint(exp=1),
    "not yet valid": lambda: mint(nbf=4_000_000_000),
    "wrong audience": lambda: mint(aud="http://127.0.0.1/other"),
    "wrong issuer": lambda: mint(iss="https://evil.example.com"),
    "alg none": unsigned,
    "unknown kid": lambda: mint(ec_key("stranger")),
    "oversized": lambda: mint(padding="p" * 9000),
    "malformed": lambda: "not-a-jwt",
}


@pytest.mark.parametrize("name", list(BAD_TOKENS))
async def test_bad_tokens_get_401_invalid_token_and_no_detail(anyio_backend: str, name: str) -> None:
    """Each is answered exactly as any other invalid token (the same body and challenge):
    nothing tells the peer why, nor echoes the token."""
    token = BAD_TOKENS[name]()
    async with protected() as client:
        response = await client.post("/mcp", json=helpers.initialize(), headers=bearer(token))
        reference = await client.post("/mcp", json=helpers.initialize(), headers=bearer("x"))
    assert response.status_code == reference.status_code == 401
    assert challenge_of(response).error == "invalid_token"
    assert response.content == reference.content
    assert response.headers["www-authenticate"] == reference.headers["www-authenticate"]
    assert token[:20] not in response.text + response.headers["www-authenticate"]
    assert response.json()["error"] == "invalid_token"


async def test_a_token_in_the_query_string_is_refused(anyio_backend: str) -> None:
    token = mint()
    async with protected() as client:
        response = await client.post(
            f"/mcp?access_token={token}", json=helpers.initialize(), headers=helpers.headers()
        )
        both = await client.post(
            f"/mcp?x=1&access_token={token}", json=helpers.initialize(), headers=bearer(token)
        )
    for refused in (response, both):
        assert refused.status_code == 400
        assert challenge_of(refused).error == "invalid_request"
        assert token not in refused.text


async def test_a_token_without_the_required_scopes_gets_403(anyio_backend: str) -> None:
    async with protected() as client:
        response = await client.post("/mcp", json=helpers.initialize(), headers=bearer(mint(scope="read")))
    assert response.status_code == 403
    challenge = challenge_of(response)
    assert challenge.error == "insufficient_scope"
    assert set(challenge.scope.split()) == {"mcp", "read"}


async def test_an_unreachable_authorization_server_gets_503(anyio_backend: str) -> None:
    keys = KeySetServer()
    keys.failing = True
    async with protected(keys=keys) as client:
        response = await client.post("/mcp", json=helpers.initialize(), headers=bearer(mint()))
    assert response.status_code == 503
    assert "retry-after" in response.headers
