"""Token introspection (RFC 7662): a confidential client (a resource server) asks whether an
access token is active; the answer carries the token's claims, or only ``active: false`` for a
token unknown, expired or revoked (section 2.2: nothing more is said of those)."""

from __future__ import annotations

from tests.auth.asgi import Request, Response, json_response, oauth_error
from tests.auth.clients import ClientError
from tests.auth.state import AuthorizationServerState

__all__ = ["introspect"]


def introspect(state: AuthorizationServerState, request: Request) -> Response:
    if request.method != "POST":
        return oauth_error("invalid_request", "use POST", 405, ("allow", "POST"))
    form = request.form()
    try:
        client = state.clients.authenticate(request, form)
    except ClientError as refused:
        return oauth_error(
            refused.error, refused.description, 401, ("www-authenticate", 'Basic realm="introspect"')
        )
    if client.secret is None:
        return oauth_error("invalid_client", "only confidential clients may introspect", 401)
    if "token" not in form:
        return oauth_error("invalid_request", "the token parameter is required")
    claims = state.claims_of(form["token"])
    if claims is None:
        return json_response({"active": False})
    return json_response({"active": True, "token_type": "Bearer", **claims})
