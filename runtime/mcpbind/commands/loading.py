"""The server ``mcpbind serve`` runs: :func:`load_server` finds it in a Python file or an
importable module, by name or as the one :class:`Server` there."""

from __future__ import annotations

import importlib
import importlib.util
import sys
from pathlib import Path

from mcpbind.commands.failures import CommandError, describe
from mcpbind.server.server import Server

__all__ = ["load_server"]

_DEFAULT_ATTRS = ("server", "mcp", "app")


def load_server(target: str) -> Server:
    """The :class:`Server` that ``target`` names: ``file.py[:attr]`` or ``module[:attr]``; an
    ``attr`` that is not a Server is called (a factory such as ``build``). Raises
    :class:`CommandError` when there is no such file, module or attribute, when loading the
    module or calling the factory fails, or when it finds no Server."""
    location, _, attr = target.partition(":")
    if location.endswith(".py") or "/" in location or "\\" in location:
        path = Path(location).resolve()
        if not path.is_file():
            raise CommandError(f"no such file: {location}")
        spec = importlib.util.spec_from_file_location(path.stem, path)
        if spec is None or spec.loader is None:
            raise CommandError(f"cannot load {location}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        sys.path.insert(0, str(path.parent))
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise CommandError(f"cannot load {location}: {describe(exc)}") from exc
    else:
        try:
            module = importlib.import_module(location)
        except ModuleNotFoundError as exc:
            if exc.name == location or location.startswith(f"{exc.name}."):  # the module itself
                raise CommandError(f"no module named {location!r}") from exc
            raise CommandError(f"cannot import {location}: {describe(exc)}") from exc
        except Exception as exc:
            raise CommandError(f"cannot import {location}: {describe(exc)}") from exc
    if attr:
        if not hasattr(module, attr):
            raise CommandError(f"{location} has no attribute {attr!r}")
        found = getattr(module, attr)
        if callable(found) and not isinstance(found, Server):
            try:
                found = found()  # a factory such as build()
            except Exception as exc:
                raise CommandError(f"{target}() failed: {describe(exc)}") from exc
        if not isinstance(found, Server):
            raise CommandError(f"{target} is not an mcpbind Server")
        return found
    for name in _DEFAULT_ATTRS:
        found = getattr(module, name, None)
        if isinstance(found, Server):
            return found
    servers = [value for value in vars(module).values() if isinstance(value, Server)]
    if len(servers) == 1:
        return servers[0]
    raise CommandError(f"name the server in {location} as {location}:ATTR ({len(servers)} found)")
