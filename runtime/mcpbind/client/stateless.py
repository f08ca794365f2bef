"""What a client connected with a stateless protocol version (MCP 2026-07-28) keeps for its
requests: the version and the ``_meta`` block every request carries in place of the
``initialize`` handshake (the version, the client's capabilities and identity, the log level
it wants), and what the server said of itself."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import msgspec

from mcpbind import types
from mcpbind.protocol.envelope import LOG_LEVEL, SERVER_INFO, envelope_meta
from mcpbind.protocol.methods import RequestSpec

__all__ = ["Stateless", "raw_result_spec"]


@dataclass(slots=True)
class Stateless:
    """A stateless connection's request metadata. ``log_level`` is the default lowest level
    of log messages asked for on each request (``None``: none are sent);
    ``server_info``: the server's identity, from ``server/discover`` or, failing that, from
    the ``_meta`` of its first result."""

    version: str
    capabilities: Any
    info: types.Implementation
    log_level: types.LoggingLevel | None = None
    max_input_rounds: int = 8
    server_info: types.Implementation | None = None
    _base: dict[str, Any] = field(init=False)

    def __post_init__(self) -> None:
        self._base = envelope_meta(self.version, self.capabilities, self.info)

    def stamp(self, params: Any, log_level: types.LoggingLevel | None = None) -> Any:
        """``params`` with the envelope merged into its ``_meta`` (the caller's own entries,
        a progress token say, kept; a per-call ``log_level`` wins over the default)."""
        meta = dict(self._base)
        level = log_level if log_level is not None else self.log_level
        if level is not None:
            meta[LOG_LEVEL] = level
        own = getattr(params, "meta", msgspec.UNSET)
        if isinstance(own, dict):
            meta.update(own)
        return msgspec.structs.replace(params, meta=meta)

    def note_result(self, result: Any) -> None:
        """Learn the server's identity from a result's ``_meta`` while it is not known."""
        if self.server_info is not None:
            return
        meta = getattr(result, "meta", None)
        found = meta.get(SERVER_INFO) if isinstance(meta, dict) else None
        if isinstance(found, dict):
            try:
                self.server_info = msgspec.convert(found, types.Implementation)
            except msgspec.ValidationError:
                pass


@functools.cache
def raw_result_spec(spec: RequestSpec[Any, Any, Any]) -> RequestSpec[Any, msgspec.Raw, Any]:
    """``spec`` with its result left undecoded (a multi round-trip or cached method's result
    is looked into before it is decoded)."""
    return RequestSpec(
        spec.method, spec.direction, spec.params_type, msgspec.Raw, params_optional=spec.params_optional
    )
