"""Proof Key for Code Exchange (RFC 7636) with the S256 method, and the random values of an
authorization request, from Authlib."""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Pkce", "new_pkce", "random_token"]


def random_token(length: int = 43) -> str:
    """A random string of ``length`` letters and digits (about 5.95 bits each)."""
    from authlib.common.security import generate_token

    token: str = generate_token(length)
    return token


@dataclass(frozen=True, slots=True)
class Pkce:
    """A code verifier (kept by the client until the token request) and its challenge (sent in
    the authorization request)."""

    verifier: str
    challenge: str
    method: str = "S256"


def new_pkce() -> Pkce:
    """A fresh code verifier (64 characters, within RFC 7636's 43 to 128) and its S256
    challenge."""
    from authlib.oauth2.rfc7636 import create_s256_code_challenge

    verifier = random_token(64)
    challenge: str = create_s256_code_challenge(verifier)
    return Pkce(verifier, challenge)
