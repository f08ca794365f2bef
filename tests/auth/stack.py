"""What the end-to-end tests put together: an mcpbind server protected by
``ResourceServerAuth`` (JWTs checked against the local authorization server's key set, or
opaque tokens introspected there), served on 127.0.0.1 at a URL it knows before it starts (its
resource), and mcpbind's OAuth flow signing in to it through :class:`~tests.auth.approver.Approver`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

from mcpbind.client.auth import OAuth, TokenStore
from mcpbind.oauth.registration import ClientMetadata
from mcpbind.runtime.context import RequestContext
from mcpbind.server.auth import ProtectedApp, ResourceServerAuth
from mcpbind.server.server import Server
from tests.auth.approver import Approver
from tests.auth.state import AuthorizationServerState
from tests.http_harness import loopback_socket, serve_asgi

__all__ = [
    "INTROSPECTION_CLIENT",
    "Protected",
    "demo_server",
    "oauth_for",
    "serve_protected",
]

INTROSPECTION_CLIENT = ("mcp-resource-server", "introspection-secret")
REDIRECT_URI = "http://127.0.0.1:9/callback"  # never reached: the Approver reads the redirect


def demo_server() -> Server:
    """Tools for the tests: who is calling, one needing ``x:write``, one needing a scope the
    authorization server does not know."""
    server = Server("protected-e2e", "1.0")

    @server.tool()
    async def whoami(ctx: RequestContext) -> str:
        """Who the access token stands for, with its client and scopes."""
        token = ctx.access_token
        if token is None:
            return "anonymous"
        return f"{token.subject} {token.client_id} {' '.join(sorted(token.scopes))}"

    @server.tool(scopes=["x:write"])
    async def write(text: str) -> str:
        """Writes (needs x:write)."""
        return f"wrote {text}"

    @server.tool(scopes=["root"])
    async def shutdown() -> str:
        """Needs a scope no one can be granted."""
        return "down"

    return server


@dataclass
class Protected:
    """A served protected server: its MCP URL (the resource) and the app."""

    url: str
    app: ProtectedApp

    def session_ids(self) -> list[str]:
        streamable: Any = self.app.app
        return list(streamable.sessions)


@asynccontextmanager
async def serve_protected(
    auth_server: AuthorizationServerState,
    server: Server | None = None,
    *,
    introspection: bool = False,
    **settings: Any,
) -> AsyncIterator[Protected]:
    """Serve ``server`` (the demo one by default) at ``http://127.0.0.1:PORT/mcp``, protected
    with tokens of ``auth_server`` for that URL (``settings``: more of ``ResourceServerAuth``)."""
    sock = loopback_socket()
    url = f"http://127.0.0.1:{sock.getsockname()[1]}/mcp"
    if introspection:
        client_id, secret = INTROSPECTION_CLIENT
        auth_server.clients.add_confidential(client_id, secret, grant_types=[])
        verification: dict[str, Any] = {
            "introspection_url": auth_server.endpoint("introspect"),
            "client_id": client_id,
            "client_secret": secret,
        }
    else:
        verification = {"jwks_url": auth_server.endpoint("jwks")}
    auth = ResourceServerAuth(auth_server.issuer, url, **verification, **settings)
    app = (server or demo_server()).http_app(auth=auth)
    async with serve_asgi(app, None, sock):
        yield Protected(url, app)


def oauth_for(url: str, approver: Approver, store: TokenStore, **options: Any) -> OAuth:
    """mcpbind's OAuth flow for the server at ``url``, as a native app registering itself."""
    metadata = ClientMetadata(client_name="mcpbind-e2e", redirect_uris=[REDIRECT_URI])
    return OAuth(url, client_metadata=metadata, authorize=approver, store=store, **options)
