"""What a transport may read of a message without decoding it: its id and method.

Routing needs no more than this (the Streamable HTTP server answers a request on its POST's
stream; a client matches a response to the request it sent), and reading it leaves ``params``
and ``result`` unparsed: msgspec skips members a struct does not name. A stateless request
(2026-07-28) is checked against what travels next to it (HTTP headers) with a little more of
it: :func:`peek_request`, which the handshake versions never pay for.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import msgspec
from msgspec import UNSET, UnsetType

from mcpbind.protocol.envelope import PROTOCOL_VERSION
from mcpbind.protocol.jsonrpc import RequestId

__all__ = ["Peeked", "PeekedRequest", "peek", "peek_request"]


class Peeked(msgspec.Struct):
    """A message's ``id`` and ``method``: both set, a request; only ``method``, a
    notification; only ``id`` (``None`` where the peer could not read ours), a response."""

    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET

    @property
    def is_request(self) -> bool:
        return self.method is not UNSET and self.id is not UNSET and self.id is not None

    @property
    def is_notification(self) -> bool:
        return self.method is not UNSET and self.id is UNSET

    @property
    def is_response(self) -> bool:
        return self.method is UNSET and self.id is not UNSET


# The decoder's own bound method, called per message by the HTTP transports: a wrapper function
# would add a Python call to each.
peek: Callable[[bytes], Peeked] = msgspec.json.Decoder(Peeked).decode
"""``peek(data)``: the id and method of one JSON-RPC message (an object); ``msgspec.DecodeError``
(a ``msgspec.ValidationError`` for a non-object or a wrongly typed id or method) otherwise."""


class _PeekedMeta(msgspec.Struct):
    version: Any = msgspec.field(default=UNSET, name=PROTOCOL_VERSION)


class _PeekedParams(msgspec.Struct):
    name: Any = UNSET
    uri: Any = UNSET
    arguments: msgspec.Raw | UnsetType = UNSET
    meta: _PeekedMeta | UnsetType = msgspec.field(default=UNSET, name="_meta")


class PeekedRequest(msgspec.Struct):
    """What a transport checks of a stateless (2026-07-28) request against what travels next to
    it (Streamable HTTP mirrors these in headers): :class:`Peeked`'s ``id`` and ``method``, and
    of ``params`` the ``name``, the ``uri``, the still-encoded ``arguments`` and the protocol
    version in ``_meta`` (each ``UNSET`` when absent; ``params`` too)."""

    id: RequestId | UnsetType | None = UNSET
    method: str | UnsetType = UNSET
    params: _PeekedParams | UnsetType = UNSET


peek_request: Callable[[bytes], PeekedRequest] = msgspec.json.Decoder(PeekedRequest).decode
"""``peek_request(data)``: a :class:`PeekedRequest`; raises as :data:`peek` does, and also
(``msgspec.ValidationError``) when ``params`` or its ``_meta`` is no object."""
