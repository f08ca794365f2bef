"""What both HTTP client transports (:mod:`.streamable`, :mod:`.legacy`) share: a ``receive()`` fed by a queue."""

from __future__ import annotations

from anyio.streams.memory import MemoryObjectReceiveStream

from mcpbind.transports.base import MessageTooLarge

# What a transport's background reader queues for ``receive()``.
Received = bytes | MessageTooLarge


class QueuedReceive:
    """``receive()`` of a client transport whose background tasks queue what arrives in
    ``_received``: a message, or a :class:`~mcpbind.transports.base.MessageTooLarge` (an event
    discarded while it arrived), which is raised."""

    _received: MemoryObjectReceiveStream[Received]

    async def receive(self) -> bytes:
        item = await self._received.receive()
        if isinstance(item, MessageTooLarge):
            raise item
        return item
