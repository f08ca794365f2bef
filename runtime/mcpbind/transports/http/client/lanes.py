"""The Streamable HTTP client's connection budget: requests go by one lane, pings,
notifications and responses by another, so control messages never wait behind calls; and the
httpx connection pool that budget needs."""

from __future__ import annotations

import anyio
import httpx

__all__ = ["CONTROL_CONNECTIONS", "DEFAULT_MAX_REQUESTS_IN_FLIGHT", "Place", "connection_limits"]

DEFAULT_MAX_REQUESTS_IN_FLIGHT = 256
"""How many requests a :class:`StreamableHTTPTransport` has in flight at most, by default."""

CONTROL_CONNECTIONS = 8
"""Connections kept for pings, notifications and responses, which never wait behind requests."""

# Connections kept for the GET stream (and one replacing it, or the DELETE at the end).
_SESSION_CONNECTIONS = 2


def connection_limits(max_requests_in_flight: int = DEFAULT_MAX_REQUESTS_IN_FLIGHT) -> httpx.Limits:
    """The connection pool a Streamable HTTP transport with ``max_requests_in_flight`` needs:
    one connection per request in flight, :data:`CONTROL_CONNECTIONS` for control messages and
    two for the GET stream, all kept alive between uses. For an ``httpx.AsyncClient`` of your
    own: ``httpx.AsyncClient(limits=connection_limits(n))`` with ``max_requests_in_flight=n``.
    """
    if max_requests_in_flight < 1:
        raise ValueError("max_requests_in_flight must be at least 1")
    total = max_requests_in_flight + CONTROL_CONNECTIONS + _SESSION_CONNECTIONS
    return httpx.Limits(max_connections=total, max_keepalive_connections=total)


class Place:
    """A message's place in its lane (requests, or control messages): taken before its HTTP
    request is sent, given back once its exchange is over (for a request answered with a
    stream, when the stream ends). Giving it back twice gives it back once."""

    __slots__ = ("held", "lane", "streaming")

    def __init__(self, lane: anyio.Semaphore) -> None:
        self.lane = lane
        self.held = False
        self.streaming = False  # handed over to the task that reads the request's stream

    async def take(self) -> None:
        try:
            self.lane.acquire_nowait()  # no trip through the event loop while there is room
        except anyio.WouldBlock:
            await self.lane.acquire()
        self.held = True

    def give_back(self) -> None:
        if self.held:
            self.held = False
            self.lane.release()
