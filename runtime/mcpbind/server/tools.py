"""Tools from plain Python functions: schema from the type hints, arguments validated while
decoding, return values converted to MCP content.

    @server.tool()
    def add(a: int, b: int) -> int:
        '''Add two numbers.'''
        return a + b

- ``inputSchema`` is msgspec's JSON Schema of a struct built from the parameters (``Annotated``
  with ``msgspec.Meta`` gives descriptions and constraints); a parameter annotated with
  :class:`~mcpbind.runtime.session.RequestContext` receives the context and is not part of the schema.
- Arguments are converted strictly (no ``"5"`` for an ``int``). Bad arguments are a protocol
  error (-32602) up to 2025-06-18 and an ``isError`` result from 2025-11-25 on, as those
  versions ask.
- A ``str`` becomes one text block; content blocks and :class:`~mcpbind.server.media.Image` /
  :class:`~mcpbind.server.media.Audio` (or a list of them, strings allowed) are sent as blocks; a ``CallToolResult`` is sent as is; anything else is structured output:
  ``structuredContent`` (an object: other values are wrapped as ``{"result": value}``) plus
  its JSON as text, with ``outputSchema`` from the return annotation.
- ``input_schema=`` / ``output_schema=`` advertise a JSON Schema given as is (any dialect or
  keyword: ``$schema``, ``$defs``, ``additionalProperties``...) instead of the derived one.
  Arguments are still validated by decoding them into the parameters (the given schema is
  not evaluated), so its properties must agree with them (checked at registration); with an
  ``output_schema`` the tool returns the structured content itself, an object.
- Sync functions run in a worker thread.
- Failures: a :class:`~mcpbind.protocol.errors.ToolError` the tool raises becomes an ``isError`` result
  with its message (meant for the model, as the spec's tool execution errors are). A
  :class:`~mcpbind.protocol.errors.McpError` is a protocol error with its code and message (a
  :class:`~mcpbind.store.StoreUnavailable` is one: ``Service unavailable: ...``). Any other
  exception is unexpected: it is logged (logger ``mcpbind.server.tools``, with the traceback) and
  becomes an ``isError`` result saying ``Error in tool NAME: internal error``, with the
  exception's text instead only when the server was made with ``expose_internal_errors=True``.
"""

from __future__ import annotations

import inspect
import logging
import re
import types as pytypes
from collections.abc import Callable, Mapping, Sequence
from typing import Annotated, Any, Literal, Union, get_args, get_origin

import msgspec

from mcpbind import types
from mcpbind.protocol.errors import McpError, ToolError
from mcpbind.protocol.unions import ResolvedUnion
from mcpbind.runtime.context import RequestContext
from mcpbind.server.callables import InvalidArguments, UserFunction
from mcpbind.server.media import Media
from mcpbind.versions import TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS

__all__ = ["FunctionTool"]

log = logging.getLogger("mcpbind.tools")

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
_PROTOCOL_ERROR_VERSIONS = TOOL_INPUT_ERRORS_AS_PROTOCOL_ERRORS


def _json_schema(tp: Any) -> dict[str, Any]:
    """msgspec's schema of ``tp`` with the top-level ``$ref`` inlined."""
    schema: dict[str, Any] = msgspec.json.schema(tp, schema_hook=_schema_hook)
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


def _schema_hook(tp: Any) -> dict[str, Any]:
    if isinstance(tp, type) and issubclass(tp, ResolvedUnion):
        members = " | ".join(getattr(m, "__name__", repr(m)) for m in tp.members())
        raise TypeError(
            f"{tp.union_name} ({members}) is an untagged union, for which no JSON Schema is derived"
        )
    raise NotImplementedError  # msgspec's own error: the type is not supported


def _schema_error(tool: str, what: str, where: str, exc: Exception, given: str | None = None) -> TypeError:
    """The error of a schema that cannot be derived: names the tool, the schema, the parameter
    or annotation, and msgspec's reason (the last line of its message, the one that says which
    type)."""
    lines = [line for line in str(exc).splitlines() if line.strip()]
    reason = lines[-1] if lines else type(exc).__name__
    instead = f"; give the schema as is with {given}" if given else ""
    return TypeError(f"Tool {tool}: cannot derive its {what} from {where}: {reason}{instead}")


def _culprit(function: UserFunction) -> str:
    """Which parameter's annotation has no JSON Schema (all of them, if none alone)."""
    for field in msgspec.structs.fields(function.arguments):
        try:
            msgspec.json.schema(field.type, schema_hook=_schema_hook)
        except (TypeError, ValueError):
            return f"parameter {field.name!r} of {_qualname(function.fn)}"
    return f"the parameters of {_qualname(function.fn)}"


def _qualname(fn: Callable[..., Any]) -> str:
    return str(getattr(fn, "__qualname__", None) or repr(fn))


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


class FunctionTool:
    """A tool made from a function; :meth:`call` runs it for ``tools/call``.

    ``input_schema`` / ``output_schema``, when given, are advertised verbatim instead of the
    schemas derived from the signature; see :meth:`mcpbind.server.server.Server.tool`.
    """

    __slots__ = (
        "_function",
        "_given_output_schema",
        "_structured",
        "_wrap_result",
        "annotations",
        "description",
        "fn",
        "icons",
        "input_schema",
        "meta",
        "name",
        "output_schema",
        "task_support",
        "title",
    )

    def __init__(
        self,
        fn: Callable[..., Any],
        name: str,
        *,
        title: str | None = None,
        description: str | None = None,
        annotations: types.ToolAnnotations | None = None,
        meta: dict[str, Any] | None = None,
        input_schema: Mapping[str, Any] | None = None,
        output_schema: Mapping[str, Any] | None = None,
        icons: Sequence[types.Icon] | None = None,
        task_support: Literal["optional", "required"] | None = None,
    ) -> None:
        self.fn = fn
        # Whether it may run as a task (see mcpbind.server.tasks): its execution.taskSupport.
        self.task_support = task_support
        self.name = name
        self.title = title
        self.icons = list(icons) if icons is not None else None
        self.annotations = annotations
        self.meta = meta
        # A given schema refusing other properties is held to it; the derived one allows them.
        closed = input_schema is not None and input_schema.get("additionalProperties") is False
        try:
            self._function = UserFunction.inspect(fn, f"{_pascal(name)}Arguments", forbid_unknown=closed)
        except TypeError as exc:
            raise TypeError(f"Tool {name}: {exc}") from exc
        self.description = description if description is not None else self._function.description
        self.input_schema: dict[str, Any]
        if input_schema is None:
            try:
                self.input_schema = _json_schema(self._function.arguments)
            except (TypeError, ValueError) as exc:
                raise _schema_error(name, "inputSchema", _culprit(self._function), exc) from exc
            self.input_schema.setdefault("properties", {})
        else:
            self.input_schema = _given_schema(name, "input_schema", input_schema)
            _check_parameters(name, self._function, self.input_schema)
        self.output_schema: dict[str, Any] | None = None
        self._given_output_schema = output_schema is not None
        self._wrap_result = False
        if output_schema is not None:
            self.output_schema = _given_schema(name, "output_schema", output_schema)
            self._structured = True
            return
        returns = self._function.hints.get("return", inspect.Signature.empty)
        self._structured = _is_structured(returns)
        if self._structured:
            try:
                schema = _json_schema(returns) if returns is not Any else {}
            except (TypeError, ValueError) as exc:
                where = f"the return annotation of {_qualname(fn)}"
                raise _schema_error(name, "outputSchema", where, exc, "output_schema=") from exc
            if schema.get("type") != "object":
                self._wrap_result = True
                schema = {"type": "object", "properties": {"result": schema}, "required": ["result"]}
            self.output_schema = schema

    def __repr__(self) -> str:
        return f"FunctionTool({self.fn!r}, {self.name!r})"

    def definition(self) -> types.Tool:
        return types.Tool(
            name=self.name,
            title=self.title if self.title is not None else types.UNSET,
            description=self.description if self.description is not None else types.UNSET,
            input_schema=self.input_schema,
            output_schema=self.output_schema if self.output_schema is not None else types.UNSET,
            annotations=self.annotations if self.annotations is not None else types.UNSET,
            icons=self.icons if self.icons is not None else types.UNSET,
            meta=self.meta if self.meta is not None else types.UNSET,
            execution=types.ToolExecution(task_support=self.task_support)
            if self.task_support is not None
            else types.UNSET,
        )

    async def call(self, arguments: dict[str, Any], ctx: RequestContext) -> types.CallToolResult:
        try:
            kwargs = self._function.bind(arguments, f"tool {self.name}")
        except InvalidArguments as exc:
            if ctx.protocol_version in _PROTOCOL_ERROR_VERSIONS:
                raise
            return _error_result(exc.message)
        try:
            value = await self._function.call(kwargs, ctx)
        except McpError:  # (a lost store too: an error of the server, not the tool's)
            raise
        except ToolError as exc:
            return _error_result(str(exc))
        except Exception as exc:
            log.exception("tool %s failed", self.name)
            detail = exc if ctx.session.expose_internal_errors else "internal error"
            return _error_result(f"Error in tool {self.name}: {detail}")
        return self._convert(value)

    def _convert(self, value: Any) -> types.CallToolResult:
        if isinstance(value, types.CallToolResult):
            return value
        if self._given_output_schema:
            return self._convert_to_given_schema(value)
        if not self._structured or isinstance(value, _UNSTRUCTURED) or _is_content_list(value):
            return types.CallToolResult(content=_content(value))
        structured = msgspec.to_builtins(value)
        if self._wrap_result or not isinstance(structured, dict):
            structured = {"result": structured}
        text = msgspec.json.encode(structured).decode()
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)

    def _convert_to_given_schema(self, value: Any) -> types.CallToolResult:
        """With an output schema given as is, the value is the structured content itself: it
        must be an object (no ``{"result": ...}`` wrapping, which the schema would not describe)."""
        structured: Any = None
        if not isinstance(value, _UNSTRUCTURED) and not _is_content_list(value):
            try:
                structured = msgspec.to_builtins(value)
            except TypeError:
                structured = None
        if not isinstance(structured, dict):
            return _error_result(
                f"Tool {self.name} returned {type(value).__name__}, but its output schema describes "
                "an object: return a mapping, struct or dataclass (or a CallToolResult)"
            )
        text = msgspec.json.encode(structured).decode()
        return types.CallToolResult(content=[types.TextContent(text=text)], structured_content=structured)


def _given_schema(tool: str, what: str, schema: Mapping[str, Any]) -> dict[str, Any]:
    """A schema given by the user: a deep copy (later changes to theirs do not leak in), checked
    to be JSON and an object schema, as MCP requires of both tool schemas."""
    try:
        copy = msgspec.json.decode(msgspec.json.encode(schema))
    except (TypeError, msgspec.EncodeError) as exc:
        raise TypeError(f"Tool {tool}: {what} is not JSON: {exc}") from None
    if not isinstance(copy, dict) or copy.get("type") != "object":
        raise ValueError(f'Tool {tool}: {what} must be a JSON Schema object with "type": "object"')
    return copy


def _check_parameters(tool: str, function: UserFunction, schema: dict[str, Any]) -> None:
    """A given input schema that lists its properties must agree with the function's parameters,
    since arguments are decoded into those whatever the schema says: a parameter without a
    default must be a required property (else calls following the schema fail), and every
    property must be a parameter (else its value would be dropped without a word)."""
    properties = schema.get("properties")
    if not isinstance(properties, dict):
        return  # properties behind $ref / allOf and the like: nothing to compare cheaply
    listed = schema.get("required")
    required = listed if isinstance(listed, list) else []
    problems = []
    unlisted = [name for name in function.required if name not in properties]
    if unlisted:
        problems.append(f"parameters without a default missing from its properties: {', '.join(unlisted)}")
    optional = [name for name in function.required if name in properties and name not in required]
    if optional:
        problems.append(f"parameters without a default that it does not require: {', '.join(optional)}")
    unknown = [name for name in properties if name not in function.parameter_names]
    if unknown:
        problems.append(f"properties with no parameter to receive them: {', '.join(unknown)}")
    if problems:
        raise ValueError(
            f"Tool {tool}: the input_schema given does not match the function's parameters ("
            + "; ".join(problems)
            + ")"
        )


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
