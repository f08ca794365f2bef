"""Prompts backed by functions.

    @server.prompt()
    def review(code: str, language: str = "python") -> str:
        '''Review a piece of code.'''
        return f"Please review this {language} code: {code}"

Parameters are the prompt's arguments (required when they have no default; a parameter
annotated with ``RequestContext`` receives the context). Arguments arrive as strings and are
converted to the annotated types (``"3"`` for an ``int`` is fine here). A ``str`` becomes one
user message; a content block, a ``PromptMessage``, or a list mixing them becomes messages
(plain strings and blocks as user messages); a ``GetPromptResult`` is sent as it is.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Any, get_type_hints

import anyio.to_thread
import msgspec

from mcpbind.errors import INVALID_PARAMS, McpError
from mcpbind.schema import v2025_11_25 as types
from mcpbind.session import RequestContext

__all__ = ["FunctionPrompt"]

_BLOCKS = (
    types.TextContent,
    types.ImageContent,
    types.AudioContent,
    types.ResourceLink,
    types.EmbeddedResource,
)


@dataclass
class FunctionPrompt:
    fn: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    meta: dict[str, Any] | None = None
    _arguments: type[msgspec.Struct] = field(init=False)
    _context_param: str | None = field(init=False, default=None)
    _declared: list[types.PromptArgument] = field(init=False, default_factory=list)

    def __post_init__(self) -> None:
        hints = get_type_hints(self.fn, include_extras=True)
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        for param in inspect.signature(self.fn).parameters.values():
            annotation = hints.get(param.name, str)
            if annotation is RequestContext:
                self._context_param = param.name
                continue
            required = param.default is inspect.Parameter.empty
            fields.append((param.name, annotation) if required else (param.name, annotation, param.default))
            self._declared.append(types.PromptArgument(name=param.name, required=required))
        self._arguments = msgspec.defstruct(f"{self.name}Arguments", fields, kw_only=True)
        if self.description is None:
            self.description = inspect.getdoc(self.fn)

    def definition(self) -> types.Prompt:
        return types.Prompt(
            name=self.name,
            title=self.title if self.title is not None else types.UNSET,
            description=self.description if self.description is not None else types.UNSET,
            arguments=list(self._declared),
            meta=self.meta if self.meta is not None else types.UNSET,
        )

    async def get(self, arguments: dict[str, str], ctx: RequestContext) -> types.GetPromptResult:
        try:
            values = msgspec.convert(arguments, self._arguments, strict=False)
        except msgspec.ValidationError as exc:
            message = str(exc).replace("`$", "`arguments")
            raise McpError(INVALID_PARAMS, f"Invalid arguments for prompt {self.name}: {message}") from None
        kwargs = {name: getattr(values, name) for name in values.__struct_fields__}
        if self._context_param is not None:
            kwargs[self._context_param] = ctx
        if inspect.iscoroutinefunction(self.fn):
            value = await self.fn(**kwargs)
        else:
            value = await anyio.to_thread.run_sync(partial(self.fn, **kwargs))
        if isinstance(value, types.GetPromptResult):
            return value
        items = value if isinstance(value, list | tuple) else [value]
        return types.GetPromptResult(
            messages=[_message(item) for item in items],
            description=self.description if self.description is not None else types.UNSET,
        )


def _message(item: Any) -> types.PromptMessage:
    if isinstance(item, types.PromptMessage):
        return item
    if isinstance(item, str):
        return types.PromptMessage(role="user", content=types.TextContent(text=item))
    if isinstance(item, _BLOCKS):
        return types.PromptMessage(role="user", content=item)
    raise TypeError(f"a prompt returns text, content blocks or PromptMessages, not {type(item).__name__}")
