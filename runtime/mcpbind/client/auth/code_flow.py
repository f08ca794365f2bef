"""The two grants of an interactive client: the authorization code grant with PKCE (RFC 6749
section 4.1, RFC 7636), the ``resource`` parameter (RFC 8707) and issuer identification
(RFC 9207: a present ``iss`` is checked before the code goes anywhere), and the refresh token
grant (RFC 6749 section 6)."""

from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

import httpx

from mcpbind.client.auth.authorizer import Authorizer, parse_authorization_response
from mcpbind.client.auth.discovery import Discovery
from mcpbind.client.auth.pkce import new_pkce, random_token
from mcpbind.client.auth.stores import StoredTokens
from mcpbind.client.auth.token_endpoint import request_token
from mcpbind.oauth.registration import ClientInformation
from mcpbind.oauth.tokens import OAuthError

__all__ = ["authorization_code_grant", "authorization_url", "check_pkce_support", "refresh_grant"]


def authorization_url(endpoint: str, params: dict[str, str]) -> str:
    """``endpoint`` with ``params`` added to the query it may already have (RFC 6749 section
    3.1)."""
    parts = urlsplit(endpoint)
    query = parse_qsl(parts.query, keep_blank_values=True) + list(params.items())
    return urlunsplit((parts.scheme, parts.netloc, parts.path, urlencode(query), ""))


def check_pkce_support(discovery: Discovery) -> None:
    """MCP clients refuse an authorization server whose metadata does not list S256 among its
    ``code_challenge_methods_supported`` (default endpoints assumed for a 2025-03-26 server are
    taken to support it)."""
    methods = discovery.metadata.code_challenge_methods_supported
    if not discovery.synthesized and (not methods or "S256" not in methods):
        raise OAuthError(
            "pkce_unsupported",
            f"{discovery.issuer} does not advertise PKCE with S256 (code_challenge_methods_supported: {methods})",
        )


async def authorization_code_grant(
    http: httpx.AsyncClient,
    discovery: Discovery,
    client: ClientInformation,
    authorize: Authorizer,
    *,
    redirect_uri: str,
    scope: str | None,
) -> StoredTokens:
    """Send the user through the authorization endpoint and redeem the code they come back with.
    ``OAuthError``: ``invalid_issuer`` (the response names another authorization server, or none
    where the server promised to), ``invalid_state``, the authorization server's error, or the
    token endpoint's."""
    metadata = discovery.metadata
    if not metadata.authorization_endpoint:
        raise OAuthError("discovery_failed", f"{discovery.issuer} publishes no authorization_endpoint")
    check_pkce_support(discovery)
    pkce, state = new_pkce(), random_token(32)
    params = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "state": state,
        "code_challenge": pkce.challenge,
        "code_challenge_method": pkce.method,
        "resource": discovery.resource,
    }
    if scope:
        params["scope"] = scope
    answer = parse_authorization_response(
        await authorize(authorization_url(metadata.authorization_endpoint, params))
    )
    # RFC 9207 section 2.4, before anything else of the response is acted on (an error too).
    if answer.iss is not None:
        if answer.iss != metadata.issuer:
            raise OAuthError(
                "invalid_issuer",
                f"the authorization response comes from issuer {answer.iss!r}, not {metadata.issuer!r}; "
                "the code was not redeemed",
            )
    elif metadata.authorization_response_iss_parameter_supported:
        raise OAuthError(
            "invalid_issuer",
            f"{metadata.issuer} promises an iss parameter and the authorization response has none",
        )
    if answer.state != state:
        raise OAuthError("invalid_state", "the authorization response's state is not the one sent")
    if answer.error is not None:
        raise OAuthError(answer.error, answer.error_description)
    if not answer.code:
        raise OAuthError("invalid_response", "the authorization response has no code")
    form = {
        "grant_type": "authorization_code",
        "code": answer.code,
        "redirect_uri": redirect_uri,
        "code_verifier": pkce.verifier,
        "resource": discovery.resource,
    }
    response = await request_token(http, metadata, client, form)
    return StoredTokens.from_response(response, requested_scope=scope)


async def refresh_grant(
    http: httpx.AsyncClient, discovery: Discovery, client: ClientInformation, tokens: StoredTokens
) -> StoredTokens:
    """New tokens for ``tokens``'s refresh token (which must be set). ``OAuthError`` when the
    server refuses it."""
    if not tokens.refresh_token:
        raise OAuthError("invalid_grant", "there is no refresh token")
    form = {
        "grant_type": "refresh_token",
        "refresh_token": tokens.refresh_token,
        "resource": discovery.resource,
    }
    response = await request_token(http, discovery.metadata, client, form)
    return StoredTokens.from_response(
        response, requested_scope=tokens.scope, previous_refresh_token=tokens.refresh_token
    )
