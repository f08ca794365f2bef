"""What the local authorization server remembers between requests: authorization codes (one use,
short-lived, bound to the client, redirect URI, PKCE challenge, scopes and resource), refresh
tokens (rotated: each is good once, RFC 9700 section 4.14.2), and PKCE's S256 check (RFC 7636
section 4.6)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

__all__ = ["CODE_LIFETIME", "Grant", "GrantStore", "pkce_matches", "valid_verifier"]

CODE_LIFETIME = 60.0
_VERIFIER = re.compile(r"[A-Za-z0-9\-._~]{43,128}")


def valid_verifier(verifier: str) -> bool:
    """A code verifier of the form RFC 7636 section 4.1 asks."""
    return _VERIFIER.fullmatch(verifier) is not None


def pkce_matches(verifier: str, challenge: str) -> bool:
    """Whether ``verifier`` hashes (S256) to ``challenge``."""
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    computed = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return hmac.compare_digest(computed, challenge)


@dataclass(frozen=True)
class Grant:
    """What a user (``subject``) granted a client: scopes, for one resource."""

    client_id: str
    subject: str
    scopes: tuple[str, ...]
    resource: str


@dataclass(frozen=True)
class PendingCode:
    grant: Grant
    redirect_uri: str
    challenge: str
    expires_at: float


class GrantStore:
    """Codes and refresh tokens, each redeemable once."""

    def __init__(self) -> None:
        self._codes: dict[str, PendingCode] = {}
        self._refresh: dict[str, Grant] = {}
        self.used_refresh_tokens: set[str] = set()

    def new_code(self, grant: Grant, redirect_uri: str, challenge: str, now: float) -> str:
        code = secrets.token_urlsafe(24)
        self._codes[code] = PendingCode(grant, redirect_uri, challenge, now + CODE_LIFETIME)
        return code

    def take_code(self, code: str, now: float) -> PendingCode | None:
        """The code's grant, forgotten as it is taken (a code works once); None for an unknown
        or expired code."""
        pending = self._codes.pop(code, None)
        if pending is None or pending.expires_at < now:
            return None
        return pending

    def new_refresh_token(self, grant: Grant) -> str:
        token = secrets.token_urlsafe(32)
        self._refresh[token] = grant
        return token

    def take_refresh_token(self, token: str) -> Grant | None:
        """The grant of a refresh token, which stops working (rotation)."""
        grant = self._refresh.pop(token, None)
        if grant is not None:
            self.used_refresh_tokens.add(token)
        return grant

    @property
    def live_refresh_tokens(self) -> int:
        return len(self._refresh)
