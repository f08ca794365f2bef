"""Machine-to-machine authorization (MCP's OAuth Client Credentials extension, SEP-1046): a client
with pre-registered credentials gets its tokens with the ``client_credentials`` grant (OAuth 2.1
section 4.2), authenticating with a signed JWT (``private_key_jwt``, RFC 7523 section 2.2, the
recommended way) or a client secret (``client_secret_basic`` or ``client_secret_post``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from mcpbind.client.auth.assertion import PrivateKeyJWT
from mcpbind.client.auth.discovery import Discovery
from mcpbind.client.auth.grant_flow import GrantAuth
from mcpbind.client.auth.stores import TokenStore
from mcpbind.client.auth.token_endpoint import SECRET_METHODS, choose_auth_method, request_token
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import TokenResponse

__all__ = ["ClientCredentials"]

PRIVATE_KEY_JWT = "private_key_jwt"


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
        if private_key is not None and not isinstance(private_key, PrivateKeyJWT):
            private_key = PrivateKeyJWT(private_key, algorithm=signing_algorithm)
        if private_key is None and client_secret is None:
            raise ValueError("client credentials need a client_secret or a private_key")
        if auth_method == PRIVATE_KEY_JWT and private_key is None:
            raise ValueError("private_key_jwt needs a private_key")
        if auth_method in SECRET_METHODS and client_secret is None:
            raise ValueError(f"{auth_method} needs a client_secret")
        self.client = ClientInformation(client_id=client_id, client_secret=client_secret)
        self.private_key = private_key
        self.auth_method = auth_method

    def choose_method(self, metadata: AuthorizationServerMetadata) -> str:
        """How to authenticate at this server: ``auth_method`` when given; else
        ``private_key_jwt`` with a key (unless the server lists methods without it and a secret
        can do instead); else the secret method the server supports."""
        if self.auth_method is not None:
            return self.auth_method
        supported = metadata.token_endpoint_auth_methods_supported
        if self.private_key is not None and (
            self.client.client_secret is None or not supported or PRIVATE_KEY_JWT in supported
        ):
            return PRIVATE_KEY_JWT
        return choose_auth_method(metadata, self.client)

    async def request_grant(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> TokenResponse:
        form = {"grant_type": "client_credentials", "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        method = self.choose_method(discovery.metadata)
        if method == PRIVATE_KEY_JWT:
            assert self.private_key is not None
            # RFC 7523 section 3: the assertion's "sub" names the client; no client_id in the form.
            form.update(self.private_key.form(self.client.client_id, discovery.metadata))
        return await request_token(http, discovery.metadata, self.client, form, auth_method=method)
