"""examples/protected_server.py: each user's notes, ``notes:write`` needed to add one."""

from __future__ import annotations

import httpx
import pytest

from examples import protected_server
from mcpbind.server.auth import ProtectedApp, ResourceServerAuth
from tests import http_server_helpers as helpers
from tests.server.auth.app_helpers import challenge_of, open_session, rpc_call
from tests.server.auth.tokens import ISSUER, JWKS_URL, RESOURCE, KeySetServer, mint

pytestmark = pytest.mark.anyio


async def test_the_protected_example(anyio_backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MCP_AUTH_ISSUER", ISSUER)
    monkeypatch.setenv("MCP_AUTH_JWKS_URL", JWKS_URL)
    protected_server.notes.clear()
    settings = protected_server.auth_settings(RESOURCE)
    assert settings.required_scopes == frozenset({"notes:read"})
    keys = KeySetServer()
    auth = ResourceServerAuth(
        ISSUER,
        RESOURCE,
        jwks_url=JWKS_URL,
        http_client=keys.client(),
        required_scopes=settings.required_scopes,
    )
    app = protected_server.server.http_app(auth=auth)
    assert isinstance(app, ProtectedApp)
    async with (
        app.run(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client,
    ):
        reader = mint(scope="notes:read")
        session_id = await open_session(client, reader)
        refused, _ = await rpc_call(client, reader, session_id, helpers.call(1, "add_note", {"text": "hi"}))
        assert refused.status_code == 403
        assert set(challenge_of(refused).scope.split()) == {"notes:read", "notes:write"}
        writer = mint(scope="notes:read notes:write")
        session_id = await open_session(client, writer)
        added, [answer] = await rpc_call(
            client, writer, session_id, helpers.call(2, "add_note", {"text": "hi"})
        )
        assert added.status_code == 200
        assert answer["result"]["content"][0]["text"] == "1 notes"
        bob = mint(sub="bob", scope="notes:read")
        bob_session = await open_session(client, bob)
        _, [bobs] = await rpc_call(client, bob, bob_session, helpers.call(3, "read_notes"))
        _, [alices] = await rpc_call(client, writer, session_id, helpers.call(4, "read_notes"))
        no_token = await client.post("/mcp", json=helpers.initialize(), headers=helpers.headers())
    assert bobs["result"]["content"][0]["text"] == "(no notes)"
    assert alices["result"]["content"][0]["text"] == "hi"
    assert no_token.status_code == 401
