"""Machine-to-machine authorization (MCP's OAuth Client Credentials extension, SEP-1046): a client
with pre-registered credentials gets its tokens with the ``client_credentials`` grant (OAuth 2.1
section 4.2), authenticating with a signed JWT (``private_key_jwt``, RFC 7523 section 2.2, the
recommended way) or a client secret (``client_secret_basic`` or ``client_secret_post``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from mcpbind.client.auth.assertion import PrivateKeyJWT
from mcpbind.client.auth.confidential import ConfidentialClient
from mcpbind.client.auth.discovery import Discovery
from mcpbind.client.auth.grant_flow import GrantAuth
from mcpbind.client.auth.stores import TokenStore
from mcpbind.oauth.tokens import TokenResponse

__all__ = ["ClientCredentials"]


class ClientCredentials(GrantAuth):
    """``httpx.Auth`` for an MCP client acting on its own behalf (no user): give it to
    ``Client.connect_url(url, auth=ClientCredentials(url, client_id=..., ...))``.

    Give ``private_key`` (a :class:`~mcpbind.client.auth.assertion.PrivateKeyJWT`, or a PEM or
    private JWK to make one with ``signing_algorithm``) for ``private_key_jwt``, or
    ``client_secret`` for ``client_secret_basic``/``client_secret_post`` (the one the authorization
    server supports; ``auth_method`` forces one). Tokens are asked for the MCP server's resource
    (RFC 8707) and made anew when they expire or are refused. ``issuer``: the authorization server
    the credentials were registered with; strongly advised, since a server could otherwise name an
    authorization server of its own and receive them. The other options are
    :class:`~mcpbind.client.auth.grant_flow.GrantAuth`'s."""

    def __init__(
        self,
        server_url: str,
        *,
        client_id: str,
        client_secret: str | None = None,
        private_key: PrivateKeyJWT | str | bytes | Mapping[str, Any] | None = None,
        signing_algorithm: str | None = None,
        auth_method: str | None = None,
        scopes: list[str] | None = None,
        issuer: str | None = None,
        store: TokenStore | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_step_ups: int = 1,
    ) -> None:
        super().__init__(
            server_url,
            scopes=scopes,
            issuer=issuer,
            store=store,
            http_client=http_client,
            max_step_ups=max_step_ups,
        )
        self.client = ConfidentialClient(
            client_id,
            client_secret=client_secret,
            private_key=private_key,
            signing_algorithm=signing_algorithm,
            auth_method=auth_method,
        )

    async def request_grant(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> TokenResponse:
        form = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        return await self.client.request_token(http, discovery.metadata, form)
