"""The user functions behind tools, resources and prompts: how they are inspected and called.

A parameter annotated with :class:`~mcpbind.session.RequestContext` receives the context and
is not an argument. The other parameters become a msgspec struct, so arguments are validated
(and described by a JSON Schema) in one place. Sync functions run in a worker thread, so they
never block the event loop.

Each parameter's description comes from ``Annotated[..., msgspec.Meta(description=...)]``, else
from the docstring (Google, NumPy or Sphinx style, see :mod:`mcpbind.docstrings`); the
function's description is its docstring without the parameter section.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import anyio.to_thread
import msgspec

from mcpbind.docstrings import parse_docstring
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
    description: str | None = None
    """The docstring without its parameter section; ``None`` when there is nothing."""
    descriptions: dict[str, str] = field(default_factory=dict)
    """Each described parameter's description (the ``msgspec.Meta`` one, else the docstring's)."""

    @classmethod
    def inspect(
        cls,
        fn: Callable[..., Any],
        struct_name: str,
        *,
        default_type: Any = Any,
        forbid_unknown: bool = False,
    ) -> UserFunction:
        """``TypeError`` for ``*args`` / ``**kwargs``, which no schema can describe.

        ``forbid_unknown``: an argument that is no parameter is an error (else it is ignored).
        """
        hints = get_type_hints(fn, include_extras=True)
        doc = parse_docstring(inspect.getdoc(fn))
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        required: list[str] = []
        descriptions: dict[str, str] = {}
        context_param: str | None = None
        for param in inspect.signature(fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{struct_name}: *args and **kwargs cannot be described by a schema")
            annotation = hints.get(param.name, default_type)
            if annotation is RequestContext:
                context_param = param.name
                continue
            described = _meta_description(annotation)
            if described is None and param.name in doc.parameters:
                described = doc.parameters[param.name]
                annotation = Annotated[annotation, msgspec.Meta(description=described)]
            if described is not None:
                descriptions[param.name] = described
            if param.default is inspect.Parameter.empty:
                fields.append((param.name, annotation))
                required.append(param.name)
            else:
                fields.append((param.name, annotation, param.default))
        arguments = msgspec.defstruct(struct_name, fields, kw_only=True, forbid_unknown_fields=forbid_unknown)
        return cls(
            fn, arguments, tuple(required), context_param, hints, doc.description or None, descriptions
        )

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


def _meta_description(annotation: Any) -> str | None:
    """The description an ``Annotated[..., msgspec.Meta(description=...)]`` gives, if any."""
    if get_origin(annotation) is not Annotated:
        return None
    for extra in reversed(get_args(annotation)[1:]):
        if isinstance(extra, msgspec.Meta) and extra.description is not None:
            return extra.description
    return None
