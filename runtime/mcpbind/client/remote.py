"""What a client holds once connected: :class:`RemoteServer`, the server at the other end, with
one typed async method per request a client sends, whichever era of the protocol it speaks
(a session after ``initialize``, or stateless requests of MCP 2026-07-28)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any, TypeVar

import msgspec

from mcpbind import types
from mcpbind.client.caching import CACHEABLE_METHODS, ResultCache, ttl_ms
from mcpbind.client.mrtr import (
    MRTR_METHODS,
    InputRoundsExceeded,
    answer_input_requests,
    input_required,
    retry_params,
)
from mcpbind.client.pages import all_pages
from mcpbind.client.stateless import Stateless, raw_result_spec
from mcpbind.client.subscriptions import Listener, Subscriptions
from mcpbind.client.tasks import ToolTask, start_tool
from mcpbind.protocol.errors import INVALID_REQUEST, McpError
from mcpbind.protocol.methods import NotificationSpec, RequestSpec, ToServer
from mcpbind.runtime.session import ProgressCallback, Session
from mcpbind.versions import LATEST_VERSION, schema_for

__all__ = ["RemoteServer"]

log = logging.getLogger("mcpbind.client")

methods = types.methods
P = TypeVar("P")
R = TypeVar("R")
UNSET = types.UNSET


def _opt(value: Any) -> Any:
    return UNSET if value is None else value


def _cache_key(params: Any) -> str | None:
    key = getattr(params, "uri", None)
    if isinstance(key, str):
        return key
    cursor = getattr(params, "cursor", None)
    return cursor if isinstance(cursor, str) else None


def _with_param_headers(result: types.ListToolsResult, registry: dict[str, Any]) -> types.ListToolsResult:
    """Note each tool's ``x-mcp-header`` arguments for the HTTP transport; ``result`` without
    the tools whose marks are invalid."""
    from mcpbind.transports.http.client.headers import param_headers

    kept = []
    for tool in result.tools:
        try:
            annotated = param_headers(msgspec.to_builtins(tool.input_schema))
        except ValueError as exc:
            log.warning("leaving out tool %r: invalid x-mcp-header: %s", tool.name, exc)
            registry.pop(tool.name, None)
            continue
        if annotated:
            registry[tool.name] = annotated
        else:
            registry.pop(tool.name, None)
        kept.append(tool)
    if len(kept) == len(result.tools):
        return result
    return msgspec.structs.replace(result, tools=kept)


class RemoteServer:
    """A server this client is connected to: one typed method per request a client sends.
    ``Client.connect`` (and ``connect_stdio``, ``connect_url``) yield it.

    Every request waits for its answer at most ``timeout`` seconds when given, else the
    ``request_timeout`` of the :class:`~mcpbind.client.client.Client`. An error answer, a timeout
    (``REQUEST_TIMEOUT``) and a closed connection (``CONNECTION_CLOSED``) raise
    :class:`~mcpbind.protocol.errors.McpError` with that code; cancelling the call sends
    ``notifications/cancelled`` to the server (over Streamable HTTP at a stateless version,
    closes the request's stream instead).

    :attr:`stateless` says whether the connection speaks a stateless version (MCP
    2026-07-28: no handshake; every request carries the client's ``_meta`` envelope); then
    :attr:`initialize_result` is made from what ``server/discover`` answered (empty
    capabilities when the version was pinned without it), :attr:`discover_result` holds that
    answer, ``tools/call``, ``prompts/get`` and ``resources/read`` drive multi round-trip
    exchanges with the client's handlers, :meth:`ping` sends ``server/discover``,
    :meth:`set_logging_level` sets the level later requests ask for, and
    :meth:`subscribe_resource` is refused (use :meth:`listen`).
    """

    def __init__(
        self,
        session: Session,
        initialize_result: types.InitializeResult,
        *,
        stateless: Stateless | None = None,
        discover_result: Any = None,
        subscriptions: Subscriptions | None = None,
        cache: ResultCache | None = None,
    ) -> None:
        self.session = session
        self.initialize_result = initialize_result
        self.discover_result = discover_result
        self._stateless = stateless
        self._subscriptions = subscriptions if subscriptions is not None else Subscriptions({})
        self._cache = cache

    @property
    def stateless(self) -> bool:
        """Whether this connection speaks a stateless protocol version (no session)."""
        return self._stateless is not None

    @property
    def protocol_version(self) -> str:
        """The protocol version spoken: the one the server chose at initialize, or the
        stateless version the requests carry."""
        if self._stateless is not None:
            return self._stateless.version
        return self.initialize_result.protocol_version

    @property
    def server_info(self) -> types.Implementation:
        """The server's name, version and the like (its ``serverInfo``)."""
        if self._stateless is not None and self._stateless.server_info is not None:
            return self._stateless.server_info
        return self.initialize_result.server_info

    @property
    def server_capabilities(self) -> types.ServerCapabilities:
        """What the server declared (at initialize, or in ``server/discover``): the features
        it offers."""
        return self.initialize_result.capabilities

    @property
    def instructions(self) -> str | None:
        """The server's instructions for using it (meant for a model's prompt), if it gave any."""
        value = self.initialize_result.instructions
        return value if isinstance(value, str) else None

    @property
    def log_level(self) -> types.LoggingLevel | None:
        """Stateless versions: the lowest level of log messages each request asks for
        (``None``: none); ``Client(log_level=...)`` sets it first, :meth:`set_logging_level`
        later."""
        return self._stateless.log_level if self._stateless is not None else None

    async def request(
        self,
        spec: RequestSpec[P, R, ToServer],
        params: P,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        log_level: types.LoggingLevel | None = None,
    ) -> R:
        """Any request a client sends, typed by its spec (``methods.TOOLS_CALL``...); a spec
        only a server sends (``methods.ROOTS_LIST``) is a type error. At a stateless version
        the envelope goes into the params' ``_meta`` (``log_level``: this request's lowest
        level of log messages, instead of :attr:`log_level`), and a multi round-trip request
        is driven to its final result."""
        stateless = self._stateless
        if stateless is None:
            return await self.session.request(spec, params, timeout=timeout, progress=progress)
        stamped = stateless.stamp(params, log_level)
        method = spec.method
        cache = self._cache
        cacheable = cache is not None and method in CACHEABLE_METHODS
        if cacheable:
            assert cache is not None
            cached = cache.get(method, _cache_key(params))
            if cached is not None:
                found: R = cached
                return found
        if method not in MRTR_METHODS and not cacheable:
            result = await self.session.request(spec, stamped, timeout=timeout, progress=progress)
            stateless.note_result(result)
            return result
        raw_spec = raw_result_spec(spec)
        rounds = 0
        sent: Any = stamped
        while True:
            raw = await self.session.request(raw_spec, sent, timeout=timeout, progress=progress)
            asked = input_required(raw) if method in MRTR_METHODS else None
            if asked is None:
                break
            rounds += 1
            if rounds > stateless.max_input_rounds:
                raise InputRoundsExceeded(method, stateless.max_input_rounds)
            responses = await answer_input_requests(self.session, method, asked, rounds)
            sent = retry_params(stamped, responses, asked.request_state)
        try:
            result = spec.decode_result(raw)
        except msgspec.ValidationError as exc:
            raise McpError(INVALID_REQUEST, f"Invalid result of {method}: {exc}") from None
        stateless.note_result(result)
        if cacheable and rounds == 0:
            assert cache is not None
            ttl = ttl_ms(raw)
            if ttl is not None:
                cache.put(method, _cache_key(params), result, ttl)
        return result

    async def notify(self, spec: NotificationSpec[P, ToServer], params: P) -> None:
        """Send any notification a client sends, typed by its spec
        (``methods.NOTIFICATIONS_ROOTS_LIST_CHANGED``...)."""
        await self.session.notify(spec, params)

    async def ping(self, *, timeout: float | None = None) -> None:
        """``ping``: returns once the server answers. Stateless versions have no ``ping``:
        ``server/discover`` stands in for it (any answer will do)."""
        if self._stateless is None:
            await self.session.request(methods.PING, types.RequestParams(), timeout=timeout)
            return
        await self.discover(timeout=timeout)

    async def discover(self, *, timeout: float | None = None) -> Any:
        """``server/discover`` (stateless versions): the versions, capabilities, identity and
        instructions of the server, as a ``DiscoverResult`` of MCP 2026-07-28."""
        if self._stateless is None:
            raise McpError(
                INVALID_REQUEST,
                f"server/discover is not part of protocol version {self.protocol_version}; "
                "see initialize_result",
            )
        modern = schema_for(LATEST_VERSION)
        result = await self.request(
            modern.methods.SERVER_DISCOVER, modern.structs.RequestParams(meta={}), timeout=timeout
        )
        self.discover_result = result
        return result

    def listen(
        self,
        *,
        tools: bool = False,
        prompts: bool = False,
        resources: bool = False,
        resource_uris: Sequence[str] = (),
        task_ids: Sequence[str] = (),
        buffer: int = 256,
        timeout: float | None = None,
    ) -> Listener:
        """Changes on the server as typed events, for the kinds asked for: ``tools``,
        ``prompts`` and ``resources`` list changes, updates of the resources at
        ``resource_uris``, status changes of the tasks ``task_ids`` (the tasks extension, at a
        stateless version: :class:`~mcpbind.client.subscriptions.TaskChanged` events). ::

            async with server.listen(tools=True, resource_uris=["file:///a"]) as changes:
                print(changes.acknowledged)  # what the server agreed to send
                async for event in changes:  # ToolsListChanged(), ResourceUpdated(uri=...)
                    ...

        Stateless versions open a ``subscriptions/listen`` stream (entering waits, at most
        ``timeout`` seconds, for the server's acknowledgement); sessions of older versions
        use their own notifications and ``resources/subscribe`` (see
        :mod:`mcpbind.client.subscriptions`). Up to ``buffer`` events wait for a slow
        reader; more are dropped. Leaving the block ends the subscription."""
        return Listener(
            self,
            self._subscriptions,
            tools=tools,
            prompts=prompts,
            resources=resources,
            resource_uris=resource_uris,
            task_ids=task_ids,
            buffer=buffer,
            timeout=timeout if timeout is not None else self.session.request_timeout,
        )

    async def list_tools(self, cursor: str | None = None) -> types.ListToolsResult:
        """``tools/list``: one page of tools, from ``cursor`` (the previous page's
        ``next_cursor``) or from the start; :meth:`all_tools` follows the pages.

        Over Streamable HTTP at a stateless version, the arguments a tool's ``inputSchema``
        marks with ``x-mcp-header`` are sent as ``Mcp-Param-*`` headers of its calls, and a
        tool whose marks are invalid is left out (with a warning), as the specification asks."""
        result = await self.request(methods.TOOLS_LIST, types.PaginatedRequestParams(cursor=_opt(cursor)))
        registry = getattr(self.session.transport, "tool_param_headers", None)
        if self._stateless is not None and isinstance(registry, dict):
            result = _with_param_headers(result, registry)
        return result

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any] | None = None,
        *,
        timeout: float | None = None,
        progress: ProgressCallback | None = None,
        log_level: types.LoggingLevel | None = None,
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
        as for every request; ``log_level`` (stateless versions): the lowest level of log
        messages to send for this call. A server of a stateless version that needs input
        (sampling, elicitation, roots) gets it from the client's handlers, over as many
        rounds as it takes (at most ``Client(max_input_rounds=...)``). ``TypeError`` if the server answers with a task instead of a
        result (a task-augmented call; use :meth:`request` with ``methods.TOOLS_CALL`` for those).
        """
        params = types.CallToolRequestParams(
            name=name, arguments=UNSET if arguments is None else dict(arguments)
        )
        result = await self.request(
            methods.TOOLS_CALL, params, timeout=timeout, progress=progress, log_level=log_level
        )
        if not isinstance(result, types.CallToolResult):
            raise TypeError(f"expected a CallToolResult, got {type(result).__name__}")
        return result

    async def start_tool(
        self, name: str, arguments: Mapping[str, Any] | None = None, *, ttl_ms: int | None = None
    ) -> ToolTask:
        """``tools/call`` letting the server run the tool as a task (the tasks extension at a
        stateless version, 2025-11-25's ``params.task`` with ``ttl_ms`` on a session): a
        :class:`~mcpbind.client.tasks.ToolTask` to follow, whose ``await task.result()`` is
        the tool's result (see :mod:`mcpbind.client.tasks`)."""
        return await start_tool(self, name, arguments, ttl_ms)

    def task(self, task_id: str, poll_interval_ms: int = 1000) -> ToolTask:
        """The task ``task_id`` (one started earlier, perhaps by another process), to follow."""
        return ToolTask(self, task_id, poll_interval_ms)

    async def wait_for_task(self, task_id: str, *, listen: bool = False) -> types.CallToolResult:
        """The result of the task ``task_id`` once it ends (see :meth:`ToolTask.result
        <mcpbind.client.tasks.ToolTask.result>`; ``listen``: woken by its notifications too)."""
        return await self.task(task_id).result(listen=listen)

    @property
    def client_capabilities(self) -> Any:
        """At a stateless version, the capabilities each request declares; else ``None``."""
        return self._stateless.capabilities if self._stateless is not None else None

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
        the resource at ``uri`` changes (handle it with ``Client(notification_handlers=...)``,
        or use :meth:`listen`, which works with every version). Stateless versions have no
        ``resources/subscribe``: :class:`McpError` pointing to :meth:`listen`."""
        if self._stateless is not None:
            raise McpError(
                INVALID_REQUEST,
                f"resources/subscribe is not part of protocol version {self.protocol_version}; "
                "use server.listen(resource_uris=[...])",
            )
        await self.request(methods.RESOURCES_SUBSCRIBE, types.SubscribeRequestParams(uri=uri))

    async def unsubscribe_resource(self, uri: str) -> None:
        """``resources/unsubscribe``: no more updates about ``uri`` (refused at stateless
        versions, as :meth:`subscribe_resource`)."""
        if self._stateless is not None:
            raise McpError(
                INVALID_REQUEST,
                f"resources/unsubscribe is not part of protocol version {self.protocol_version}",
            )
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
        """``logging/setLevel``: the server sends log messages of ``level`` and above only.
        Stateless versions have no ``logging/setLevel``: each request asks for its own level,
        and this sets the one later requests ask for (:attr:`log_level`)."""
        if self._stateless is not None:
            self._stateless.log_level = level
            return
        await self.request(methods.LOGGING_SET_LEVEL, types.SetLevelRequestParams(level=level))

    async def send_roots_list_changed(self) -> None:
        """``notifications/roots/list_changed``: tell the server that the roots have changed.
        Nothing to tell at stateless versions (the server asks for the roots when it needs
        them): nothing is sent."""
        if self._stateless is not None:
            return
        await self.notify(methods.NOTIFICATIONS_ROOTS_LIST_CHANGED, types.NotificationParams())
