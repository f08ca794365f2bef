"""``Client.connect_url(..., auth=OAuth(...))`` end to end: an mcpbind server on 127.0.0.1
behind a small bearer-token guard of the test's own (serving its resource metadata and answering
401/403 as a protected MCP server does), with the fake authorization server for the OAuth
requests."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

import httpx
import pytest

from mcpbind import Client, Server
from mcpbind.client.auth import OAuth
from mcpbind.oauth.registration import ClientMetadata
from mcpbind.protocol.errors import McpError
from mcpbind.transports.http.legacy import LegacySSEApp
from tests.client.auth.fake_world import FakeWorld
from tests.http_harness import serve_asgi
from tests.http_server_helpers import anyio_backend, asgi_server, backend_and_server  # noqa: F401

pytestmark = pytest.mark.anyio


class Guard:
    """ASGI middleware: the MCP endpoint needs a token the fake authorization server issued for
    this resource, with ``required`` scopes."""

    def __init__(self, app: Any, world: FakeWorld, endpoint: str = "/mcp") -> None:
        self.app, self.world, self.endpoint = app, world, endpoint
        self.prm_path = "/.well-known/oauth-protected-resource" + endpoint
        self.base = ""
        self.required: set[str] = set()

    async def _answer(self, send: Any, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": body})

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        json_type = [(b"content-type", b"application/json")]
        if scope["path"] == self.prm_path:
            document = {
                "resource": f"{self.base}{self.endpoint}",
                "authorization_servers": [self.world.issuer],
            }
            await self._answer(send, 200, json.dumps(document).encode(), json_type)
            return
        header = dict(scope["headers"]).get(b"authorization", b"").decode()
        issued = self.world.access.get(header.removeprefix("Bearer "))
        if issued is None or not issued.valid or issued.resource != f"{self.base}{self.endpoint}":
            challenge = f'Bearer resource_metadata="{self.base}{self.prm_path}"'
            await self._answer(send, 401, b"{}", [*json_type, (b"www-authenticate", challenge.encode())])
            return
        if not self.required <= issued.scopes:
            challenge = f'Bearer error="insufficient_scope", scope="{" ".join(sorted(self.required))}"'
            await self._answer(send, 403, b"{}", [*json_type, (b"www-authenticate", challenge.encode())])
            return
        await self.app(scope, receive, send)


class _Routes(httpx.AsyncBaseTransport):
    """The fake authorization server for ``as.test``, the network (127.0.0.1) for the rest."""

    def __init__(self, world: FakeWorld) -> None:
        self.fake, self.real = world.transport(), httpx.AsyncHTTPTransport()

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        chosen = self.fake if request.url.host == "as.test" else self.real
        return await chosen.handle_async_request(request)

    async def aclose(self) -> None:
        await self.real.aclose()


def _server() -> Server:
    server = Server("protected", "1.0")

    @server.tool()
    async def greet(name: str) -> str:
        """Says hello."""
        return f"hello {name}"

    return server


@asynccontextmanager
async def _protected(world: FakeWorld) -> AsyncIterator[tuple[str, Guard]]:
    guard = Guard(_server().http_app(), world)
    async with serve_asgi(guard) as base:
        guard.base = base
        yield f"{base}/mcp", guard


async def test_connect_url_authorizes_and_calls_a_tool() -> None:
    world = FakeWorld()
    async with _protected(world) as (url, _), httpx.AsyncClient(transport=_Routes(world)) as http:
        auth = OAuth(
            url,
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"]),
            authorize=world.authorize,
            http_client=http,
        )
        async with Client("tests", "1.0").connect_url(url, auth=auth, timeout=10) as server:
            result = await server.call_tool("greet", {"name": "you"})
            assert result.content[0].text == "hello you"  # type: ignore[union-attr]
    assert len(world.authorizations) == 1
    assert world.authorizations[0]["resource"] == url


async def test_a_request_that_cannot_get_the_scope_fails_alone() -> None:
    world = FakeWorld(withheld={"admin"})
    async with _protected(world) as (url, guard), httpx.AsyncClient(transport=_Routes(world)) as http:
        auth = OAuth(
            url,
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"]),
            authorize=world.authorize,
            http_client=http,
            max_step_ups=1,
        )
        async with Client("tests", "1.0").connect_url(url, auth=auth, timeout=10) as server:
            guard.required = {"admin"}
            with pytest.raises(McpError, match="insufficient_scope"):
                await server.call_tool("greet", {"name": "you"})
            guard.required = set()  # the session is still there
            result = await server.call_tool("greet", {"name": "again"})
            assert result.content[0].text == "hello again"  # type: ignore[union-attr]
    assert [a.get("scope") for a in world.authorizations] == [None, "admin"]


async def test_httpx_sees_an_http_error() -> None:
    world = FakeWorld(registration=False)
    async with world.client() as http:
        auth = OAuth(
            "https://mcp.test/mcp",
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"]),
            authorize=world.authorize,
            http_client=http,
        )
        async with httpx.AsyncClient(transport=world.transport(), auth=auth) as client:
            with pytest.raises(httpx.HTTPError, match="registration_unsupported"):
                await client.post("https://mcp.test/mcp")


async def test_the_legacy_sse_transport_authorizes_too() -> None:
    world = FakeWorld()
    guard = Guard(LegacySSEApp(_server()), world, endpoint="/sse")
    async with serve_asgi(guard) as base, httpx.AsyncClient(transport=_Routes(world)) as http:
        guard.base = base
        url = f"{base}/sse"
        auth = OAuth(
            url,
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"]),
            authorize=world.authorize,
            http_client=http,
        )
        async with Client("tests", "1.0").connect_url(url, transport="sse", auth=auth, timeout=10) as server:
            result = await server.call_tool("greet", {"name": "old friend"})
            assert result.content[0].text == "hello old friend"  # type: ignore[union-attr]
    assert len(world.authorizations) == 1
    assert world.authorizations[0]["resource"] == url


async def _slow(world: FakeWorld, url: str, seconds: float) -> str:
    """The user takes ``seconds`` in the browser."""
    import anyio

    await anyio.sleep(seconds)
    return await world.authorize(url)


@pytest.mark.parametrize("allowed", [30.0, 0.0])
async def test_the_users_time_in_the_browser_is_added_to_the_requests_time_limit(allowed: float) -> None:
    world = FakeWorld()
    async with _protected(world) as (url, _), httpx.AsyncClient(transport=_Routes(world)) as http:
        auth = OAuth(
            url,
            client_metadata=ClientMetadata(redirect_uris=["http://127.0.0.1:9/callback"]),
            authorize=lambda where: _slow(world, where, 1.5),
            http_client=http,
            authorization_timeout=allowed,
        )
        connecting = Client("tests", "1.0").connect_url(url, auth=auth, http_timeout=0.5, timeout=10)
        if allowed:
            async with connecting as server:
                result = await server.call_tool("greet", {"name": "patient"})
                assert result.content[0].text == "hello patient"  # type: ignore[union-attr]
        else:
            with pytest.raises(Exception, match=r"within 0\.5 s"):
                async with connecting:
                    pass
