"""The user's part of the authorization code flow: someone has to visit the authorization URL
and come back with where the authorization server redirected them. An :data:`Authorizer` does
that (opens a browser and listens on a loopback redirect, prints the URL, drives a test's
authorization server...); :func:`parse_authorization_response` reads what it brings back."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

__all__ = ["AuthorizationResponse", "Authorizer", "parse_authorization_response"]

Authorizer = Callable[[str], Awaitable[str]]
"""Given the authorization URL the user must visit, return the full URL the user agent was
redirected to (the redirect URI with ``code`` and ``state``, or ``error``, and ``iss``)."""


@dataclass(frozen=True, slots=True)
class AuthorizationResponse:
    """The parameters of an authorization response (RFC 6749 section 4.1.2, RFC 9207)."""

    code: str | None
    state: str | None
    iss: str | None
    error: str | None
    error_description: str | None


def parse_authorization_response(redirected_to: str) -> AuthorizationResponse:
    """The parameters of the URL an :data:`Authorizer` returned, from its query (a parameter
    given twice counts as absent: the response is then refused as malformed by whoever needs
    it)."""
    query = parse_qs(urlsplit(redirected_to).query, keep_blank_values=True)

    def one(name: str) -> str | None:
        values = query.get(name)
        return values[0] if values is not None and len(values) == 1 else None

    return AuthorizationResponse(
        code=one("code"),
        state=one("state"),
        iss=one("iss"),
        error=one("error"),
        error_description=one("error_description"),
    )
