"""Resuming a POST stream that another worker writes (workers sharing a store): :func:`follow`.

A 2025-11-25 client whose request's SSE stream was closed early (polling) resumes it with
``GET`` and ``Last-Event-ID``; behind a load balancer that ``GET`` may reach a worker other
than the one running the request. That worker has no live copy of the stream, but every event
of it is in the shared event log as soon as it is sent: it writes the client what the log
holds after the client's last event, then reads the log again and again (every
``first_delay`` seconds at first, twice as long each time nothing came, up to ``max_delay``)
until the request's response is there. The stream ends sooner when the client goes away, when
the session ends, when the store cannot be read, when the worker writing it is dead (asked
every ``check_every`` seconds while nothing comes:
:class:`~mcpbind.transports.http.server.liveness.WorkerLiveness`), or when nothing came for
``silence`` seconds; it then ends with a ``retry:`` hint, and the client resumes it again from
its last event (or, the worker being dead, gives up after its reconnections).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Final

import anyio
import msgspec

from mcpbind.protocol.peek import peek
from mcpbind.store.errors import StoreUnavailable
from mcpbind.transports.http._asgi import Send
from mcpbind.transports.http.events import EventStore, StoredEvent
from mcpbind.transports.http.server.sse_response import write
from mcpbind.transports.http.sse_encode import PING, encode_event, encode_retry

__all__ = ["DEFAULT_RETRY_MS", "Following", "follow", "is_response"]

log = logging.getLogger("mcpbind.http")

# The reconnection delay sent when a followed stream ends without its response, when the app
# has none.
DEFAULT_RETRY_MS: Final = 1000


@dataclass(frozen=True, slots=True)
class Following:
    """How a worker follows another worker's stream (see the module's docstring): the delays
    between two reads of the log, how often the writer's liveness is asked while nothing
    comes, and the longest time without an event before the stream is ended for the client
    to resume again (all in seconds)."""

    first_delay: float = 0.02
    max_delay: float = 0.5
    check_every: float = 1.0
    silence: float = 60.0

    def __post_init__(self) -> None:
        if not 0 < self.first_delay <= self.max_delay or not (self.silence > 0 and self.check_every > 0):
            raise ValueError("following delays must be positive, the first no longer than the longest")


def is_response(data: bytes) -> bool:
    """Whether an event's data is a JSON-RPC response (what ends a POST stream)."""
    try:
        return peek(data).is_response
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


async def follow(
    events: EventStore,
    session_id: str,
    last_event_id: str,
    send: Send,
    *,
    ended: Callable[[], bool],
    keepalive: float | None,
    how: Following,
    retry_ms: int | None = None,
    alive: Callable[[], Awaitable[bool]] | None = None,
) -> bool:
    """Write the stream's events after ``last_event_id`` as the log gets them (see the module's
    docstring) until its response; ``ended()`` says the session ended. True once the response
    was written; False when the stream ended without it (a ``retry:`` hint of ``retry_ms``, or
    :data:`DEFAULT_RETRY_MS`, was written). ``alive()``: whether the worker writing the stream
    is alive (``None``: taken for alive)."""
    delay = how.first_delay
    last_event = last_ping = anyio.current_time()
    last_check = -float("inf")
    while not ended():
        await anyio.sleep(delay)
        try:
            found = await events.replay(session_id, last_event_id)
        except StoreUnavailable as lost:
            log.warning("a stream resumed from the store ends, the store being unavailable: %s", lost)
            break
        fresh: list[StoredEvent] = found[1] if found is not None else []
        now = anyio.current_time()
        if not fresh:
            if now - last_event >= how.silence:
                log.debug("a stream of session %s had no event for %g s: ending it", session_id, how.silence)
                break
            if alive is not None and now - last_check >= how.check_every:
                last_check = now
                if not await alive():
                    log.debug(
                        "a stream of session %s is written by a worker that is gone: ending it", session_id
                    )
                    break
            if keepalive is not None and now - last_ping >= keepalive:
                await write(send, PING)
                last_ping = now
            delay = min(2 * delay, how.max_delay)
            continue
        for event in fresh:
            last_event_id = event.id
            if event.data:
                await write(send, encode_event(event.data, event.id))
                if is_response(event.data):
                    return True
        last_event = last_ping = now
        delay = how.first_delay
    await write(send, encode_retry(DEFAULT_RETRY_MS if retry_ms is None else retry_ms))
    return False
