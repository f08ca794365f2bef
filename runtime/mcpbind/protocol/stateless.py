"""What the answer to a stateless (MCP 2026-07-28) request carries besides its result, and what
a multi round-trip retry brings that the handler-facing params lack."""

from __future__ import annotations

from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.encoded import Encoded
from mcpbind.protocol.envelope import SERVER_INFO, Envelope
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.wire import Codec

__all__ = ["MRTR_METHODS", "NOT_CACHEABLE", "encode_result", "info_meta", "is_retry", "read_retry"]

# The requests that may end a round with an ``InputRequiredResult`` and be retried with
# ``inputResponses`` and ``requestState`` (multi round-trip requests).
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})


class _RetryParams(msgspec.Struct):
    input_responses: dict[str, Any] | None = msgspec.field(name="inputResponses", default=None)
    request_state: str | None = msgspec.field(name="requestState", default=None)


class _RetryMessage(msgspec.Struct):
    """The members of a multi round-trip retry that the handler-facing params lack."""

    params: _RetryParams = msgspec.field(default_factory=_RetryParams)


RETRY_DECODER: Final = msgspec.json.Decoder(_RetryMessage)

# The caching hints of a result no client may keep: stale at once, for the one who asked only.
NOT_CACHEABLE: Final = b'"ttlMs":0,"cacheScope":"private"'


def read_retry(data: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """The ``inputResponses`` and ``requestState`` of a request's bytes (``None`` for each one
    absent); ``msgspec.ValidationError`` when they are malformed."""
    params = RETRY_DECODER.decode(data).params
    return params.input_responses, params.request_state


def is_retry(envelope: Envelope | None) -> bool:
    """Whether a request is a multi round-trip retry (its result depends on answers that are
    no part of a cache key)."""
    return envelope is not None and (
        envelope.request_state is not None or envelope.input_responses is not None
    )


def info_meta(info: types.Implementation) -> bytes:
    """The ``_meta`` member naming the server, encoded once per connection."""
    return b'"_meta":{"' + SERVER_INFO.encode() + b'":' + msgspec.json.encode(info) + b"}"


def encode_result(
    ident: RequestId, result: Any, info: types.Implementation, encoded_info: bytes, hint: bytes | None
) -> bytes:
    """The response carrying ``result`` to a stateless request: with ``resultType``
    (``"complete"`` unless the result names its own, as an ``InputRequiredResult`` does), the
    server's identity in ``_meta`` (``encoded_info``, from :func:`info_meta`; merged with the
    result's own ``_meta``) and, for a complete result, the caching ``hint``. The
    handler-facing result is encoded as it is and these members put in front of its own."""
    if type(result) is Encoded:
        known, rest = result.derived(_SPLIT, _split)
        return _encode_raw_result(ident, result.raw(), info, encoded_info, hint, known, rest)
    if type(result) is msgspec.Raw:
        return _encode_raw_result(ident, result, info, encoded_info, hint)
    meta = getattr(result, "meta", UNSET)
    if isinstance(meta, dict) and meta:
        encoded_info = b'"_meta":' + msgspec.json.encode({**meta, SERVER_INFO: info})
        result = msgspec.structs.replace(result, meta=UNSET)
    if hasattr(result, "result_type"):
        head = b"{"  # names its own (an InputRequiredResult): not complete, no caching hints
    else:
        head = b'{"resultType":"complete",'
        if hint is not None and not hasattr(result, "ttl_ms"):
            head += hint + b","
    body = msgspec.json.encode(result)
    combined = head + encoded_info + (b"}" if body == b"{}" else b"," + body[1:])
    return Codec.encode_result(ident, msgspec.Raw(combined))


class _ResultHead(msgspec.Struct):
    result_type: Any = msgspec.field(default=UNSET, name="resultType")
    ttl_ms: Any = msgspec.field(default=UNSET, name="ttlMs")
    meta: Any = msgspec.field(default=UNSET, name="_meta")


_RESULT_HEAD: Final = msgspec.json.Decoder(_ResultHead)


# The key of what an Encoded result's bytes are split into, kept with them.
_SPLIT: Final = "stateless-split"


def _split(result: msgspec.Raw) -> tuple[_ResultHead | None, bytes]:
    """The members of a result the stateless answer depends on (``None``: not an object), and
    its bytes after the opening ``{``."""
    try:
        head = _RESULT_HEAD.decode(result)
    except msgspec.ValidationError:  # not an object: no result at all, sent for the client to refuse
        return None, b""
    return head, bytes(result).lstrip()[1:].lstrip()


def _encode_raw_result(
    ident: RequestId,
    result: msgspec.Raw,
    info: types.Implementation,
    encoded_info: bytes,
    hint: bytes | None,
    head: _ResultHead | None = None,
    rest: bytes | None = None,
) -> bytes:
    """A result kept as received (a proxy's) or encoded by its handler: sent as it is when it
    says its ``resultType`` (a stateless server's answer), else given the members a stateless
    result carries, its own ``_meta`` merged with the server's identity (decoded only then).
    ``head`` and ``rest``: what :func:`_split` made of it, when known already."""
    if rest is None:
        head, rest = _split(result)
    if head is None or head.result_type is not UNSET:
        return Codec.encode_result(ident, result)
    prefix = b'{"resultType":"complete",'
    if hint is not None and head.ttl_ms is UNSET:
        prefix += hint + b","
    if isinstance(head.meta, dict):
        whole = msgspec.json.decode(result)
        whole["_meta"] = {**head.meta, SERVER_INFO: info}
        body = msgspec.json.encode(whole)
        return Codec.encode_result(ident, msgspec.Raw(prefix + body[1:]))
    combined = prefix + encoded_info + (rest if rest.startswith(b"}") else b"," + rest)
    return Codec.encode_result(ident, msgspec.Raw(combined))
