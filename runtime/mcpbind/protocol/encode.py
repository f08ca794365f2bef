"""Encoding outgoing JSON-RPC messages: structs straight to bytes, never via dicts.

:class:`mcpbind.protocol.wire.Codec` names these functions as its ``encode_*`` static methods.
"""

from __future__ import annotations

from typing import Any

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol.jsonrpc import ErrorObject, RequestId, WireError

__all__ = [
    "encode_batch",
    "encode_error",
    "encode_notification",
    "encode_request",
    "encode_result",
    "encode_wire_error",
]


class _OutRequest(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    id: RequestId
    method: str
    params: Any = UNSET


class _OutNotification(msgspec.Struct, omit_defaults=True):
    jsonrpc: str
    method: str
    params: Any = UNSET


class _OutResult(msgspec.Struct):
    jsonrpc: str
    id: RequestId
    result: Any


class _OutError(msgspec.Struct):
    jsonrpc: str
    id: RequestId | UnsetType | None
    error: ErrorObject


_ENCODER = msgspec.json.Encoder()


def encode_request(id: RequestId, method: str, params: Any = UNSET) -> bytes:
    """A request; ``params`` is a struct, a mapping, ``msgspec.Raw`` or ``UNSET`` (an empty
    ``Raw``, params that were absent where they were received, is left out too)."""
    if type(params) is Raw and not params:
        params = UNSET
    return _ENCODER.encode(_OutRequest("2.0", id, method, params))


def encode_notification(method: str, params: Any = UNSET) -> bytes:
    """A notification; ``params`` as for :func:`encode_request`."""
    if type(params) is Raw and not params:
        params = UNSET
    return _ENCODER.encode(_OutNotification("2.0", method, params))


def encode_result(id: RequestId, result: Any) -> bytes:
    return _ENCODER.encode(_OutResult("2.0", id, result))


def encode_error(id: RequestId | UnsetType | None, code: int, message: str, data: Any = UNSET) -> bytes:
    """An error response. Pass ``None`` when the request's id is unknown: JSON-RPC 2.0 asks
    for ``"id": null`` and peers (rmcp among them) reject a missing id; ``UNSET`` leaves the
    member out, for forwarding a message that had none."""
    return _ENCODER.encode(_OutError("2.0", id, ErrorObject(code, message, data)))


def encode_wire_error(error: WireError) -> bytes:
    return _ENCODER.encode(_OutError("2.0", error.id, error.to_error()))


def encode_batch(messages: list[bytes]) -> bytes:
    """Join already-encoded messages into one JSON array (batch-capable versions only)."""
    return b"[" + b",".join(messages) + b"]"
