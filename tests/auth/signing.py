"""The local authorization server's signing key and the access tokens it signs: JWTs (RFC 9068
profile: ``typ: at+jwt``) with ``iss``, ``aud``, ``sub``, ``exp``, ``iat``, ``scope``,
``client_id`` and ``jti``, signed with RS256 or ES256 under a ``kid`` published in its JWK Set."""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from typing import Any, Literal

from joserfc import jwt
from joserfc.jwk import ECKey, KeySet, RSAKey

__all__ = ["Algorithm", "SigningKey"]

Algorithm = Literal["RS256", "ES256"]


class SigningKey:
    """A new private key for ``algorithm``, named ``kid`` (a random one by default)."""

    def __init__(self, algorithm: Algorithm = "RS256", kid: str | None = None) -> None:
        self.algorithm: Algorithm = algorithm
        self.kid = kid or f"{algorithm.lower()}-{secrets.token_hex(4)}"
        parameters: dict[str, Any] = {"kid": self.kid, "use": "sig", "alg": algorithm}
        self.key: RSAKey | ECKey = (
            RSAKey.generate_key(2048, parameters=parameters)  # type: ignore[arg-type]
            if algorithm == "RS256"
            else ECKey.generate_key("P-256", parameters=parameters)  # type: ignore[arg-type]
        )

    def jwks(self) -> dict[str, Any]:
        """The public JWK Set document (RFC 7517 section 5): this key, without its private part."""
        return dict(KeySet([self.key]).as_dict(private=False))

    def sign(self, claims: Mapping[str, Any]) -> str:
        """A compact JWS of ``claims``, with this key's ``kid`` in the header."""
        header = {"alg": self.algorithm, "kid": self.kid, "typ": "at+jwt"}
        token: str = jwt.encode(header, dict(claims), self.key, algorithms=[self.algorithm])
        return token
