"""The user functions behind tools, resources and prompts: how they are inspected and called.

A parameter annotated with :class:`~mcpbind.session.RequestContext` receives the context and
is not an argument. The other parameters become a msgspec struct, so arguments are validated
(and described by a JSON Schema) in one place. Sync functions run in a worker thread, so they
never block the event loop.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import Any, get_type_hints

import anyio.to_thread
import msgspec

from mcpbind.session import RequestContext

__all__ = ["UserFunction"]


@dataclass(frozen=True)
class UserFunction:
    fn: Callable[..., Any]
    arguments: type[msgspec.Struct]
    """The parameters (without the context one) as a struct: fields, types and defaults."""
    required: tuple[str, ...]
    context_param: str | None
    hints: dict[str, Any]

    @classmethod
    def inspect(cls, fn: Callable[..., Any], struct_name: str, *, default_type: Any = Any) -> UserFunction:
        """``TypeError`` for ``*args`` / ``**kwargs``, which no schema can describe."""
        hints = get_type_hints(fn, include_extras=True)
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        required: list[str] = []
        context_param: str | None = None
        for param in inspect.signature(fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{struct_name}: *args and **kwargs cannot be described by a schema")
            annotation = hints.get(param.name, default_type)
            if annotation is RequestContext:
                context_param = param.name
            elif param.default is inspect.Parameter.empty:
                fields.append((param.name, annotation))
                required.append(param.name)
            else:
                fields.append((param.name, annotation, param.default))
        arguments = msgspec.defstruct(struct_name, fields, kw_only=True)
        return cls(fn, arguments, tuple(required), context_param, hints)

    @property
    def parameter_names(self) -> tuple[str, ...]:
        return self.arguments.__struct_fields__

    def convert(self, arguments: dict[str, Any], *, strict: bool = True) -> dict[str, Any]:
        """Validated keyword arguments; ``msgspec.ValidationError`` names the bad one."""
        values = msgspec.convert(arguments, self.arguments, strict=strict)
        return {name: getattr(values, name) for name in self.parameter_names}

    async def call(self, kwargs: dict[str, Any], ctx: RequestContext) -> Any:
        if self.context_param is not None:
            kwargs = {**kwargs, self.context_param: ctx}
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**kwargs)
        return await anyio.to_thread.run_sync(partial(self.fn, **kwargs))
