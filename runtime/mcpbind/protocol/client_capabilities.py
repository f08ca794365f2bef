"""What a server may ask of a client: the client capability each request to the client needs
(``sampling``, ``elicitation`` and its modes, ``roots``, task augmentation), as the
specification says, checked against the capabilities the client declared."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.errors import MissingRequiredClientCapabilityError

__all__ = ["CLIENT_CAPABILITY_FOR", "missing_client_capability", "require_client_capability"]

methods = types.methods

# The client capability a server needs before it may send each of these requests.
CLIENT_CAPABILITY_FOR: Final = {
    methods.SAMPLING_CREATE_MESSAGE.method: "sampling",
    methods.ELICITATION_CREATE.method: "elicitation",
    methods.ROOTS_LIST.method: "roots",
}


def missing_client_capability(capabilities: Any, method: str, params: Any) -> tuple[str, str] | None:
    """What a server may not send: for the request ``method`` with ``params``, the client
    capability it needs that ``capabilities`` (the client's ``ClientCapabilities``) lacks, and
    the use that needs it (for a message); ``None`` when nothing is missing.

    As the specification says: ``roots/list`` needs ``roots``; ``sampling/createMessage`` needs
    ``sampling``, plus ``sampling.tools`` with ``tools`` or ``toolChoice`` and
    ``sampling.context`` with an ``includeContext`` other than ``"none"``;
    ``elicitation/create`` needs ``elicitation.url`` in URL mode and ``elicitation.form`` in
    form mode (an empty ``elicitation`` declares form mode only). A request augmented with a
    ``task`` needs the client's ``tasks.requests`` entry for it.
    """
    name = CLIENT_CAPABILITY_FOR.get(method)
    if name is None:
        return None
    declared = getattr(capabilities, name, UNSET) if capabilities is not None else UNSET
    if declared is UNSET:
        return name, method
    if method == methods.SAMPLING_CREATE_MESSAGE.method:
        if (
            getattr(params, "tools", UNSET) is not UNSET or getattr(params, "tool_choice", UNSET) is not UNSET
        ) and getattr(declared, "tools", UNSET) is UNSET:
            return "sampling.tools", f"{method} with tools or toolChoice"
        context = getattr(params, "include_context", UNSET)
        if context not in (UNSET, "none") and getattr(declared, "context", UNSET) is UNSET:
            return "sampling.context", f"{method} with includeContext {context!r}"
        task = _TASK_CAPABILITY_FOR_SAMPLING
    elif method == methods.ELICITATION_CREATE.method:
        form, url = getattr(declared, "form", UNSET), getattr(declared, "url", UNSET)
        if isinstance(params, types.ElicitRequestURLParams) or getattr(params, "mode", UNSET) == "url":
            if url is UNSET:
                return "elicitation.url", f"{method} in url mode"
        elif form is UNSET and url is not UNSET:  # an empty elicitation object means form mode
            return "elicitation.form", f"{method} in form mode"
        task = _TASK_CAPABILITY_FOR_ELICITATION
    else:
        return None
    if getattr(params, "task", UNSET) is not UNSET:
        path, spelled = task
        found: Any = getattr(capabilities, "tasks", UNSET)
        for part in path:
            found = getattr(found, part, UNSET)
        if found is UNSET:
            return spelled, f"{method} as a task"
    return None


# Where ClientCapabilities declares task-augmented sampling and elicitation: attributes, and
# the name the specification spells.
_TASK_CAPABILITY_FOR_SAMPLING: Final = (
    ("requests", "sampling", "create_message"),
    "tasks.requests.sampling.createMessage",
)
_TASK_CAPABILITY_FOR_ELICITATION: Final = (
    ("requests", "elicitation", "create"),
    "tasks.requests.elicitation.create",
)


def require_client_capability(
    capabilities: Any, method: str, params: Any, message: Callable[[str, str], str]
) -> None:
    """Raise :class:`MissingRequiredClientCapabilityError` (its ``requiredCapabilities`` the
    missing capability as a nested object, ``elicitation.url`` as ``{"elicitation": {"url":
    {}}}``) when ``capabilities`` lack what the request ``method`` with ``params`` needs;
    ``message(capability, use)`` says so."""
    missing = missing_client_capability(capabilities, method, params)
    if missing is None:
        return
    capability, use = missing
    required: dict[str, Any] = {}
    for part in reversed(capability.split(".")):
        required = {part: required}
    raise MissingRequiredClientCapabilityError(required, message(capability, use))
