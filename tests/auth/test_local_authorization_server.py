"""The local authorization server itself, driven by hand over HTTP: it must refuse what a real
one refuses, or the end-to-end tests would prove less than they say (a client skipping PKCE or
sending the wrong resource would pass)."""

from __future__ import annotations

import base64
import hashlib
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx
import pytest
from joserfc import jwt
from joserfc.jwk import KeySet

from tests.auth.server import serve_authorization_server
from tests.auth.state import AuthorizationServerState

pytestmark = pytest.mark.anyio

RESOURCE = "http://127.0.0.1:1/mcp"
REDIRECT = "http://127.0.0.1:4000/callback"


@dataclass
class Session:
    state: AuthorizationServerState
    http: httpx.AsyncClient
    client_id: str

    async def authorize(self, **changes: str | None) -> tuple[int, dict[str, str], str]:
        """GET /authorize with a good request changed by ``changes`` (None removes a parameter):
        the status, the redirect's parameters, and the verifier of the challenge sent."""
        verifier = secrets.token_urlsafe(48)
        params: dict[str, str | None] = {
            "response_type": "code",
            "client_id": self.client_id,
            "redirect_uri": REDIRECT,
            "state": "st",
            "code_challenge": challenge_of(verifier),
            "code_challenge_method": "S256",
            "resource": RESOURCE,
            "scope": "mcp",
            **changes,
        }
        response = await self.http.get(
            self.state.endpoint("authorize"), params={k: v for k, v in params.items() if v is not None}
        )
        if response.status_code != 302:
            return response.status_code, {}, verifier
        location = response.headers["location"]
        assert location.startswith(params["redirect_uri"] or REDIRECT)
        return 302, {k: v[0] for k, v in parse_qs(urlsplit(location).query).items()}, verifier

    async def token(self, **form: str) -> httpx.Response:
        return await self.http.post(self.state.endpoint("token"), data={"client_id": self.client_id, **form})

    async def code_tokens(self, **token_changes: str) -> httpx.Response:
        status, answer, verifier = await self.authorize()
        assert status == 302 and "code" in answer
        form = {
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
            "resource": RESOURCE,
            **token_changes,
        }
        return await self.token(**form)


def challenge_of(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()


@asynccontextmanager
async def local(**settings: Any) -> AsyncIterator[Session]:
    with anyio.fail_after(20):
        async with serve_authorization_server(**settings) as state, httpx.AsyncClient() as http:
            registered = await http.post(
                state.endpoint("register"),
                json={
                    "redirect_uris": [REDIRECT],
                    "token_endpoint_auth_method": "none",
                    "grant_types": ["authorization_code", "refresh_token"],
                },
            )
            assert registered.status_code == 201, registered.text
            assert "client_secret" not in registered.json()
            yield Session(state, http, registered.json()["client_id"])


@pytest.mark.parametrize("path", ["", "/as"])
async def test_metadata_names_the_issuer_exactly(path: str) -> None:
    async with local(path=path) as session:
        base = session.state.issuer.removesuffix(path)
        response = await session.http.get(f"{base}/.well-known/oauth-authorization-server{path}")
        assert response.status_code == 200
        metadata = response.json()
        assert metadata["issuer"] == session.state.issuer
        assert not metadata["issuer"].endswith("/")
        assert metadata["code_challenge_methods_supported"] == ["S256"]
        assert metadata["token_endpoint"] == f"{session.state.issuer}/token"
        if path:  # (RFC 8414 section 3.1: the well-known part goes before the issuer's path)
            assert (
                await session.http.get(f"{session.state.issuer}/.well-known/oauth-authorization-server")
            ).status_code == 404


async def test_a_good_code_flow_gives_a_jwt_for_the_resource() -> None:
    async with local(algorithm="ES256") as session:
        status, answer, _ = await session.authorize()
        assert (status, answer["state"], answer["iss"]) == (302, "st", session.state.issuer)
        response = await session.code_tokens()
        assert response.status_code == 200, response.text
        tokens = response.json()
        assert tokens["token_type"] == "Bearer" and tokens["scope"] == "mcp" and tokens["refresh_token"]
        keys = KeySet.import_key_set((await session.http.get(session.state.endpoint("jwks"))).json())
        decoded = jwt.decode(tokens["access_token"], keys, algorithms=["ES256"])
        assert decoded.header["kid"] == session.state.key.kid
        claims = decoded.claims
        assert claims["aud"] == RESOURCE and claims["iss"] == session.state.issuer
        assert claims["sub"] == "alice" and claims["client_id"] == session.client_id
        assert claims["exp"] > claims["iat"]


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"code_challenge_method": None}, "invalid_request"),
        ({"code_challenge_method": "plain"}, "invalid_request"),
        ({"code_challenge": None}, "invalid_request"),
        ({"resource": None}, "invalid_target"),
        ({"resource": "mcp-server"}, "invalid_target"),
        ({"scope": "mcp root"}, "invalid_scope"),
        ({"response_type": "token"}, "unsupported_response_type"),
    ],
)
async def test_authorize_refuses_by_redirecting(changes: dict[str, str | None], error: str) -> None:
    async with local() as session:
        status, answer, _ = await session.authorize(**changes)
        assert status == 302
        assert "code" not in answer
        assert (answer["error"], answer["state"], answer["iss"]) == (error, "st", session.state.issuer)


@pytest.mark.parametrize(
    "changes",
    [
        {"redirect_uri": "http://127.0.0.1:4000/elsewhere"},
        {"redirect_uri": "https://evil.example/cb"},
        {"client_id": "nobody"},
    ],
)
async def test_authorize_does_not_redirect_to_an_unregistered_uri(changes: dict[str, str]) -> None:
    async with local() as session:
        status, _, _ = await session.authorize(**changes)
        assert status == 400


async def test_a_loopback_redirect_may_use_another_port() -> None:
    async with local() as session:
        status, answer, _ = await session.authorize(redirect_uri="http://127.0.0.1:5555/callback")
        assert status == 302 and "code" in answer


@pytest.mark.parametrize(
    ("changes", "error"),
    [
        ({"code_verifier": secrets.token_urlsafe(48)}, "invalid_grant"),
        ({"code_verifier": "short"}, "invalid_grant"),
        ({"redirect_uri": "http://127.0.0.1:4000/other"}, "invalid_grant"),
        ({"resource": "http://127.0.0.1:2/mcp"}, "invalid_target"),
        ({"client_id": "nobody"}, "invalid_client"),
    ],
)
async def test_token_refuses_a_bad_code_redemption(changes: dict[str, str], error: str) -> None:
    async with local() as session:
        response = await session.code_tokens(**changes)
        assert response.status_code in (400, 401)
        assert response.json()["error"] == error
        assert session.state.issued == []


async def test_codes_and_refresh_tokens_work_once() -> None:
    async with local() as session:
        status, answer, verifier = await session.authorize()
        assert status == 302
        form = {
            "grant_type": "authorization_code",
            "code": answer["code"],
            "redirect_uri": REDIRECT,
            "code_verifier": verifier,
        }
        first = await session.token(**form)
        assert first.status_code == 200
        again = await session.token(**form)
        assert again.json()["error"] == "invalid_grant"

        refresh = first.json()["refresh_token"]
        rotated = await session.token(grant_type="refresh_token", refresh_token=refresh)
        assert rotated.status_code == 200
        assert rotated.json()["refresh_token"] != refresh
        replayed = await session.token(grant_type="refresh_token", refresh_token=refresh)
        assert replayed.json()["error"] == "invalid_grant"
        wider = await session.token(
            grant_type="refresh_token", refresh_token=rotated.json()["refresh_token"], scope="mcp x:write"
        )
        assert wider.json()["error"] == "invalid_scope"


async def test_client_credentials_need_a_confidential_client_and_a_resource() -> None:
    async with local() as session:
        session.state.clients.add_confidential("bot", "bot-secret")
        good = await session.http.post(
            session.state.endpoint("token"),
            data={"grant_type": "client_credentials", "resource": RESOURCE},
            auth=("bot", "bot-secret"),
        )
        assert good.status_code == 200 and "refresh_token" not in good.json()
        no_resource = await session.http.post(
            session.state.endpoint("token"),
            data={"grant_type": "client_credentials"},
            auth=("bot", "bot-secret"),
        )
        assert no_resource.json()["error"] == "invalid_target"
        public = await session.token(grant_type="client_credentials", resource=RESOURCE)
        assert public.json()["error"] == "unauthorized_client"


async def test_introspection() -> None:
    async with local() as session:
        session.state.clients.add_confidential("rs", "rs-secret", grant_types=[])
        token = (await session.code_tokens()).json()["access_token"]
        url = session.state.endpoint("introspect")
        anonymous = await session.http.post(url, data={"token": token})
        assert anonymous.status_code == 401
        active = (await session.http.post(url, data={"token": token}, auth=("rs", "rs-secret"))).json()
        assert active["active"] is True and active["aud"] == RESOURCE and active["sub"] == "alice"
        garbage = (await session.http.post(url, data={"token": "x.y.z"}, auth=("rs", "rs-secret"))).json()
        assert garbage == {"active": False}
        session.state.revoked.add(token)
        revoked = (await session.http.post(url, data={"token": token}, auth=("rs", "rs-secret"))).json()
        assert revoked == {"active": False}
