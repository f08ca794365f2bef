"""Caching hints (MCP 2026-07-28): how long a client may keep a result (``ttlMs``) and who may
share it (``cacheScope``), for the results the specification makes cacheable."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

import msgspec

__all__ = ["CACHEABLE_METHODS", "DEFAULT_HINT", "CacheHint", "encoded_hints"]

# The methods whose complete results carry hints (``server/discover`` sets its own).
CACHEABLE_METHODS: Final = (
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
)


@dataclass(frozen=True, slots=True)
class CacheHint:
    """``ttl_ms``: for how many milliseconds a client may consider a result fresh (0: re-fetch
    each time it is needed); ``scope``: ``"public"`` when the result is the same for every user
    (shared caches may keep it), ``"private"`` when it may depend on who asks."""

    ttl_ms: int = 0
    scope: Literal["public", "private"] = "private"

    def __post_init__(self) -> None:
        if self.ttl_ms < 0:
            raise ValueError(f"ttl_ms must be >= 0, not {self.ttl_ms}")
        if self.scope not in ("public", "private"):
            raise ValueError(f"scope must be 'public' or 'private', not {self.scope!r}")


# Stale at once, and for the one who asked only: safe whatever the results depend on.
DEFAULT_HINT: Final = CacheHint()


def encoded_hints(default: CacheHint, per_method: Mapping[str, CacheHint]) -> dict[str, bytes]:
    """The hint members of each cacheable method's results, encoded (``"ttlMs":0,"cacheScope":
    "private"``): ``per_method``'s where it names the method, else ``default``. ``ValueError``
    for a method that is not cacheable."""
    unknown = set(per_method) - set(CACHEABLE_METHODS)
    if unknown:
        raise ValueError(
            f"not cacheable methods: {', '.join(sorted(unknown))}; cacheable: {CACHEABLE_METHODS}"
        )
    out: dict[str, bytes] = {}
    for method in CACHEABLE_METHODS:
        hint = per_method.get(method, default)
        out[method] = b'"ttlMs":%d,"cacheScope":%s' % (hint.ttl_ms, msgspec.json.encode(hint.scope))
    return out
