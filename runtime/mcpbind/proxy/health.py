"""The proxy's health endpoint: ``GET /healthz`` (ASGI middleware in front of the MCP app).

200 and ``{"status": "ok", ...}`` while every upstream server is connected, 200 and
``"degraded"`` while some are (a gateway serves those), 503 and ``"unavailable"`` while none
is; each upstream's state, restarts and calls in flight listed; the MCP endpoint and every other path pass through to the app behind.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, MutableMapping, Sequence
from typing import Any, Final

import msgspec

from mcpbind.proxy.upstream import Upstream

__all__ = ["HEALTH_PATH", "HealthEndpoint", "health_report"]

HEALTH_PATH: Final = "/healthz"

_Scope = MutableMapping[str, Any]
_Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
_Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def health_report(upstreams: Sequence[Upstream]) -> tuple[bool, dict[str, Any]]:
    """Whether any upstream is up (so the endpoint serves), and the report."""
    servers = {
        u.name: {
            "status": u.status,
            "restarts": u.restarts,
            "in_flight": len(u.in_flight),
            "held": len(u.held),
        }
        for u in upstreams
    }
    up = sum(u.remote is not None for u in upstreams)
    status = "ok" if up == len(upstreams) else "degraded" if up else "unavailable"
    return up > 0, {"status": status, "servers": servers}


class HealthEndpoint:
    """``app`` with ``GET`` (or ``HEAD``) ``path`` answered with the health of ``upstreams``."""

    def __init__(self, app: Any, upstreams: Sequence[Upstream], path: str = HEALTH_PATH) -> None:
        self.app = app
        self.upstreams = tuple(upstreams)
        self.path = path

    def __getattr__(self, name: str) -> Any:  # what the host asks of the app behind (its run())
        return getattr(self.app, name)

    async def __call__(self, scope: _Scope, receive: _Receive, send: _Send) -> None:
        if scope["type"] != "http" or scope.get("path") != self.path:
            await self.app(scope, receive, send)
            return
        if scope.get("method") not in ("GET", "HEAD"):
            await _answer(send, 405, b'{"error":"method not allowed"}', [(b"allow", b"GET, HEAD")])
            return
        healthy, report = health_report(self.upstreams)
        body = msgspec.json.encode(report) if scope.get("method") == "GET" else b""
        await _answer(send, 200 if healthy else 503, body, [])


async def _answer(send: _Send, status: int, body: bytes, extra: list[tuple[bytes, bytes]]) -> None:
    headers = [(b"content-type", b"application/json"), (b"cache-control", b"no-store"), *extra]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
