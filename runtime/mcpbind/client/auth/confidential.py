"""A confidential client's credentials at an authorization server (pre-registered: a secret, a
private key, or both) and their use on token requests: ``private_key_jwt`` (RFC 7523 section 2.2)
or ``client_secret_basic``/``client_secret_post`` (RFC 6749 section 2.3.1), whichever the server
supports. The grants of clients without a user (client credentials, cross-app access) share it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from mcpbind.client.auth.assertion import PrivateKeyJWT
from mcpbind.client.auth.token_endpoint import SECRET_METHODS, choose_auth_method, request_token
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import TokenResponse

__all__ = ["PRIVATE_KEY_JWT", "ConfidentialClient"]

PRIVATE_KEY_JWT = "private_key_jwt"


class ConfidentialClient:
    """``client_id`` with ``client_secret`` and/or ``private_key`` (a
    :class:`~mcpbind.client.auth.assertion.PrivateKeyJWT`, or a PEM or private JWK to make one
    with ``signing_algorithm``). ``auth_method`` forces a method; by default a key is used where
    the server accepts ``private_key_jwt`` (or names no methods), else the secret."""

    def __init__(
        self,
        client_id: str,
        *,
        client_secret: str | None = None,
        private_key: PrivateKeyJWT | str | bytes | Mapping[str, Any] | None = None,
        signing_algorithm: str | None = None,
        auth_method: str | None = None,
    ) -> None:
        if private_key is not None and not isinstance(private_key, PrivateKeyJWT):
            private_key = PrivateKeyJWT(private_key, algorithm=signing_algorithm)
        if private_key is None and client_secret is None:
            raise ValueError("client credentials need a client_secret or a private_key")
        if auth_method == PRIVATE_KEY_JWT and private_key is None:
            raise ValueError("private_key_jwt needs a private_key")
        if auth_method in SECRET_METHODS and client_secret is None:
            raise ValueError(f"{auth_method} needs a client_secret")
        self.information = ClientInformation(client_id=client_id, client_secret=client_secret)
        self.private_key = private_key
        self.auth_method = auth_method

    @property
    def client_id(self) -> str:
        return self.information.client_id

    def __repr__(self) -> str:  # never the secret
        return f"ConfidentialClient({self.client_id!r}, auth_method={self.auth_method!r})"

    def choose_method(self, metadata: AuthorizationServerMetadata) -> str:
        """How to authenticate at this server."""
        if self.auth_method is not None:
            return self.auth_method
        supported = metadata.token_endpoint_auth_methods_supported
        if self.private_key is not None and (
            self.information.client_secret is None or not supported or PRIVATE_KEY_JWT in supported
        ):
            return PRIVATE_KEY_JWT
        return choose_auth_method(metadata, self.information)

    async def request_token(
        self, http: httpx.AsyncClient, metadata: AuthorizationServerMetadata, form: dict[str, str]
    ) -> TokenResponse:
        """POST ``form`` to the server's token endpoint with this client authenticated."""
        method = self.choose_method(metadata)
        if method == PRIVATE_KEY_JWT:
            assert self.private_key is not None
            # RFC 7523 section 3: the assertion's "sub" names the client (client_id may go too).
            form = {**form, **self.private_key.form(self.client_id, metadata)}
        return await request_token(http, metadata, self.information, form, auth_method=method)
