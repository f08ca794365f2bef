"""A store from a URL (the ``--store`` option): :func:`open_store`."""

from __future__ import annotations

from typing import Any

from mcpbind.store.base import Store
from mcpbind.store.memory import MemoryStore

__all__ = ["open_store"]


def open_store(url: str | None, **options: Any) -> Store:
    """The store ``url`` names: ``None`` or ``"memory:"``: a new
    :class:`~mcpbind.store.memory.MemoryStore` (this process only); ``redis://HOST:PORT/DB``
    (``rediss://`` with TLS): a :class:`~mcpbind.store.redis.RedisStore` (``options`` go to
    it: ``prefix``, ``timeout``...). :class:`ValueError` for anything else. The store is
    not opened yet (``async with store:``)."""
    if url is None or url == "memory:":
        if options:
            raise TypeError(f"a memory store takes no options: {sorted(options)}")
        return MemoryStore()
    scheme = url.partition("://")[0].lower() if "://" in url else ""
    if scheme in ("redis", "rediss"):
        try:
            from mcpbind.store.redis import RedisStore
        except ImportError as missing:
            raise ImportError(
                f"a Redis store needs coredis: pip install 'mcpbind[redis]' ({missing})"
            ) from missing
        return RedisStore(url, **options)
    shown = url.split("@")[-1] if "@" in url else url
    raise ValueError(f"unknown store URL {shown[:200]!r}: use memory: or redis://HOST:PORT/DB")
