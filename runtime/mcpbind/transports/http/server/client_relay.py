"""What the client sends to one worker for a session's copy on another (workers sharing a
store, issue 16): :class:`ClientRelay`.

A message of the client that the worker it reached cannot act on alone is published on the
store's channel ``answers`` (the store adds its prefix), which every worker listens to while it
runs (reconnecting after ``retry_delay`` seconds when the store is away), with the session's id
and the publishing worker's; each worker gives it to its own copy of the session if that copy
is concerned:

* a response to a request that copy sent the client (sampling, elicitation, roots) and is
  waiting for;
* ``notifications/cancelled`` for a request that copy is handling (it stops as if the client
  had sent the notification to it);
* ``notifications/progress`` for a request that copy sent with a progress token (its id);
* any other notification a handler is registered for (``notifications/roots/list_changed``,
  say): every copy of the session runs its handlers (the worker that got it too, at once),
  since what they keep of the session (cached roots) is kept by each worker.

One channel for all sessions, not one per session: a subscription holds a connection of its
own, and a worker would need one for each session with a request in flight. A message no copy
is concerned with (the request ended meanwhile, or the worker holding it stopped) is dropped,
as it would be by one worker: a cancellation racing its request's arrival on another worker
may come first and be lost.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import peek
from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.http.server.sessions import SessionState, SessionTable

__all__ = ["ANSWERS", "ClientRelay"]

log = logging.getLogger("mcpbind.http")

# The store channel of the client's messages relayed between workers.
ANSWERS: Final = "answers"
CANCELLED: Final = "notifications/cancelled"
PROGRESS: Final = "notifications/progress"
# Notifications that change the session's record instead (written before they are accepted).
_RECORDED: Final = frozenset({"notifications/initialized"})


class _Relayed(msgspec.Struct, array_like=True, frozen=True):
    # (The worker last: a worker of the release before, which relayed responses only as
    # [session, body], reads these and is read.)
    session: str
    body: msgspec.Raw
    worker: str = ""


class _Params(msgspec.Struct):
    request_id: RequestId | UnsetType = msgspec.field(default=UNSET, name="requestId")
    progress_token: RequestId | UnsetType = msgspec.field(default=UNSET, name="progressToken")


class _Notification(msgspec.Struct):
    params: _Params = msgspec.field(default_factory=_Params)


_ENCODER: Final = msgspec.json.Encoder()
_RELAYED: Final = msgspec.json.Decoder(_Relayed)
_NOTIFICATION: Final = msgspec.json.Decoder(_Notification)


def _target(method: str, body: bytes) -> RequestId | None:
    """The request a cancellation or progress notification is about (``None``: unreadable)."""
    try:
        params = _NOTIFICATION.decode(body).params
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    target = params.request_id if method == CANCELLED else params.progress_token
    return None if isinstance(target, UnsetType) else target


def _concerns(state: SessionState, method: str | None, body: bytes, ident: RequestId | None) -> bool:
    """Whether this worker's copy of the session is concerned by the client's message (a
    response ``ident`` when ``method`` is ``None``)."""
    session = state.session
    if session.closed:
        return False
    if method is None:
        return ident is not None and session.connection.awaits_response(ident)
    if method == CANCELLED or method == PROGRESS:
        target = _target(method, body)
        if target is None:
            return False
        if method == CANCELLED:
            return session.is_handling(target)
        return session.connection.awaits_response(target)  # (a token is the request's id)
    return method in session.notification_handlers


class ClientRelay:
    """The client's messages relayed between the workers sharing ``store`` for the sessions of
    ``table`` (see the module's docstring). The app asks :meth:`relay` for each notification
    and response a session gets, and runs :meth:`running` for as long as it serves."""

    def __init__(self, store: Store, table: SessionTable, *, retry_delay: float = 1.0) -> None:
        self.store = store
        self.table = table
        self.retry_delay = retry_delay
        self.worker = secrets.token_hex(8)

    async def relay(
        self, state: SessionState, method: str | None, ident: RequestId | None, body: bytes
    ) -> bool:
        """Publish the client's ``body`` (a notification ``method``, or with ``None`` the
        response ``ident``) for the other workers if it concerns them; True when it concerns
        them only (this worker accepts it and does nothing more)."""
        if method in _RECORDED:
            return False
        if method is not None and method != CANCELLED and method != PROGRESS:
            if method not in state.session.notification_handlers:
                return False  # no handler anywhere (the workers serve the same server)
            await self._publish(state, body)
            return False  # handled here too
        if _concerns(state, method, body, ident):
            return False
        await self._publish(state, body)
        return True

    async def _publish(self, state: SessionState, body: bytes) -> None:
        message = _Relayed(state.id, msgspec.Raw(body), self.worker)
        await self.store.publish(ANSWERS, _ENCODER.encode(message))

    @asynccontextmanager
    async def running(self) -> AsyncIterator[None]:
        """Take what the other workers relay during the block."""
        async with anyio.create_task_group() as tg:
            tg.start_soon(self._take)
            try:
                yield
            finally:
                tg.cancel_scope.cancel()

    async def _take(self) -> None:
        while True:
            try:
                async with self.store.subscribe(ANSWERS) as relayed:
                    async for message in relayed:
                        await self._taken(message)
            except StoreUnavailable as lost:
                log.warning("messages relayed by other workers are missed while the store is away: %s", lost)
            await anyio.sleep(self.retry_delay)

    async def _taken(self, message: bytes) -> None:
        try:
            relayed = _RELAYED.decode(message)
            peeked = peek(relayed.body)
        except (msgspec.DecodeError, msgspec.ValidationError):
            log.warning("dropping an unreadable relayed message")
            return
        if relayed.worker == self.worker:
            return
        state = self.table.sessions.get(relayed.session)
        if state is None:
            return
        body = bytes(relayed.body)
        method = None if isinstance(peeked.method, UnsetType) else peeked.method
        ident = None if isinstance(peeked.id, UnsetType) else peeked.id
        if (method is None and ident is None) or not _concerns(state, method, body, ident):
            return
        try:
            await state.session.feed(body)
        except anyio.ClosedResourceError:
            pass
