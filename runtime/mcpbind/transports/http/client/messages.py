"""Looking into the messages the Streamable HTTP client passes, only as far as routing needs:
what a message is (its id and method), which request a response answers or a
``notifications/cancelled`` names, the messages of a batch, and the version an initialize
result names."""

from __future__ import annotations

import msgspec
from msgspec import UNSET, Raw, UnsetType

from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import Peeked, peek
from mcpbind.protocol.salvage import salvage_id

__all__ = [
    "cancelled_request",
    "initialize_succeeded",
    "is_response_to",
    "negotiated_version",
    "peek_message",
    "split",
]


class _InitializeAnswer(msgspec.Struct):
    id: RequestId | UnsetType | None = UNSET
    result: _InitializeResultVersion | UnsetType = UNSET


class _InitializeResultVersion(msgspec.Struct):
    protocolVersion: str | UnsetType = UNSET


class _CancelledParams(msgspec.Struct):
    requestId: RequestId | UnsetType = UNSET


class _Cancelled(msgspec.Struct):
    """Which request a ``notifications/cancelled`` names."""

    params: _CancelledParams | UnsetType = UNSET


_cancelled = msgspec.json.Decoder(_Cancelled)
_envelopes = msgspec.json.Decoder(list[Raw])
_initialize_answer = msgspec.json.Decoder(_InitializeAnswer)


def split(data: bytes) -> list[bytes]:
    """A JSON-RPC batch (a JSON array) into its messages; anything else as it is."""
    if data.lstrip()[:1] == b"[":
        try:
            return [bytes(item) for item in _envelopes.decode(data)]
        except (msgspec.DecodeError, RecursionError):
            pass
    return [data]


def cancelled_request(data: bytes) -> RequestId | None:
    """The request a ``notifications/cancelled`` message names, if it names one."""
    try:
        params = _cancelled.decode(data).params
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if isinstance(params, UnsetType) or isinstance(params.requestId, UnsetType):
        return None
    return params.requestId


def peek_message(data: bytes) -> Peeked | None:
    """What a message is (its id and method), or ``None`` when it is not a JSON-RPC message."""
    try:
        return peek(data)
    except (msgspec.DecodeError, msgspec.ValidationError, RecursionError):
        pass
    # A response that does not decode (nested too deeply, a lone surrogate) still names the
    # request it answers when its id can be read: delivered, it fails that request at once.
    salvaged = salvage_id(data)
    return Peeked(id=salvaged.id) if salvaged.response and salvaged.id is not None else None


def is_response_to(envelope: Peeked | None, ident: RequestId) -> bool:
    return (
        envelope is not None
        and isinstance(envelope.method, UnsetType)
        and envelope.id == ident
        and type(envelope.id) is type(ident)
    )


def negotiated_version(message: bytes) -> str | None:
    """The ``protocolVersion`` of an initialize result, if ``message`` holds one."""
    try:
        answer = _initialize_answer.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    if not isinstance(answer.result, UnsetType) and isinstance(answer.result.protocolVersion, str):
        return answer.result.protocolVersion
    return None


def initialize_succeeded(message: bytes) -> bool:
    """Whether the response to initialize in ``message`` is a result (not an error);
    ``msgspec.DecodeError`` or ``msgspec.ValidationError`` if it is not such a response."""
    return not isinstance(_initialize_answer.decode(message).result, UnsetType)
