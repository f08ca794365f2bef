"""The types handlers see: those of the handler-facing protocol version
(:data:`mcpbind.versions.HANDLER_VERSION`), whatever version a connection negotiated.

``from mcpbind import types`` then ``types.CallToolResult``, ``types.methods.TOOLS_CALL``,
``types.stubs.HandlesToolsCall``. An exact version's types are in ``mcpbind.schema.v<date>``.
Decode them with ``mcpbind.protocol.unions.decode(data, Type)``.
"""

# ruff: noqa: F403  (a star import of a package whose __all__ is a literal list)

from __future__ import annotations

# The package of versions.HANDLER_VERSION, imported statically so type checkers see its names;
# its __all__ is extended in the form type checkers (mypy, pyright) follow, not copied.
from mcpbind.schema import v2025_11_25 as _handler_version
from mcpbind.schema.v2025_11_25 import *

__all__: list[str] = []
__all__ += _handler_version.__all__
