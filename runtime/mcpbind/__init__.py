"""mcpbind: the Model Context Protocol for Python, typed from the official schemas.

The one import surface::

    from mcpbind import Client, Context, McpError, Server, ToolError, types

and for annotations and extensions: ``RemoteServer`` (what a client's ``connect`` yields) and
``Middleware`` (a receiving middleware for either endpoint).
``types`` holds the types handlers see (:mod:`mcpbind.types`); an exact protocol version's types
are in ``mcpbind.schema.v<date>``. ``Context`` is the request context a handler receives
(:class:`mcpbind.runtime.context.RequestContext`). These names are imported on first use, so
``import mcpbind`` alone stays cheap.
"""

from __future__ import annotations

import os as _os
import sys as _sys

# Not typing.TYPE_CHECKING: importing typing would cost more than the rest of this module.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from mcpbind import types as types
    from mcpbind.client.client import Client as Client
    from mcpbind.client.remote import RemoteServer as RemoteServer
    from mcpbind.protocol.errors import McpError as McpError
    from mcpbind.protocol.errors import ToolError as ToolError
    from mcpbind.runtime.context import RequestContext as Context
    from mcpbind.runtime.middleware import Middleware as Middleware
    from mcpbind.server.server import Server as Server

__all__ = [
    "Client",
    "Context",
    "McpError",
    "Middleware",
    "RemoteServer",
    "Server",
    "ToolError",
    "__version__",
    "types",
]

# The generated bindings live in a second source root (generated/mcpbind) during development;
# a wheel merges both into one folder. In the development layout, every ``mcpbind`` folder on
# sys.path joins this package (what pkgutil.extend_path does, without importing pkgutil and
# importlib.util, a few milliseconds of every start).
if not _os.path.isdir(_os.path.join(__path__[0], "schema")):
    _known = {_os.path.realpath(entry) for entry in __path__}
    for _entry in _sys.path:
        if isinstance(_entry, str):
            _portion = _os.path.join(_entry or _os.curdir, __name__)
            if _os.path.realpath(_portion) not in _known and _os.path.isdir(_portion):
                _known.add(_os.path.realpath(_portion))
                __path__.append(_portion)

__version__ = "0.1.0"


# Where each name of the surface lives: (module, attribute; None for the module itself).
_LAZY: dict[str, tuple[str, str | None]] = {
    "Client": ("mcpbind.client.client", "Client"),
    "Context": ("mcpbind.runtime.context", "RequestContext"),
    "McpError": ("mcpbind.protocol.errors", "McpError"),
    "Middleware": ("mcpbind.runtime.middleware", "Middleware"),
    "RemoteServer": ("mcpbind.client.remote", "RemoteServer"),
    "Server": ("mcpbind.server.server", "Server"),
    "ToolError": ("mcpbind.protocol.errors", "ToolError"),
    "types": ("mcpbind.types", None),
}

if not TYPE_CHECKING:  # for type checkers the names above are plain imports, and no other exists

    def __getattr__(name: str) -> object:
        try:
            module_name, attribute = _LAZY[name]
        except KeyError:
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
        from importlib import import_module

        module = import_module(module_name)
        value = module if attribute is None else getattr(module, attribute)
        globals()[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *__all__})


del TYPE_CHECKING
