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

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, RESOURCE_NOT_FOUND, McpError
from mcpbind.runtime.context import RequestContext
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
    """

    def __init__(self, *, page_size: int, max_uri_length: int) -> None:
        self.page_size = page_size
        self.max_uri_length = max_uri_length
        self.tools: dict[str, FunctionTool] = {}
        self._tool_definitions: list[types.Tool] | None = None
        self.resources: dict[str, FunctionResource] = {}
        self.resource_templates: list[FunctionResourceTemplate] = []
        self.prompts: dict[str, FunctionPrompt] = {}
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

    # -- changes ----------------------------------------------------------------------------

    def add_tool(self, tool: FunctionTool) -> None:
        """Add ``tool``, replacing the one of the same name if any."""
        self.tools[tool.name] = tool
        self._tool_definitions = None

    def remove_tool(self, name: str) -> None:
        """Remove the tool ``name``; ``KeyError`` if there is none."""
        del self.tools[name]
        self._tool_definitions = None

    def add_resource(self, resource: FunctionResource) -> None:
        """Add ``resource``, replacing the one at the same URI if any."""
        self.resources[resource.uri] = resource

    def remove_resource(self, uri: str) -> None:
        """Remove the resource at ``uri``; ``KeyError`` if there is none."""
        del self.resources[uri]

    def add_resource_template(self, template: FunctionResourceTemplate) -> None:
        """Add ``template`` last, replacing the one of the same template if any (the list is
        replaced, never changed in place)."""
        uri_template = str(template.template)
        self.resource_templates = [
            *(t for t in self.resource_templates if str(t.template) != uri_template),
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
        self.prompts[prompt.name] = prompt

    def remove_prompt(self, name: str) -> None:
        """Remove the prompt ``name``; ``KeyError`` if there is none."""
        del self.prompts[name]

    # -- the handlers -----------------------------------------------------------------------

    async def list_tools(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListToolsResult:
        if self._tool_definitions is None:  # built once per change of the tool set, not per call
            self._tool_definitions = [tool.definition() for tool in self.tools.values()]
        page = paginate(self._tool_definitions, params.cursor, self.page_size)
        return types.ListToolsResult(tools=page.items, next_cursor=page.next_cursor)

    async def call_tool(self, params: types.CallToolRequestParams, ctx: RequestContext) -> Any:
        tool = self.tools.get(params.name)
        if tool is None:
            raise McpError(INVALID_PARAMS, f"Unknown tool: {params.name}")
        if self.task_calls is not None and (tool.task_support is not None or params.task is not types.UNSET):
            return await self.task_calls(tool, params, ctx)
        return await tool.call(params.arguments if isinstance(params.arguments, dict) else {}, ctx)

    async def list_resources(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourcesResult:
        page = paginate([r.definition() for r in self.resources.values()], params.cursor, self.page_size)
        return types.ListResourcesResult(resources=page.items, next_cursor=page.next_cursor)

    async def list_resource_templates(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListResourceTemplatesResult:
        page = paginate([t.definition() for t in self.resource_templates], params.cursor, self.page_size)
        return types.ListResourceTemplatesResult(resource_templates=page.items, next_cursor=page.next_cursor)

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

    async def list_prompts(
        self, params: types.PaginatedRequestParams, ctx: RequestContext
    ) -> types.ListPromptsResult:
        page = paginate([p.definition() for p in self.prompts.values()], params.cursor, self.page_size)
        return types.ListPromptsResult(prompts=page.items, next_cursor=page.next_cursor)

    async def get_prompt(
        self, params: types.GetPromptRequestParams, ctx: RequestContext
    ) -> types.GetPromptResult:
        made = self.prompts.get(params.name)
        if made is None:
            raise McpError(INVALID_PARAMS, f"Unknown prompt: {params.name}")
        return await made.get(params.arguments if isinstance(params.arguments, dict) else {}, ctx)
