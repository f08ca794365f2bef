"""An in-memory transport pair: two connected ends, for tests and for embedding in one process."""

from __future__ import annotations

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream

from mcpbind.transports.base import DEFAULT_MAX_MESSAGE_SIZE, MessageTooLarge

__all__ = ["MemoryTransport", "memory_pair"]


class MemoryTransport:
    """One end of a :func:`memory_pair`."""

    def __init__(
        self,
        send_stream: MemoryObjectSendStream[bytes],
        receive_stream: MemoryObjectReceiveStream[bytes],
        max_message_size: int,
    ) -> None:
        self._send = send_stream
        self._receive = receive_stream
        self.max_message_size = max_message_size

    async def receive(self) -> bytes:
        message = await self._receive.receive()
        if len(message) > self.max_message_size:
            raise MessageTooLarge(len(message), self.max_message_size)
        return message

    async def send(self, message: bytes) -> None:
        await self._send.send(message)

    def send_nowait(self, message: bytes) -> bool:
        """Queue the message if there is room now; ``False`` (nothing sent) if the buffer is full
        or the other end is gone (``send`` then says which)."""
        try:
            self._send.send_nowait(message)
        except (anyio.WouldBlock, anyio.BrokenResourceError, anyio.ClosedResourceError):
            return False
        return True

    async def aclose(self) -> None:
        await self._send.aclose()
        await self._receive.aclose()


def memory_pair(
    max_buffered: int = 1024, max_message_size: int = DEFAULT_MAX_MESSAGE_SIZE
) -> tuple[MemoryTransport, MemoryTransport]:
    """Two connected transports; ``max_buffered`` messages may wait in each direction."""
    a_send, b_receive = anyio.create_memory_object_stream[bytes](max_buffered)
    b_send, a_receive = anyio.create_memory_object_stream[bytes](max_buffered)
    return (
        MemoryTransport(a_send, a_receive, max_message_size),
        MemoryTransport(b_send, b_receive, max_message_size),
    )
