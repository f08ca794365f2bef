"""What checks an access token for a protected server (:class:`TokenVerifier`), and the cheap
checks done before any cryptography or network call: size and characters."""

from __future__ import annotations

import re
from typing import Final, Protocol, runtime_checkable

from mcpbind.oauth.access_token import AccessToken
from mcpbind.server.auth.errors import InvalidToken

__all__ = ["DEFAULT_MAX_TOKEN_BYTES", "TokenVerifier", "check_token_text"]

# A JWT access token is a few hundred bytes to a few kilobytes; past this, refused unread.
DEFAULT_MAX_TOKEN_BYTES: Final = 8192

# RFC 6750 section 2.1: b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
_B64TOKEN: Final = re.compile(r"[A-Za-z0-9\-._~+/]+=*")


@runtime_checkable
class TokenVerifier(Protocol):
    """Checks a bearer token: :meth:`verify` returns what it grants, or raises
    :class:`~mcpbind.server.auth.errors.InvalidToken` (401 ``invalid_token``) or
    :class:`~mcpbind.server.auth.errors.VerifierUnavailable` (503). It must check that the
    token was issued for this server (its audience) and has not expired. Implement it for a
    token format or check of one's own; :class:`~mcpbind.server.auth.jwt_verifier.JWTVerifier`
    and :class:`~mcpbind.server.auth.introspection.IntrospectionVerifier` are the usual
    ones."""

    async def verify(self, token: str) -> AccessToken: ...


def check_token_text(token: str, max_bytes: int) -> None:
    """:class:`InvalidToken` for a token over ``max_bytes`` or with characters a bearer token
    cannot have."""
    if len(token) > max_bytes:
        raise InvalidToken("token too long")
    if _B64TOKEN.fullmatch(token) is None:
        raise InvalidToken("malformed token")
