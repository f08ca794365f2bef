"""``x-mcp-header`` (MCP 2026-07-28): the tool arguments a tool's ``inputSchema`` asks Streamable
HTTP clients to mirror as ``Mcp-Param-{Name}`` headers, read from the schema
(:func:`param_headers`), and the header value each argument gives (:func:`argument_at`,
:func:`render_argument`).

An annotation is valid on a property reached from the schema's root through ``properties``
keys alone, of type ``string``, ``integer`` or ``boolean``, with a name that is an HTTP token
unique (ignoring case) in the schema. One invalid annotation makes the whole tool invalid:
clients leave it out of their tool lists, so it is never called with headers.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, NamedTuple

__all__ = ["ANNOTATION", "HEADER_PREFIX", "ParamHeader", "argument_at", "param_headers", "render_argument"]

ANNOTATION: Final = "x-mcp-header"
HEADER_PREFIX: Final = "Mcp-Param-"

# RFC 9110 token characters (a field name).
_TOKEN: Final = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TYPES: Final = frozenset({"string", "integer", "boolean"})

# JSON Schema keywords whose values are schemas (one, a list of them, or a map to them), other
# than ``properties``: an annotation under one of them is not statically reachable. The other
# keywords hold data (``default``, ``enum``, ``examples``...), never read as schemas.
_ONE: Final = frozenset(
    {
        "items",
        "contains",
        "additionalProperties",
        "unevaluatedItems",
        "unevaluatedProperties",
        "propertyNames",
        "not",
        "if",
        "then",
        "else",
        "contentSchema",
        "additionalItems",
    }
)
_LIST: Final = frozenset({"allOf", "anyOf", "oneOf", "prefixItems"})
_MAP: Final = frozenset({"patternProperties", "dependentSchemas", "$defs", "definitions"})


class ParamHeader(NamedTuple):
    """One mirrored argument: its path in the arguments (``properties`` keys from the root),
    the annotation's name, the header's name in lower case (as ASGI gives header names), and
    the property's type."""

    path: tuple[str, ...]
    name: str
    header: bytes
    type: str


def param_headers(schema: Any) -> tuple[ParamHeader, ...] | None:
    """The mirrored arguments of a tool with input schema ``schema`` (none: ``()``), or ``None``
    when an annotation is invalid (see the module's docstring)."""
    found: list[ParamHeader] = []
    seen: set[str] = set()
    stack: list[tuple[tuple[str, ...] | None, Any]] = [((), schema)]
    while stack:
        path, node = stack.pop()
        if not isinstance(node, Mapping):
            continue
        if ANNOTATION in node:
            name = node[ANNOTATION]
            kind = node.get("type")
            if (
                not path
                or not isinstance(name, str)
                or not _TOKEN.fullmatch(name)
                or kind not in _TYPES
                or name.lower() in seen
            ):
                return None
            seen.add(name.lower())
            found.append(ParamHeader(path, name, (HEADER_PREFIX + name).lower().encode(), kind))
        for keyword, value in node.items():
            if keyword == "properties" and isinstance(value, Mapping):
                for key, sub in value.items():
                    stack.append((None if path is None else (*path, key), sub))
            elif keyword in _ONE:
                stack.append((None, value))
            elif keyword in _LIST and isinstance(value, list):
                stack.extend((None, sub) for sub in value)
            elif keyword in _MAP and isinstance(value, Mapping):
                stack.extend((None, sub) for sub in value.values())
    return tuple(found)


def argument_at(arguments: Any, path: tuple[str, ...]) -> Any:
    """The value at ``path`` in a call's ``arguments``; ``None`` when absent (or ``null``)."""
    node = arguments
    for key in path:
        if not isinstance(node, Mapping):
            return None
        node = node.get(key)
    return node


def render_argument(value: Any) -> str | None:
    """An argument's header value before encoding: a string as is, an integer in decimal, a
    boolean as ``true``/``false``; ``None`` for anything else (objects, lists), never mirrored."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        try:
            return str(value)
        except ValueError:  # an integer past Python's digit limit
            return None
    return None
