"""What a protected server does with a valid token: scopes per tool, resource, prompt and
method checked before the handler, the verified token in the handlers, sessions bound to the
principal that opened them, MCP 2026-07-28 stateless requests and their request states, CORS,
and a verifier of one's own."""

from __future__ import annotations

from typing import Any

import httpx
import msgspec
import pytest

from mcpbind.runtime.context import RequestContext
from mcpbind.server.auth import AccessToken, InvalidToken, ResourceServerAuth
from mcpbind.server.elicitation import elicit_form
from mcpbind.server.server import Server
from tests import http_server_helpers as helpers
from tests.server.auth.app_helpers import (
    bearer,
    challenge_of,
    open_session,
    protected,
    protected_server,
    rpc_call,
)
from tests.server.auth.tokens import ISSUER, RESOURCE, mint
from tests.transports.http.test_http_modern import META as META_2026
from tests.transports.http.test_http_modern import heads, rpc

pytestmark = pytest.mark.anyio


# -- handlers and scopes per request -------------------------------------------------------------


async def test_the_verified_token_reaches_the_tools(anyio_backend: str) -> None:
    async with protected() as client:
        token = mint(team="blue")
        session_id = await open_session(client, token)
        response, [answer] = await rpc_call(client, token, session_id, helpers.call(1, "whoami"))
    assert response.status_code == 200
    assert answer["result"]["content"][0]["text"] == "alice mcp read blue"


SCOPED = [
    (helpers.call(5, "wipe"), "admin"),
    (helpers.request(5, "resources/read", {"uri": "secret://plans"}), "secret"),
    (helpers.request(5, "resources/read", {"uri": "files://notes"}), "files"),
    (helpers.request(5, "prompts/get", {"name": "review", "arguments": {"code": "x"}}), "prompts"),
]


@pytest.mark.parametrize(("message", "scope"), SCOPED, ids=["tool", "resource", "template", "prompt"])
async def test_scopes_per_tool_resource_and_prompt(
    anyio_backend: str, message: dict[str, Any], scope: str
) -> None:
    """403 insufficient_scope before the handler runs, asking for what is needed and what
    the token has; a token with the scope is served."""
    async with protected() as client:
        token = mint()
        session_id = await open_session(client, token)
        refused, [error] = await rpc_call(client, token, session_id, message)
        assert refused.status_code == 403
        challenge = challenge_of(refused)
        assert challenge.error == "insufficient_scope"
        assert set(challenge.scope.split()) == {scope, "mcp", "read"}
        assert error["id"] == 5
        granted = mint(scope=f"mcp {scope}")
        session_id = await open_session(client, granted)
        served, [answer] = await rpc_call(client, granted, session_id, message)
    assert served.status_code == 200
    assert "result" in answer


async def test_a_resource_without_scopes_next_to_a_template_with_some(anyio_backend: str) -> None:
    async with protected() as client:
        token = mint()
        session_id = await open_session(client, token)
        response, [answer] = await rpc_call(
            client, token, session_id, helpers.request(1, "resources/read", {"uri": "files://public"})
        )
    assert response.status_code == 200
    assert answer["result"]["contents"][0]["text"] == "public"


async def test_method_scopes_cover_low_level_handlers(anyio_backend: str) -> None:
    server = Server("low", "1.0")

    @server.on(server_methods().TOOLS_CALL)
    async def call_tool(params: Any, ctx: RequestContext) -> Any:
        raise AssertionError("not reached without the scope")

    async with protected(server, method_scopes={"tools/call": ["tools"]}) as client:
        token = mint()
        session_id = await open_session(client, token)
        response, _ = await rpc_call(client, token, session_id, helpers.call(1, "anything"))
    assert response.status_code == 403
    assert "tools" in challenge_of(response).scope.split()


def server_methods() -> Any:
    from mcpbind import types

    return types.methods


# -- sessions ----------------------------------------------------------------------------------


async def test_a_session_refuses_another_principals_token(anyio_backend: str) -> None:
    """Bob's valid token on Alice's session id: 404, as for an unknown session; Alice's next
    token (refreshed: same principal) goes on."""
    async with protected() as client:
        alice = mint()
        session_id = await open_session(client, alice)
        for intruder in (mint(sub="bob"), mint(client_id="other-client"), mint(sub=None)):
            hijack, _ = await rpc_call(client, intruder, session_id, helpers.call(2, "whoami"))
            assert hijack.status_code == 404
            get = await client.get("/mcp", headers=bearer(intruder, session_id))
            assert get.status_code == 404
            delete = await client.delete("/mcp", headers=bearer(intruder, session_id))
            assert delete.status_code == 404
        refreshed = mint(team="again")
        response, [answer] = await rpc_call(client, refreshed, session_id, helpers.call(3, "whoami"))
    assert response.status_code == 200
    assert answer["result"]["content"][0]["text"] == "alice mcp read again"


# -- MCP 2026-07-28 ------------------------------------------------------------------------------


async def test_a_stateless_request_is_authorized_on_its_own(anyio_backend: str) -> None:
    async with protected() as client:
        message = rpc(1, "tools/call", {"name": "whoami", "arguments": {}})
        response = await client.post(
            "/mcp", json=message, headers=heads(message, authorization=f"Bearer {mint()}")
        )
        assert response.status_code == 200, response.text
        assert response.json()["result"]["content"][0]["text"] == "alice mcp read None"
        missing = await client.post("/mcp", json=message, headers=heads(message))
        assert missing.status_code == 401
        wipe = rpc(2, "tools/call", {"name": "wipe", "arguments": {}})
        refused = await client.post("/mcp", json=wipe, headers=heads(wipe, authorization=f"Bearer {mint()}"))
        assert refused.status_code == 403
        assert challenge_of(refused).error == "insufficient_scope"


class Name(msgspec.Struct):
    name: str


async def test_a_request_state_is_bound_to_the_tokens_principal(anyio_backend: str) -> None:
    """A multi round-trip request (2026-07-28): the request state issued to Alice's request
    is refused on Bob's retry (by default, without ``request_state_principal``)."""
    server = protected_server()

    @server.tool()
    async def ask(ctx: RequestContext) -> str:
        outcome = await elicit_form(ctx, "Your name?", Name)
        return outcome.value.name if outcome.value is not None else "-"

    capabilities = {**META_2026, "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}}
    first = rpc(1, "tools/call", {"name": "ask", "arguments": {}}, meta=capabilities)
    async with protected(server) as client:
        asked = await client.post("/mcp", json=first, headers=heads(first, authorization=f"Bearer {mint()}"))
        state = asked.json()["result"]["requestState"]
        answers = {"elicitation-1": {"action": "accept", "content": {"name": "Ada"}}}
        retry = rpc(
            2,
            "tools/call",
            {"name": "ask", "arguments": {}, "requestState": state, "inputResponses": answers},
            meta=capabilities,
        )
        by_bob = await client.post(
            "/mcp", json=retry, headers=heads(retry, authorization=f"Bearer {mint(sub='bob')}")
        )
        by_alice = await client.post(
            "/mcp", json=retry, headers=heads(retry, authorization=f"Bearer {mint()}")
        )
    assert by_bob.json()["error"]["data"] == {"reason": "principal"}
    assert by_alice.json()["result"]["content"][0]["text"] == "Ada"


async def test_a_web_page_reads_the_challenge(anyio_backend: str) -> None:
    """With CORS on, preflights need no token and refusals carry the CORS headers, exposing
    ``WWW-Authenticate`` to the page."""
    page = {"origin": "https://app.example"}
    async with protected(cors_origins=["https://app.example"]) as client:
        preflight = await client.options("/mcp", headers={**page, "access-control-request-method": "POST"})
        refused = await client.post("/mcp", json=helpers.initialize(), headers={**helpers.headers(), **page})
    assert preflight.status_code == 204
    assert refused.status_code == 401
    assert refused.headers["access-control-allow-origin"] == "https://app.example"
    assert "www-authenticate" in refused.headers["access-control-expose-headers"].lower()


class Passwords:
    """A verifier of one's own: one known opaque token."""

    async def verify(self, token: str) -> AccessToken:
        if token != "letmein":
            raise InvalidToken("unknown")
        return AccessToken(token=token, subject="dora", client_id="cli", scopes=frozenset({"mcp"}))


async def test_a_verifier_of_ones_own(anyio_backend: str) -> None:
    auth = ResourceServerAuth(ISSUER, RESOURCE, verifier=Passwords(), required_scopes="mcp")
    app = protected_server().http_app(auth=auth)
    async with (
        app.run(),
        httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1") as client,
    ):
        session_id = await open_session(client, "letmein")
        _, [answer] = await rpc_call(client, "letmein", session_id, helpers.call(1, "whoami"))
        refused = await client.post("/mcp", json=helpers.initialize(), headers=bearer("guess"))
    assert answer["result"]["content"][0]["text"] == "dora mcp None"
    assert refused.status_code == 401
    assert challenge_of(refused).error == "invalid_token"
