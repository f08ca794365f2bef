"""What the workers of a server share: a :class:`Store` (key-value with expiry,
publish/subscribe, capped streams), in one process (:class:`MemoryStore`) or in Redis
(:class:`RedisStore`, the ``redis`` extra; imported only when used), and the key they sign
``requestState`` with (:func:`shared_key`).

``open_store(url)`` makes one from a URL: ``None`` or ``"memory:"`` for a :class:`MemoryStore`,
``redis://HOST:PORT/DB`` (or ``rediss://``) for a :class:`RedisStore`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable
from mcpbind.store.keys import REQUEST_STATE_KEY_ENV, shared_key
from mcpbind.store.memory import MemoryStore
from mcpbind.store.urls import open_store

if TYPE_CHECKING:
    from mcpbind.store.redis import RedisStore

__all__ = [
    "REQUEST_STATE_KEY_ENV",
    "MemoryStore",
    "RedisStore",
    "Store",
    "StoreUnavailable",
    "open_store",
    "shared_key",
]


def __getattr__(name: str) -> Any:
    if name == "RedisStore":  # coredis is loaded only by who uses it
        from mcpbind.store.redis import RedisStore

        return RedisStore
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
