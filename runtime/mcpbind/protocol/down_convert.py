"""Messages as a peer that negotiated an older protocol version knows them.

Handlers see one set of types whatever version was negotiated (the handler-facing version,
:data:`~mcpbind.versions.HANDLER_VERSION`, a superset of the older ones). What goes out to a
peer that negotiated an older version is re-decoded with that version's types first, so members
it does not know are never sent to it. An already encoded result (:class:`Encoded`) is
converted once per version and kept with it.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec
from msgspec import UNSET

from mcpbind.protocol.encoded import Encoded
from mcpbind.versions import HANDLER_VERSION, MODERN_VERSIONS, schema_for

__all__ = ["Part", "down", "down_encoded"]

# What of a message a value is: a request's params, a result, a notification's params.
Part = Literal["params", "result", "notification"]


def down(version: str | None, method: str, value: Any, part: Part) -> Any:
    """``value`` as ``version`` (the negotiated one; None before any) knows it: what it lacks
    is dropped."""
    if type(value) is Encoded and part == "result":
        return down_encoded(version, method, value)
    if (
        version is None
        or version == HANDLER_VERSION
        or value is UNSET
        or version in MODERN_VERSIONS
        or type(value) is msgspec.Raw
    ):
        # (a stateless version's messages are the handler-facing types, sent as they are;
        # what a proxy forwards as received is the other side's business)
        return value
    table = schema_for(version).methods
    if part == "notification":
        note = table.NOTIFICATIONS.get(method)
        return value if note is None else note.decode_params(msgspec.json.encode(value))
    spec = table.REQUESTS.get(method)
    if spec is None:
        return value
    encoded = msgspec.json.encode(value)
    return spec.decode_params(encoded) if part == "params" else spec.decode_result(encoded)


def down_encoded(version: str | None, method: str, value: Encoded[Any]) -> msgspec.Raw:
    """An already encoded result, as it is (checked once) or, for an older version,
    converted down once per version and kept with it."""
    if version is None or version == HANDLER_VERSION or version in MODERN_VERSIONS:
        return value.raw()
    spec = schema_for(version).methods.REQUESTS.get(method)
    if spec is None:
        return value.raw()
    return value.derived(
        ("down", version), lambda raw: msgspec.Raw(msgspec.json.encode(spec.decode_result(raw)))
    )
