"""The authorization endpoint (RFC 6749 section 4.1.1, OAuth 2.1): the user is taken to be
signed in and to approve at once, so a good request is redirected straight back to the client
with ``code``, ``state`` and ``iss`` (RFC 9207). What is checked first:

- the client and its ``redirect_uri`` (a registered one; for a loopback redirect any port,
  OAuth 2.1 section 8.4.2): without them there is nowhere safe to send an error, so it is a
  400 page;
- then, answered by a redirect with ``error``: ``response_type=code``, a PKCE S256 challenge
  (43 characters of base64url), the ``resource`` (RFC 8707: an absolute URI without fragment),
  and scopes the server supports."""

from __future__ import annotations

import re
from urllib.parse import urlsplit

from tests.auth.asgi import Request, Response, redirect, with_query
from tests.auth.clients import Client
from tests.auth.grants import Grant
from tests.auth.state import AuthorizationServerState

__all__ = ["authorize", "redirect_uri_matches"]

_LOOPBACK = ("127.0.0.1", "::1", "localhost")
_CHALLENGE = re.compile(r"[A-Za-z0-9_-]{43}")


def redirect_uri_matches(registered: str, presented: str) -> bool:
    """Exact match, except the port of a loopback http redirect (RFC 8252 section 7.3)."""
    if registered == presented:
        return True
    ours, theirs = urlsplit(registered), urlsplit(presented)
    if ours.scheme != "http" or ours.hostname not in _LOOPBACK:
        return False
    return (theirs.scheme, theirs.hostname, theirs.path, theirs.query) == (
        ours.scheme,
        ours.hostname,
        ours.path,
        ours.query,
    )


def _page(status: int, text: str) -> Response:
    return Response(status, text.encode(), (("content-type", "text/plain; charset=utf-8"),))


def _redirect_uri(client: Client, query: dict[str, str]) -> str | None:
    presented = query.get("redirect_uri")
    if presented is None:  # allowed when the client registered exactly one
        return client.redirect_uris[0] if len(client.redirect_uris) == 1 else None
    if any(redirect_uri_matches(uri, presented) for uri in client.redirect_uris):
        return presented
    return None


def _problem(
    state: AuthorizationServerState, query: dict[str, str], client: Client
) -> tuple[str, str] | None:
    """The error to redirect with, if any: (``error``, ``error_description``)."""
    if query.get("response_type") != "code":
        return "unsupported_response_type", "only response_type=code"
    if "authorization_code" not in client.grant_types:
        return "unauthorized_client", "the client did not register for the authorization code grant"
    if query.get("code_challenge_method") != "S256":
        return "invalid_request", "PKCE with code_challenge_method=S256 is required"
    if _CHALLENGE.fullmatch(query.get("code_challenge", "")) is None:
        return "invalid_request", "code_challenge must be a base64url SHA-256 digest"
    resource = query.get("resource")
    if resource is None:
        return "invalid_target", "the resource parameter (RFC 8707) is required"
    parts = urlsplit(resource)
    if not parts.scheme or not parts.netloc or parts.fragment or "#" in resource:
        return "invalid_target", "resource must be an absolute URI without fragment"
    unknown = set(query.get("scope", "").split()) - set(state.scopes_supported)
    if unknown:
        return "invalid_scope", f"unknown scopes: {' '.join(sorted(unknown))}"
    return None


def authorize(state: AuthorizationServerState, request: Request) -> Response:
    if request.method != "GET":
        return _page(405, "use GET")
    query = request.query
    state.authorization_requests.append(dict(query))
    if request.repeated:
        return _page(400, f"repeated parameters: {' '.join(sorted(request.repeated))}")
    client = state.clients.clients.get(query.get("client_id", ""))
    if client is None:
        return _page(400, "unknown client_id")
    redirect_uri = _redirect_uri(client, query)
    if redirect_uri is None:
        return _page(400, "redirect_uri is not one the client registered")
    answer = {"iss": state.issuer}
    if "state" in query:
        answer["state"] = query["state"]
    problem = _problem(state, query, client)
    if problem is not None:
        error, description = problem
        return redirect(
            with_query(redirect_uri, {"error": error, "error_description": description, **answer})
        )
    grant = Grant(
        client_id=client.client_id,
        subject=state.user,
        scopes=tuple(query.get("scope", "").split()),
        resource=query["resource"],
    )
    code = state.grants.new_code(grant, redirect_uri, query["code_challenge"], state.now())
    return redirect(with_query(redirect_uri, {"code": code, **answer}))
