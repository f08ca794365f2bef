"""The time limit of one HTTP request whose ``httpx.Auth`` may wait for a person: an OAuth
authorization code flow sends the user to a browser in the middle of the request it
authorizes. Such an auth says how long it allows for that (``authorization_timeout``), and the
request's own limit is extended by it; httpx's per-operation timeouts still bound every read,
write and connect."""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import httpx

__all__ = ["WaitsForPerson", "request_time_limit"]


@runtime_checkable
class WaitsForPerson(Protocol):
    """An ``httpx.Auth`` whose flow may wait up to ``authorization_timeout`` seconds for a user."""

    @property
    def authorization_timeout(self) -> float: ...


def request_time_limit(timeout: float, auth: httpx.Auth | None) -> float:
    """``timeout``, plus the time ``auth`` allows a person when it is one that may wait for one."""
    if auth is not None and isinstance(auth, WaitsForPerson):
        return timeout + auth.authorization_timeout
    return timeout
