"""The HTTP headers a stateless (MCP 2026-07-28) request carries over Streamable HTTP, mirrored
from its body so that intermediaries can route on them: ``MCP-Protocol-Version`` (the
version in ``_meta``), ``Mcp-Method``, ``Mcp-Name`` (``params.name`` or ``params.uri`` of
``tools/call``, ``prompts/get``, ``resources/read``) and one ``Mcp-Param-{Name}`` per tool
argument its ``inputSchema`` marks with ``x-mcp-header``; values that are not plain
header-safe ASCII are sent as ``=?base64?...?=``, as the specification says.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Mapping
from typing import Any, Final

import msgspec
from msgspec import UNSET, UnsetType

__all__ = [
    "METHOD_HEADER",
    "NAME_HEADER",
    "PARAM_HEADER_PREFIX",
    "ParamHeaders",
    "encode_value",
    "param_headers",
    "stateless_headers",
]

METHOD_HEADER: Final = "mcp-method"
NAME_HEADER: Final = "mcp-name"
PARAM_HEADER_PREFIX: Final = "Mcp-Param-"
_VERSION_KEY: Final = b'"io.modelcontextprotocol/protocolVersion"'
_NAMED: Final = frozenset({"tools/call", "prompts/get", "resources/read"})
# The tasks extension's methods, whose Mcp-Name is params.taskId.
_TASK_METHODS: Final = frozenset({"tasks/get", "tasks/update", "tasks/cancel"})
_TOKEN: Final = re.compile(r"^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$")
_SAFE: Final = re.compile(r"^[\x20-\x7e\t]*$")
_MAX_SAFE_INTEGER: Final = 2**53 - 1

# Per tool: the path of each annotated argument (``properties`` keys) and its header name.
ParamHeaders = list[tuple[tuple[str, ...], str]]


class _Meta(msgspec.Struct):
    version: str | UnsetType = msgspec.field(name="io.modelcontextprotocol/protocolVersion", default=UNSET)


class _Params(msgspec.Struct):
    meta: _Meta | UnsetType = msgspec.field(name="_meta", default=UNSET)
    name: Any = UNSET
    uri: Any = UNSET
    arguments: Any = UNSET
    task_id: Any = msgspec.field(name="taskId", default=UNSET)


class _Request(msgspec.Struct):
    method: str | UnsetType = UNSET
    params: _Params | UnsetType = UNSET


_decoder: Final = msgspec.json.Decoder(_Request)


def encode_value(value: str) -> str:
    """``value`` as a header value: as it is when it is plain header-safe ASCII, else (and when
    it looks like the sentinel itself) ``=?base64?{Base64 of its UTF-8}?=``."""
    if (
        _SAFE.match(value)
        and value == value.strip(" \t")
        and not (value.startswith("=?base64?") and value.endswith("?="))
    ):
        return value
    return "=?base64?" + base64.b64encode(value.encode("utf-8")).decode("ascii") + "?="


def _text(value: Any) -> str | None:
    """A primitive argument's header text (``None``: no header)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value) if -_MAX_SAFE_INTEGER <= value <= _MAX_SAFE_INTEGER else None
    if isinstance(value, str):
        return value
    return None


def stateless_headers(
    message: bytes, tools: Mapping[str, ParamHeaders] | None = None
) -> dict[str, str] | None:
    """The headers of a stateless request, ``None`` for any other message (no version in its
    ``_meta``)."""
    if _VERSION_KEY not in message:
        return None
    try:
        request = _decoder.decode(message)
    except (msgspec.DecodeError, msgspec.ValidationError):
        return None
    params = request.params
    if (
        isinstance(request.method, UnsetType)
        or isinstance(params, UnsetType)
        or isinstance(params.meta, UnsetType)
        or isinstance(params.meta.version, UnsetType)
    ):
        return None
    method = request.method
    headers = {"mcp-protocol-version": params.meta.version, METHOD_HEADER: method}
    if method in _TASK_METHODS and isinstance(params.task_id, str):
        headers[NAME_HEADER] = encode_value(params.task_id)
    if method in _NAMED:
        name = params.uri if method == "resources/read" else params.name
        if isinstance(name, str):
            headers[NAME_HEADER] = encode_value(name)
        if method == "tools/call" and tools and isinstance(name, str) and isinstance(params.arguments, dict):
            for path, header in tools.get(name, ()):
                value: Any = params.arguments
                for key in path:
                    value = value.get(key) if isinstance(value, dict) else None
                text = _text(value)
                if text is not None:
                    headers[PARAM_HEADER_PREFIX + header] = encode_value(text)
    return headers


def param_headers(input_schema: Any) -> ParamHeaders:
    """The ``x-mcp-header`` annotations of a tool's ``inputSchema``; ``ValueError`` saying why
    for an invalid one (the tool must then be left out of ``tools/list``): a name that is not
    an HTTP token or is used twice (case-insensitively), an annotation on a non-primitive or
    ``number`` property, or one not reachable from the root through ``properties`` alone."""
    found: ParamHeaders = []
    seen: set[str] = set()

    def walk(node: Any, path: tuple[str, ...] | None) -> None:
        # ``path``: the chain of ``properties`` keys to ``node``, ``None`` once off that chain.
        if isinstance(node, list):
            for item in node:
                walk(item, None)
            return
        if not isinstance(node, dict):
            return
        if "x-mcp-header" in node and path is not None and len(path) > 0:
            header = node["x-mcp-header"]
            if not isinstance(header, str) or not _TOKEN.match(header):
                raise ValueError(f"x-mcp-header {header!r} at {'.'.join(path)} is not an HTTP token")
            if header.lower() in seen:
                raise ValueError(f"x-mcp-header {header!r} is used twice")
            kind = node.get("type")
            if kind not in ("string", "integer", "boolean"):
                raise ValueError(f"x-mcp-header {header!r} is on a property of type {kind!r}")
            seen.add(header.lower())
            found.append((path, header))
        elif "x-mcp-header" in node:
            raise ValueError("x-mcp-header is only allowed on properties reachable through `properties`")
        for key, value in node.items():
            if key == "properties" and isinstance(value, dict) and path is not None:
                for name, sub in value.items():
                    walk(sub, (*path, name))
            elif key != "x-mcp-header":
                walk(value, None)

    walk(input_schema, ())
    return found
