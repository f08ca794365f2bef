"""Tools from plain Python functions: schema from the type hints, arguments validated while
decoding, return values converted to MCP content.

    @server.tool()
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

- ``inputSchema`` is msgspec's JSON Schema of a struct built from the parameters (``Annotated``
  with ``msgspec.Meta`` gives descriptions and constraints); a parameter annotated with
  :class:`~mcpbind.session.RequestContext` receives the context and is not part of the schema.
- Arguments are converted strictly (no ``"5"`` for an ``int``). Bad arguments are a protocol
  error (-32602) up to 2025-06-18 and an ``isError`` result from 2025-11-25 on, as those
  versions ask.
- A ``str`` becomes one text block; content blocks and :class:`~mcpbind.media.Image` /
  :class:`~mcpbind.media.Audio` (or a list of them, strings allowed) are sent as blocks; a ``CallToolResult`` is sent as is; anything else is structured output:
  ``structuredContent`` (an object: other values are wrapped as ``{"result": value}``) plus
  its JSON as text, with ``outputSchema`` from the return annotation.
- Sync functions run in a worker thread. An exception becomes an ``isError`` result, except
  :class:`~mcpbind.errors.McpError`, which is a protocol error.
"""

from __future__ import annotations

import inspect
import re
import types as pytypes
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Annotated, Any, Union, get_args, get_origin

import msgspec

from mcpbind.callables import UserFunction
from mcpbind.errors import INVALID_PARAMS, McpError
from mcpbind.media import Media
from mcpbind.schema import v2025_11_25 as types
from mcpbind.session import RequestContext

__all__ = ["FunctionTool"]

_CONTENT = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)
# What is sent as content rather than as structured output (``Image``/``Audio`` become blocks).
_UNSTRUCTURED = (str, type(None), types.CallToolResult, Media, *_CONTENT)
_SEQUENCES = (list, tuple, Sequence)
# Versions whose clients expect bad tool arguments as a JSON-RPC error rather than a result.
_PROTOCOL_ERROR_VERSIONS = frozenset({"2024-11-05", "2025-03-26", "2025-06-18"})


def _json_schema(tp: Any) -> dict[str, Any]:
    """msgspec's schema of ``tp`` with the top-level ``$ref`` inlined."""
    schema: dict[str, Any] = msgspec.json.schema(tp)
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/$defs/"):
        defs: dict[str, Any] = schema["$defs"]
        top = dict(defs.pop(ref.removeprefix("#/$defs/")))
        if defs:
            top["$defs"] = defs
        schema = top
    schema.pop("title", None)
    if schema.get("required") == []:
        del schema["required"]  # older JSON Schema drafts require it to be non-empty
    return schema


def _is_structured(annotation: Any) -> bool:
    """Whether a return annotation promises structured output (and so an ``outputSchema``):
    anything but text, content blocks, media, ``None`` and ``CallToolResult``, bare, as an arm
    of a union (``Point | None`` is structured, ``Point | Image`` is content) or as the items of
    a list, tuple or sequence. A value that is not content is then sent as JSON text."""
    if annotation is inspect.Signature.empty:
        return False
    return not _is_content_annotation(annotation)


def _is_content_annotation(annotation: Any) -> bool:
    origin = get_origin(annotation)
    if origin is None:
        return isinstance(annotation, type) and issubclass(annotation, _UNSTRUCTURED)
    args = get_args(annotation)
    if origin is Annotated:
        return _is_content_annotation(args[0])
    if origin is Union or origin is pytypes.UnionType:
        arms = [arg for arg in args if arg is not type(None)]
        return any(_is_content_annotation(arg) for arg in arms) or not arms
    if origin in _SEQUENCES:
        return bool(args) and all(_is_content_annotation(arg) for arg in args if arg is not Ellipsis)
    return False


@dataclass
class FunctionTool:
    """A tool made from a function; :meth:`call` runs it for ``tools/call``."""

    fn: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    annotations: types.ToolAnnotations | None = None
    meta: dict[str, Any] | None = None
    _function: UserFunction = field(init=False)
    _structured: bool = field(init=False, default=False)
    _wrap_result: bool = field(init=False, default=False)
    input_schema: dict[str, Any] = field(init=False)
    output_schema: dict[str, Any] | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self._function = UserFunction.inspect(self.fn, f"{_pascal(self.name)}Arguments")
        hints = self._function.hints
        self.input_schema = _json_schema(self._function.arguments)
        self.input_schema.setdefault("properties", {})
        returns = hints.get("return", inspect.Signature.empty)
        self._structured = _is_structured(returns)
        if self._structured:
            schema = _json_schema(returns) if returns is not Any else {}
            if schema.get("type") != "object":
                self._wrap_result = True
                schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
            self.output_schema = schema
        if self.description is None:
            self.description = self._function.description

    def definition(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title if self.title is not None else types.UNSET,
            description=self.description if self.description is not None else types.UNSET,
            input_schema=self.input_schema,
            output_schema=self.output_schema if self.output_schema is not None else types.UNSET,
            annotations=self.annotations if self.annotations is not None else types.UNSET,
            meta=self.meta if self.meta is not None else types.UNSET,
        )

    async def call(self, arguments: dict[str, Any], ctx: RequestContext) -> types.CallToolResult:
        try:
            kwargs = self._function.convert(arguments)
        except msgspec.ValidationError as exc:
            message = f"Invalid arguments for tool {self.name}: {str(exc).replace('`$', '`arguments')}"
            if ctx.protocol_version in _PROTOCOL_ERROR_VERSIONS:
                raise McpError(INVALID_PARAMS, message) from None
            return _error_result(message)
        try:
            value = await self._function.call(kwargs, ctx)
        except McpError:
            raise
        except Exception as exc:
            return _error_result(f"Error in tool {self.name}: {exc}")
        return self._convert(value)

    def _convert(self, value: Any) -> types.CallToolResult:
        if isinstance(value, types.CallToolResult):
            return value
        if not self._structured or isinstance(value, _UNSTRUCTURED) or _is_content_list(value):
            return types.CallToolResult(content=_content(value))
        structured = msgspec.to_builtins(value)
        if self._wrap_result or not isinstance(structured, dict):
            structured = {"result": structured}
        text = msgspec.json.encode(structured).decode()
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _is_content_list(value: Any) -> bool:
    return isinstance(value, list | tuple) and all(isinstance(v, (str, Media, *_CONTENT)) for v in value)


def _content(value: Any) -> list[Any]:
    if value is None:
        return []
    if isinstance(value, list | tuple):
        return [block for item in value for block in _content(item)]
    if isinstance(value, str):
        return [types.TextContent(text=value)]
    if isinstance(value, _CONTENT):
        return [value]
    if isinstance(value, Media):
        return [value.to_content()]
    return [types.TextContent(text=msgspec.json.encode(value).decode())]


def _error_result(message: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=message)], is_error=True)


def _pascal(name: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in re.split(r"[^0-9A-Za-z]+", name) if part) or "Tool"
