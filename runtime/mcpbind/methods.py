"""The shape of the generated method tables: one typed spec per request and notification.

Each schema version's ``methods`` module holds a ``RequestSpec`` for every request method (its
direction, params type and result type) and a ``NotificationSpec`` for every notification. The
specs are generic, so code written against ``TOOLS_CALL`` gets ``CallToolRequestParams`` and
``CallToolResult`` from the type checker without naming them.
"""

from __future__ import annotations

import enum
from typing import Any, Generic, TypeVar, final

import msgspec

from mcpbind.unions import decode

__all__ = ["Direction", "NotificationSpec", "RequestSpec"]

P = TypeVar("P")
R = TypeVar("R")


class Direction(enum.Enum):
    """Who may send a message: the client, the server, or either."""

    CLIENT_TO_SERVER = "client->server"
    SERVER_TO_CLIENT = "server->client"
    BOTH = "both"

    def sent_by_client(self) -> bool:
        return self is not Direction.SERVER_TO_CLIENT

    def sent_by_server(self) -> bool:
        return self is not Direction.CLIENT_TO_SERVER


def _decode_params(raw: msgspec.Raw | bytes, params_type: Any, optional: bool) -> Any:
    if not raw:  # the member was absent
        if not optional:
            raise msgspec.ValidationError("Object missing required field `params`")
        raw = b"{}"
    return decode(raw, params_type)


@final
class RequestSpec(Generic[P, R]):
    """A request method: wire name, direction, params and result types.

    ``params_optional`` says the ``params`` member may be absent on the wire; the spec then
    decodes an absent member as the params type built from its defaults. ``embedded`` marks a
    2026-07-28 input request, which travels inside an ``InputRequiredResult`` instead of as a
    JSON-RPC request of its own.
    """

    __slots__ = ("direction", "embedded", "method", "params_optional", "params_type", "result_type")

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

    def decode_params(self, raw: msgspec.Raw | bytes) -> P:
        """Decode the ``params`` member; raises ``msgspec.ValidationError`` naming the bad path."""
        value: P = _decode_params(raw, self.params_type, self.params_optional)
        return value

    def decode_result(self, raw: msgspec.Raw | bytes) -> R:
        """Decode the ``result`` member of a response to this request."""
        value: R = decode(raw if raw else b"{}", self.result_type)
        return value

    def __repr__(self) -> str:
        return f"RequestSpec({self.method!r}, {self.direction.value})"


@final
class NotificationSpec(Generic[P]):
    """A notification method: wire name, direction and params type."""

    __slots__ = ("direction", "method", "params_optional", "params_type")

    def __init__(self, method: str, direction: Direction, params_type: Any, *, params_optional: bool) -> None:
        self.method = method
        self.direction = direction
        self.params_type = params_type
        self.params_optional = params_optional

    def decode_params(self, raw: msgspec.Raw | bytes) -> P:
        """Decode the ``params`` member; raises ``msgspec.ValidationError`` naming the bad path."""
        value: P = _decode_params(raw, self.params_type, self.params_optional)
        return value

    def __repr__(self) -> str:
        return f"NotificationSpec({self.method!r}, {self.direction.value})"
