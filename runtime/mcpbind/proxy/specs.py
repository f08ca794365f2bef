"""The methods a proxy forwards, as specs whose params and results stay raw JSON.

A proxy decodes the envelope of what passes through it and nothing else: each method it
forwards has a :class:`~mcpbind.protocol.methods.RequestSpec` whose params and result types
are ``msgspec.Raw``, so the bytes a client sent reach the server as they came (and the
reverse), re-encoded only where the proxy has to change a member.
"""

from __future__ import annotations

import functools
from typing import Any, Final

import msgspec

from mcpbind.protocol.methods import Direction, NotificationSpec, RequestSpec

__all__ = [
    "ASKED_OF_CLIENT",
    "FORWARDED_NOTIFICATIONS",
    "FORWARDED_REQUESTS",
    "raw_notification",
    "raw_request",
]

# What a client asks of a server and the proxy forwards upstream. (``initialize``, ``ping``,
# ``server/discover`` and ``subscriptions/listen`` the proxy answers itself, as a server.)
FORWARDED_REQUESTS: Final = frozenset(
    {
        "tools/list",
        "tools/call",
        "resources/list",
        "resources/templates/list",
        "resources/read",
        "resources/subscribe",
        "resources/unsubscribe",
        "prompts/list",
        "prompts/get",
        "completion/complete",
        "logging/setLevel",
    }
)

# What a server asks of its client mid-call, which the proxy passes to a client of its own.
ASKED_OF_CLIENT: Final = frozenset({"sampling/createMessage", "elicitation/create", "roots/list"})

# What a client tells a server that the proxy passes on.
FORWARDED_NOTIFICATIONS: Final = frozenset({"notifications/roots/list_changed"})


@functools.cache
def raw_request(
    method: str, direction: Direction = Direction.CLIENT_TO_SERVER
) -> RequestSpec[Any, msgspec.Raw, Any]:
    """The spec of ``method`` with raw params and result."""
    return RequestSpec(method, direction, msgspec.Raw, msgspec.Raw, params_optional=True)


@functools.cache
def raw_notification(
    method: str, direction: Direction = Direction.CLIENT_TO_SERVER
) -> NotificationSpec[Any, Any]:
    """The spec of the notification ``method`` with raw params."""
    return NotificationSpec(method, direction, msgspec.Raw, params_optional=True)
