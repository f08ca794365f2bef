"""Whether one side of a connection may send a request now (:func:`send_refusal`): what the
negotiated version has, where the handshake stands, who sends the method, what the server's
transport can carry and what the client declared it can do."""

from __future__ import annotations

from typing import Any

from mcpbind.protocol.client_capabilities import CLIENT_CAPABILITY_FOR, missing_client_capability
from mcpbind.protocol.delivery import Delivery
from mcpbind.protocol.envelope import MODERN_ONLY_METHODS, REMOVED_METHODS
from mcpbind.protocol.methods import RequestSpec
from mcpbind.protocol.wire import Role
from mcpbind.versions import MODERN_VERSIONS

__all__ = ["send_refusal"]


def send_refusal(
    role: Role,
    version: str | None,
    new: bool,
    spec: RequestSpec[Any, Any, Any],
    params: Any,
    related: bool,
    delivery: Delivery,
    peer_capabilities: Any,
) -> str | None:
    """Why a ``role`` side speaking ``version`` (None: none yet) may not send the request
    ``spec`` with ``params`` now, or None when it may. ``new``: nothing was exchanged yet;
    ``related``: it is sent by the handler of a request of the peer's; ``delivery``: what a
    server's transport can carry; ``peer_capabilities``: what the client declared."""
    method = spec.method
    if role == "client":
        stateless = version in MODERN_VERSIONS
        if stateless and method in REMOVED_METHODS:
            return (
                f"{method} is not part of protocol version {version} (stateless: "
                "no handshake, no session state); nothing was sent"
            )
        if method == "server/discover" and new:
            return None  # the probe of a client negotiating the era
        if method in MODERN_ONLY_METHODS and not stateless and not new:
            return f"{method} is not part of protocol version {version}; nothing was sent"
    if method == "initialize":
        if role != "client" or not new:
            return "initialize is sent once, by the client, first"
        return None
    if method != "ping" and new:
        return f"Cannot send {method} before initialization"
    sender_ok = spec.direction.sent_by_client() if role == "client" else spec.direction.sent_by_server()
    if not sender_ok:
        return f"A {role} does not send {method}"
    if role == "server":
        refusal = delivery.refusal(method, related)
        if refusal is not None:
            return refusal
        if method in CLIENT_CAPABILITY_FOR:
            missing = missing_client_capability(peer_capabilities, method, params)
            if missing is not None:
                capability, use = missing
                return (
                    f"The client did not declare the {capability!r} capability needed for {use}; "
                    "nothing was sent"
                )
    return None
