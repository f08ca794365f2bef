"""Stateless Streamable HTTP declares only what it can deliver (no listChanged, no resource
subscriptions: nothing unrelated to a request reaches the client), and refuses requests to the
client saying that stateless mode cannot send them."""

from __future__ import annotations

from typing import Any, Literal

import pytest

from mcpbind.client.client import Client
from mcpbind.protocol.errors import METHOD_NOT_FOUND
from mcpbind.runtime.session import RequestContext
from mcpbind.schema import v2025_11_25 as types
from mcpbind.server.server import Server
from mcpbind.transports.http.server import StreamableHTTPApp
from mcpbind.versions import HANDSHAKE_VERSIONS
from tests import http_server_helpers as helpers
from tests.http_harness import ServerName
from tests.http_server_helpers import call, headers, initialize, make_server, post, request, running

pytestmark = pytest.mark.anyio
backend_and_server, anyio_backend, asgi_server = (
    helpers.backend_and_server,
    helpers.anyio_backend,
    helpers.asgi_server,
)
methods = types.methods


def reaching_server() -> Server:
    """make_server's tools, a prompt, and ``reach``: a request to the client of each kind."""
    server = make_server()

    @server.prompt()
    def greet(name: str) -> str:
        return f"Hello {name}"

    @server.tool()
    async def reach(what: Literal["sampling", "elicitation", "roots", "ping"], ctx: RequestContext) -> str:
        params: Any
        if what == "sampling":
            params = types.CreateMessageRequestParams(
                max_tokens=5,
                messages=[types.SamplingMessage(role="user", content=types.TextContent(text="?"))],
            )
            await ctx.create_message(params)
        elif what == "elicitation":
            params = types.ElicitRequestFormParams(
                message="?", requested_schema=types.ElicitRequestFormParamsRequestedSchema(properties={})
            )
            await ctx.elicit(params)
        elif what == "roots":
            await ctx.list_roots()
        else:
            await ctx.request(methods.PING, types.RequestParams())
        return "reached"

    return server


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_capabilities_match_the_mode(asgi_server: ServerName, json_response: bool) -> None:
    for stateless in (False, True):
        app = StreamableHTTPApp(reaching_server(), stateless=stateless, json_response=json_response)
        async with running(app, asgi_server) as (url, client):
            response = await client.post(url, json=initialize(), headers=headers(version=None))
            kind = response.headers["content-type"]
            body = (
                response.json()
                if kind.startswith("application/json")
                else helpers.messages(helpers.sse_events(response.text))[-1]
            )
            caps = body["result"]["capabilities"]
            session_id = response.headers.get("mcp-session-id")
            if session_id is not None:
                note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
                await client.post(url, json=note, headers=headers(session_id))
            _, answers = await post(
                client, url, request(1, "resources/subscribe", {"uri": "test://hello"}), session_id
            )
        if stateless:
            assert caps["tools"] == {} and caps["prompts"] == {} and caps["resources"] == {}
            assert answers[-1]["error"]["code"] == METHOD_NOT_FOUND
        else:
            assert caps["tools"] == {"listChanged": True} and caps["prompts"] == {"listChanged": True}
            assert caps["resources"] == {"subscribe": True, "listChanged": True}
            assert answers[-1]["result"] == {}
        # Log messages tied to a request reach the client on its SSE stream; a JSON answer carries none.
        assert caps.get("logging") == (None if stateless and json_response else {})


async def test_given_capabilities_lose_what_stateless_mode_cannot_deliver(asgi_server: ServerName) -> None:
    given = types.ServerCapabilities(
        tools=types.ServerCapabilitiesTools(list_changed=True),
        resources=types.ServerCapabilitiesResources(subscribe=True, list_changed=True),
        completions={},
    )
    app = StreamableHTTPApp(Server("given", "1", capabilities=given), stateless=True, json_response=True)
    async with running(app, asgi_server) as (url, client):
        response = await client.post(url, json=initialize(), headers=headers(version=None))
    assert response.json()["result"]["capabilities"] == {"tools": {}, "resources": {}, "completions": {}}


@pytest.mark.parametrize("json_response", [False, True], ids=["sse", "json"])
async def test_requests_to_the_client_are_refused_saying_why(
    asgi_server: ServerName, json_response: bool
) -> None:
    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="!"), model="m")

    async def elicit(params: Any, ctx: RequestContext) -> types.ElicitResult:
        return types.ElicitResult(action="decline")

    async def roots(params: types.RequestParams, ctx: RequestContext) -> types.ListRootsResult:
        return types.ListRootsResult(roots=[])

    app = StreamableHTTPApp(reaching_server(), stateless=True, json_response=json_response)
    client = Client("c", "1", versions=HANDSHAKE_VERSIONS, sampling=sample, elicitation=elicit, roots=roots)
    async with running(app, asgi_server) as (url, http), client.connect_url(url, timeout=10) as session:
        for what in ("sampling", "elicitation", "roots", "ping"):
            with pytest.raises(Exception) as caught:
                await session.call_tool("reach", {"what": what}, timeout=10)
            message = str(caught.value)
            assert "stateless mode cannot send requests to the client" in message, message
            assert "did not declare" not in message
        # The raw exchange: the answer is the error, and nothing was sent to the client first.
        _, answers = await post(http, url, call(7, "reach", {"what": "sampling"}), None)
    assert [m.get("id") for m in answers] == [7]
    assert "stateless mode cannot send requests to the client" in answers[0]["error"]["message"]
