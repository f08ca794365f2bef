"""The changes a stateless server (2026-07-28) tells of, kept coming to a proxy.

Such a server sends no plain list change and has no ``resources/subscribe``: it tells of
changes only on the ``subscriptions/listen`` streams its clients open. :class:`Watch` keeps one
open for the list changes the server declares and the resources the proxy's clients are
subscribed to; when those resources change it opens a new stream, then closes the old one, so
that no change between the two is missed (one told twice is harmless: a list change or an
update says only "look again").
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
from anyio.abc import TaskStatus
from msgspec import UNSET

from mcpbind import types
from mcpbind.client.remote import RemoteServer
from mcpbind.client.subscriptions import (
    ChangeEvent,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    ToolsListChanged,
)
from mcpbind.protocol.errors import INTERNAL_ERROR, McpError

__all__ = ["Watch"]

log = logging.getLogger("mcpbind.proxy")

methods = types.methods

Tell = Callable[[str, Any], Awaitable[None]]


class Watch:
    """The listen stream kept open on ``remote`` (a stateless server) while :meth:`run` runs;
    each change it carries is given to ``tell(method, params)`` as the server's notification
    would be (``None`` params for a list change). ``wanted``: the resources to hear of at first;
    ``timeout``: how long the server may take to acknowledge a stream."""

    def __init__(self, remote: RemoteServer, tell: Tell, wanted: frozenset[str], timeout: float) -> None:
        self._remote = remote
        self._tell = tell
        self._timeout = timeout
        self._wanted = wanted
        # The resources the open stream covers, and the refusal of the last stream asked for.
        self.watching: frozenset[str] = frozenset()
        self.error: McpError | None = None
        self._again = anyio.Event()  # the resources wanted changed
        self._renewed = anyio.Event()  # a stream was asked for since (opened, or refused)

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Keep a stream open until cancelled; started once the first was asked for."""
        async with anyio.create_task_group() as tasks:
            current: anyio.CancelScope | None = None
            started = False
            while True:
                again = self._again = anyio.Event()
                wanted = self._wanted
                try:
                    scope: anyio.CancelScope | None = (
                        await tasks.start(self._stream, wanted) if self._asks(wanted) else None
                    )
                except (McpError, TimeoutError) as exc:  # (the old stream, if any, stays)
                    error = (
                        exc if isinstance(exc, McpError) else McpError(INTERNAL_ERROR, "no acknowledgement")
                    )
                    log.warning("the server refused to listen for changes: %s", error.message)
                    self.error = error
                else:
                    self.error = None
                    if current is not None:
                        current.cancel()
                    current = scope
                    self.watching = wanted
                renewed, self._renewed = self._renewed, anyio.Event()
                renewed.set()
                if not started:
                    started = True
                    task_status.started()
                await again.wait()

    async def add(self, uri: str, wanted: frozenset[str]) -> None:
        """Hear of ``uri`` (``wanted``: every resource to hear of now, ``uri`` among them):
        returns once a stream covering it is open; the server's refusal raises."""
        self._wanted = wanted
        while uri in self._wanted and uri not in self.watching:
            renewed = self._renewed
            self._again.set()
            await renewed.wait()
            if self.error is not None and uri not in self.watching:
                raise self.error

    def drop(self, wanted: frozenset[str]) -> None:
        """Hear only of ``wanted`` from now on (a new stream is opened without waiting)."""
        self._wanted = wanted
        self._again.set()

    def _asks(self, wanted: frozenset[str]) -> bool:
        return bool(wanted) or any(self._kinds().values())

    def _kinds(self) -> dict[str, bool]:
        """The list changes the server declares it tells of."""
        capabilities = self._remote.server_capabilities
        return {
            part: getattr(getattr(capabilities, part, UNSET), "list_changed", UNSET) is True
            for part in ("tools", "prompts", "resources")
        }

    async def _stream(
        self,
        wanted: frozenset[str],
        *,
        task_status: TaskStatus[anyio.CancelScope] = anyio.TASK_STATUS_IGNORED,
    ) -> None:
        started = False
        with anyio.CancelScope() as scope:
            kinds = self._kinds()
            listener = self._remote.listen(
                tools=kinds["tools"],
                prompts=kinds["prompts"],
                resources=kinds["resources"],
                resource_uris=sorted(wanted),
                timeout=self._timeout,
            )
            try:
                async with listener as changes:
                    task_status.started(scope)
                    started = True
                    async for event in changes:
                        await self._tell(*_notification(event))
            except McpError as exc:
                if not started:
                    raise
                log.warning("the stream of the server's changes ended: %s", exc.message)


def _notification(event: ChangeEvent) -> tuple[str, Any]:
    """The notification (method and params) the server would send for ``event``."""
    if isinstance(event, ResourceUpdated):
        return methods.NOTIFICATIONS_RESOURCES_UPDATED.method, types.ResourceUpdatedNotificationParams(
            uri=event.uri
        )
    if isinstance(event, ToolsListChanged):
        return methods.NOTIFICATIONS_TOOLS_LIST_CHANGED.method, None
    if isinstance(event, PromptsListChanged):
        return methods.NOTIFICATIONS_PROMPTS_LIST_CHANGED.method, None
    if isinstance(event, ResourcesListChanged):
        return methods.NOTIFICATIONS_RESOURCES_LIST_CHANGED.method, None
    raise AssertionError(f"not asked for: {event!r}")  # (task changes are never asked for)
