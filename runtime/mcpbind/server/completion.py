"""Completion from a function: the ``completion/complete`` handler that
:meth:`Server.completion <mcpbind.server.server.Server.completion>` makes of one."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from typing import TypeVar

from mcpbind import types
from mcpbind.runtime.context import RequestContext

__all__ = ["MAX_COMPLETION_VALUES", "CompletionFn", "completion_handler"]

CompletionFn = TypeVar(
    "CompletionFn",
    bound=Callable[
        [types.PromptReference | types.ResourceTemplateReference, str, str, dict[str, str]],
        Awaitable[Iterable[str]],
    ],
)

# The most values one answer holds (the specification's limit); ``total`` and ``hasMore`` tell
# of the rest.
MAX_COMPLETION_VALUES = 100


def completion_handler(
    fn: CompletionFn,
) -> Callable[[types.CompleteRequestParams, RequestContext], Awaitable[types.CompleteResult]]:
    """The ``completion/complete`` handler calling ``fn`` with the reference (prompt or
    resource template), the argument's name, the value typed so far and the arguments already
    resolved (``context.arguments``); the first 100 values it returns are sent."""

    async def complete(params: types.CompleteRequestParams, ctx: RequestContext) -> types.CompleteResult:
        resolved = params.context.arguments if not isinstance(params.context, types.UnsetType) else {}
        values = list(
            await fn(
                params.ref,
                params.argument.name,
                params.argument.value,
                resolved if isinstance(resolved, dict) else {},
            )
        )
        return types.CompleteResult(
            completion=types.CompleteResultCompletion(
                values=values[:MAX_COMPLETION_VALUES],
                total=len(values),
                has_more=len(values) > MAX_COMPLETION_VALUES,
            )
        )

    return complete
