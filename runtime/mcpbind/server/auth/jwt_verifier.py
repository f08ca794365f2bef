"""Verifying JWT access tokens (RFC 9068) against an authorization server's published keys:
the signature (with an algorithm of an allow-list, never ``none`` nor an HMAC one: a public
key is no secret), then the claims (:mod:`.claims`)."""

from __future__ import annotations

import base64
import binascii
import json
from collections.abc import Callable, Iterable
from typing import Any, Final

import httpx
from joserfc import jws
from joserfc.errors import JoseError

from mcpbind.oauth.access_token import AccessToken
from mcpbind.server.auth.algorithms import DEFAULT_ALGORITHMS, check_algorithms
from mcpbind.server.auth.claims import ClaimRules, audiences_for
from mcpbind.server.auth.errors import InvalidToken
from mcpbind.server.auth.jwks import KeySetCache
from mcpbind.server.auth.verifier import DEFAULT_MAX_TOKEN_BYTES, check_token_text

__all__ = ["JWTVerifier"]

_MAX_HEADER: Final = 1024  # bytes of the encoded header read before the signature is checked


def _b64decode(segment: str) -> bytes:
    try:
        return base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4))
    except (binascii.Error, ValueError):
        raise InvalidToken("malformed token") from None


def _header(token: str, allowed: tuple[str, ...]) -> tuple[str, str | None]:
    """The ``alg`` and ``kid`` of a compact JWS, read without checking anything else yet."""
    parts = token.split(".")
    if len(parts) != 3 or not all(parts) or len(parts[0]) > _MAX_HEADER:
        raise InvalidToken("not a signed JWT")
    try:
        header = json.loads(_b64decode(parts[0]))
    except ValueError:
        raise InvalidToken("malformed token header") from None
    if not isinstance(header, dict):
        raise InvalidToken("malformed token header")
    alg, kid = header.get("alg"), header.get("kid")
    if not isinstance(alg, str) or alg not in allowed:
        raise InvalidToken("signed with an algorithm that is not allowed")
    if kid is not None and not isinstance(kid, str):
        raise InvalidToken("malformed kid")
    if "crit" in header:
        raise InvalidToken("a critical header extension is not understood")
    return alg, kid


class JWTVerifier:
    """Verifies JWT access tokens signed by ``issuer`` with a key of the set at ``jwks_url``
    and issued for ``audience`` (this server's resource URL, RFC 8707).

    ``algorithms``: the allowed signing algorithms (asymmetric ones only). ``leeway``: seconds
    of clock skew allowed on ``exp``, ``nbf`` and ``iat``. ``max_token_bytes``: longer tokens
    are refused unread. The key set is fetched with ``http_client`` (or one of the verifier's
    own), kept up to ``jwks_max_age`` seconds, and refetched for a token naming an unknown
    ``kid`` at most once per ``jwks_min_refresh_interval`` seconds (see :mod:`.jwks`)."""

    def __init__(
        self,
        *,
        issuer: str,
        audience: str,
        jwks_url: str,
        algorithms: Iterable[str] = DEFAULT_ALGORITHMS,
        leeway: float = 60.0,
        max_token_bytes: int = DEFAULT_MAX_TOKEN_BYTES,
        http_client: httpx.AsyncClient | None = None,
        jwks_min_refresh_interval: float = 30.0,
        jwks_max_age: float = 3600.0,
        clock: Callable[[], float] | None = None,
    ) -> None:
        self.algorithms = check_algorithms(algorithms)
        self.max_token_bytes = max_token_bytes
        self.rules = ClaimRules(issuer, audiences_for(audience), leeway)
        options: dict[str, Any] = {} if clock is None else {"clock": clock}
        self.keys = KeySetCache(
            jwks_url,
            http_client=http_client,
            min_refresh_interval=jwks_min_refresh_interval,
            max_age=jwks_max_age,
            **options,
        )
        self._registry = jws.JWSRegistry(algorithms=list(self.algorithms))

    async def verify(self, token: str) -> AccessToken:
        check_token_text(token, self.max_token_bytes)
        alg, kid = _header(token, self.algorithms)
        key = await self.keys.key(kid)
        try:
            signed = jws.deserialize_compact(token, key, algorithms=[alg], registry=self._registry)
        except (JoseError, ValueError, TypeError):
            raise InvalidToken("bad signature") from None
        try:
            claims = json.loads(signed.payload)
        except ValueError:
            raise InvalidToken("malformed payload") from None
        if not isinstance(claims, dict):
            raise InvalidToken("malformed payload")
        return self.rules.check(claims, token)

    async def aclose(self) -> None:
        await self.keys.aclose()
