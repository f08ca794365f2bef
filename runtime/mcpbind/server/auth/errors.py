"""Why a token was not accepted. The reason is for the server's own log at most: the peer is
told only ``invalid_token`` (RFC 6750 section 3.1), never why."""

from __future__ import annotations

__all__ = ["InvalidToken", "VerifierUnavailable"]


class InvalidToken(Exception):
    """The token is not one this server accepts (malformed, badly signed, expired, for another
    audience or issuer, inactive...): 401 ``invalid_token``."""


class VerifierUnavailable(Exception):
    """The token could not be checked for want of the authorization server (its key set or
    introspection endpoint did not answer): 503, the client may retry."""
