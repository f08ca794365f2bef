"""An optional client-side cache of results that say how long they stay fresh (``ttlMs``,
MCP 2026-07-28): ``Client(cache=True)`` serves ``tools/list``, ``prompts/list``,
``resources/list``, ``resources/templates/list`` and ``resources/read`` from it while fresh.
A result the server reached through a multi round-trip exchange is never kept, and a change
event (``listen()``) drops what it made stale."""

from __future__ import annotations

import time
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

__all__ = ["CACHEABLE_METHODS", "ResultCache", "ttl_ms"]

CACHEABLE_METHODS: Final = frozenset(
    {"tools/list", "prompts/list", "resources/list", "resources/templates/list", "resources/read"}
)

# What each change event makes stale.
_STALE: Final = {
    "ToolsListChanged": ("tools/list",),
    "PromptsListChanged": ("prompts/list",),
    "ResourcesListChanged": ("resources/list", "resources/templates/list"),
}


class _Hint(msgspec.Struct):
    ttlMs: int | UnsetType = UNSET


_hint: Final = msgspec.json.Decoder(_Hint)


def ttl_ms(raw: bytes | msgspec.Raw) -> int | None:
    """The ``ttlMs`` of a raw result, if it has a usable one."""
    try:
        value = _hint.decode(raw).ttlMs
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    return value if isinstance(value, int) and value > 0 else None


class ResultCache:
    """Results by (method, key: a cursor or a URI), each until its deadline."""

    def __init__(self) -> None:
        self._entries: dict[tuple[str, str | None], tuple[float, Any]] = {}

    def get(self, method: str, key: str | None) -> Any:
        entry = self._entries.get((method, key))
        if entry is None:
            return None
        deadline, result = entry
        if time.monotonic() >= deadline:
            del self._entries[(method, key)]
            return None
        return result

    def put(self, method: str, key: str | None, result: Any, ttl: int) -> None:
        self._entries[(method, key)] = (time.monotonic() + ttl / 1000, result)

    def drop(self, method: str, key: str | None = None) -> None:
        """Forget ``method``'s results (all of them, or the one for ``key``)."""
        for entry in [k for k in self._entries if k[0] == method and (key is None or k[1] == key)]:
            del self._entries[entry]

    def changed(self, event: Any) -> None:
        """A change event: drop what it made stale."""
        uri = getattr(event, "uri", None)
        if isinstance(uri, str):
            self.drop("resources/read", uri)
        for method in _STALE.get(type(event).__name__, ()):
            self.drop(method)

    def clear(self) -> None:
        self._entries.clear()
