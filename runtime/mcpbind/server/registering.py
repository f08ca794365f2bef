"""The type of what :meth:`Server.on(spec) <mcpbind.server.server.Server.on>` returns: a
decorator taking a handler of ``spec``'s params that returns its result type, or that result
already encoded (:class:`~mcpbind.protocol.encoded.Encoded`), and returning it unchanged."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Protocol, TypeVar, overload

from mcpbind.protocol.encoded import Encoded
from mcpbind.runtime.context import RequestContext

__all__ = ["RegistersHandler"]

P = TypeVar("P")
R = TypeVar("R")


class RegistersHandler(Protocol[P, R]):
    """Registers a handler of params ``P`` whose result is an ``R``, an ``Encoded[R]`` or either."""

    @overload
    def __call__(
        self, handler: Callable[[P, RequestContext], Awaitable[R]], /
    ) -> Callable[[P, RequestContext], Awaitable[R]]: ...

    @overload
    def __call__(
        self, handler: Callable[[P, RequestContext], Awaitable[Encoded[R]]], /
    ) -> Callable[[P, RequestContext], Awaitable[Encoded[R]]]: ...

    @overload
    def __call__(
        self, handler: Callable[[P, RequestContext], Awaitable[R | Encoded[R]]], /
    ) -> Callable[[P, RequestContext], Awaitable[R | Encoded[R]]]: ...
