"""The checks of a stateless (2026-07-28) POST's headers against its body: what intermediaries
route on (``MCP-Protocol-Version``, ``Mcp-Method``, ``Mcp-Name``, ``Mcp-Param-{Name}``) must be
what the server executes. A header missing, repeated, malformed or differing from the body is
refused with 400 and ``HeaderMismatch`` (-32020); a request without the protocol version in its
``_meta`` with 400 and -32602.

``Mcp-Name`` is checked for ``tools/call`` and ``prompts/get`` (``params.name``) and
``resources/read`` (``params.uri``); ``Mcp-Param-{Name}`` headers for the ``tools/call`` of a
tool whose input schema annotates arguments with ``x-mcp-header`` (the server's
``tool_input_schema(name)`` gives the schema; a server without that method, or with a tool
it does not know, has nothing to check).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, Final

import msgspec
from msgspec import UNSET

from mcpbind.protocol.envelope import PROTOCOL_VERSION
from mcpbind.protocol.errors import HEADER_MISMATCH, INVALID_PARAMS
from mcpbind.protocol.jsonrpc import RequestId
from mcpbind.protocol.peek import PeekedRequest
from mcpbind.transports.http.errors import HttpError
from mcpbind.transports.http.header_values import decode_header_value
from mcpbind.transports.http.param_headers import ParamHeader, argument_at, param_headers, render_argument
from mcpbind.transports.http.server.request import RequestHead

__all__ = ["NAME_FIELDS", "ParamHeaderChecks", "check_request_headers"]

# The methods whose Mcp-Name header mirrors a member of params, and that member.
NAME_FIELDS: Final = {"tools/call": "name", "prompts/get": "name", "resources/read": "uri"}

_HEADER_NAMES: Final = {
    b"mcp-protocol-version": "MCP-Protocol-Version",
    b"mcp-method": "Mcp-Method",
    b"mcp-name": "Mcp-Name",
}


def _shown(value: str) -> str:
    return repr(value if len(value) <= 80 else value[:77] + "...")


def mismatch(message: str, ident: RequestId) -> HttpError:
    return HttpError(400, HEADER_MISMATCH, f"Header mismatch: {message}", ident)


def check_request_headers(
    request: RequestHead, version: str, peeked: PeekedRequest, ident: RequestId
) -> None:
    """Refuse (raise :class:`HttpError`) a request whose ``MCP-Protocol-Version`` (naming
    ``version``), ``Mcp-Method`` or ``Mcp-Name`` is missing, repeated or not its body's."""
    params = peeked.params
    meta = UNSET if params is UNSET else params.meta
    body_version = UNSET if meta is UNSET else meta.version
    if body_version is UNSET or body_version is None:
        raise HttpError(
            400, INVALID_PARAMS, f"Invalid params: `params._meta[{PROTOCOL_VERSION!r}]` is missing", ident
        )
    if not isinstance(body_version, str):
        raise HttpError(
            400,
            INVALID_PARAMS,
            f"Invalid params: `params._meta[{PROTOCOL_VERSION!r}]` must be a string",
            ident,
        )
    if request.repeated is not None:
        name = _HEADER_NAMES.get(request.repeated, request.repeated.decode("latin-1"))
        raise mismatch(f"the {name} header appears more than once", ident)
    if body_version != version:
        raise mismatch(
            f"MCP-Protocol-Version header value {_shown(version)} does not match the body's "
            f"{PROTOCOL_VERSION} {_shown(body_version)}",
            ident,
        )
    method = peeked.method
    assert isinstance(method, str)
    if request.method is None:
        raise mismatch("the Mcp-Method header is required", ident)
    if request.method != method.encode():
        sent = request.method.decode("latin-1")
        raise mismatch(
            f"Mcp-Method header value {_shown(sent)} does not match the body's method {_shown(method)}", ident
        )
    field = NAME_FIELDS.get(method)
    if field is None or params is UNSET:
        return
    value = params.name if field == "name" else params.uri
    if not isinstance(value, str):
        return  # the request is invalid anyway: the server answers it so (-32602)
    if request.name is None:
        raise mismatch(f"the Mcp-Name header is required for {method}", ident)
    decoded = decode_header_value(request.name)
    if decoded is None:
        raise mismatch("the Mcp-Name header value is malformed (invalid characters or Base64)", ident)
    if decoded != value:
        raise mismatch(
            f"Mcp-Name header value {_shown(decoded)} does not match the body's params.{field} {_shown(value)}",
            ident,
        )


class ParamHeaderChecks:
    """The ``Mcp-Param-{Name}`` checks of the tools of one server (``schema_of``: a tool's input
    schema by name, ``None`` for a tool it does not know). What each tool's schema annotates is
    read once per schema object."""

    def __init__(self, schema_of: Callable[[str], Mapping[str, Any] | None] | None) -> None:
        self.schema_of = schema_of
        self._read: dict[str, tuple[Mapping[str, Any], tuple[ParamHeader, ...] | None]] = {}

    def _annotated(self, tool: str) -> tuple[ParamHeader, ...] | None:
        if self.schema_of is None:
            return None
        schema = self.schema_of(tool)
        if schema is None:
            self._read.pop(tool, None)
            return None
        known = self._read.get(tool)
        if known is not None and known[0] is schema:
            return known[1]
        annotated = param_headers(schema)
        if len(self._read) > 4096:
            self._read.clear()
        self._read[tool] = (schema, annotated)
        return annotated

    def check(self, peeked: PeekedRequest, headers: Iterable[tuple[bytes, bytes]], ident: RequestId) -> None:
        """Refuse (raise :class:`HttpError`) a ``tools/call`` whose ``Mcp-Param-{Name}`` headers
        are not what its arguments give: each annotated argument present (not ``null``) needs
        its header, equal after decoding (integers compared as numbers), and one absent, none."""
        params = peeked.params
        if params is UNSET or not isinstance(params.name, str):
            return
        annotated = self._annotated(params.name)
        if not annotated:
            return
        arguments: Any = None
        if params.arguments is not UNSET:
            try:
                arguments = msgspec.json.decode(params.arguments)
            except msgspec.DecodeError:  # (the body decoded: not reached)
                return
        wanted = {param.header: param for param in annotated}
        sent: dict[bytes, bytes] = {}
        for name, value in headers:
            if name in wanted:
                if name in sent:
                    raise mismatch(f"the {_header_name(wanted[name])} header appears more than once", ident)
                sent[name] = value
        for param in annotated:
            header = _header_name(param)
            raw = sent.get(param.header)
            value = argument_at(arguments, param.path)
            argument = ".".join(param.path)
            rendered = None if value is None else render_argument(value)
            if rendered is None:
                if raw is not None:
                    raise mismatch(f"the {header} header is sent but the argument {argument!r} is not", ident)
                continue
            if raw is None:
                raise mismatch(f"the {header} header is required: the argument {argument!r} is given", ident)
            decoded = decode_header_value(raw)
            if decoded is None:
                raise mismatch(
                    f"the {header} header value is malformed (invalid characters or Base64)", ident
                )
            if not _same(param.type, value, rendered, decoded):
                raise mismatch(
                    f"{header} header value {_shown(decoded)} does not match the argument {argument!r} "
                    f"{_shown(rendered)}",
                    ident,
                )


def _header_name(param: ParamHeader) -> str:
    return "Mcp-Param-" + param.name


def _same(kind: str, value: Any, rendered: str, decoded: str) -> bool:
    """Whether a header value is an argument's: integers as numbers (``42`` is ``42.0``), the
    rest as their header text."""
    if kind == "integer" and isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return Decimal(decoded.strip()) == value
        except (InvalidOperation, ValueError):
            return False
    return decoded == rendered
