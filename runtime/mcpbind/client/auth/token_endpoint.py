"""Requests to an authorization server's token endpoint (RFC 6749 section 3.2), with the client
authenticating as its registration says: ``client_secret_basic`` (HTTP Basic, section 2.3.1),
``client_secret_post`` (in the form) or ``none`` (a public client: only its ``client_id``)."""

from __future__ import annotations

import base64
from urllib.parse import quote

import httpx
import msgspec

from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import OAuthError, TokenResponse, decode_error, decode_token_response

__all__ = ["SECRET_METHODS", "choose_auth_method", "client_authentication", "request_token"]

SECRET_METHODS = ("client_secret_basic", "client_secret_post")


def choose_auth_method(metadata: AuthorizationServerMetadata, client: ClientInformation) -> str:
    """How ``client`` authenticates at the token endpoint: the method its registration names,
    else (a pre-registered client) the first the server supports that the client can do, in the
    order basic, post, none; a client without a secret is public (``none``)."""
    if client.token_endpoint_auth_method:
        return client.token_endpoint_auth_method
    if not client.client_secret:
        return "none"
    # RFC 8414 section 2: a server that lists no methods supports client_secret_basic.
    supported = metadata.token_endpoint_auth_methods_supported or ["client_secret_basic"]
    for method in SECRET_METHODS:
        if method in supported:
            return method
    return "client_secret_basic"


def _basic_credentials(client_id: str, secret: str) -> str:
    # RFC 6749 section 2.3.1: both are form-urlencoded before they are joined.
    joined = f"{quote(client_id, safe='')}:{quote(secret, safe='')}"
    return "Basic " + base64.b64encode(joined.encode()).decode("ascii")


def client_authentication(
    client: ClientInformation, method: str, form: dict[str, str]
) -> tuple[dict[str, str], dict[str, str]]:
    """The form and headers of a token request with ``client`` authenticated by ``method``.
    ``OAuthError`` (``invalid_client``) for a method needing a secret the client does not have,
    or one this module does not implement."""
    # The client_id goes in the form whatever the method: RFC 6749 section 3.2.1 allows it with
    # Basic authentication, and some servers (the official Python SDK's) look the client up by it.
    form = {**form, "client_id": client.client_id}
    headers: dict[str, str] = {}
    if method in SECRET_METHODS:
        if not client.client_secret:
            raise OAuthError("invalid_client", f"{method} needs a client secret and the client has none")
        if method == "client_secret_basic":
            headers["Authorization"] = _basic_credentials(client.client_id, client.client_secret)
        else:
            form["client_secret"] = client.client_secret
    elif method == "private_key_jwt":  # the caller signed the assertion (client/auth/assertion.py)
        if "client_assertion" not in form:
            raise OAuthError("invalid_client", "private_key_jwt needs a client_assertion in the form")
    elif method != "none":
        raise OAuthError("invalid_client", f"token endpoint authentication {method!r} is not supported")
    return form, headers


async def request_token(
    http: httpx.AsyncClient,
    metadata: AuthorizationServerMetadata,
    client: ClientInformation,
    form: dict[str, str],
    *,
    auth_method: str | None = None,
) -> TokenResponse:
    """POST ``form`` (``grant_type`` and the grant's parameters) to the token endpoint with the
    client authenticated (``auth_method``, else :func:`choose_auth_method`) and return the token
    response. ``OAuthError``: the server's error (``invalid_grant``, ...), or ``invalid_response``
    for an answer that is neither a token response nor an OAuth error."""
    if not metadata.token_endpoint:
        raise OAuthError("discovery_failed", "the authorization server's metadata has no token_endpoint")
    method = auth_method or choose_auth_method(metadata, client)
    body, headers = client_authentication(client, method, form)
    headers["Accept"] = "application/json"
    response = await http.post(metadata.token_endpoint, data=body, headers=headers)
    if response.status_code != 200:
        raise decode_error(response.content, response.status_code)
    try:
        token = decode_token_response(response.content)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise OAuthError(
            "invalid_response", f"the token endpoint's answer is not a token response ({exc})"
        ) from None
    if token.token_type.lower() != "bearer":
        raise OAuthError(
            "invalid_response", f"token type {token.token_type!r} is not supported (only Bearer)"
        )
    return token
