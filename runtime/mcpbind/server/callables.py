"""The user functions behind tools, resources and prompts: how they are inspected and called.

A parameter annotated with :class:`~mcpbind.runtime.session.RequestContext` receives the context and
is not an argument. The other parameters become a msgspec struct, so arguments are validated
(and described by a JSON Schema) in one place. Sync functions run in a worker thread, so they
never block the event loop.

One binding policy (:meth:`UserFunction.bind`) serves every feature: what arrives is converted
to the annotated types of the parameters, and a value that does not fit is an
:class:`InvalidArguments` error (-32602) naming the parameter. Tool arguments are JSON and are
converted strictly (``"5"`` is no ``int``); prompt arguments and URI-template variables arrive
as strings and are converted from their text (``"5"`` is the ``int`` 5, ``"true"`` a ``bool``,
``"red"`` an enum member or ``Literal`` value, a list of strings a ``list[int]``...).

Each parameter's description comes from ``Annotated[..., msgspec.Meta(description=...)]``, else
from the docstring (Google, NumPy or Sphinx style, see :mod:`mcpbind.server.docstrings`); the
function's description is its docstring without the parameter section.
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import partial
from typing import Annotated, Any, get_args, get_origin, get_type_hints

import anyio.to_thread
import msgspec

from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.server.docstrings import parse_docstring

__all__ = ["InvalidArguments", "UserFunction"]


class InvalidArguments(McpError):
    """Arguments that do not fit a function's parameters: a -32602 error whose message names
    the parameter, e.g. ``Invalid arguments for prompt review: Expected `int`, got `str` - at
    `arguments.count```."""

    def __init__(self, message: str) -> None:
        super().__init__(INVALID_PARAMS, message)


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
        hints = _type_hints(fn)
        doc = parse_docstring(inspect.getdoc(fn))
        fields: list[tuple[str, Any] | tuple[str, Any, Any]] = []
        required: list[str] = []
        descriptions: dict[str, str] = {}
        context_param: str | None = None
        for param in inspect.signature(fn).parameters.values():
            if param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD):
                raise TypeError(f"{struct_name}: *args and **kwargs cannot be described by a schema")
            annotation = hints.get(param.name, default_type)
            if annotation is RequestContext or get_origin(annotation) is RequestContext:  # or ServerContext
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

    def bind(self, arguments: Mapping[str, Any], what: str, *, from_strings: bool = False) -> dict[str, Any]:
        """The keyword arguments for the function: ``arguments`` converted to the parameters'
        types (strictly, or from text with ``from_strings``; see the module docstring), defaults
        filled in. :class:`InvalidArguments` ("Invalid arguments for ``what``: ...") otherwise."""
        try:
            values = msgspec.convert(arguments, self.arguments, strict=not from_strings)
        except msgspec.ValidationError as exc:
            detail = str(exc).replace("`$", "`arguments")
            raise InvalidArguments(f"Invalid arguments for {what}: {detail}") from None
        return {name: getattr(values, name) for name in self.parameter_names}

    async def call(self, kwargs: dict[str, Any], ctx: RequestContext) -> Any:
        if self.context_param is not None:
            kwargs = {**kwargs, self.context_param: ctx}
        if inspect.iscoroutinefunction(self.fn):
            return await self.fn(**kwargs)
        return await anyio.to_thread.run_sync(partial(self.fn, **kwargs))


def _type_hints(fn: Callable[..., Any]) -> dict[str, Any]:
    """The evaluated annotations of ``fn``.

    String annotations (``from __future__ import annotations``) are evaluated in the module's
    globals; for a function defined inside another one, the names of that enclosing function
    (a struct class defined there, say) are tried next: its closure, and the locals of the
    enclosing call if it is still running (as it is while a decorator registers the function).
    What still cannot be resolved is a ``TypeError`` naming the function and the missing name.
    """
    try:
        return get_type_hints(fn, include_extras=True)
    except NameError as exc:
        error = exc
    except Exception as exc:
        raise TypeError(f"Cannot evaluate the annotations of {_where(fn)}: {exc}") from exc
    scope = _enclosing_scope(fn)
    if scope:
        try:
            return get_type_hints(fn, localns=scope, include_extras=True)
        except NameError as exc:
            error = exc
        except Exception as exc:
            raise TypeError(f"Cannot evaluate the annotations of {_where(fn)}: {exc}") from exc
    name = error.name or str(error)
    nested = "<locals>" in getattr(inspect.unwrap(fn), "__qualname__", "")
    around = " nor (at registration) in the function that defines it" if nested else ""
    raise TypeError(
        f"Cannot resolve the annotations of {_where(fn)}: {name!r} is not defined in its module{around}. "
        "The annotations of a tool, prompt or resource function are evaluated when it is registered: "
        f"move {name!r} to module level (or import it there)."
    ) from error


def _where(fn: Callable[..., Any]) -> str:
    target = inspect.unwrap(fn)
    name = getattr(target, "__qualname__", None) or repr(target)
    code = getattr(target, "__code__", None)
    return f"{name} ({code.co_filename}:{code.co_firstlineno})" if code is not None else name


def _enclosing_scope(fn: Callable[..., Any]) -> dict[str, Any]:
    """The names visible to ``fn`` from the function it was defined in (empty for a module
    level function): its closure, then the locals of the enclosing call, found on the stack
    by the code object ``fn`` was made from, if that call is still running."""
    target = inspect.unwrap(fn)
    code = getattr(target, "__code__", None)
    if code is None or "<locals>" not in getattr(target, "__qualname__", ""):
        return {}
    scope: dict[str, Any] = {}
    for name, cell in zip(code.co_freevars, getattr(target, "__closure__", None) or (), strict=False):
        try:
            scope[name] = cell.cell_contents
        except ValueError:  # not assigned yet
            pass
    get_frame = getattr(sys, "_getframe", None)
    frame = get_frame(1) if get_frame is not None else None
    try:
        while frame is not None:
            if any(const is code for const in frame.f_code.co_consts):
                scope = {**frame.f_locals, **scope}
                break
            frame = frame.f_back
    finally:
        del frame  # no reference cycle through this frame
    return scope


def _meta_description(annotation: Any) -> str | None:
    """The description an ``Annotated[..., msgspec.Meta(description=...)]`` gives, if any."""
    if get_origin(annotation) is not Annotated:
        return None
    for extra in reversed(get_args(annotation)[1:]):
        if isinstance(extra, msgspec.Meta) and extra.description is not None:
            return extra.description
    return None
