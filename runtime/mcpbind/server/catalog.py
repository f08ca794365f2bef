"""What a server offers from functions: its tools, resources, resource templates and prompts,
and the standard handlers that list them and call, read or get one.

A :class:`~mcpbind.server.server.Server` holds one :class:`Catalog`: its decorators
(``@server.tool``, ``.resource``, ``.prompt``) build the function-backed objects, add them
here and make the catalog's handlers answer their methods (:meth:`Catalog.claim`). Telling
clients of a change is the server's (it knows the sessions), not the catalog's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from msgspec import UnsetType

from mcpbind import types
from mcpbind.protocol.encoded import Encoded
from mcpbind.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.server.listings import Listings
from mcpbind.server.pagination import paginate

if TYPE_CHECKING:
    from mcpbind.server.prompts import FunctionPrompt
    from mcpbind.server.resources import FunctionResource, FunctionResourceTemplate
    from mcpbind.server.tools import FunctionTool

__all__ = ["Catalog"]

methods = types.methods


class Catalog:
    """The tools, resources (by URI), resource templates and prompts a server offers, and the
    handlers answering ``tools/list``, ``tools/call``, ``resources/list``,
    ``resources/templates/list``, ``resources/read``, ``prompts/list`` and ``prompts/get``
    from them.

    ``page_size``: the most items one page of a listing holds. ``max_uri_length``: the longest
    URI :meth:`check_uri` accepts (``resources/read`` here, and the server's
    ``resources/subscribe``); a longer one is refused with a -32602 error before any template
    is matched. Both may be changed at any time.

    The listings' pages are encoded once and kept (:class:`~mcpbind.server.listings.Listings`)
    until what they list changes: through the methods here, by assigning ``tools``... anew, or
    by adding or removing an item of those dicts in place. ``typed_results()``: whether the
    listings must answer typed results instead (a server with middleware, which may read or
    change them), asked at each listing.
    """

    def __init__(self, *, page_size: int, max_uri_length: int) -> None:
        self.page_size = page_size
        self.max_uri_length = max_uri_length
        self._tools: dict[str, FunctionTool] = {}
        self._tool_definitions: list[types.Tool] | None = None
        self._resources: dict[str, FunctionResource] = {}
        self._resource_templates: list[FunctionResourceTemplate] = []
        self._prompts: dict[str, FunctionPrompt] = {}
        self._listings = Listings()
        self.typed_results: Callable[[], bool] = lambda: False
        # Calls of tools that may run as tasks, or asked to (mcpbind.server.tasks), when set.
        self.task_calls: (
            Callable[[FunctionTool, types.CallToolRequestParams, RequestContext], Awaitable[Any]] | None
        ) = None
        # method -> (what is answered, "tool", "resource" or "prompt"; its handler). Not
        # ``resources/subscribe`` and ``unsubscribe``: subscriptions are the server's (it knows
        # the sessions), and a handler registered with ``on()`` replaces the built-in one.
        self._handlers: dict[str, tuple[str, Callable[..., Any]]] = {
            methods.TOOLS_LIST.method: ("tool", self.list_tools),
            methods.TOOLS_CALL.method: ("tool", self.call_tool),
            methods.RESOURCES_LIST.method: ("resource", self.list_resources),
            methods.RESOURCES_TEMPLATES_LIST.method: ("resource", self.list_resource_templates),
            methods.RESOURCES_READ.method: ("resource", self.read_resource),
            methods.PROMPTS_LIST.method: ("prompt", self.list_prompts),
            methods.PROMPTS_GET.method: ("prompt", self.get_prompt),
        }

    # -- its handlers in a server's registry -------------------------------------------------

    def claim(self, registry: dict[str, Any], kind: str) -> None:
        """Make the catalog's handlers answer the methods of ``kind`` (``"tool"``:
        ``tools/list`` and ``tools/call``...) in ``registry`` (a server's request handlers), for
        the ``@server.<kind>`` decorator; ``ValueError`` if another handler answers one of them
        already (it would be bypassed, or would bypass it)."""
        claimed = {method: handler for method, (of, handler) in self._handlers.items() if of == kind}
        for method, handler in claimed.items():
            current = registry.get(method)
            if current is not None and current != handler:
                raise ValueError(
                    f"@server.{kind}() cannot be used on a server that has its own handler for"
                    f" {method} (registered with on() or add_handlers()): the {kind}s"
                    f" registered would not be answered by it. Use one or the other."
                )
        registry.update(claimed)

    def check_free(self, registry: Mapping[str, Any], method: str) -> None:
        """``ValueError`` if the catalog answers ``method`` in ``registry``: a handler of one's
        own registered for it would bypass what the decorators registered."""
        owner = self._handlers.get(method)
        if owner is not None and registry.get(method) == owner[1]:
            raise ValueError(
                f"{method} is answered by the {owner[0]}s registered with @server.{owner[0]}(), so"
                " a handler of its own cannot be registered for it (it would bypass them). Use one"
                " or the other."
            )

    def answers(self, registry: Mapping[str, Any], method: str) -> bool:
        """Whether the catalog's handler answers ``method`` in ``registry``."""
        owner = self._handlers.get(method)
        return owner is not None and bool(registry.get(method) == owner[1])

    # -- what it offers -----------------------------------------------------------------------

    @property
    def tools(self) -> dict[str, FunctionTool]:
        return self._tools

    @tools.setter
    def tools(self, tools: dict[str, FunctionTool]) -> None:
        self._tools = tools
        self._tools_changed()

    @property
    def resources(self) -> dict[str, FunctionResource]:
        return self._resources

    @resources.setter
    def resources(self, resources: dict[str, FunctionResource]) -> None:
        self._resources = resources
        self._listings.forget("resource")

    @property
    def resource_templates(self) -> list[FunctionResourceTemplate]:
        return self._resource_templates

    @resource_templates.setter
    def resource_templates(self, templates: list[FunctionResourceTemplate]) -> None:
        self._resource_templates = templates
        self._listings.forget("template")

    @property
    def prompts(self) -> dict[str, FunctionPrompt]:
        return self._prompts

    @prompts.setter
    def prompts(self, prompts: dict[str, FunctionPrompt]) -> None:
        self._prompts = prompts
        self._listings.forget("prompt")

    # -- changes ----------------------------------------------------------------------------

    def _tools_changed(self) -> None:
        self._tool_definitions = None
        self._listings.forget("tool")

    def add_tool(self, tool: FunctionTool) -> None:
        """Add ``tool``, replacing the one of the same name if any."""
        self._tools[tool.name] = tool
        self._tools_changed()

    def remove_tool(self, name: str) -> None:
        """Remove the tool ``name``; ``KeyError`` if there is none."""
        del self._tools[name]
        self._tools_changed()

    def add_resource(self, resource: FunctionResource) -> None:
        """Add ``resource``, replacing the one at the same URI if any."""
        self._resources[resource.uri] = resource
        self._listings.forget("resource")

    def remove_resource(self, uri: str) -> None:
        """Remove the resource at ``uri``; ``KeyError`` if there is none."""
        del self._resources[uri]
        self._listings.forget("resource")

    def add_resource_template(self, template: FunctionResourceTemplate) -> None:
        """Add ``template`` last, replacing the one of the same template if any (the list is
        replaced, never changed in place)."""
        uri_template = str(template.template)
        self.resource_templates = [
            *(t for t in self._resource_templates if str(t.template) != uri_template),
            template,
        ]

    def remove_resource_template(self, uri_template: str) -> None:
        """Remove the resource template registered as ``uri_template``; ``KeyError`` if there
        is none."""
        kept = [t for t in self.resource_templates if str(t.template) != uri_template]
        if len(kept) == len(self.resource_templates):
            raise KeyError(uri_template)
        self.resource_templates = kept

    def add_prompt(self, prompt: FunctionPrompt) -> None:
        """Add ``prompt``, replacing the one of the same name if any."""
        self._prompts[prompt.name] = prompt
        self._listings.forget("prompt")

    def remove_prompt(self, name: str) -> None:
        """Remove the prompt ``name``; ``KeyError`` if there is none."""
        del self._prompts[name]
        self._listings.forget("prompt")

    # -- the handlers -----------------------------------------------------------------------

    def _tool_list(self) -> list[types.Tool]:
        if self._tool_definitions is None or len(self._tool_definitions) != len(self._tools):
            self._tool_definitions = [tool.definition() for tool in self._tools.values()]
        return self._tool_definitions

    async def list_tools(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListToolsResult | Encoded[types.ListToolsResult]:
        if self.typed_results():
            page = paginate(self._tool_list(), params.cursor, self.page_size)
            return types.ListToolsResult(tools=page.items, next_cursor=page.next_cursor)
        return self._listings.page(
            "tool", len(self._tools), self._tool_list, params.cursor, self.page_size, _tools_page
        )

    async def call_tool(self, params: types.CallToolRequestParams, ctx: RequestContext) -> Any:
        tool = self.tools.get(params.name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        if self.task_calls is not None and (tool.task_support is not None or params.task is not types.UNSET):
            return await self.task_calls(tool, params, ctx)
        return await tool.call(params.arguments if isinstance(params.arguments, dict) else {}, ctx)

    def _resource_list(self) -> list[types.Resource]:
        return [r.definition() for r in self._resources.values()]

    def _template_list(self) -> list[types.ResourceTemplate]:
        return [t.definition() for t in self._resource_templates]

    async def list_resources(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourcesResult | Encoded[types.ListResourcesResult]:
        if self.typed_results():
            page = paginate(self._resource_list(), params.cursor, self.page_size)
            return types.ListResourcesResult(resources=page.items, next_cursor=page.next_cursor)
        return self._listings.page(
            "resource",
            len(self._resources),
            self._resource_list,
            params.cursor,
            self.page_size,
            _resources_page,
        )

    async def list_resource_templates(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourceTemplatesResult | Encoded[types.ListResourceTemplatesResult]:
        if self.typed_results():
            page = paginate(self._template_list(), params.cursor, self.page_size)
            return types.ListResourceTemplatesResult(
                resource_templates=page.items, next_cursor=page.next_cursor
            )
        templates = self._resource_templates
        return self._listings.page(
            "template", len(templates), self._template_list, params.cursor, self.page_size, _templates_page
        )

    def check_uri(self, uri: str) -> None:
        """:class:`McpError` (-32602) for a URI longer than ``max_uri_length``."""
        if len(uri) > self.max_uri_length:
            raise McpError(
                INVALID_PARAMS,
                f"URI too long: {len(uri)} characters, more than the {self.max_uri_length} this server accepts",
            )

    async def read_resource(
        self, params: types.ReadResourceRequestParams, ctx: RequestContext
    ) -> types.ReadResourceResult:
        uri = params.uri
        self.check_uri(uri)
        resource = self.resources.get(uri)
        if resource is not None:
            return types.ReadResourceResult(contents=await resource.read(ctx))
        for template in self.resource_templates:
            variables = template.match(uri)
            if variables is not None:
                return types.ReadResourceResult(contents=await template.read(uri, variables, ctx))
        raise McpError(RESOURCE_NOT_FOUND, f"Resource not found: {uri}", {"uri": uri})

    def _prompt_list(self) -> list[types.Prompt]:
        return [p.definition() for p in self._prompts.values()]

    async def list_prompts(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListPromptsResult | Encoded[types.ListPromptsResult]:
        if self.typed_results():
            page = paginate(self._prompt_list(), params.cursor, self.page_size)
            return types.ListPromptsResult(prompts=page.items, next_cursor=page.next_cursor)
        return self._listings.page(
            "prompt", len(self._prompts), self._prompt_list, params.cursor, self.page_size, _prompts_page
        )

    async def get_prompt(
        self, params: types.GetPromptRequestParams, ctx: RequestContext
    ) -> types.GetPromptResult:
        made = self.prompts.get(params.name)
        if made is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return await made.get(params.arguments if isinstance(params.arguments, dict) else {}, ctx)


def _tools_page(items: list[types.Tool], next_cursor: str | UnsetType) -> types.ListToolsResult:
    return types.ListToolsResult(tools=items, next_cursor=next_cursor)


def _resources_page(items: list[types.Resource], next_cursor: str | UnsetType) -> types.ListResourcesResult:
    return types.ListResourcesResult(resources=items, next_cursor=next_cursor)


def _templates_page(
    items: list[types.ResourceTemplate], next_cursor: str | UnsetType
) -> types.ListResourceTemplatesResult:
    return types.ListResourceTemplatesResult(resource_templates=items, next_cursor=next_cursor)


def _prompts_page(items: list[types.Prompt], next_cursor: str | UnsetType) -> types.ListPromptsResult:
    return types.ListPromptsResult(prompts=items, next_cursor=next_cursor)
