"""The JWS algorithms an access token may be signed with: asymmetric ones only (the key set is
public: an HMAC "signature" keyed with a public key proves nothing), never ``none``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

__all__ = ["ASYMMETRIC_ALGORITHMS", "DEFAULT_ALGORITHMS", "check_algorithms"]

# The JWS algorithms a token signed with a published (public) key may use.
ASYMMETRIC_ALGORITHMS: Final = frozenset(
    {"RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519"}
)
DEFAULT_ALGORITHMS: Final = (
    "RS256",
    "RS384",
    "RS512",
    "PS256",
    "PS384",
    "PS512",
    "ES256",
    "ES384",
    "ES512",
    "EdDSA",
)


def check_algorithms(algorithms: Iterable[str]) -> tuple[str, ...]:
    """The allow-list as a tuple; ``ValueError`` if it is empty or names ``none``, an HMAC
    algorithm or one this verifier does not know."""
    allowed = tuple(algorithms)
    if not allowed:
        raise ValueError("algorithms: at least one JWS algorithm must be allowed")
    for name in allowed:
        if name not in ASYMMETRIC_ALGORITHMS:
            raise ValueError(
                f"algorithms: {name!r} is not allowed (tokens are verified with published public keys: "
                f"one of {', '.join(sorted(ASYMMETRIC_ALGORITHMS))})"
            )
    return allowed
