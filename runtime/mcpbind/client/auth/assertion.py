"""``private_key_jwt`` client authentication (RFC 7523 section 2.2, OpenID Connect Core section 9):
the client proves who it is with a short-lived JWT signed by its private key, instead of a shared
secret. :class:`PrivateKeyJWT` holds the key and signs those assertions (with joserfc)."""

from __future__ import annotations

import secrets
import time
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal

from mcpbind.oauth.metadata import AuthorizationServerMetadata
from mcpbind.oauth.tokens import OAuthError

if TYPE_CHECKING:
    from joserfc.jwk import ECKey, OKPKey, RSAKey

    _PrivateKey = ECKey | RSAKey | OKPKey

__all__ = ["CLIENT_ASSERTION_TYPE", "PrivateKeyJWT", "assertion_audience"]

CLIENT_ASSERTION_TYPE = "urn:ietf:params:oauth:client-assertion-type:jwt-bearer"

# Which algorithms a key can sign with, and the one used when neither the caller nor the
# authorization server names one.
_EC_ALGORITHMS = {"P-256": "ES256", "P-384": "ES384", "P-521": "ES512"}
_RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")
_OKP_ALGORITHMS = {"Ed25519": ("Ed25519", "EdDSA"), "Ed448": ("Ed448", "EdDSA")}


def assertion_audience(metadata: AuthorizationServerMetadata) -> str:
    """The ``aud`` of a client assertion: the authorization server's issuer identifier, as
    draft-ietf-oauth-rfc7523bis requires (the token endpoint URL, which RFC 7523 allowed, is
    ambiguous across servers sharing an endpoint)."""
    return metadata.issuer


class PrivateKeyJWT:
    """A client's private key for ``private_key_jwt``: a PEM (PKCS#8, or traditional EC/RSA) or
    a private JWK (a mapping, or its JSON text). ``algorithm``: the JWS algorithm to sign with;
    when None it is the first of the authorization server's
    ``token_endpoint_auth_signing_alg_values_supported`` that the key can do, else the key's
    usual one (ES256 for P-256, RS256 for RSA, Ed25519 for an Ed25519 key). ``kid`` goes in the
    header when given (or when the JWK has one); ``lifetime``: seconds an assertion is valid."""

    def __init__(
        self,
        key: str | bytes | Mapping[str, Any],
        *,
        algorithm: str | None = None,
        kid: str | None = None,
        lifetime: int = 300,
    ) -> None:
        self._key = _import_private_key(key)
        self.kid = kid if kid is not None else self._key.kid
        self.lifetime = lifetime
        self._algorithms = _algorithms_for(self._key)
        if algorithm is not None and algorithm not in self._algorithms:
            raise ValueError(
                f"a {self._key.key_type} key cannot sign with {algorithm}"
                f" (it can: {', '.join(self._algorithms)})"
            )
        self.algorithm = algorithm

    def __repr__(self) -> str:  # never the key
        return f"PrivateKeyJWT(kty={self._key.key_type!r}, algorithm={self.algorithm!r}, kid={self.kid!r})"

    def choose_algorithm(self, metadata: AuthorizationServerMetadata | None) -> str:
        """The algorithm to sign with for this authorization server; ``OAuthError``
        (``invalid_client``) when the server accepts none that the key can do."""
        if self.algorithm is not None:
            return self.algorithm
        offered = metadata.token_endpoint_auth_signing_alg_values_supported if metadata is not None else None
        if not offered:
            return self._algorithms[0]
        for algorithm in offered:
            if algorithm in self._algorithms:
                return algorithm
        raise OAuthError(
            "invalid_client",
            f"the authorization server accepts client assertions signed with {', '.join(offered)};"
            f" a {self._key.key_type} key signs with {', '.join(self._algorithms)}",
        )

    def sign(
        self, client_id: str, audience: str, *, algorithm: str, claims: Mapping[str, Any] | None = None
    ) -> str:
        """A client assertion: ``iss`` and ``sub`` the client, ``aud`` the authorization server,
        a fresh ``jti``, issued now and expiring after ``lifetime``; ``claims`` adds more."""
        from joserfc import jwt

        now = int(time.time())
        payload: dict[str, Any] = {
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + self.lifetime,
            "jti": secrets.token_urlsafe(24),
            **(claims or {}),
        }
        header: dict[str, Any] = {"alg": algorithm, "typ": "JWT"}
        if self.kid:
            header["kid"] = self.kid
        return jwt.encode(header, payload, self._key, algorithms=[algorithm])

    def form(self, client_id: str, metadata: AuthorizationServerMetadata) -> dict[str, str]:
        """The token request parameters that authenticate ``client_id`` at this server."""
        assertion = self.sign(
            client_id, assertion_audience(metadata), algorithm=self.choose_algorithm(metadata)
        )
        return {"client_assertion_type": CLIENT_ASSERTION_TYPE, "client_assertion": assertion}


def _import_private_key(key: str | bytes | Mapping[str, Any]) -> _PrivateKey:
    """The joserfc key of a PEM or a private JWK; ``ValueError`` when it is neither, or a public
    key."""
    import json

    from joserfc.jwk import ECKey, OKPKey, RSAKey

    classes: dict[str, type[ECKey] | type[RSAKey] | type[OKPKey]] = {
        "EC": ECKey,
        "RSA": RSAKey,
        "OKP": OKPKey,
    }
    data: Any = key
    if isinstance(key, (str, bytes)):
        text = key.decode() if isinstance(key, bytes) else key
        if text.lstrip().startswith("{"):
            data = json.loads(text)
    kty = data.get("kty") if isinstance(data, Mapping) else _pem_key_type(data)
    if kty not in classes:
        raise ValueError(f"a private key for client assertions is an EC, RSA or OKP key, not {kty!r}")
    imported: _PrivateKey = classes[kty].import_key(dict(data) if isinstance(data, Mapping) else data)
    if not imported.is_private:
        raise ValueError("client assertions need the private key; this is a public one")
    return imported


def _pem_key_type(pem: str | bytes) -> Literal["EC", "RSA", "OKP"]:
    from cryptography.hazmat.primitives.asymmetric import ec, ed448, ed25519, rsa
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    try:
        loaded = load_pem_private_key(pem.encode() if isinstance(pem, str) else pem, password=None)
    except (ValueError, TypeError) as exc:
        raise ValueError("the private key is not an unencrypted PEM private key") from exc
    if isinstance(loaded, ec.EllipticCurvePrivateKey):
        return "EC"
    if isinstance(loaded, rsa.RSAPrivateKey):
        return "RSA"
    if isinstance(loaded, (ed25519.Ed25519PrivateKey, ed448.Ed448PrivateKey)):
        return "OKP"
    raise ValueError(
        f"a private key for client assertions is an EC, RSA or OKP key, not {type(loaded).__name__}"
    )


def _algorithms_for(key: _PrivateKey) -> tuple[str, ...]:
    from joserfc.jwk import ECKey, RSAKey

    if isinstance(key, ECKey):
        algorithm = _EC_ALGORITHMS.get(key.curve_name)
        if algorithm is None:
            raise ValueError(f"no JWS algorithm signs with the curve {key.curve_name}")
        return (algorithm,)
    if isinstance(key, RSAKey):
        return _RSA_ALGORITHMS
    return _OKP_ALGORITHMS.get(key.curve_name, ())
