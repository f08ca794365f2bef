"""Workers sharing a store (issue 16): what one raises, every other one's clients hear.

A server serving with a store (:meth:`Server.serving(store=...)
<mcpbind.server.server.Server.serving>`, which the HTTP app's ASGI lifespan enters when it is
given a store) runs a :class:`Fanout` while it serves. Each list change and resource update raised on
this worker is delivered here as before and also published on the store's ``changes`` channel,
tagged with this worker's id; every worker subscribes to that channel for as long as it
serves and delivers the changes of the others to its own listen streams and sessions (its own,
which come back too, are skipped: they were delivered already).

Publishing never waits: changes queue (at most ``max_queued``; past that they are dropped,
with a warning) for a task that publishes them. Redis publish/subscribe keeps nothing for a
worker that is not connected, so when the store is away changes are lost; the subscription
then connects again (backing off up to ``max_retry_delay`` seconds) and, once back, tells
every listen stream and session of this worker that everything it watches may have changed:
a client re-reads a list once too often rather than miss a change.

:func:`sharing` also gives the server the store's request-state key (:func:`shared_key
<mcpbind.store.keys.shared_key>`), unless the server was given one, and asserts it again after
each reconnection: a Redis that restarted empty gets the key back from the workers that
hold it, not a new one from a worker starting then.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Final

import anyio
import msgspec
from anyio.abc import TaskStatus

from mcpbind.exception_groups import only_error
from mcpbind.runtime.request_state import RequestStateSigner
from mcpbind.server.broadcast import Broadcasts
from mcpbind.store.base import Store
from mcpbind.store.errors import StoreUnavailable
from mcpbind.store.keys import shared_key

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["CHANNEL", "Change", "Fanout", "sharing"]

log = logging.getLogger("mcpbind.store")

# The store channel (the store adds its prefix) the changes of every worker go through.
CHANNEL: Final = "changes"


class Change(msgspec.Struct, array_like=True, frozen=True):
    """A change as workers send it: raised by ``worker``; a list change ``method``, or the
    update (``method`` ``notifications/resources/updated``) of ``uri``."""

    worker: str
    method: str
    uri: str = ""


_ENCODER: Final = msgspec.json.Encoder()
_DECODER: Final = msgspec.json.Decoder(Change)


class Fanout:
    """The changes of ``broadcasts`` sent to the workers sharing ``store``, and theirs
    received (see the module). :meth:`run` in a task group; :meth:`relay` is what
    :attr:`Broadcasts.relay <mcpbind.server.broadcast.Broadcasts.relay>` is set to."""

    def __init__(
        self,
        broadcasts: Broadcasts,
        store: Store,
        *,
        max_queued: int = 1024,
        max_retry_delay: float = 2.0,
        on_reconnect: RequestStateSigner | None = None,
    ) -> None:
        self.broadcasts = broadcasts
        self.store = store
        # (os.urandom, not secrets: secrets imports hmac and OpenSSL's hashes, which a stdio
        # server's start-up does not need)
        self.worker = os.urandom(8).hex()
        self.max_queued = max_queued
        self.max_retry_delay = max_retry_delay
        # The signer whose shared key is asserted again after each reconnection, if any.
        self.signer = on_reconnect
        self._send, self._receive = anyio.create_memory_object_stream[bytes](max_queued)
        self._dropping = False
        # Set while the subscription is connected (tests and health checks read it).
        self.connected = False

    def relay(self, method: str, uri: str) -> None:
        """Queue a change raised here for the other workers (never waits)."""
        try:
            self._send.send_nowait(_ENCODER.encode(Change(self.worker, method, uri)))
        except anyio.WouldBlock:
            if not self._dropping:
                log.warning("the store is not keeping up: changes for other workers dropped")
            self._dropping = True
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):  # pragma: no cover - stopped
            pass

    async def run(self, *, task_status: TaskStatus[None] = anyio.TASK_STATUS_IGNORED) -> None:
        """Publish what :meth:`relay` queues and apply the changes of other workers, until
        cancelled; started (``task_status``) once subscribed. :class:`StoreUnavailable` if the
        first subscription fails (the store is unreachable at start)."""
        async with anyio.create_task_group() as tg, self._send, self._receive:
            tg.start_soon(self._publish)
            await self._subscribe(task_status)

    async def _publish(self) -> None:
        failing = False
        async for data in self._receive:
            try:
                await self.store.publish(CHANNEL, data)
            except StoreUnavailable as lost:
                if not failing:
                    log.warning("changes for other workers are lost while the store is away: %s", lost)
                failing = True
            else:
                failing = self._dropping = False

    async def _subscribe(self, task_status: TaskStatus[None]) -> None:
        started = lost = False
        delay = 0.05
        while True:
            try:
                async with self.store.subscribe(CHANNEL) as changes:
                    self.connected = True
                    delay = 0.05
                    if not started:
                        task_status.started()
                        started = True
                    elif lost:
                        lost = False
                        log.warning("the store is back: other workers' changes are received again")
                        await self._recovered()
                    async for data in changes:
                        await self._apply(data)
            except StoreUnavailable as error:
                self.connected = False
                if not started:
                    raise
                if not lost:
                    log.warning("other workers' changes are missed while the store is away: %s", error)
                lost = True
            await anyio.sleep(delay)
            delay = min(delay * 2, self.max_retry_delay)

    async def _recovered(self) -> None:
        """After an outage: the shared key asserted again, everything told as changed."""
        if self.signer is not None:
            try:
                self.signer.use_key(await shared_key(self.store))
            except StoreUnavailable as error:  # lost again: the next reconnection retries
                log.warning("the request-state key could not be checked in the store: %s", error)
        await self.broadcasts.all_changed()

    async def _apply(self, data: bytes) -> None:
        try:
            change = _DECODER.decode(data)
        except msgspec.DecodeError:
            log.warning("a change in the store that is not one was ignored: %r", data[:200])
            return
        if change.worker != self.worker:
            await self.broadcasts.changed_elsewhere(change.method, change.uri)


@asynccontextmanager
async def sharing(
    broadcasts: Broadcasts, store: Store, signer: RequestStateSigner | None
) -> AsyncIterator[Fanout]:
    """Serve sharing ``store`` during the block (the store is open): ``signer`` (``None``: the
    server was given its own key) takes the store's request-state key, and a :class:`Fanout`
    runs. :class:`StoreUnavailable` when the store cannot be reached at start."""
    if broadcasts.relay is not None:
        raise RuntimeError("this server already serves sharing a store (one store per server)")
    if signer is not None:
        signer.use_key(await shared_key(store))
    fanout = Fanout(broadcasts, store, on_reconnect=signer)
    try:
        async with anyio.create_task_group() as tg:
            try:
                await tg.start(fanout.run)
            except StoreUnavailable:
                tg.cancel_scope.cancel()
                raise
            broadcasts.relay = fanout.relay
            try:
                yield fanout
            finally:
                broadcasts.relay = None
                tg.cancel_scope.cancel()
    except BaseExceptionGroup as group:
        error = only_error(group)
        if isinstance(error, StoreUnavailable):  # the store unreachable at start: said plainly
            raise error from None
        raise
    finally:
        if signer is not None:
            signer.use_key(None)
