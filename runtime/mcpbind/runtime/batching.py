"""A client's requests made in one turn of the event loop, written together
(:class:`RequestBatcher`): one write, and one wake-up of the peer, rather than one each."""

from __future__ import annotations

from collections.abc import Callable

from anyio.lowlevel import checkpoint

from mcpbind.transports.base import BatchNowaitSender, Transport, batch_sender

__all__ = ["RequestBatcher", "request_batcher"]


class RequestBatcher:
    """Writes the requests a :class:`~mcpbind.runtime.sender.Sender` makes while others are in
    flight, together with those made in the same turn of the event loop, through a transport
    that takes several messages in one write (a
    :class:`~mcpbind.transports.base.BatchNowaitSender`). ``queue(data)`` hands a message to
    the sender's queue (its ``send_soon``), for what cannot be written at once; ``queued()``
    says whether messages wait in that queue already (then the batch goes after them)."""

    __slots__ = ("_batch", "_queue", "_queued", "_transport")

    def __init__(
        self, transport: BatchNowaitSender, queue: Callable[[bytes], object], queued: Callable[[], bool]
    ) -> None:
        self._transport = transport
        self._queue = queue
        self._queued = queued
        self._batch: list[bytes] | None = None

    async def send(self, data: bytes) -> None:
        """Send a request made while others are in flight together with the requests made in
        the same turn of the event loop: the first of them lets the other tasks ready to run
        have their turn (the callers a read of answers woke, each making its next request)
        and writes them all in one write, rather than one write (and one wake-up of the peer)
        each. A lone request (nothing else in flight) is written at once instead, by the
        sender, so this costs a call made one at a time nothing. What cannot be written at
        once goes, in order, to the sender's queue; a cancellation of the first caller
        meanwhile still writes the batch, since the others are in it."""
        batch = self._batch
        if batch is not None:
            batch.append(data)
            return
        batch = self._batch = [data]
        try:
            await checkpoint()
        finally:
            self._batch = None
            self._write(batch)

    def _write(self, batch: list[bytes]) -> None:
        done = 0
        if not self._queued():
            while done < len(batch):
                written = self._transport.send_batch_nowait(batch[done:] if done else batch)
                if not written:
                    break
                done += written
        for data in batch[done:]:
            self._queue(data)


def request_batcher(
    transport: Transport, queue: Callable[[bytes], object], queued: Callable[[], bool]
) -> RequestBatcher | None:
    """A :class:`RequestBatcher` writing through ``transport``, or None if it takes no batch."""
    batcher = batch_sender(transport)
    return None if batcher is None else RequestBatcher(batcher, queue, queued)
