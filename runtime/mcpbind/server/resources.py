"""Resources and resource templates backed by functions.

    @server.resource("config://app", mime_type="application/json")
    def config() -> dict[str, str]: ...

    @server.resource("users://{id}/profile")          # an RFC 6570 template
    async def profile(id: str) -> str: ...

What a function returns becomes the read result: ``str`` is text (``text/plain`` unless a MIME
type is given), ``bytes`` is a base64 blob, a ``TextResourceContents`` /
``BlobResourceContents`` (or a list of them) is sent as it is, an :class:`~mcpbind.server.media.Image`
or :class:`~mcpbind.server.media.Audio` is a blob of its own MIME type, and anything else is encoded as
JSON text (``application/json``). A template's variables are passed as keyword arguments,
converted from their text to the annotated types (``id: int`` gets ``42`` from
``items://42``; see :mod:`mcpbind.server.callables`), a value that does not convert being a -32602
error naming the parameter; a parameter annotated with ``RequestContext`` receives the
context. Each of the other parameters needs a default (a resource at a fixed URI gets no
arguments; a template, its variables): ``TypeError`` at registration otherwise.
"""

from __future__ import annotations

import base64
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import msgspec

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.server.callables import UserFunction
from mcpbind.server.media import Media
from mcpbind.server.uri_template import UriTemplate

__all__ = ["FunctionResource", "FunctionResourceTemplate", "ResourceContents"]

ResourceContents = types.TextResourceContents | types.BlobResourceContents
_UNSET = types.UNSET


def _opt(value: Any) -> Any:
    return _UNSET if value is None else value


@dataclass
class _Backed:
    fn: Callable[..., Any]
    name: str
    title: str | None = None
    description: str | None = None
    mime_type: str | None = None
    annotations: types.Annotations | None = None
    meta: dict[str, Any] | None = None
    icons: list[types.Icon] | None = None
    _function: UserFunction = field(init=False)

    def __post_init__(self) -> None:
        self._function = UserFunction.inspect(self.fn, f"{self.name}Variables")
        if self.description is None:
            self.description = self._function.description

    async def _run(self, uri: str, kwargs: dict[str, Any], ctx: RequestContext) -> list[Any]:
        return _contents(uri, await self._function.call(kwargs, ctx), self.mime_type)

    def _check_required(self, given: tuple[str, ...], what: str) -> None:
        unfilled = [name for name in self._function.required if name not in given]
        if unfilled:
            raise TypeError(
                f"{what}: the function's parameters {unfilled} have no default, and nothing fills them"
            )


def _contents(uri: str, value: Any, mime_type: str | None) -> list[Any]:
    if isinstance(value, types.TextResourceContents | types.BlobResourceContents):
        return [value]
    if (
        isinstance(value, list)
        and value
        and all(isinstance(v, types.TextResourceContents | types.BlobResourceContents) for v in value)
    ):
        return value
    if isinstance(value, Media):
        return [value.to_resource_contents(uri)]
    if isinstance(value, str):
        return [types.TextResourceContents(uri=uri, text=value, mime_type=mime_type or "text/plain")]
    if isinstance(value, bytes | bytearray | memoryview):
        blob = base64.b64encode(bytes(value)).decode("ascii")
        return [
            types.BlobResourceContents(uri=uri, blob=blob, mime_type=mime_type or "application/octet-stream")
        ]
    text = msgspec.json.encode(value).decode()
    return [types.TextResourceContents(uri=uri, text=text, mime_type=mime_type or "application/json")]


@dataclass
class FunctionResource(_Backed):
    """A resource at one URI; the function (no arguments but an optional context) reads it."""

    uri: str = ""

    def definition(self) -> types.Resource:
        return types.Resource(
            uri=self.uri,
            name=self.name,
            title=_opt(self.title),
            description=_opt(self.description),
            mime_type=_opt(self.mime_type),
            annotations=_opt(self.annotations),
            icons=_opt(self.icons),
            meta=_opt(self.meta),
        )

    def __post_init__(self) -> None:
        super().__post_init__()
        self._check_required((), f"resource {self.uri}")

    async def read(self, ctx: RequestContext) -> list[Any]:
        return await self._run(self.uri, {}, ctx)


@dataclass
class FunctionResourceTemplate(_Backed):
    """Resources whose URIs match an RFC 6570 template; the variables are the arguments."""

    template: UriTemplate = field(default_factory=lambda: UriTemplate(""))

    def __post_init__(self) -> None:
        self.template.check_matchable()  # ValueError naming the template
        super().__post_init__()
        missing = set(self.template.variable_names) - set(self._function.parameter_names)
        if missing:
            raise TypeError(
                f"resource template {self.template}: the function lacks parameters {sorted(missing)}"
            )
        self._check_required(self.template.variable_names, f"resource template {self.template}")

    def definition(self) -> types.ResourceTemplate:
        return types.ResourceTemplate(
            uri_template=str(self.template),
            name=self.name,
            title=_opt(self.title),
            description=_opt(self.description),
            mime_type=_opt(self.mime_type),
            annotations=_opt(self.annotations),
            icons=_opt(self.icons),
            meta=_opt(self.meta),
        )

    def match(self, uri: str) -> dict[str, Any] | None:
        return self.template.match(uri)

    async def read(self, uri: str, variables: dict[str, Any], ctx: RequestContext) -> list[Any]:
        kwargs = self._function.bind(variables, f"resource template {self.template}", from_strings=True)
        return await self._run(uri, kwargs, ctx)
