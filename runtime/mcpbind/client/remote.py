"""What a client holds once connected: :class:`RemoteServer`, the server at the other end, with
one typed async method per request a client sends."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

from mcpbind import types
from mcpbind.client.pages import all_pages
from mcpbind.protocol.methods import NotificationSpec, RequestSpec, ToServer
from mcpbind.runtime.session import ProgressCallback, Session

__all__ = ["RemoteServer"]

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
UNSET = types.UNSET


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


class RemoteServer:
    """A server this client is connected to and has initialized: one typed method per request
    a client sends. ``Client.connect`` (and ``connect_stdio``, ``connect_url``) yield it.

    Every request waits for its answer at most ``timeout`` seconds when given, else the
    ``request_timeout`` of the :class:`~mcpbind.client.client.Client`. An error answer, a timeout
    (``REQUEST_TIMEOUT``) and a closed connection (``CONNECTION_CLOSED``) raise
    :class:`~mcpbind.protocol.errors.McpError` with that code; cancelling the call sends
    ``notifications/cancelled`` to the server.
    """

    def __init__(self, session: Session, initialize_result: types.InitializeResult) -> None:
        self.session = session
        self.initialize_result = initialize_result

    @property
    def protocol_version(self) -> str:
        """The protocol version the server chose at initialize (one of the client's ``versions``)."""
        return self.initialize_result.protocol_version

    @property
    def server_info(self) -> types.Implementation:
        """The server's name, version and the like (its ``serverInfo``)."""
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities:
        """What the server declared at initialize: the features it offers."""
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for using it (meant for a model's prompt), if it gave any."""
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    async def request(
        self,
        spec: RequestSpec[P, R, ToServer],
        params: P,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> R:
        """Any request a client sends, typed by its spec (``methods.TOOLS_CALL``...); a spec
        only a server sends (``methods.ROOTS_LIST``) is a type error."""
        return await self.session.request(spec, params, timeout=timeout, progress=progress)

    async def notify(self, spec: NotificationSpec[P, ToServer], params: P) -> None:
        """Send any notification a client sends, typed by its spec
        (``methods.NOTIFICATIONS_ROOTS_LIST_CHANGED``...)."""
        await self.session.notify(spec, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """``ping``: returns once the server answers."""
        await self.session.request(methods.PING, types.RequestParams(), timeout=timeout)

    async def list_tools(self, cursor: str | None = None) -> types.ListToolsResult:
        """``tools/list``: one page of tools, from ``cursor`` (the previous page's
        ``next_cursor``) or from the start; :meth:`all_tools` follows the pages."""
        return await self.request(methods.TOOLS_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
    ) -> types.CallToolResult:
        """``tools/call``: run the tool ``name`` with ``arguments`` (JSON values, by parameter
        name) and return its result: ``content`` (and ``structured_content`` for a tool with an
        output schema).

        A tool that fails for its caller does not raise: its result has ``is_error`` set and says
        why in its content (from MCP 2025-11-25 on, arguments the tool refuses are reported so
        too). An unknown tool, arguments refused by a server of an older version and any other
        protocol error raise :class:`~mcpbind.protocol.errors.McpError`
        (:class:`~mcpbind.protocol.errors.URLElicitationRequiredError` when the server needs the user to
        complete a URL elicitation first). ``progress``, if given, is called with each progress
        notification the server sends for this call (``progress, total, message``); ``timeout``
        as for every request. ``TypeError`` if the server answers with a task instead of a
        result (a task-augmented call; use :meth:`request` with ``methods.TOOLS_CALL`` for those).
        """
        params = types.CallToolRequestParams(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        result = await self.request(methods.TOOLS_CALL, params, timeout=timeout, progress=progress)
        if not isinstance(result, types.CallToolResult):
            raise TypeError(f"expected a CallToolResult, got {type(result).__name__}")
        return result

    async def all_tools(self) -> list[types.Tool]:
        """Every tool, across all pages."""
        return [tool async for page in all_pages(self.list_tools) for tool in page.tools]

    async def all_resources(self) -> list[types.Resource]:
        """Every resource, across all pages."""
        return [item async for page in all_pages(self.list_resources) for item in page.resources]

    async def all_resource_templates(self) -> list[types.ResourceTemplate]:
        """Every resource template, across all pages."""
        return [
            item async for page in all_pages(self.list_resource_templates) for item in page.resource_templates
        ]

    async def all_prompts(self) -> list[types.Prompt]:
        """Every prompt, across all pages."""
        return [item async for page in all_pages(self.list_prompts) for item in page.prompts]

    async def list_resources(self, cursor: str | None = None) -> types.ListResourcesResult:
        """``resources/list``: one page of resources (``cursor`` as for :meth:`list_tools`)."""
        return await self.request(methods.RESOURCES_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def list_resource_templates(self, cursor: str | None = None) -> types.ListResourceTemplatesResult:
        """``resources/templates/list``: one page of resource templates (``cursor`` as for
        :meth:`list_tools`)."""
        return await self.request(
            methods.RESOURCES_TEMPLATES_LIST, types.PaginatedRequestParams(cursor=_opt(cursor))
        )

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        """``resources/read``: the contents at ``uri`` (text or blob items)."""
        return await self.request(methods.RESOURCES_READ, types.ReadResourceRequestParams(uri=uri))

    async def subscribe_resource(self, uri: str) -> None:
        """``resources/subscribe``: the server then sends ``notifications/resources/updated`` when
        the resource at ``uri`` changes (handle it with ``Client(notification_handlers=...)``)."""
        await self.request(methods.RESOURCES_SUBSCRIBE, types.SubscribeRequestParams(uri=uri))

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe``: no more updates about ``uri``."""
        await self.request(methods.RESOURCES_UNSUBSCRIBE, types.UnsubscribeRequestParams(uri=uri))

    async def list_prompts(self, cursor: str | None = None) -> types.ListPromptsResult:
        """``prompts/list``: one page of prompts (``cursor`` as for :meth:`list_tools`)."""
        return await self.request(methods.PROMPTS_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))

    async def get_prompt(
        self, name: str, arguments: Mapping[str, str] | None = None
    ) -> types.GetPromptResult:
        """``prompts/get``: the prompt ``name`` filled in with ``arguments`` (strings, by name)."""
        params = types.GetPromptRequestParams(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        return await self.request(methods.PROMPTS_GET, params)

    async def complete(
        self,
        ref: types.PromptReference | types.ResourceTemplateReference,
        argument: str,
        value: str,
        context: Mapping[str, str] | None = None,
    ) -> types.CompleteResult:
        """``completion/complete``: suggested values for the argument ``argument`` of a prompt or
        resource template (``ref``) whose value so far is ``value``; ``context``: the values of
        the arguments already chosen."""
        params = types.CompleteRequestParams(
            ref=ref,
            argument=types.CompleteRequestParamsArgument(name=argument, value=value),
            context=UNSET if context is None else types.CompleteRequestParamsContext(arguments=dict(context)),
        )
        return await self.request(methods.COMPLETION_COMPLETE, params)

    async def set_logging_level(self, level: types.LoggingLevel) -> None:
        """``logging/setLevel``: the server sends log messages of ``level`` and above only."""
        await self.request(methods.LOGGING_SET_LEVEL, types.SetLevelRequestParams(level=level))

    async def send_roots_list_changed(self) -> None:
        """``notifications/roots/list_changed``: tell the server that the roots have changed."""
        await self.notify(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, types.NotificationParams())
