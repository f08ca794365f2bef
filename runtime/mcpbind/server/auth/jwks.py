"""An authorization server's JSON Web Key Set (RFC 7517 section 5), fetched from its
``jwks_uri`` and kept: a burst of requests arriving before the set is known fetch it once (the
others wait for that fetch), a token naming a key the set lacks (a rotation) refetches it at
most once per ``min_refresh_interval``, and the set is refetched when older than ``max_age``."""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from typing import Any

import anyio
import httpx
from joserfc.errors import JoseError
from joserfc.jwk import Key, import_key

from mcpbind.server.auth.errors import InvalidToken, VerifierUnavailable

__all__ = ["KeySetCache"]

log = logging.getLogger("mcpbind.auth")


def _signing_keys(document: Any) -> dict[str | None, Key]:
    """The verification keys of a key set, by ``kid``; keys for encryption only, of types
    joserfc does not know, or malformed, are left out."""
    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise ValueError("not a JWK Set")
    keys: dict[str | None, Key] = {}
    for data in document["keys"]:
        if not isinstance(data, dict) or data.get("use", "sig") != "sig":
            continue
        public = {
            name: value for name, value in data.items() if name not in ("d", "p", "q", "dp", "dq", "qi")
        }
        try:
            key = import_key(public)
        except (JoseError, ValueError, TypeError):
            continue
        kid = data.get("kid")
        keys[kid if isinstance(kid, str) else None] = key
    return keys


class KeySetCache:
    """The key set at ``url``, fetched with ``http_client`` (an ``httpx.AsyncClient``; one of
    its own, made when first needed, otherwise) within ``timeout`` seconds; a response over
    ``max_bytes`` is refused."""

    def __init__(
        self,
        url: str,
        *,
        http_client: httpx.AsyncClient | None = None,
        min_refresh_interval: float = 30.0,
        max_age: float = 3600.0,
        timeout: float = 10.0,
        max_bytes: int = 1 << 20,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.url = url
        self.min_refresh_interval = min_refresh_interval
        self.max_age = max_age
        self.timeout = timeout
        self.max_bytes = max_bytes
        self.fetches = 0  # how many times the set was fetched (or tried)
        self._client = http_client
        self._own_client = False
        self._clock = clock
        self._keys: dict[str | None, Key] | None = None
        self._fetched_at = 0.0
        self._tried_at: float | None = None
        self._lock: anyio.Lock | None = None

    def _usable(self, kid: str | None) -> dict[str | None, Key] | None:
        """The set kept, if it will do for a token naming ``kid``: fresh enough, and holding
        that key or refreshed too recently to be fetched again for it."""
        keys = self._keys
        if keys is None:
            return None
        now = self._clock()
        if now - self._fetched_at > self.max_age and self._may_fetch(now):
            return None
        if kid in keys or (kid is None and len(keys) == 1) or not self._may_fetch(now):
            return keys
        return None

    def _may_fetch(self, now: float) -> bool:
        return self._tried_at is None or now - self._tried_at >= self.min_refresh_interval

    async def key(self, kid: str | None) -> Key:
        """The key a token whose header names ``kid`` is signed with (without ``kid``: the
        set's only key); :class:`InvalidToken` if the set has none such,
        :class:`VerifierUnavailable` if the set cannot be had."""
        keys = self._usable(kid)
        if keys is None:
            if self._lock is None:
                self._lock = anyio.Lock()
            async with self._lock:
                keys = self._usable(kid)  # fetched by another request meanwhile?
                if keys is None:
                    keys = await self._refresh()
        if kid is None:
            if len(keys) == 1:
                return next(iter(keys.values()))
            raise InvalidToken("no kid, and the key set has several keys")
        key = keys.get(kid)
        if key is None:
            raise InvalidToken("signed with a key the key set does not have")
        return key

    async def _refresh(self) -> dict[str | None, Key]:
        now = self._clock()
        if not self._may_fetch(now):
            if self._keys is not None:
                return self._keys
            raise VerifierUnavailable("the key set could not be fetched")
        self._tried_at = now
        self.fetches += 1
        try:
            keys = _signing_keys(await self._fetch())
        except (httpx.HTTPError, ValueError) as exc:
            log.warning("could not fetch the JWK Set at %s: %s", self.url, exc)
            if self._keys is not None:
                return self._keys  # the old set goes on serving
            raise VerifierUnavailable("the key set could not be fetched") from None
        self._keys = keys
        self._fetched_at = self._clock()
        return keys

    async def _fetch(self) -> Any:
        client = self._client
        if client is None:
            client = self._client = httpx.AsyncClient(follow_redirects=False)
            self._own_client = True
        async with client.stream(
            "GET", self.url, timeout=self.timeout, headers={"accept": "application/json"}
        ) as response:
            if response.status_code != 200:
                raise ValueError(f"HTTP {response.status_code}")
            body = bytearray()
            async for chunk in response.aiter_bytes():
                body += chunk
                if len(body) > self.max_bytes:
                    raise ValueError(f"larger than {self.max_bytes} bytes")
        return json.loads(bytes(body))

    async def aclose(self) -> None:
        """Close the HTTP client this cache made (not one it was given)."""
        if self._own_client and self._client is not None:
            client, self._client = self._client, None
            await client.aclose()
