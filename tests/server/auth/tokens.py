"""Keys, key sets and access tokens made by the tests themselves: an authorization server's
signing keys (RSA and EC), its JWK Set served through an ``httpx.MockTransport`` that counts
the fetches, and JWTs minted with any header and claims (bad ones included)."""

from __future__ import annotations

import base64
import functools
import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import httpx
from joserfc import jwt
from joserfc.jwk import ECKey, RSAKey

ISSUER = "https://auth.example.com"
RESOURCE = "http://127.0.0.1/mcp"
JWKS_URL = "https://auth.example.com/jwks"


@functools.cache
def rsa_key(kid: str = "rsa-1") -> RSAKey:
    key: RSAKey = RSAKey.generate_key(2048, parameters={"kid": kid, "use": "sig"})
    return key


@functools.cache
def ec_key(kid: str = "ec-1") -> ECKey:
    key: ECKey = ECKey.generate_key("P-256", parameters={"kid": kid, "use": "sig"})
    return key


def claims(**changes: Any) -> dict[str, Any]:
    """Valid claims for RESOURCE from ISSUER, with ``changes`` (a None value removes one)."""
    now = int(time.time())
    base: dict[str, Any] = {
        "iss": ISSUER,
        "sub": "alice",
        "aud": RESOURCE,
        "client_id": "client-1",
        "scope": "mcp read",
        "iat": now,
        "exp": now + 300,
    }
    base.update(changes)
    return {name: value for name, value in base.items() if value is not None}


def mint(key: RSAKey | ECKey | None = None, alg: str | None = None, **changes: Any) -> str:
    """A JWT of ``claims(**changes)`` signed with ``key`` (the RSA key by default)."""
    key = key if key is not None else rsa_key()
    alg = alg or ("ES256" if isinstance(key, ECKey) else "RS256")
    return jwt.encode({"alg": alg, "kid": key.kid, "typ": "at+jwt"}, claims(**changes), key, algorithms=[alg])


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def unsigned(**changes: Any) -> str:
    """An ``alg: none`` token (no signature)."""
    header = b64(json.dumps({"alg": "none", "kid": rsa_key().kid}).encode())
    return f"{header}.{b64(json.dumps(claims(**changes)).encode())}."


def hs256_with_public_key(**changes: Any) -> str:
    """An HS256 token whose HMAC secret is the RSA public key (the algorithm confusion attack)."""
    import hashlib
    import hmac

    secret = rsa_key().as_pem(private=False)
    header = b64(json.dumps({"alg": "HS256", "kid": rsa_key().kid}).encode())
    payload = b64(json.dumps(claims(**changes)).encode())
    signature = hmac.new(secret, f"{header}.{payload}".encode(), hashlib.sha256).digest()
    return f"{header}.{payload}.{b64(signature)}"


class KeySetServer:
    """An authorization server's JWK Set endpoint through an ``httpx.MockTransport``: it
    answers ``keys`` (changeable), counts the fetches, and can be held (``gate``) so that
    requests pile up while a fetch is in progress, or fail (``failing``)."""

    def __init__(self, *keys: RSAKey | ECKey) -> None:
        self.keys = list(keys) or [rsa_key()]
        self.fetches = 0
        self.gate: anyio.Event | None = None
        self.failing = False

    async def handle(self, request: httpx.Request) -> httpx.Response:
        self.fetches += 1
        if self.gate is not None:
            await self.gate.wait()
        if self.failing:
            return httpx.Response(500)
        document = {"keys": [key.as_dict(private=False) for key in self.keys]}
        return httpx.Response(200, json=document)

    def client(self) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=httpx.MockTransport(self.handle))


Handler = Callable[[httpx.Request], Awaitable[httpx.Response]]
