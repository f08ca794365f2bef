"""Coroutines stepped by hand: the first step of a handler is taken with ``coro.send(None)`` in
the task that awaits it, and :func:`resume` goes on from there under ``await``.

The session driver uses this to learn whether a handler finishes at once (most do) before it
spends anything on one that waits, and to run every step in the request's own
``contextvars.Context``; the HTTP app uses it to start a timer only for a body that has not
arrived yet. Only the public coroutine protocol (``send``, ``throw``) is used.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Coroutine, Generator
from types import coroutine
from typing import Any, TypeVar

__all__ = ["awaited", "resume"]

R = TypeVar("R")


def _call(function: Callable[..., Any], *args: Any) -> Any:
    """Run a step as it is, in the current context."""
    return function(*args)


@coroutine
def resume(
    coro: Coroutine[Any, Any, R], value: Any, run: Callable[..., Any] = _call
) -> Generator[Any, Any, R]:
    """Go on with ``coro`` after its first step was taken by hand and yielded ``value``: what the
    event loop sends or throws in goes to ``coro``, what it yields goes to the event loop. Each
    step runs through ``run``: a plain call by default; the session passes a request's
    ``Context.run``, so that every step runs in the request's own context.

    Taking a handler's first step by hand (``coro.send(None)``, in the task that awaits it, so
    inside the caller's cancel scopes exactly as ``await`` would run it) tells whether it
    finishes at once, as most do, or waits for something: only then does the caller need to
    do something about it (hand reading over to another task, watch for the client going
    away), and it learns so just before the handler's first wait. Stepping by hand is also
    what runs the handler in a context of its own while the task stays the session's: a
    handler's context variables stay its own, and a reused task carries none to the next."""
    while True:
        try:
            sent = yield value
        except BaseException as exc:  # a cancellation, or GeneratorExit on close: it decides
            try:
                value = run(coro.throw, exc)
            except StopIteration as stop:
                result: R = stop.value
                return result
        else:
            try:
                value = run(coro.send, sent)
            except StopIteration as stop:
                result = stop.value
                return result


async def awaited(awaitable: Awaitable[R]) -> R:
    """A coroutine around an awaitable that is not one, so that its steps can be taken by hand."""
    return await awaitable
