"""What a stateless server (2026-07-28) tells of its changes, followed by the proxy.

Such a server sends no notification outside a request: its list changes and resource updates
come on a ``subscriptions/listen`` stream. The proxy keeps one open to each stateless server
whose capabilities say it tells of changes, asking for the resources its clients subscribed to
(the stream is opened again when that set changes, or when the server ends it), and passes
each change on as the notification a server of a session would have sent.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Collection
from typing import Any, Final

import anyio

from mcpbind import types
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import (
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcpbind.protocol.errors import McpError

__all__ = ["ChangeFollower"]

log = logging.getLogger("mcpbind.proxy")

methods = types.methods
_AGAIN_AFTER: Final = 1.0  # seconds before a stream that ended or failed is opened again


class ChangeFollower:
    """Follows one stateless server's changes for :meth:`run`'s lifetime; :meth:`renew` opens
    the stream again (the subscribed resources changed)."""

    def __init__(
        self,
        remote: RemoteServer,
        subscribed: Callable[[], Collection[str]],
        on_change: Callable[[str, Any], Awaitable[None]],
        name: str,
    ) -> None:
        self.remote = remote
        self._subscribed = subscribed
        self._on_change = on_change
        self._name = name
        self._renew = anyio.Event()

    def renew(self) -> None:
        self._renew.set()

    async def run(self) -> None:
        capabilities = self.remote.server_capabilities
        tools = capabilities.tools is not types.UNSET and capabilities.tools.list_changed is True
        prompts = capabilities.prompts is not types.UNSET and capabilities.prompts.list_changed is True
        resources = capabilities.resources
        listed = resources is not types.UNSET and resources.list_changed is True
        updates = resources is not types.UNSET and resources.subscribe is True
        while True:
            self._renew = anyio.Event()
            uris = list(self._subscribed()) if updates else []
            if not (tools or prompts or listed or uris):
                await self._renew.wait()
                continue
            try:
                async with (
                    self.remote.listen(
                        tools=tools, prompts=prompts, resources=listed, resource_uris=uris
                    ) as changes,
                    anyio.create_task_group() as tasks,
                ):
                    tasks.start_soon(self._stop_on_renew, tasks.cancel_scope)
                    async for event in changes:
                        await self._relay(event)
                    tasks.cancel_scope.cancel()
            except McpError as exc:
                # Refused (the server cannot stream on this transport, say): tried again only
                # when the resources asked for change, and said once each time.
                log.warning("%s: its changes cannot be followed: %s", self._name, exc.message)
                await self._renew.wait()
                continue
            if not self._renew.is_set():  # the server ended the stream: open it again
                await anyio.sleep(_AGAIN_AFTER)

    async def _stop_on_renew(self, scope: anyio.CancelScope) -> None:
        await self._renew.wait()
        scope.cancel()

    async def _relay(self, event: Any) -> None:
        if isinstance(event, ToolsListChanged):
            await self._on_change(methods.NOTIFICATIONS_TOOLS_LIST_CHANGED.method, None)
        elif isinstance(event, PromptsListChanged):
            await self._on_change(methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED.method, None)
        elif isinstance(event, ResourcesListChanged):
            await self._on_change(methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED.method, None)
        elif isinstance(event, ResourceUpdated):
            params = types.ResourceUpdatedNotificationParams(uri=event.uri)
            await self._on_change(methods.NOTIFICATIONS_RESOURCES_UPDATED.method, params)
