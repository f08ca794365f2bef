"""Handler objects for :meth:`Server.add_handlers <mcpbind.server.server.Server.add_handlers>`: an
object whose class subclasses the generated protocols (``HandlesToolsCall``... in
``mcpbind.types.stubs``) of the handlers it implements, checked and turned into
method -> handler."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TypeAlias

from mcpbind import types
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import HANDLED_BY_SESSION

__all__ = ["HandlerObject", "handlers_of", "role_protocols"]

if TYPE_CHECKING:
    stubs = types.stubs
    # What add_handlers accepts: an object that implements one or more of the protocols of the
    # methods a server's handlers receive (those the session does not answer itself).
    HandlerObject: TypeAlias = (
        stubs.HandlesCompletionComplete[RequestContext]
        | stubs.HandlesLoggingSetLevel[RequestContext]
        | stubs.HandlesPromptsGet[RequestContext]
        | stubs.HandlesPromptsList[RequestContext]
        | stubs.HandlesResourcesList[RequestContext]
        | stubs.HandlesResourcesRead[RequestContext]
        | stubs.HandlesResourcesSubscribe[RequestContext]
        | stubs.HandlesResourcesTemplatesList[RequestContext]
        | stubs.HandlesResourcesUnsubscribe[RequestContext]
        | stubs.HandlesNotificationsRootsListChanged[RequestContext]
        | stubs.HandlesTasksCancel[RequestContext]
        | stubs.HandlesTasksGet[RequestContext]
        | stubs.HandlesTasksList[RequestContext]
        | stubs.HandlesTasksResult[RequestContext]
        | stubs.HandlesNotificationsTasksStatus[RequestContext]
        | stubs.HandlesToolsCall[RequestContext]
        | stubs.HandlesToolsList[RequestContext]
    )


@functools.cache
def role_protocols() -> tuple[dict[str, tuple[str, type]], dict[str, str]]:
    """``on_<method>`` name -> (method, protocol) for what a server receives, and name -> method
    for what only a client receives, from the generated protocols and their ``HANDLER_METHODS``."""
    stubs = types.stubs

    def handlers(role: type) -> dict[str, tuple[str, type]]:
        found: dict[str, tuple[str, type]] = {}
        for protocol in role.__mro__[1:]:
            for name, member in vars(protocol).items():
                if name.startswith("on_") and inspect.iscoroutinefunction(member):
                    found[name] = (stubs.HANDLER_METHODS[name], protocol)
        return found

    server = handlers(stubs.ServerHandlers)
    client = {
        name: method for name, (method, _) in handlers(stubs.ClientHandlers).items() if name not in server
    }
    return server, client


def handlers_of(handlers: object) -> dict[str, Callable[..., Any]]:
    """method -> handler for each ``on_<method>`` of ``handlers``; ``TypeError`` naming the
    first that cannot be registered (see :meth:`Server.add_handlers <mcpbind.server.server.Server.add_handlers>`)."""
    server, client = role_protocols()
    cls = type(handlers)
    found: dict[str, Callable[..., Any]] = {}
    for name in sorted(dir(handlers)):
        if not name.startswith("on_"):
            continue
        if _declared_by_stub(handlers, name):
            continue  # a protocol's own declaration, inherited and not implemented: not a handler
        where = f"{cls.__name__}.{name}"
        if name not in server:
            if name in client:
                raise TypeError(
                    f"{where}: {client[name]} is sent by servers to clients; a server never receives it"
                )
            import difflib  # (only for this error: a server's start-up does not load it)

            close = difflib.get_close_matches(name, server, n=1)
            hint = f" (did you mean {close[0]}?)" if close else ""
            raise TypeError(f"{where} names no method a server receives{hint}")
        method, protocol = server[name]
        if method in HANDLED_BY_SESSION:
            raise TypeError(
                f"{where}: {method} is answered by the session itself; this handler would never run"
            )
        if protocol not in cls.__mro__:
            raise TypeError(
                f"{where} handles {method}, but {cls.__name__} does not subclass {protocol.__name__}, so its"
                f" signature is not type-checked: derive it from {protocol.__module__}.{protocol.__name__}"
                "[RequestContext]"
            )
        handler = getattr(handlers, name)
        if not (
            inspect.iscoroutinefunction(handler)
            or (callable(handler) and inspect.iscoroutinefunction(type(handler).__call__))
        ):
            raise TypeError(f"{where} must be an async method (async def), as {protocol.__name__} says")
        try:
            inspect.signature(handler).bind(None, None)
        except TypeError:
            raise TypeError(f"{where} must accept (params, ctx), as {protocol.__name__} says") from None
        except ValueError:
            pass  # no signature to inspect (a builtin): it is called as it is
        found[method] = handler
    return found


def _declared_by_stub(handlers: object, name: str) -> bool:
    """Whether ``handlers.<name>`` is the generated protocol's own declaration (not implemented)."""
    if name in getattr(handlers, "__dict__", {}):
        return False
    for klass in type(handlers).__mro__:
        if name in vars(klass):
            return klass.__module__.startswith("mcpbind.schema.")
    return False
