"""The calls a proxy is forwarding, and which of them a server's question belongs to.

A server of a handshake version asks its client things mid-call (``elicitation/create``,
``sampling/createMessage``, ``roots/list``) and logs, but over stdio nothing on the wire says
which call a question belongs to. The proxy answers it from the client of the call it belongs
to: the call whose task asked (a stateless server's questions are answered inline, in the
forwarding task: :data:`current_call`), else the one call in flight whose client can answer,
else, with several, the latest of them (a documented limit: give such a server one client at a
time, or one proxy per client, when its questions must reach the right one). A question no
call in flight can answer is refused to the server (never put to a client that did not
declare the capability it needs).
"""

from __future__ import annotations

import contextvars
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final

from msgspec import UNSET

from mcpbind.runtime.context import RequestContext

__all__ = ["CAPABILITY_OF", "FrontCall", "InFlight", "current_call", "declares"]

# The client capability each question needs.
CAPABILITY_OF: Final = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}


class FrontCall:
    """A request a client sent the proxy, while it is forwarded: its context (``ctx``, the
    front request's), and for a stateless request whose server asks questions the proxy holds
    (``held``: see :mod:`mcpbind.proxy.held`)."""

    __slots__ = ("ctx", "held")

    def __init__(self, ctx: RequestContext[Any], held: Any = None) -> None:
        self.ctx = ctx
        self.held = held

    @property
    def stateless(self) -> bool:
        return self.ctx.envelope is not None

    def can_answer(self, method: str) -> bool:
        """Whether this call's client declared what ``method`` needs."""
        capability = CAPABILITY_OF.get(method)
        if capability is None:  # a log message: any call takes it
            return True
        if self.stateless and self.held is None:  # (its client is asked by its own server)
            return False
        return declares(self.ctx.peer_capabilities, method)


def declares(capabilities: Any, method: str) -> bool:
    """Whether a client's ``capabilities`` declare what the question ``method`` needs (a
    capability left out is ``UNSET``, or ``None`` where none are known)."""
    declared = getattr(capabilities, CAPABILITY_OF[method], UNSET)
    return declared is not None and declared is not UNSET


current_call: Final[contextvars.ContextVar[FrontCall | None]] = contextvars.ContextVar(
    "mcpbind_proxy_call", default=None
)


class InFlight:
    """The calls being forwarded to one server, oldest first."""

    __slots__ = ("_calls",)

    def __init__(self) -> None:
        self._calls: dict[int, FrontCall] = {}

    def __len__(self) -> int:
        return len(self._calls)

    @contextmanager
    def tracking(self, call: FrontCall) -> Iterator[FrontCall]:
        """``call`` is in flight (and the current call of this task) during the block."""
        key = id(call)
        self._calls[key] = call
        token = current_call.set(call)
        try:
            yield call
        finally:
            current_call.reset(token)
            self._calls.pop(key, None)

    def owner(self, method: str, accept: Callable[[FrontCall], bool] | None = None) -> FrontCall | None:
        """The call a server's ``method`` (a question, or a log message) belongs to; ``None``
        when no call in flight can take it."""
        mine = current_call.get()
        if mine is not None:
            return mine
        able = [c for c in self._calls.values() if c.can_answer(method) and (accept is None or accept(c))]
        return able[-1] if able else None
