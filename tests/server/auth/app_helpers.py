"""What the protected app tests share: a server with scoped tools, resources and prompts, the
app in process behind ResourceServerAuth, and requests carrying bearer tokens."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx

from mcpbind.oauth.challenge import bearer_challenge
from mcpbind.runtime.context import RequestContext
from mcpbind.server.auth import ProtectedApp, ResourceServerAuth
from mcpbind.server.server import Server
from tests import http_server_helpers as helpers
from tests.server.auth.tokens import ISSUER, JWKS_URL, RESOURCE, KeySetServer

METADATA_URL = "http://127.0.0.1/.well-known/oauth-protected-resource/mcp"


def protected_server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def whoami(ctx: RequestContext) -> str:
        token = ctx.access_token
        assert token is not None
        return f"{token.subject} {' '.join(sorted(token.scopes))} {token.claims.get('team')}"

    @server.tool(scopes=["admin"])
    async def wipe() -> str:
        return "wiped"

    @server.resource("secret://plans", scopes="secret")
    def plans() -> str:
        return "the plans"

    @server.resource("files://{name}", scopes=["files"])
    def file(name: str) -> str:
        return f"file {name}"

    @server.resource("files://public")
    def public() -> str:
        return "public"

    @server.prompt(scopes=["prompts"])
    def review(code: str) -> str:
        return f"review {code}"

    return server


@asynccontextmanager
async def protected(
    server: Server | None = None, keys: KeySetServer | None = None, **options: Any
) -> AsyncIterator[httpx.AsyncClient]:
    keys = keys or KeySetServer()
    app_options = {"cors_origins": options.pop("cors_origins")} if "cors_origins" in options else {}
    settings = {"jwks_url": JWKS_URL, "http_client": keys.client(), "required_scopes": ["mcp"], **options}
    auth = ResourceServerAuth(ISSUER, RESOURCE, **settings)
    app = (server or protected_server()).http_app(auth=auth, **app_options)
    assert isinstance(app, ProtectedApp)
    async with (
        app.run(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client,
    ):
        yield client


def bearer(token: str, session_id: str | None = None, **extra: str) -> dict[str, str]:
    return helpers.headers(session_id, authorization=f"Bearer {token}", **extra)


async def open_session(client: httpx.AsyncClient, token: str) -> str:
    response = await client.post("/mcp", json=helpers.initialize(), headers=bearer(token))
    assert response.status_code == 200, response.text
    session_id = response.headers["mcp-session-id"]
    note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    assert (await client.post("/mcp", json=note, headers=bearer(token, session_id))).status_code == 202
    return session_id


async def rpc_call(
    client: httpx.AsyncClient, token: str, session_id: str, message: dict[str, Any]
) -> tuple[httpx.Response, list[dict[str, Any]]]:
    response = await client.post("/mcp", json=message, headers=bearer(token, session_id))
    kind = response.headers.get("content-type", "")
    if kind.startswith("text/event-stream"):
        return response, helpers.messages(helpers.sse_events(response.text))
    return response, [response.json()] if response.content else []


def challenge_of(response: httpx.Response) -> Any:
    challenge = bearer_challenge(response.headers.get("www-authenticate"))
    assert challenge is not None
    assert challenge.resource_metadata == METADATA_URL
    return challenge
