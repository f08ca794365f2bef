"""The local authorization server's settings and memory (:class:`AuthorizationServerState`): its
issuer, signing key, clients, scopes, the user who is signed in, and every access token it
issued (which the tests look at, and introspection answers from)."""

from __future__ import annotations

import secrets
import time
from dataclasses import dataclass, field
from typing import Any, Literal

from joserfc import jwt
from joserfc.errors import JoseError

from tests.auth.clients import ClientRegistry
from tests.auth.grants import Grant, GrantStore
from tests.auth.signing import Algorithm, SigningKey

__all__ = ["AuthorizationServerState", "IssuedToken"]


@dataclass(frozen=True)
class IssuedToken:
    """An access token issued, with the grant type it came from and its claims."""

    token: str
    grant_type: str
    claims: dict[str, Any]


@dataclass
class AuthorizationServerState:
    """``issuer`` is exactly what the metadata and tokens say (set it before serving: its port is
    the server's). ``path`` is the issuer's path (``""`` or ``"/as"``...): endpoints live under
    it, the metadata at ``/.well-known/oauth-authorization-server{path}`` (RFC 8414 section 3.1).

    ``user``: who signs in at the authorization endpoint (it approves at once).
    ``token_format``: signed JWTs, or opaque strings only introspection can tell about.
    ``clock_offset``: seconds added to the time tokens are stamped with (negative: tokens issued
    already expired, as from an authorization server whose clock is behind)."""

    algorithm: Algorithm = "RS256"
    path: str = ""
    issuer: str = ""
    scopes_supported: tuple[str, ...] = ("mcp", "x:read", "x:write")
    access_token_lifetime: int = 600
    token_format: Literal["jwt", "opaque"] = "jwt"
    user: str = "alice"
    clock_offset: float = 0.0
    key: SigningKey = field(init=False)
    clients: ClientRegistry = field(default_factory=ClientRegistry)
    grants: GrantStore = field(default_factory=GrantStore)
    issued: list[IssuedToken] = field(default_factory=list)
    authorization_requests: list[dict[str, str]] = field(default_factory=list)
    revoked: set[str] = field(default_factory=set)
    _opaque: dict[str, dict[str, Any]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.key = SigningKey(self.algorithm)

    def endpoint(self, name: str) -> str:
        return f"{self.issuer}/{name}"

    def now(self) -> float:
        return time.time() + self.clock_offset

    def grant_types_issued(self) -> list[str]:
        return [token.grant_type for token in self.issued]

    def issue_access_token(self, grant: Grant, grant_type: str) -> str:
        """A new access token for ``grant``: its audience is the grant's resource (RFC 8707
        section 2.2), its subject the user (or, for ``client_credentials``, the client)."""
        now = int(self.now())
        claims: dict[str, Any] = {
            "iss": self.issuer,
            "sub": grant.subject,
            "aud": grant.resource,
            "client_id": grant.client_id,
            "scope": " ".join(grant.scopes),
            "iat": now,
            "exp": now + self.access_token_lifetime,
            "jti": secrets.token_hex(12),
        }
        if self.token_format == "jwt":
            token = self.key.sign(claims)
        else:
            token = f"opaque-{secrets.token_urlsafe(24)}"
            self._opaque[token] = claims
        self.issued.append(IssuedToken(token, grant_type, claims))
        return token

    def claims_of(self, token: str) -> dict[str, Any] | None:
        """The claims of a token this server issued and still stands by (unexpired, unrevoked),
        checked by its own signature for a JWT; None otherwise."""
        if token in self.revoked:
            return None
        claims = self._opaque.get(token)
        if claims is None and self.token_format == "jwt":
            try:
                decoded = jwt.decode(token, self.key.key, algorithms=[self.key.algorithm])
            except (JoseError, ValueError):
                return None
            claims = dict(decoded.claims)
        if claims is None or claims.get("iss") != self.issuer:
            return None
        if not isinstance(claims.get("exp"), int) or claims["exp"] <= time.time():
            return None
        return claims
