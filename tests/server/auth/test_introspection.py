"""IntrospectionVerifier (RFC 7662) against a small introspection endpoint of the test's own:
active tokens accepted with their claims, inactive ones and those for another audience or
issuer refused, the client authenticated, an unreachable endpoint a 503 rather than a verdict."""

from __future__ import annotations

import base64
import time
from typing import Any
from urllib.parse import parse_qs

import httpx
import pytest

from mcpbind.server.auth import IntrospectionVerifier, InvalidToken, VerifierUnavailable
from tests.server.auth.tokens import ISSUER, RESOURCE

pytestmark = pytest.mark.anyio

URL = "https://auth.example.com/introspect"


class Endpoint:
    """Knows some opaque tokens; checks the client's credentials (Basic or in the form)."""

    def __init__(self, **tokens: dict[str, Any]) -> None:
        self.tokens = tokens
        self.seen: list[dict[str, list[str]]] = []
        self.status = 200

    async def handle(self, request: httpx.Request) -> httpx.Response:
        form = parse_qs(request.content.decode())
        self.seen.append(form)
        basic = request.headers.get("authorization", "")
        in_form = form.get("client_id") == ["rs"] and form.get("client_secret") == ["s3cret"]
        by_basic = basic == "Basic " + base64.b64encode(b"rs:s3cret").decode()
        if not (in_form or by_basic):
            return httpx.Response(401, json={"error": "invalid_client"})
        if self.status != 200:
            return httpx.Response(self.status)
        answer = self.tokens.get(form["token"][0], {"active": False})
        return httpx.Response(200, json=answer)


def active(**changes: Any) -> dict[str, Any]:
    base = {"active": True, "sub": "carol", "client_id": "c", "scope": "mcp", "aud": RESOURCE, "iss": ISSUER}
    base["exp"] = int(time.time()) + 60
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def verifier(endpoint: Endpoint, **options: Any) -> IntrospectionVerifier:
    return IntrospectionVerifier(
        introspection_url=URL,
        audience=RESOURCE,
        client_id="rs",
        client_secret="s3cret",
        issuer=ISSUER,
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(endpoint.handle)),
        **options,
    )


@pytest.mark.parametrize("method", ["client_secret_basic", "client_secret_post"])
async def test_an_active_token(anyio_backend: str, method: str) -> None:
    endpoint = Endpoint(good=active(extra=1))
    access = await verifier(endpoint, auth_method=method).verify("good")
    assert (access.subject, access.client_id, access.scopes) == ("carol", "c", frozenset({"mcp"}))
    assert access.claims["extra"] == 1
    assert endpoint.seen[0]["token"] == ["good"]
    assert endpoint.seen[0]["token_type_hint"] == ["access_token"]


@pytest.mark.parametrize(
    "answer",
    [
        {"active": False},
        {"active": "true", "sub": "x", "aud": RESOURCE},
        active(aud="https://other.example/mcp"),
        active(aud=None),
        active(iss="https://other-issuer.example"),
        active(exp=int(time.time()) - 3600),
    ],
    ids=["inactive", "active not true", "other audience", "no audience", "other issuer", "expired"],
)
async def test_refused_answers(anyio_backend: str, answer: dict[str, Any]) -> None:
    with pytest.raises(InvalidToken):
        await verifier(Endpoint(t=answer)).verify("t")


async def test_audience_optional_when_told(anyio_backend: str) -> None:
    check = verifier(Endpoint(t=active(aud=None)), require_audience=False)
    assert (await check.verify("t")).subject == "carol"
    with pytest.raises(InvalidToken):
        await verifier(Endpoint(t=active(aud="https://x.example")), require_audience=False).verify("t")


async def test_an_unknown_token_and_a_malformed_one(anyio_backend: str) -> None:
    endpoint = Endpoint()
    check = verifier(endpoint)
    with pytest.raises(InvalidToken):
        await check.verify("unknown")
    with pytest.raises(InvalidToken):
        await check.verify("x" * 9000)
    with pytest.raises(InvalidToken):
        await check.verify("bad token")
    assert len(endpoint.seen) == 1  # (the last two never reach the endpoint)


async def test_an_unreachable_endpoint_is_no_verdict(anyio_backend: str) -> None:
    endpoint = Endpoint(t=active())
    endpoint.status = 500
    with pytest.raises(VerifierUnavailable):
        await verifier(endpoint).verify("t")
    wrong_secret = IntrospectionVerifier(
        introspection_url=URL,
        audience=RESOURCE,
        client_id="rs",
        client_secret="wrong",
        http_client=httpx.AsyncClient(transport=httpx.MockTransport(endpoint.handle)),
    )
    with pytest.raises(VerifierUnavailable):
        await wrong_secret.verify("t")
