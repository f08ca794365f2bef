"""The token endpoint (RFC 6749 section 3.2, OAuth 2.1 section 4): the ``authorization_code``
grant (the redirect URI of the authorization request, the PKCE verifier, the resource), the
``refresh_token`` grant (rotating: each refresh token works once; scopes may only shrink) and the
``client_credentials`` grant of confidential clients. Every access token's audience is the
``resource`` it was asked for (RFC 8707)."""

from __future__ import annotations

from tests.auth.asgi import Request, Response, json_response, oauth_error
from tests.auth.clients import Client, ClientError
from tests.auth.grants import Grant, pkce_matches, valid_verifier
from tests.auth.state import AuthorizationServerState

__all__ = ["token"]


class _Refused(Exception):
    def __init__(self, error: str, description: str) -> None:
        super().__init__(description)
        self.error = error
        self.description = description


def _scopes(
    state: AuthorizationServerState, requested: str | None, allowed: tuple[str, ...] | None
) -> tuple[str, ...]:
    """The scopes of a token request: those asked for (each supported, and within ``allowed``
    when given), else all of ``allowed``."""
    if requested is None:
        return allowed or ()
    scopes = tuple(requested.split())
    limit = set(allowed) if allowed is not None else set(state.scopes_supported)
    if not set(scopes) <= limit:
        raise _Refused("invalid_scope", "scope beyond what may be granted")
    return scopes


def _check_resource(form: dict[str, str], grant: Grant) -> None:
    resource = form.get("resource")
    if resource is not None and resource != grant.resource:
        raise _Refused("invalid_target", "resource differs from the one authorized")


def _authorization_code(state: AuthorizationServerState, client: Client, form: dict[str, str]) -> Grant:
    pending = state.grants.take_code(form.get("code", ""), state.now())
    if pending is None or pending.grant.client_id != client.client_id:
        raise _Refused("invalid_grant", "unknown, used or expired code")
    if form.get("redirect_uri") != pending.redirect_uri:
        raise _Refused("invalid_grant", "redirect_uri differs from the authorization request's")
    verifier = form.get("code_verifier", "")
    if not valid_verifier(verifier) or not pkce_matches(verifier, pending.challenge):
        raise _Refused("invalid_grant", "PKCE verification failed")
    _check_resource(form, pending.grant)
    return pending.grant


def _refresh(state: AuthorizationServerState, client: Client, form: dict[str, str]) -> Grant:
    grant = state.grants.take_refresh_token(form.get("refresh_token", ""))
    if grant is None or grant.client_id != client.client_id:
        raise _Refused("invalid_grant", "unknown or already used refresh token")
    _check_resource(form, grant)
    scopes = _scopes(state, form.get("scope"), grant.scopes)
    return Grant(grant.client_id, grant.subject, scopes, grant.resource)


def _client_credentials(state: AuthorizationServerState, client: Client, form: dict[str, str]) -> Grant:
    if client.secret is None:
        raise _Refused("unauthorized_client", "client_credentials needs a confidential client")
    resource = form.get("resource")
    if not resource:
        raise _Refused("invalid_target", "the resource parameter (RFC 8707) is required")
    return Grant(client.client_id, client.client_id, _scopes(state, form.get("scope"), None), resource)


def _grant(state: AuthorizationServerState, client: Client, form: dict[str, str]) -> tuple[str, Grant]:
    grant_type = form.get("grant_type", "")
    if grant_type not in client.grant_types:
        raise _Refused("unauthorized_client", f"the client may not use {grant_type!r}")
    if grant_type == "authorization_code":
        return grant_type, _authorization_code(state, client, form)
    if grant_type == "refresh_token":
        return grant_type, _refresh(state, client, form)
    if grant_type == "client_credentials":
        return grant_type, _client_credentials(state, client, form)
    raise _Refused("unsupported_grant_type", f"{grant_type!r}")


def token(state: AuthorizationServerState, request: Request) -> Response:
    if request.method != "POST":
        return oauth_error("invalid_request", "use POST", 405, ("allow", "POST"))
    if request.content_type != "application/x-www-form-urlencoded":
        return oauth_error("invalid_request", "the body must be form-encoded")
    if request.form_repeats():
        return oauth_error("invalid_request", "repeated parameters")
    form = request.form()
    try:
        client = state.clients.authenticate(request, form)
    except ClientError as refused:
        headers = (("www-authenticate", 'Basic realm="token"'),) if refused.error == "invalid_client" else ()
        return oauth_error(
            refused.error, refused.description, 401 if refused.error == "invalid_client" else 400, *headers
        )
    try:
        grant_type, grant = _grant(state, client, form)
    except _Refused as refused:
        return oauth_error(refused.error, refused.description)
    answer = {
        "access_token": state.issue_access_token(grant, grant_type),
        "token_type": "Bearer",
        "expires_in": state.access_token_lifetime,
        "scope": " ".join(grant.scopes),
    }
    if grant_type != "client_credentials" and "refresh_token" in client.grant_types:
        answer["refresh_token"] = state.grants.new_refresh_token(grant)
    return json_response(answer)
