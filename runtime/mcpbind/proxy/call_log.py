"""One log record per forwarded call (logger ``mcpbind.proxy.calls``, level INFO): the server,
the method, the tool or prompt name or resource URI, the duration and the outcome (``ok``, an
``error`` with its code, ``input_required`` for a round that ends asking the client,
``cancelled``), as ``key=value`` text and as the record's ``mcp_call`` attribute (a dict, for
structured handlers). Params and results are left out unless ``payloads`` is set.

Nothing is decoded for it when the logger does not take INFO records.
"""

from __future__ import annotations

import json
import logging
import time
from typing import Any, Final

import msgspec

__all__ = ["CallLog"]

log: Final = logging.getLogger("mcpbind.proxy.calls")


class _Target(msgspec.Struct):
    name: Any = None
    uri: Any = None


_TARGET: Final = msgspec.json.Decoder(_Target)


class CallLog:
    """Logs the calls forwarded to the server ``server``."""

    __slots__ = ("payloads", "server")

    def __init__(self, server: str, *, payloads: bool = False) -> None:
        self.server = server
        self.payloads = payloads

    @staticmethod
    def start() -> float | None:
        """The start of a call, or ``None`` when no record will be written."""
        return time.perf_counter() if log.isEnabledFor(logging.INFO) else None

    def done(
        self,
        started: float | None,
        method: str,
        params: msgspec.Raw,
        outcome: str,
        result: msgspec.Raw | None = None,
    ) -> None:
        if started is None:
            return
        call: dict[str, Any] = {"server": self.server, "method": method}
        target = _target(params)
        if target is not None:
            call["target"] = target
        call["outcome"] = outcome
        call["duration_ms"] = round((time.perf_counter() - started) * 1000, 3)
        if self.payloads:
            call["params"] = bytes(params).decode("utf-8", "replace") if params else None
            call["result"] = bytes(result).decode("utf-8", "replace") if result else None
        text = " ".join(f"{key}={_text(value)}" for key, value in call.items())
        log.info("call %s", text, extra={"mcp_call": call})


def _target(params: msgspec.Raw) -> str | None:
    if not params:
        return None
    try:
        found = _TARGET.decode(params)
    except (msgspec.DecodeError, RecursionError):
        return None
    for value in (found.name, found.uri):
        if isinstance(value, str):
            return value
    return None


def _text(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value)
    return json.dumps(text) if (not text or any(c in text for c in ' "=\n')) else text
