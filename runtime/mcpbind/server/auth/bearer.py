"""The bearer token of an HTTP request (RFC 6750 section 2.1: the ``Authorization`` header,
nowhere else), and the answers refusing one: 401 with a ``WWW-Authenticate`` challenge naming
the Protected Resource Metadata, 403 ``insufficient_scope`` with the scopes needed, 400 for a
malformed request. No answer says more than the error code: nothing of the token, nor why it
failed."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final
from urllib.parse import parse_qsl

import msgspec

from mcpbind.oauth.challenge import format_challenge
from mcpbind.transports.http.server import Send

Headers = list[tuple[bytes, bytes]]

__all__ = ["MalformedRequest", "bearer_token", "challenge_header", "send_refusal"]

_DESCRIPTIONS: Final = {
    "invalid_request": "The request is malformed: send the access token in the Authorization header only",
    "invalid_token": "The access token is missing, invalid or expired",
    "insufficient_scope": "The access token does not grant the scopes this request needs",
    "temporarily_unavailable": "Access tokens cannot be verified right now",
}


class MalformedRequest(Exception):
    """A request whose credentials are malformed (400 ``invalid_request``)."""


def bearer_token(headers: Iterable[tuple[bytes, bytes]], query_string: bytes) -> str | None:
    """The access token a request carries in ``Authorization: Bearer``; ``None`` when it
    carries none (no header, or another scheme). :class:`MalformedRequest` for a token in the
    query string (RFC 6750 section 2.3, which MCP forbids), several ``Authorization`` headers,
    or a ``Bearer`` header without a token."""
    if query_string and b"access_token" in query_string:
        names = {name for name, _ in parse_qsl(query_string.decode("latin-1"), keep_blank_values=True)}
        if "access_token" in names:
            raise MalformedRequest("access token in the query string")
    found: bytes | None = None
    for name, value in headers:
        if name == b"authorization":
            if found is not None:
                raise MalformedRequest("several Authorization headers")
            found = value
    if found is None:
        return None
    scheme, _, token = found.strip().partition(b" ")
    if scheme.lower() != b"bearer":
        return None
    token = token.strip()
    if not token:
        raise MalformedRequest("Bearer without a token")
    return token.decode("latin-1")


def challenge_header(
    resource_metadata: str, *, error: str | None = None, scopes: Iterable[str] = ()
) -> tuple[bytes, bytes]:
    """The ``WWW-Authenticate`` header of a refusal."""
    scope = " ".join(sorted(scopes)) or None
    value = format_challenge("Bearer", error=error, scope=scope, resource_metadata=resource_metadata)
    return (b"www-authenticate", value.encode("latin-1"))


async def send_refusal(send: Send, status: int, error: str | None, headers: Headers) -> None:
    """Answer with ``status``, ``headers`` and an OAuth error body (RFC 6749 section 5.2's
    members) that says only what the error code says."""
    code = error or "invalid_token"
    body = msgspec.json.encode({"error": code, "error_description": _DESCRIPTIONS.get(code, code)})
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", b"%d" % len(body)),
                (b"cache-control", b"no-store"),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
