"""The protocol versions this runtime speaks, and what differs between them.

This is the one runtime module that names a version: every other module works on the version
its connection or request negotiated, and asks here what that version means. A version is its
date string (``"2025-11-25"``); dates of the same form compare in time order as strings.
Handlers see the types of :data:`HANDLER_VERSION` (``mcpbind.types``); the runtime reaches a
negotiated version's generated package (its method table, its structs) through
:func:`schema_for`, never by importing it.
"""

from __future__ import annotations

from functools import cache
from types import ModuleType
from typing import Final

from mcpbind.schema import VERSIONS, load

__all__ = [
    "HANDLER_VERSION",
    "HANDSHAKE_VERSIONS",
    "KNOWN_VERSIONS",
    "LATEST_VERSION",
    "MODERN_VERSIONS",
    "POLLING_SINCE",
    "STREAMABLE_HTTP_ASSUMED_VERSION",
    "SUPPORTED_VERSIONS",
    "TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS",
    "schema_for",
]

# The version whose types handlers see, whatever was negotiated: the newest with an
# ``initialize`` handshake, a superset of the older ones. ``mcpbind.types`` is this version's
# package (its import is static, for type checkers: change both together).
HANDLER_VERSION: Final = "2025-11-25"

# Every version spoken, newest first.
SUPPORTED_VERSIONS: Final[tuple[str, ...]] = (
    "2026-07-28",
    "2025-11-25",
    "2025-06-18",
    "2025-03-26",
    "2024-11-05",
)

# The stateless versions: no ``initialize`` handshake; every request carries its version, the
# client's capabilities and identity in ``params._meta`` and is served on its own.
MODERN_VERSIONS: Final = frozenset({"2026-07-28"})

# The versions negotiated with an ``initialize`` handshake, newest first: a server that cannot
# give a client the version it asked for offers the first of those it supports.
HANDSHAKE_VERSIONS: Final[tuple[str, ...]] = tuple(v for v in SUPPORTED_VERSIONS if v not in MODERN_VERSIONS)

# The newest version: what a client probes with first.
LATEST_VERSION: Final = SUPPORTED_VERSIONS[0]

# Streamable HTTP: what a request without an ``MCP-Protocol-Version`` header is taken to speak
# (the specification's rule).
STREAMABLE_HTTP_ASSUMED_VERSION: Final = "2025-03-26"

# Streamable HTTP: from this version on, SSE streams start with a priming event and the server
# may close them early for the client to poll (reconnect with ``Last-Event-ID``).
POLLING_SINCE: Final = "2025-11-25"

# Versions whose clients expect arguments a tool refuses as a JSON-RPC error (-32602) rather
# than as an ``isError`` result.
TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS: Final = frozenset({"2024-11-05", "2025-03-26", "2025-06-18"})


# Every version this build has generated types for, oldest first (a superset of the supported
# ones: a version is generated before the runtime speaks it).
KNOWN_VERSIONS: Final[tuple[str, ...]] = VERSIONS


@cache
def schema_for(version: str) -> ModuleType:
    """The generated package of ``version`` (``methods``, ``stubs`` and its structs), imported
    on first use: each version's modules cost memory and start-up time, so only the versions
    connections negotiate are loaded. :class:`LookupError` for a version not in
    :data:`KNOWN_VERSIONS`."""
    return load(version)
