"""Elicitation: forms from a flat struct (the requested schema is built from its fields, and
the client's answer is validated against them), and the end of URL mode elicitations.

    class Contact(msgspec.Struct):
        name: str
        age: int
        newsletter: bool = False

    outcome = await elicit_form(ctx, "Who are you?", Contact)
    if outcome.action == "accept":
        contact = outcome.value          # a Contact, validated

URL mode (MCP 2025-11-25) sends the user to a URL for what must not pass through the client.
A handler asks with ``ctx.elicit(types.ElicitRequestURLParams(...))`` when the client
declared ``elicitation.url``, or raises :class:`~mcpbind.protocol.errors.URLElicitationRequiredError`
to have the request retried once the user is done; :func:`notify_elicitation_complete` then
tells the client that the interaction is over.

On a stateless request (MCP 2026-07-28) the same calls work through multi round-trip requests
(:mod:`mcpbind.runtime.rounds`): ``ctx.elicit`` ends the round with an ``InputRequiredResult``
asking the elicitation, and the handler, run again on the client's retry, gets the answer. URL
mode there has no ``elicitationId`` (the one a handler gives is not sent) and no completion
notification: the client retries the request once the user is done, which is how the server
learns it; :func:`notify_elicitation_complete` sends nothing then. A
``URLElicitationRequiredError`` becomes an ``InputRequiredResult`` asking its elicitations.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Generic, Literal, TypeVar

import msgspec

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from mcpbind.protocol.unions import convert
from mcpbind.runtime.context import RequestContext

if TYPE_CHECKING:
    from mcpbind.runtime.session import Session

__all__ = ["ElicitOutcome", "elicit_form", "notify_elicitation_complete", "requested_schema"]

S = TypeVar("S", bound=msgspec.Struct)
_PRIMITIVE = frozenset({"string", "integer", "number", "boolean"})


@dataclass(frozen=True)
class ElicitOutcome(Generic[S]):
    """What the user did; ``value`` is the validated answer when ``action`` is ``"accept"``."""

    action: Literal["accept", "decline", "cancel"]
    value: S | None = None


def requested_schema(struct: type[msgspec.Struct]) -> types.ElicitRequestFormParamsRequestedSchema:
    """The flat object schema elicitation allows, from ``struct``'s fields; ``TypeError`` for a
    field that is not a string, number, integer, boolean or a choice of strings."""
    full: dict[str, Any] = msgspec.json.schema(struct)
    definition = full["$defs"][full["$ref"].removeprefix("#/$defs/")]
    properties: dict[str, Any] = {}
    for name, prop in definition.get("properties", {}).items():
        prop = dict(prop)
        if "enum" in prop and "type" not in prop and all(isinstance(v, str) for v in prop["enum"]):
            prop["type"] = "string"
        if prop.get("type") not in _PRIMITIVE:
            raise TypeError(
                f"{struct.__name__}.{name}: elicitation allows only flat primitive fields, not {prop}"
            )
        properties[name] = prop
    raw: dict[str, Any] = {"type": "object", "properties": properties}
    if definition.get("required"):
        raw["required"] = list(definition["required"])
    schema: types.ElicitRequestFormParamsRequestedSchema = convert(
        raw, types.ElicitRequestFormParamsRequestedSchema
    )
    return schema


async def elicit_form(ctx: RequestContext, message: str, struct: type[S]) -> ElicitOutcome[S]:
    """Ask the client for a form built from ``struct``; the answer is validated (``McpError``
    -32602 naming the field when the client's content does not fit)."""
    params = types.ElicitRequestFormParams(message=message, requested_schema=requested_schema(struct))
    result = await ctx.elicit(params)
    if not isinstance(result, types.ElicitResult):
        raise McpError(INVALID_PARAMS, "The client answered the elicitation with a task, not a result")
    if result.action != "accept":
        return ElicitOutcome(result.action)
    content = result.content if isinstance(result.content, dict) else {}
    try:
        value = msgspec.convert(content, struct)
    except msgspec.ValidationError as exc:
        raise McpError(
            INVALID_PARAMS, f"The elicitation answer does not fit: {str(exc).replace('`$', '`content')}"
        ) from None
    return ElicitOutcome("accept", value)


async def notify_elicitation_complete(target: Session | RequestContext, elicitation_id: str) -> None:
    """Send ``notifications/elicitation/complete`` for the URL mode elicitation
    ``elicitation_id`` to the client of ``target`` (its session, or a handler's context). The
    specification allows it only to the client that was asked: keep that client's session
    (``ctx.session``) with the elicitation. ``McpError`` if that client did not declare
    ``elicitation.url`` (no URL mode elicitation could be its).

    Nothing is sent for a stateless request (2026-07-28, which has no such notification: the
    client learns the outcome by retrying), nor on a connection that serves those.
    """
    if isinstance(target, RequestContext) and target.envelope is not None:
        return
    session = target.session if isinstance(target, RequestContext) else target
    if session.connection.modern:
        return
    elicitation = getattr(session.connection.peer.capabilities, "elicitation", types.UNSET)
    if getattr(elicitation, "url", types.UNSET) is types.UNSET:
        raise McpError(
            INVALID_REQUEST,
            "The client did not declare the 'elicitation.url' capability needed for "
            "notifications/elicitation/complete; nothing was sent",
        )
    await session.notify(
        types.methods.NOTIFICATIONS_ELICITATION_COMPLETE,
        types.ElicitationCompleteNotificationParams(elicitation_id=elicitation_id),
    )
