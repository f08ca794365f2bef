"""``subscriptions/listen`` with the tasks extension (``io.modelcontextprotocol/tasks``): the
filter's ``taskIds``, the tasks whose ``notifications/tasks`` the client asks for (and, in the
acknowledgement, those the server agreed to send). The 2026-07-28 schema does not have the
member: :class:`ListenFilter` is its ``SubscriptionFilter`` with it,
:func:`subscriptions_listen` the method as a server that knows the extension reads it (built on
first use: its result type is the 2026-07-28 schema's, whose modules are loaded only then) and
:data:`SUBSCRIPTIONS_ACKNOWLEDGED` the acknowledgement as a client that knows it reads it.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType, field

from mcpbind.protocol.methods import Direction, NotificationSpec, RequestSpec, ToServer
from mcpbind.versions import LATEST_VERSION, schema_for

__all__ = [
    "SUBSCRIPTIONS_ACKNOWLEDGED",
    "AcknowledgedParams",
    "ListenFilter",
    "ListenRequestParams",
    "subscriptions_listen",
]


class ListenFilter(msgspec.Struct, kw_only=True):
    """The 2026-07-28 ``SubscriptionFilter`` and the extension's ``taskIds``: the tasks whose
    status notifications (``notifications/tasks``) the stream carries."""

    prompts_list_changed: bool | UnsetType = field(name="promptsListChanged", default=UNSET)
    resource_subscriptions: list[str] | UnsetType = field(name="resourceSubscriptions", default=UNSET)
    resources_list_changed: bool | UnsetType = field(name="resourcesListChanged", default=UNSET)
    tools_list_changed: bool | UnsetType = field(name="toolsListChanged", default=UNSET)
    task_ids: list[str] | UnsetType = field(name="taskIds", default=UNSET)


class ListenRequestParams(msgspec.Struct, kw_only=True):
    """``subscriptions/listen`` params whose filter may name tasks."""

    meta: dict[str, Any] = field(name="_meta")
    notifications: ListenFilter


@cache
def subscriptions_listen() -> RequestSpec[ListenRequestParams, Any, ToServer]:
    """``subscriptions/listen`` with the extension's ``taskIds``; one spec, made on first use."""
    return RequestSpec(
        "subscriptions/listen",
        Direction.CLIENT_TO_SERVER,
        ListenRequestParams,
        schema_for(LATEST_VERSION).SubscriptionsListenResult,
        params_optional=False,
    )


class AcknowledgedParams(msgspec.Struct, kw_only=True):
    """``notifications/subscriptions/acknowledged`` params whose filter may name tasks."""

    meta: dict[str, Any] | UnsetType = field(name="_meta", default=UNSET)
    notifications: ListenFilter


SUBSCRIPTIONS_ACKNOWLEDGED: Final[NotificationSpec[AcknowledgedParams, Any]] = NotificationSpec(
    "notifications/subscriptions/acknowledged",
    Direction.SERVER_TO_CLIENT,
    AcknowledgedParams,
    params_optional=False,
)
