"""Cross-app access (MCP's Enterprise-Managed Authorization extension, SEP-990): a user signed in
to the MCP client through their enterprise identity provider (IdP); the client exchanges that
sign-in's ID token at the IdP for an Identity Assertion JWT Authorization Grant (ID-JAG: RFC 8693
token exchange), then presents the ID-JAG to the MCP server's authorization server as a JWT
authorization grant (RFC 7523 section 2.1) for an access token. No browser is involved after the
sign-in; the IdP's policy decides which MCP servers the user may reach."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import Any

import httpx
import msgspec

from mcpbind.client.auth.assertion import PrivateKeyJWT
from mcpbind.client.auth.confidential import ConfidentialClient
from mcpbind.client.auth.discovery import Discovery, check_secure, fetch_authorization_server_metadata
from mcpbind.client.auth.grant_flow import GrantAuth
from mcpbind.client.auth.stores import TokenStore
from mcpbind.client.auth.token_endpoint import client_authentication
from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import OAuthError, TokenResponse, decode_error, decode_token_response

__all__ = ["ID_JAG_TOKEN_TYPE", "CrossAppAccess", "exchange_for_id_jag"]

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
ID_JAG_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id-jag"
ID_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:id_token"

IdToken = str | Callable[[], Awaitable[str]]


async def exchange_for_id_jag(
    http: httpx.AsyncClient,
    token_endpoint: str,
    *,
    subject_token: str,
    audience: str,
    resource: str | None,
    scope: str | None,
    client: ClientInformation,
    auth_method: str,
    subject_token_type: str = ID_TOKEN_TYPE,
) -> str:
    """The ID-JAG the IdP issues for ``subject_token`` (the user's ID token), for the
    authorization server ``audience`` (its issuer) and the MCP server ``resource``. ``client``:
    the MCP client as registered at the IdP, authenticated by ``auth_method``. ``OAuthError`` on
    the IdP's refusal, or an answer that carries no ID-JAG."""
    form = {
        "grant_type": TOKEN_EXCHANGE,
        "requested_token_type": ID_JAG_TOKEN_TYPE,
        "subject_token": subject_token,
        "subject_token_type": subject_token_type,
        "audience": audience,
    }
    if resource:
        form["resource"] = resource
    if scope:
        form["scope"] = scope
    body, headers = client_authentication(client, auth_method, form)
    headers["Accept"] = "application/json"
    response = await http.post(token_endpoint, data=body, headers=headers)
    if response.status_code != 200:
        raise decode_error(response.content, response.status_code)
    try:
        answer: TokenResponse = decode_token_response(response.content)
    except (msgspec.DecodeError, msgspec.ValidationError):
        raise OAuthError(
            "invalid_response", "the identity provider's answer is not a token response"
        ) from None
    # RFC 8693 section 2.2.1: issued_token_type is required; the ID-JAG travels as access_token.
    if answer.issued_token_type != ID_JAG_TOKEN_TYPE:
        raise OAuthError(
            "invalid_response", f"the identity provider issued {answer.issued_token_type!r}, not an ID-JAG"
        )
    return answer.access_token


class CrossAppAccess(GrantAuth):
    """``httpx.Auth`` for an MCP client whose user signed in through an enterprise IdP.

    ``id_token``: the ID token of that sign-in, or an async function returning a current one
    (called for each grant, so that it can sign the user in again when it expired).
    ``idp_token_endpoint`` (or ``idp_issuer``, whose OpenID/OAuth metadata names it): where the
    token exchange goes; ``idp_client_id``/``idp_client_secret``: the MCP client as registered at
    the IdP (``idp_auth_method``, default ``client_secret_post`` with a secret, else ``none``).
    ``client_id`` with ``client_secret`` and/or ``private_key``: the MCP client as registered at
    the MCP server's authorization server (see
    :class:`~mcpbind.client.auth.confidential.ConfidentialClient`). The other options are
    :class:`~mcpbind.client.auth.grant_flow.GrantAuth`'s; ``scopes`` go in both requests."""

    def __init__(
        self,
        server_url: str,
        *,
        id_token: IdToken,
        idp_client_id: str,
        idp_token_endpoint: str | None = None,
        idp_issuer: str | None = None,
        idp_client_secret: str | None = None,
        idp_auth_method: str | None = None,
        client_id: str,
        client_secret: str | None = None,
        private_key: PrivateKeyJWT | str | bytes | Mapping[str, Any] | None = None,
        auth_method: str | None = None,
        scopes: list[str] | None = None,
        issuer: str | None = None,
        store: TokenStore | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_step_ups: int = 1,
    ) -> None:
        if idp_token_endpoint is None and idp_issuer is None:
            raise ValueError(
                "cross-app access needs the identity provider's idp_token_endpoint or idp_issuer"
            )
        super().__init__(
            server_url,
            scopes=scopes,
            issuer=issuer,
            store=store,
            http_client=http_client,
            max_step_ups=max_step_ups,
        )
        self.id_token = id_token
        self.idp_token_endpoint = idp_token_endpoint
        self.idp_issuer = idp_issuer
        self.idp_client = ClientInformation(client_id=idp_client_id, client_secret=idp_client_secret)
        self.idp_auth_method = idp_auth_method or ("client_secret_post" if idp_client_secret else "none")
        self.client = ConfidentialClient(
            client_id, client_secret=client_secret, private_key=private_key, auth_method=auth_method
        )

    async def _subject_token(self) -> str:
        return self.id_token if isinstance(self.id_token, str) else await self.id_token()

    async def _idp_endpoint(self, http: httpx.AsyncClient) -> str:
        """The IdP's token endpoint; ``https`` off the loopback interface, since the user's ID
        token goes there."""
        if self.idp_token_endpoint is None:
            assert self.idp_issuer is not None
            metadata = await fetch_authorization_server_metadata(http, self.idp_issuer)
            if metadata is None or not metadata.token_endpoint:
                raise OAuthError(
                    "discovery_failed", f"no token endpoint found for the identity provider {self.idp_issuer}"
                )
            self.idp_token_endpoint = metadata.token_endpoint
        endpoint = self.idp_token_endpoint
        check_secure(AuthorizationServerMetadata(issuer=self.idp_issuer or endpoint, token_endpoint=endpoint))
        return endpoint

    async def request_grant(
        self, http: httpx.AsyncClient, discovery: Discovery, scope: str | None
    ) -> TokenResponse:
        jag = await exchange_for_id_jag(
            http,
            await self._idp_endpoint(http),
            subject_token=await self._subject_token(),
            audience=discovery.metadata.issuer,
            resource=discovery.resource,
            scope=scope,
            client=self.idp_client,
            auth_method=self.idp_auth_method,
        )
        form = {"grant_type": JWT_BEARER, "assertion": jag, "resource": discovery.resource}
        if scope:
            form["scope"] = scope
        return await self.client.request_token(http, discovery.metadata, form)
