"""The authorization code flow with the loopback redirect, in process: ``OAuth`` with a
``LoopbackAuthorizer`` signs in to the tests' own protected MCP server, the test playing the
user's browser on the URL the authorizer printed."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
import httpx
import pytest

from mcpbind.client.auth import LoopbackAuthorizer, MemoryTokenStore, OAuth
from mcpbind.client.client import Client
from mcpbind.oauth.registration import ClientMetadata
from tests.client.auth.mock_servers import MockOAuth, OAuthApp
from tests.http_harness import serve_asgi

pytestmark = pytest.mark.anyio


class Screen(io.StringIO):
    """What the authorizer prints, and an event set once it printed a URL."""

    def __init__(self) -> None:
        super().__init__()
        self.shown = anyio.Event()

    def write(self, text: str) -> int:
        written = super().write(text)
        if "http" in text:
            self.shown.set()
        return written

    def url(self) -> str:
        return next(line.strip() for line in self.getvalue().splitlines() if line.strip().startswith("http"))


@asynccontextmanager
async def served(oauth: MockOAuth) -> AsyncIterator[MockOAuth]:
    async with serve_asgi(OAuthApp(oauth)) as base:
        oauth.base = base
        yield oauth


async def test_sign_in_through_the_loopback_redirect(anyio_backend: str) -> None:
    oauth = MockOAuth(grant_types=["authorization_code", "refresh_token"], auth_methods=["none"])
    screen = Screen()
    pages: list[httpx.Response] = []
    async with served(oauth), LoopbackAuthorizer(open_browser=False, output=screen) as loopback:
        auth = OAuth(
            oauth.resource,
            client_metadata=ClientMetadata(client_name="test", redirect_uris=[loopback.redirect_uri]),
            authorize=loopback,
            store=MemoryTokenStore(),
        )

        async def browser() -> None:
            await screen.shown.wait()
            async with httpx.AsyncClient(follow_redirects=True) as http:
                pages.append(await http.get(screen.url()))

        with anyio.fail_after(30):
            async with anyio.create_task_group() as group:
                group.start_soon(browser)
                async with Client("user", "1.0").connect_url(oauth.resource, auth=auth) as server:
                    result = await server.call_tool("add", {"a": 1, "b": 2})
    assert result.structured_content == {"result": 3}
    assert screen.url().startswith(f"{oauth.issuer}/authorize?")
    assert pages[0].status_code == 200
    assert str(pages[0].url).startswith(loopback.redirect_uri + "?code=")
    [registration] = oauth.registered.values()
    assert registration["redirect_uris"] == [loopback.redirect_uri]
