"""``subscriptions/listen`` with the tasks extension (``io.modelcontextprotocol/tasks``): the
filter's ``taskIds``, the tasks whose ``notifications/tasks`` the client asks for (and, in the
acknowledgement, those the server agreed to send). The 2026-07-28 schema does not have the
member; these structs add it to its ``SubscriptionFilter`` and listen params, and
:data:`SUBSCRIPTIONS_LISTEN` is the method as a server that knows the extension reads it.
"""

from __future__ import annotations

from typing import Final

from msgspec import UNSET, UnsetType, field

from mcpbind.protocol.methods import Direction, RequestSpec, ToServer
from mcpbind.schema.v2026_07_28 import structs as modern

__all__ = ["SUBSCRIPTIONS_LISTEN", "ListenFilter", "ListenRequestParams"]


class ListenFilter(modern.SubscriptionFilter, kw_only=True):
    """A ``SubscriptionFilter`` with the extension's ``taskIds``: the tasks whose status
    notifications (``notifications/tasks``) the stream carries."""

    task_ids: list[str] | UnsetType = field(name="taskIds", default=UNSET)


class ListenRequestParams(modern.SubscriptionsListenRequestParams, kw_only=True):
    """``subscriptions/listen`` params whose filter may name tasks."""

    notifications: ListenFilter


SUBSCRIPTIONS_LISTEN: Final[RequestSpec[ListenRequestParams, modern.SubscriptionsListenResult, ToServer]] = (
    RequestSpec(
        "subscriptions/listen",
        Direction.CLIENT_TO_SERVER,
        ListenRequestParams,
        modern.SubscriptionsListenResult,
        params_optional=False,
    )
)
