"""What a server's decorators registered, as live views of its catalog: the ``tools``,
``resources``, ``resource_templates`` and ``prompts`` attributes of :class:`~mcpbind.server.server.Server`,
and the catalog's paging and URI limits."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcpbind.server.catalog import Catalog
    from mcpbind.server.prompts import FunctionPrompt
    from mcpbind.server.resources import FunctionResource, FunctionResourceTemplate
    from mcpbind.server.tools import FunctionTool

__all__ = ["CatalogView"]


class CatalogView:
    """Mixed into ``Server``, which sets ``_catalog``: each attribute reads and replaces the
    catalog's own."""

    _catalog: Catalog

    @property
    def tools(self) -> dict[str, FunctionTool]:
        """The tools registered with :meth:`tool`, by name."""
        return self._catalog.tools

    @tools.setter
    def tools(self, tools: dict[str, FunctionTool]) -> None:
        self._catalog.tools = tools

    @property
    def resources(self) -> dict[str, FunctionResource]:
        """The resources registered with :meth:`resource`, by URI."""
        return self._catalog.resources

    @resources.setter
    def resources(self, resources: dict[str, FunctionResource]) -> None:
        self._catalog.resources = resources

    @property
    def resource_templates(self) -> list[FunctionResourceTemplate]:
        """The resource templates registered with :meth:`resource`, matched in this order (a
        new list at each change)."""
        return self._catalog.resource_templates

    @resource_templates.setter
    def resource_templates(self, templates: list[FunctionResourceTemplate]) -> None:
        self._catalog.resource_templates = templates

    @property
    def prompts(self) -> dict[str, FunctionPrompt]:
        """The prompts registered with :meth:`prompt`, by name."""
        return self._catalog.prompts

    @prompts.setter
    def prompts(self, prompts: dict[str, FunctionPrompt]) -> None:
        self._catalog.prompts = prompts

    @property
    def page_size(self) -> int:
        """The most items one page of ``tools/list``, ``resources/list``... holds."""
        return self._catalog.page_size

    @page_size.setter
    def page_size(self, page_size: int) -> None:
        self._catalog.page_size = page_size

    @property
    def max_uri_length(self) -> int:
        """The longest URI ``resources/read`` and ``resources/subscribe`` accept."""
        return self._catalog.max_uri_length

    @max_uri_length.setter
    def max_uri_length(self, max_uri_length: int) -> None:
        self._catalog.max_uri_length = max_uri_length
