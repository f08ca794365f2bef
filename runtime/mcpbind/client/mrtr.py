"""Multi round-trip requests, client side (MCP 2026-07-28): when a ``tools/call``,
``prompts/get`` or ``resources/read`` ends a round with an ``InputRequiredResult``, answer its
``inputRequests`` with the client's own sampling, elicitation and roots handlers (the ones
that answer a 2025 server's requests) and retry the request with ``inputResponses`` and the
opaque ``requestState``, a bounded number of times.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, Final

import anyio
import msgspec
from msgspec import UNSET, UnsetType

from mcpbind import types
from mcpbind.protocol.errors import INVALID_PARAMS, INVALID_REQUEST, McpError
from mcpbind.runtime.context import RequestContext
from mcpbind.runtime.handlers import RequestHandler
from mcpbind.runtime.session import Session

__all__ = [
    "MRTR_METHODS",
    "InputRequired",
    "InputRoundsExceeded",
    "answer_input_requests",
    "input_required",
    "retry_params",
]

# The requests a server may answer with an InputRequiredResult.
MRTR_METHODS: Final = frozenset({"tools/call", "prompts/get", "resources/read"})

# What each kind of input request needs the client to have been given.
_HANDLER_OPTION: Final = {
    "sampling/createMessage": "sampling",
    "elicitation/create": "elicitation",
    "roots/list": "roots",
}

# A round that carries only ``requestState`` is retried after a short pause, growing to a cap.
_STATE_ONLY_PAUSE: Final = 0.05
_STATE_ONLY_PAUSE_CAP: Final = 0.25


class _InputRequest(msgspec.Struct):
    method: str
    params: msgspec.Raw = msgspec.Raw(b"{}")


class InputRequired(msgspec.Struct, kw_only=True):
    """An ``InputRequiredResult`` as the client reads it: the embedded requests keep their
    params undecoded until a handler is chosen for them."""

    result_type: str = msgspec.field(name="resultType", default="complete")
    input_requests: dict[str, _InputRequest] | None = msgspec.field(name="inputRequests", default=None)
    request_state: str | None = msgspec.field(name="requestState", default=None)


_decoder: Final = msgspec.json.Decoder(InputRequired)


class InputRoundsExceeded(McpError):
    """The server still asked for input after ``max_rounds`` retries (``Client(max_input_rounds=)``)."""

    def __init__(self, method: str, max_rounds: int) -> None:
        self.max_rounds = max_rounds
        super().__init__(
            INVALID_REQUEST,
            f"{method}: the server still asked for input after {max_rounds} rounds; giving up "
            "(raise Client(max_input_rounds=...) if it needs more)",
        )


def input_required(raw: bytes | msgspec.Raw) -> InputRequired | None:
    """The ``InputRequiredResult`` in a raw result, or ``None`` when it is a final result
    (``resultType`` ``"complete"`` or absent)."""
    data = bytes(raw)
    if b'"input_required"' not in data:  # cheap: most results are final
        return None
    try:
        found = _decoder.decode(data)
    except msgspec.ValidationError as exc:
        raise McpError(INVALID_PARAMS, f"Invalid InputRequiredResult from the server: {exc}") from None
    return found if found.result_type == "input_required" else None


@functools.cache
def _retry_type(params_type: type[Any]) -> type[Any]:
    """``params_type`` with the members a retry adds."""
    return msgspec.defstruct(
        params_type.__name__ + "Retry",
        [
            (
                "input_responses",
                dict[str, Any] | UnsetType,
                msgspec.field(name="inputResponses", default=UNSET),
            ),
            ("request_state", str | UnsetType, msgspec.field(name="requestState", default=UNSET)),
        ],
        bases=(params_type,),
        kw_only=True,
    )


def retry_params(params: Any, responses: Mapping[str, Any] | None, state: str | None) -> Any:
    """The params of the retry: the first round's own, plus the answers and the state as the
    server gave it (byte for byte; absent when it gave none)."""
    base: Any = type(params)
    members = {name: getattr(params, name) for name in base.__struct_fields__}
    return _retry_type(base)(
        **members,
        input_responses=UNSET if responses is None else dict(responses),
        request_state=UNSET if state is None else state,
    )


async def answer_input_requests(
    session: Session, method: str, requested: InputRequired, rounds: int
) -> dict[str, Any] | None:
    """The ``inputResponses`` for one round, each from the client's handler for its kind;
    ``None`` for a round without input requests (after a short pause: the server asked only
    to be called again). A request the client has no handler for fails the call, as does a
    handler's error."""
    if not requested.input_requests:
        await anyio.sleep(min(_STATE_ONLY_PAUSE * 2 ** (rounds - 1), _STATE_ONLY_PAUSE_CAP))
        return None
    responses: dict[str, Any] = {}
    handlers: Mapping[str, RequestHandler] = session.request_handlers
    for key, request in requested.input_requests.items():
        kind = request.method
        handler = handlers.get(kind)
        if handler is None:
            option = _HANDLER_OPTION.get(kind)
            how = f"; give the Client a {option} handler (Client({option}=...))" if option else ""
            raise McpError(
                INVALID_REQUEST,
                f"{method}: the server asked for input {key!r} by {kind}, which this client does "
                f"not handle{how}",
            )
        spec = types.methods.REQUESTS[kind]
        try:
            params = spec.decode_params(request.params)
        except msgspec.ValidationError as exc:
            raise McpError(
                INVALID_PARAMS, f"{method}: the server's input request {key!r} ({kind}) is invalid: {exc}"
            ) from None
        responses[key] = await handler(params, RequestContext(session, None, kind, None))
    return responses
