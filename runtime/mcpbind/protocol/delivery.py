"""What the transport of a server's connection can carry to the client besides the answers to
its requests (:class:`Delivery`), and so what the server may declare and send."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpbind import types

__all__ = ["FULL_DELIVERY", "Delivery"]


@dataclass(frozen=True, slots=True)
class Delivery:
    """What the transport of a server's connection can carry to the client besides the
    responses to the client's requests, and so what the server may declare and send. The one
    place that knows what each kind of message needs; stdio and in-memory transports carry
    everything (the default), Streamable HTTP what its options allow
    (:func:`mcpbind.transports.http.server.delivery_for`).

    * ``unrelated``: messages tied to no request of the client's reach it (list changes,
      resource updates, requests sent from outside a request's handler). Without it no
      ``listChanged`` and no ``resources.subscribe`` are declared.
    * ``related``: what a request's handler sends before its response reaches the client
      (progress, log messages, requests to the client). Without it no ``logging`` is declared
      and log messages are not sent.
    * ``answers``: the client's answers to the server's requests reach the server.
    * ``mode``, ``why`` and ``remedy`` name the mode, what it lacks and the option that changes
      it, for the error a request that cannot be sent raises (see :meth:`refusal`).
    """

    unrelated: bool = True
    related: bool = True
    answers: bool = True
    mode: str = ""
    why: str = ""
    remedy: str = ""

    def refusal(self, method: str, related: bool) -> str | None:
        """Why a request ``method`` to the client cannot be sent (``related``: by the handler of
        a request of the client's), or ``None`` when it can."""
        if self.answers and (self.related if related else self.unrelated):
            return None
        where = " from outside a request's handler" if self.answers and self.related and not related else ""
        return f"Cannot send {method}: {self.mode} cannot send requests to the client{where} ({self.why}); {self.remedy}"

    def declarable(self, capabilities: types.ServerCapabilities) -> types.ServerCapabilities:
        """``capabilities`` without what could never reach the client (see the fields)."""
        changes: dict[str, Any] = {}
        if not self.unrelated:
            for name in ("tools", "resources", "prompts"):
                part = getattr(capabilities, name)
                if isinstance(part, msgspec.UnsetType):
                    continue
                drop = {"list_changed": UNSET}
                if name == "resources":
                    drop["subscribe"] = UNSET
                changes[name] = msgspec.structs.replace(part, **drop)
        if not self.related and capabilities.logging is not UNSET:
            changes["logging"] = UNSET
        return msgspec.structs.replace(capabilities, **changes) if changes else capabilities


# What stdio and in-memory transports carry: everything.
FULL_DELIVERY: Final = Delivery()
