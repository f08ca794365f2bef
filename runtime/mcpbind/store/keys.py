"""The key every worker signs MRTR ``requestState`` with: :func:`shared_key`."""

from __future__ import annotations

import base64
import binascii
import os
from typing import Final

from mcpbind.store.base import Store

__all__ = ["KEY_BYTES", "REQUEST_STATE_KEY_ENV", "key_from_text", "shared_key"]

# The environment variable whose key, when set, is used instead of the store's.
REQUEST_STATE_KEY_ENV: Final = "MCPBIND_REQUEST_STATE_KEY"
KEY_BYTES: Final = 32


def key_from_text(text: str, source: str = REQUEST_STATE_KEY_ENV) -> bytes:
    """A key written as hexadecimal or base64url (padded or not), of at least 32 bytes;
    :class:`ValueError` naming ``source`` otherwise. Text that is valid hexadecimal is read as
    hexadecimal."""
    text = text.strip()
    key: bytes | None = None
    try:
        key = bytes.fromhex(text)
    except ValueError:
        try:
            key = base64.b64decode(text + "=" * (-len(text) % 4), altchars=b"-_", validate=True)
        except (binascii.Error, ValueError):
            key = None
    if key is None:
        raise ValueError(f"{source} is neither hexadecimal nor base64url")
    if len(key) < KEY_BYTES:
        raise ValueError(
            f"{source} must hold at least {KEY_BYTES} random bytes, not {len(key)} "
            "(make one with: python -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return key


async def shared_key(store: Store, name: str = "request-state") -> bytes:
    """The key named ``name`` that every worker sharing ``store`` uses: made once (32 random
    bytes) by whichever worker comes first, read by the others (never expires). For
    ``"request-state"``, the environment variable ``MCPBIND_REQUEST_STATE_KEY`` (hexadecimal or
    base64url, at least 32 bytes), when set, is used instead and the store is not asked.
    :class:`~mcpbind.store.errors.StoreUnavailable` when the store cannot be reached."""
    if name == "request-state":
        text = os.environ.get(REQUEST_STATE_KEY_ENV)
        if text:
            return key_from_text(text)
    # (os.urandom is what secrets.token_bytes returns, without importing hmac and OpenSSL)
    return await store.set_if_absent(f"key:{name}", os.urandom(KEY_BYTES))
