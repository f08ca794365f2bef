"""The shape of the generated method tables: one typed spec per request and notification.

Each schema version's ``methods`` module holds a ``RequestSpec`` for every request method (its
direction, params type and result type) and a ``NotificationSpec`` for every notification. The
specs are generic, so code written against ``TOOLS_CALL`` gets ``CallToolRequestParams`` and
``CallToolResult`` from the type checker without naming them.

The last type parameter is the direction, for the type checker only: :class:`ToServer` (a
client sends it), :class:`ToClient` (a server sends it) or :class:`Both`. ``TOOLS_CALL`` is a
``RequestSpec[CallToolRequestParams, CallToolResult, ToServer]``; ``Server.on`` accepts only
``ToServer`` specs and a server's ``ctx.request`` only ``ToClient`` ones, so registering or
sending a method in the wrong direction is a type error. ``Both`` is a subclass of the other
two, and the parameter is covariant, so ``PING`` fits either side. At run time the
``direction`` attribute (a :class:`Direction`) says the same and is checked again.
"""

from __future__ import annotations

import enum
from typing import Any, Generic, TypeVar, final

import msgspec

from mcpbind.protocol.unions import TypedDecoder

__all__ = ["Both", "Direction", "NotificationSpec", "RequestSpec", "ToClient", "ToServer"]

P = TypeVar("P")
R = TypeVar("R")
D = TypeVar("D", covariant=True)


class ToServer:
    """Type-level direction: a message a client sends and a server receives."""

    __slots__ = ()


class ToClient:
    """Type-level direction: a message a server sends and a client receives."""

    __slots__ = ()


@final
class Both(ToServer, ToClient):
    """Type-level direction: either side may send it (``ping``, ``notifications/progress``...)."""

    __slots__ = ()


class Direction(enum.Enum):
    """Who may send a message: the client, the server, or either."""

    CLIENT_TO_SERVER = "client->server"
    SERVER_TO_CLIENT = "server->client"
    BOTH = "both"

    def sent_by_client(self) -> bool:
        return self is not Direction.SERVER_TO_CLIENT

    def sent_by_server(self) -> bool:
        return self is not Direction.CLIENT_TO_SERVER


_NO_PARAMS = b"{}"


def _decode_params(raw: msgspec.Raw | bytes, decoder: TypedDecoder[Any], optional: bool) -> Any:
    if raw:
        return decoder.decode(raw)
    if not optional:  # the member was absent
        raise msgspec.ValidationError("Object missing required field `params`")
    return decoder.decode(_NO_PARAMS)


@final
class RequestSpec(Generic[P, R, D]):
    """A request method: wire name, direction, params and result types.

    ``D`` is the direction for the type checker (:class:`ToServer`, :class:`ToClient` or
    :class:`Both`); ``direction`` says the same at run time.

    ``params_optional`` says the ``params`` member may be absent on the wire; the spec then
    decodes an absent member as the params type built from its defaults. ``embedded`` marks a
    2026-07-28 input request, which travels inside an ``InputRequiredResult`` instead of as a
    JSON-RPC request of its own.
    """

    __slots__ = (
        "_params",
        "_result",
        "direction",
        "embedded",
        "method",
        "params_optional",
        "params_type",
        "result_type",
    )

    def __init__(
        self,
        method: str,
        direction: Direction,
        params_type: Any,
        result_type: Any,
        *,
        params_optional: bool,
        embedded: bool = False,
    ) -> None:
        self.method = method
        self.direction = direction
        self.params_type = params_type
        self.result_type = result_type
        self.params_optional = params_optional
        self.embedded = embedded
        self._params: TypedDecoder[P] = TypedDecoder(params_type)
        self._result: TypedDecoder[R] = TypedDecoder(result_type)

    def decode_params(self, raw: msgspec.Raw | bytes) -> P:
        """Decode the ``params`` member; raises ``msgspec.ValidationError`` naming the bad path."""
        value: P = _decode_params(raw, self._params, self.params_optional)
        return value

    @property
    def params_decoder(self) -> TypedDecoder[P]:
        return self._params

    @property
    def result_decoder(self) -> TypedDecoder[R]:
        return self._result

    def decode_result(self, raw: msgspec.Raw | bytes) -> R:
        """Decode the ``result`` member of a response to this request."""
        return self._result.decode(raw if raw else _NO_PARAMS)

    def __repr__(self) -> str:
        return f"RequestSpec({self.method!r}, {self.direction.value})"


@final
class NotificationSpec(Generic[P, D]):
    """A notification method: wire name, direction and params type (``D`` as for
    :class:`RequestSpec`)."""

    __slots__ = ("_params", "direction", "method", "params_optional", "params_type")

    def __init__(self, method: str, direction: Direction, params_type: Any, *, params_optional: bool) -> None:
        self.method = method
        self.direction = direction
        self.params_type = params_type
        self.params_optional = params_optional
        self._params: TypedDecoder[P] = TypedDecoder(params_type)

    def decode_params(self, raw: msgspec.Raw | bytes) -> P:
        """Decode the ``params`` member; raises ``msgspec.ValidationError`` naming the bad path."""
        value: P = _decode_params(raw, self._params, self.params_optional)
        return value

    def __repr__(self) -> str:
        return f"NotificationSpec({self.method!r}, {self.direction.value})"
