"""Token endpoint answers: a successful token response (RFC 6749 section 5.1) and an OAuth error
(section 5.2, the same shape as the registration and introspection errors)."""

from __future__ import annotations

import msgspec

__all__ = ["OAuthError", "OAuthErrorResponse", "TokenResponse", "decode_error", "decode_token_response"]


class TokenResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    """``expires_in``: seconds from when it was issued; ``scope``: space-separated, present when
    it differs from the scopes asked for."""

    access_token: str
    token_type: str
    expires_in: int | None = None
    refresh_token: str | None = None
    scope: str | None = None
    id_token: str | None = None
    issued_token_type: str | None = None


class OAuthErrorResponse(msgspec.Struct, kw_only=True, omit_defaults=True):
    error: str
    error_description: str | None = None
    error_uri: str | None = None


class OAuthError(Exception):
    """An OAuth step failed: ``error`` is the OAuth error code (``invalid_grant``, ...) or one of
    mcpbind's (``discovery_failed``, ``registration_failed``, ...); ``description`` says more.
    ``status`` is the HTTP status that carried it, where there was one."""

    def __init__(self, error: str, description: str | None = None, *, status: int | None = None) -> None:
        self.error = error
        self.description = description
        self.status = status
        super().__init__(f"{error}: {description}" if description else error)


_token_decoder = msgspec.json.Decoder(TokenResponse)
_error_decoder = msgspec.json.Decoder(OAuthErrorResponse)


def decode_token_response(body: bytes) -> TokenResponse:
    """Parse a successful token response. The ``token_type`` is compared case-insensitively by
    whoever uses it (RFC 6749 section 7.1)."""
    return _token_decoder.decode(body)


def decode_error(body: bytes, status: int) -> OAuthError:
    """The :class:`OAuthError` an error answer carries; ``invalid_response`` with the status when
    the body is not an OAuth error object."""
    try:
        parsed = _error_decoder.decode(body)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return OAuthError("invalid_response", f"HTTP {status} without an OAuth error object", status=status)
    return OAuthError(parsed.error, parsed.error_description, status=status)
