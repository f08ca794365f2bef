"""The capabilities a server declares when it is given none: those its handlers imply."""

from __future__ import annotations

from collections.abc import Collection

from mcpbind import types

__all__ = ["implied_capabilities"]

methods = types.methods

# Which server capability a handler for each method implies.
_CAPABILITY_OF_METHOD = {
    "tools/": "tools",
    "resources/": "resources",
    "prompts/": "prompts",
    "completion/": "completions",
}


def implied_capabilities(
    request_methods: Collection[str], *, logs: bool, list_changed: Collection[str]
) -> types.ServerCapabilities:
    """The capabilities of a server answering ``request_methods``: ``tools``, ``resources``,
    ``prompts`` and ``completions`` for the methods of each, ``resources.subscribe`` with
    ``resources/subscribe``, ``logging`` if it ``logs``, and ``listChanged`` for the lists
    (``tools/list``, ``resources/list``, ``prompts/list``) in ``list_changed``: those whose
    changes clients are told of; ``tasks`` (list, cancel, task-augmented ``tools/call``) with
    ``tasks/get`` (2025-11-25's tasks, :mod:`mcpbind.server.tasks`)."""
    present = {
        cap
        for method in request_methods
        for prefix, cap in _CAPABILITY_OF_METHOD.items()
        if method.startswith(prefix)
    }
    return types.ServerCapabilities(
        tools=types.ServerCapabilitiesTools(
            list_changed=True if methods.TOOLS_LIST.method in list_changed else types.UNSET
        )
        if "tools" in present
        else types.UNSET,
        resources=types.ServerCapabilitiesResources(
            subscribe=True if methods.RESOURCES_SUBSCRIBE.method in request_methods else types.UNSET,
            list_changed=True if methods.RESOURCES_LIST.method in list_changed else types.UNSET,
        )
        if "resources" in present
        else types.UNSET,
        prompts=types.ServerCapabilitiesPrompts(
            list_changed=True if methods.PROMPTS_LIST.method in list_changed else types.UNSET
        )
        if "prompts" in present
        else types.UNSET,
        logging={} if logs else types.UNSET,
        completions={} if "completions" in present else types.UNSET,
        tasks=types.ServerCapabilitiesTasks(
            list_={},
            cancel={},
            requests=types.ServerCapabilitiesTasksRequests(
                tools=types.ServerCapabilitiesTasksRequestsTools(call={})
            ),
        )
        if methods.TASKS_GET.method in request_methods
        else types.UNSET,
    )
