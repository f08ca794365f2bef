"""Params crossing from one era of the protocol to the other, through a proxy.

A request of the stateless protocol (2026-07-28) carries the client's envelope in
``params._meta`` and, when it is a retry, ``inputResponses`` and ``requestState``; a server
of a handshake version (2025 and older) knows none of them. A request of a session carries
none of them, and a stateless server needs them. Params that cross unchanged are never
decoded; those that change are decoded once, changed and encoded again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpbind.protocol.envelope import CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL, PROTOCOL_VERSION

__all__ = ["ENVELOPE_KEYS", "as_object", "stamp_envelope", "strip_envelope"]

# The ``_meta`` keys of the stateless envelope (a request's), which a session's server ignores.
ENVELOPE_KEYS: Final = frozenset({PROTOCOL_VERSION, CLIENT_CAPABILITIES, CLIENT_INFO, LOG_LEVEL})
_RETRY_KEYS: Final = ("inputResponses", "requestState")


def as_object(params: msgspec.Raw) -> dict[str, Any]:
    """Raw params as a JSON object (``{}`` when absent)."""
    if not params:
        return {}
    value = msgspec.json.decode(params)
    if not isinstance(value, dict):
        raise msgspec.ValidationError("Expected `object`, got `" + type(value).__name__ + "` - at `$.params`")
    return value


def strip_envelope(params: msgspec.Raw) -> Any:
    """A stateless request's params as a session's server takes them: without the envelope
    in ``_meta`` (other entries, a progress token, stay) and without a retry's members."""
    value = as_object(params)
    for key in _RETRY_KEYS:
        value.pop(key, None)
    meta = value.get("_meta")
    if isinstance(meta, dict):
        kept = {k: v for k, v in meta.items() if k not in ENVELOPE_KEYS}
        if kept:
            value["_meta"] = kept
        else:
            del value["_meta"]
    return value if value else UNSET


def stamp_envelope(params: msgspec.Raw, envelope: Mapping[str, Any]) -> dict[str, Any]:
    """A session's request as a stateless server takes it: ``envelope`` (the ``_meta``
    entries of :func:`~mcpbind.protocol.envelope.envelope_meta`) merged into its ``_meta``,
    the request's own entries kept."""
    value = as_object(params)
    meta = value.get("_meta")
    value["_meta"] = {**envelope, **(meta if isinstance(meta, dict) else {})}
    return value
