"""What a client answers: the signatures of its handlers for a server's requests (sampling,
elicitation, roots) and log messages, and the guards that refuse, as the specification asks,
a request for more than the client declared."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, McpError
from mcpbind.runtime.context import RequestContext

__all__ = [
    "ElicitationHandler",
    "LoggingHandler",
    "RootsHandler",
    "SamplingHandler",
    "refusing_mode",
    "refusing_tools",
]

UNSET = types.UNSET

# A client's handlers may take a bare ``RequestContext`` or a ``ClientContext`` (whose sends
# are checked as a client's).
SamplingHandler = Callable[
    [types.CreateMessageRequestParams, RequestContext[Any]], Awaitable[types.CreateMessageResult]
]
ElicitationHandler = Callable[[Any, RequestContext[Any]], Awaitable[types.ElicitResult]]
RootsHandler = Callable[[types.RequestParams, RequestContext[Any]], Awaitable[types.ListRootsResult]]
LoggingHandler = Callable[[types.LoggingMessageNotificationParams], Awaitable[None]]


def refusing_tools(handler: SamplingHandler) -> SamplingHandler:
    """``handler`` behind the check a client without ``sampling.tools`` must make."""

    async def sample(
        params: types.CreateMessageRequestParams, ctx: RequestContext
    ) -> types.CreateMessageResult:
        if params.tools is not UNSET or params.tool_choice is not UNSET:
            raise McpError(
                INVALID_PARAMS,
                "This client did not declare the 'sampling.tools' capability: no tools or toolChoice",
            )
        return await handler(params, ctx)

    return sample


def refusing_mode(handler: ElicitationHandler, mode: str) -> ElicitationHandler:
    """``handler`` behind the check of a client that declared only ``mode`` elicitation."""

    async def elicit(params: Any, ctx: RequestContext) -> types.ElicitResult:
        asked = "url" if isinstance(params, types.ElicitRequestURLParams) else "form"
        if asked != mode:
            raise McpError(
                INVALID_PARAMS,
                f"This client did not declare elicitation in {asked} mode (only {mode} mode)",
            )
        return await handler(params, ctx)

    return elicit
