"""Results a handler returns already encoded: :class:`Encoded`, JSON bytes the codec writes as
the response's ``result`` as they are (spliced in, never decoded and encoded again).

A handler answering the same thing many times (a listing that seldom changes, a large constant
document) encodes it once and returns the same :class:`Encoded` each time::

    LISTING = Encoded.of(types.ListToolsResult(tools=[...]))

    @server.on(types.methods.TOOLS_LIST)
    async def list_tools(params: types.PaginatedRequestParams, ctx: Context) -> Encoded[types.ListToolsResult]:
        return LISTING

``Encoded[T]`` stands for a ``T``: the type checker accepts it where a handler's result is a
``T`` (covariant: an ``Encoded[CallToolResult]`` is a result of ``tools/call``), and nowhere
else. The bytes are the handler-facing version's (:mod:`mcpbind.types`); a peer that
negotiated an older version gets them converted down once per version (what that version
lacks dropped, as for any result), a stateless (2026-07-28) request gets the members every
such result carries put in front. What is derived from the bytes is kept with them.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from typing import Any, Final, Generic, TypeVar, final

import msgspec

__all__ = ["Encoded"]

T = TypeVar("T")
T_co = TypeVar("T_co", covariant=True)
D = TypeVar("D")

_ENCODER: Final = msgspec.json.Encoder()


@final
class Encoded(Generic[T_co]):
    """A result (a ``T_co``) already encoded as one JSON object, in ``json``.

    ``Encoded(data)`` takes bytes from a trusted source as they are; they are checked once, the
    first time they are sent (one JSON object in UTF-8), and a response whose bytes are not
    one is answered as a result that cannot be encoded is: an internal error (-32603), logged.
    :meth:`of` encodes a result once. Immutable; share one between requests and sessions.
    """

    __slots__ = ("_derived", "_raw", "json")

    json: bytes

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self.json = bytes(data)
        self._raw: msgspec.Raw | None = None
        self._derived: dict[Hashable, Any] = {}

    @classmethod
    def of(cls, result: T) -> Encoded[T]:
        """``result`` (a struct of :mod:`mcpbind.types`, a mapping...) encoded once, now.
        ``TypeError`` / ``msgspec.EncodeError`` when it cannot be."""
        made: Encoded[T] = Encoded(_ENCODER.encode(result))
        made._raw = msgspec.Raw(made.json)
        if not made.json.startswith(b"{"):
            raise TypeError(f"a result is a JSON object, not {made.json[:40]!r}")
        return made

    def raw(self) -> msgspec.Raw:
        """The bytes as ``msgspec.Raw`` (spliced into a message as they are), checked the first
        time: ``msgspec.DecodeError`` when they are not one JSON object in UTF-8."""
        raw = self._raw
        if raw is None:
            data = self.json
            try:
                data.decode("utf-8")
            except UnicodeDecodeError as exc:
                raise msgspec.DecodeError(f"an Encoded result is not UTF-8: {exc}") from None
            msgspec.json.decode(data, type=msgspec.Raw)  # DecodeError for anything but one JSON value
            if not data.lstrip().startswith(b"{"):
                raise msgspec.DecodeError(f"an Encoded result is not a JSON object: {data[:40]!r}")
            raw = self._raw = msgspec.Raw(data)
        return raw

    def derived(self, key: Hashable, make: Callable[[msgspec.Raw], D]) -> D:
        """What ``make`` derives from the (checked) bytes, made once per ``key`` and kept: the
        codec's conversion for an older protocol version, say. ``make`` must depend on the bytes
        and ``key`` only."""
        try:
            value: D = self._derived[key]
        except KeyError:
            value = self._derived[key] = make(self.raw())
        return value

    def __repr__(self) -> str:
        shown = self.json if len(self.json) <= 60 else self.json[:57] + b"..."
        return f"Encoded({shown!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Encoded) and other.json == self.json

    def __hash__(self) -> int:
        return hash(self.json)
