"""Checking the claims of an access token (a JWT's payload, RFC 9068, or an introspection
answer, RFC 7662) against what this resource server accepts: the issuer, the audience (this
server, RFC 8707), the time window; and reading who it stands for and what it grants."""

from __future__ import annotations

import time
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from mcpbind.oauth.access_token import AccessToken
from mcpbind.server.auth.errors import InvalidToken

__all__ = ["ClaimRules", "audiences_for"]


def canonical_resource(url: str) -> str:
    """``url`` as a resource identifier is compared: scheme and host in lower case (MCP asks
    servers to accept them in upper case), without a trailing slash (with or without one, an
    origin-only URL names the same server)."""
    parts = urlsplit(url)
    if not parts.scheme or not parts.netloc:
        return url
    path = parts.path.rstrip("/") if parts.path.endswith("/") else parts.path
    return urlunsplit((parts.scheme.lower(), parts.netloc.lower(), path, parts.query, ""))


def audiences_for(resource: str) -> frozenset[str]:
    """The ``aud`` values (compared as :func:`canonical_resource` makes them) that name
    ``resource``."""
    return frozenset({canonical_resource(resource)})


def _number(claims: Mapping[str, Any], name: str) -> float | None:
    value = claims.get(name)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidToken(f"the {name} claim is not a number")
    return float(value)


def _text(claims: Mapping[str, Any], name: str) -> str | None:
    value = claims.get(name)
    if value is None:
        return None
    if not isinstance(value, str):
        raise InvalidToken(f"the {name} claim is not a string")
    return value


def _scopes(claims: Mapping[str, Any]) -> frozenset[str]:
    scope = claims.get("scope")
    if scope is None:
        scope = claims.get("scp")  # (a list, in some servers' tokens)
    if scope is None:
        return frozenset()
    if isinstance(scope, str):
        return frozenset(scope.split())
    if isinstance(scope, list) and all(isinstance(item, str) for item in scope):
        return frozenset(scope)
    raise InvalidToken("the scope claim is neither a string nor a list of strings")


@dataclass(frozen=True, slots=True)
class ClaimRules:
    """What a token's claims must say: ``issuer`` exactly (``None``: not checked, for an
    introspection endpoint that does not say), an ``aud`` naming one of ``audiences``
    (compared as :func:`canonical_resource` makes them; required unless ``require_audience``
    is false, then checked where present), ``exp`` (if
    ``require_expiry``) not past and ``nbf``/``iat`` not in the future, each with ``leeway``
    seconds of clock skew."""

    issuer: str | None
    audiences: Collection[str]
    leeway: float = 60.0
    require_expiry: bool = True
    require_audience: bool = True

    def check(self, claims: Mapping[str, Any], token: str) -> AccessToken:
        """The :class:`AccessToken` the claims describe; :class:`InvalidToken` if they do not
        pass."""
        now = time.time()
        expires = _number(claims, "exp")
        if expires is None:
            if self.require_expiry:
                raise InvalidToken("no exp claim")
        elif now > expires + self.leeway:
            raise InvalidToken("expired")
        not_before = _number(claims, "nbf")
        if not_before is not None and now + self.leeway < not_before:
            raise InvalidToken("not valid yet (nbf)")
        issued = _number(claims, "iat")
        if issued is not None and now + self.leeway < issued:
            raise InvalidToken("issued in the future (iat)")
        issuer = _text(claims, "iss")
        if self.issuer is not None and issuer != self.issuer:
            raise InvalidToken("issued by another authorization server")
        raw_audience = claims.get("aud")
        if isinstance(raw_audience, str):
            audience: tuple[str, ...] = (raw_audience,)
        elif isinstance(raw_audience, list) and all(isinstance(item, str) for item in raw_audience):
            audience = tuple(raw_audience)
        elif raw_audience is None:
            audience = ()
        else:
            raise InvalidToken("the aud claim is neither a string nor a list of strings")
        audiences = self.audiences
        if (audience or self.require_audience) and not any(
            canonical_resource(item) in audiences for item in audience
        ):
            raise InvalidToken("issued for another resource (aud)")
        client_id = _text(claims, "client_id")
        if client_id is None:
            client_id = _text(claims, "azp")
        return AccessToken(
            token=token,
            subject=_text(claims, "sub"),
            client_id=client_id,
            scopes=_scopes(claims),
            issuer=issuer,
            expires_at=None if expires is None else int(expires),
            audience=audience,
            claims=dict(claims),
        )
