"""Multi round-trip requests (MCP 2026-07-28), server side: a handler that asks the client
something (``ctx.elicit``, ``ctx.create_message``, ``ctx.list_roots``) on a stateless request
ends the round with an ``InputRequiredResult``, and gets the answer when the client retries.

The same handler serves both eras. On a session (2025 and older) each ask is a request sent to
the client mid-call. On a stateless ``tools/call``, ``prompts/get`` or ``resources/read`` the
handler is run from the start on each round, with the answers received so far replayed in call
order: the k-th ask of the handler gets the k-th answer. The first ask without an answer raises
:class:`InputRequired`, which :func:`serve_in_rounds` turns into the ``InputRequiredResult``
asking that one question; its ``requestState`` (:mod:`mcpbind.runtime.request_state`) carries
the answers so far, sealed, so any worker with the server's key serves the retry.

An answer is given to the ask it was given for: each one is recorded with a digest of the
question, and a replayed ask that differs (the handler asked something else this time) is asked
again rather than given an answer to another question. Asks are taken in call order, so a
handler asks one question at a time (not from concurrent tasks).

A URL mode elicitation required by :class:`~mcpbind.protocol.errors.URLElicitationRequiredError`
(-32042, gone in 2026-07-28) becomes an ``InputRequiredResult`` asking those elicitations: the
retry runs the handler again, which raises it again until the user is done.
"""

from __future__ import annotations

import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.exception_groups import only_error
from mcpbind.protocol.client_capabilities import require_client_capability
from mcpbind.protocol.envelope import Envelope
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    INVALID_REQUEST,
    McpError,
    URLElicitationRequiredError,
)
from mcpbind.protocol.unions import convert, decode
from mcpbind.runtime.access import current_access_token
from mcpbind.runtime.request_state import Asked, RecordedAnswer, RequestState, RequestStateSigner, digest
from mcpbind.versions import schema_for

if sys.version_info < (3, 11):  # pragma: no cover
    from exceptiongroup import BaseExceptionGroup

__all__ = ["ASKING_METHODS", "InputRequired", "Rounds", "RoundsPolicy", "serve_in_rounds"]

methods = types.methods

# What a handler may ask, with the word its keys start with, the struct of the request in the
# stateless versions' schema, and the handler-facing type of the answer.
_ASKS: Final[dict[str, tuple[str, str, type[Any]]]] = {
    methods.ELICITATION_CREATE.method: ("elicitation", "ElicitRequest", types.ElicitResult),
    methods.SAMPLING_CREATE_MESSAGE.method: ("sampling", "CreateMessageRequest", types.CreateMessageResult),
    methods.ROOTS_LIST.method: ("roots", "ListRootsRequest", types.ListRootsResult),
}
ASKING_METHODS: Final = frozenset(_ASKS)

_ENCODER: Final = msgspec.json.Encoder(order="sorted")


class InputRequired(BaseException):
    """A handler asked for input not received yet: the round ends with ``result``, an
    ``InputRequiredResult``. Internal: raised by the context's asks and caught by
    :func:`serve_in_rounds`. A ``BaseException``, as a cancellation is, so that a handler's
    ``except Exception`` (or ``except McpError`` around an ask) does not swallow it."""

    def __init__(self, result: Any) -> None:
        super().__init__("input required")
        self.result = result


@dataclass(frozen=True, slots=True)
class RoundsPolicy:
    """A server's rules for multi round-trip requests: the ``signer`` of its request states,
    at most ``max_rounds`` rounds ending with input required per request, and ``principal``,
    which tells who sends a request (from its context: an authenticated user's id, say;
    ``None`` for nobody in particular; when not given, the principal of the request's verified
    OAuth access token, if any), so that a request state issued to one user is refused to
    another."""

    signer: RequestStateSigner = field(default_factory=RequestStateSigner)
    max_rounds: int = 8
    principal: Callable[[Any], str | None] | None = None

    def __post_init__(self) -> None:
        if self.max_rounds < 1:
            raise ValueError(f"max_input_rounds must be at least 1, not {self.max_rounds}")


_DEFAULT_POLICY: RoundsPolicy | None = None


def default_policy() -> RoundsPolicy:
    global _DEFAULT_POLICY
    if _DEFAULT_POLICY is None:
        _DEFAULT_POLICY = RoundsPolicy()
    return _DEFAULT_POLICY


class _Context(Protocol):
    """What :func:`serve_in_rounds` needs of a handler's context (a ``RequestContext``)."""

    method: str
    envelope: Envelope | None
    rounds: Rounds | None


async def serve_in_rounds(
    handler: Callable[[Any, Any], Awaitable[Any]],
    policy: RoundsPolicy | None,
    params: Any,
    ctx: _Context,
) -> Any:
    """Run ``handler`` for one round of the stateless request of ``ctx``: its result, or the
    ``InputRequiredResult`` of the first question it asked that has no answer yet. A retry's
    ``requestState`` is checked first (:class:`McpError` -32602 when it is refused)."""
    envelope = ctx.envelope
    assert envelope is not None
    if policy is None:
        policy = default_policy()
    if policy.principal is not None:
        who = policy.principal(ctx)
    else:  # by default, whom the request's verified access token stands for, if it has one
        token = current_access_token.get()
        who = None if token is None else "\x1f".join(part or "" for part in token.principal)
    rounds = ctx.rounds = Rounds(policy, ctx.method, params, envelope, who)
    try:
        return await handler(params, ctx)
    except InputRequired as asked:
        return asked.result
    except URLElicitationRequiredError as required:
        return rounds.ask_url_elicitations(required)
    except BaseExceptionGroup as group:
        # Asked from a task of the handler's own task group (which cancelled the others).
        single = only_error(group)
        if isinstance(single, InputRequired):
            return single.result
        raise


class Rounds:
    """One stateless request's questions and answers across its rounds (see the module)."""

    __slots__ = (
        "_answers",
        "_calls",
        "_capabilities",
        "_digest",
        "_method",
        "_params",
        "_policy",
        "_principal",
        "_round",
        "_version",
    )

    def __init__(
        self, policy: RoundsPolicy, method: str, params: Any, envelope: Envelope, principal: str | None = None
    ) -> None:
        self._policy = policy
        self._principal = digest(principal.encode("utf-8", "surrogatepass")) if principal else ""
        self._method = method
        self._params = params
        self._version = envelope.version
        self._capabilities = envelope.client_capabilities
        self._digest: str | None = None
        self._calls = 0
        self._answers: list[RecordedAnswer] = []
        self._round = 0
        token, responses = envelope.request_state, envelope.input_responses
        if token is None:
            if responses is not None:
                raise McpError(
                    INVALID_PARAMS,
                    "Invalid params: inputResponses without requestState: retry with the "
                    "requestState of the InputRequiredResult that asked for them",
                    {"reason": "missing"},
                )
            return
        state = policy.signer.open(token, method, self.params_digest, self._principal)
        self._round = state.round
        self._answers = list(state.answers)
        asked = state.asked
        if asked is not None and responses is not None and asked.key in responses:
            result = _answer(asked.key, asked.method, responses[asked.key])
            self._answers.append(RecordedAnswer(asked.key, asked.method, asked.question, msgspec.Raw(result)))

    @property
    def params_digest(self) -> str:
        """The digest of the request's params that a request state is bound to: all but
        ``_meta`` (and the retry's own members, which the handler-facing params lack)."""
        if self._digest is None:
            params = self._params
            if getattr(params, "meta", UNSET) is not UNSET:
                params = msgspec.structs.replace(params, meta=UNSET)
            self._digest = digest(self._method.encode() + b"\0" + _ENCODER.encode(params))
        return self._digest

    def answer(self, method: str, params: Any) -> Any:
        """The answer to the handler's next ask (``method`` with ``params``, handler-facing
        types), replayed; :class:`InputRequired` when it has none yet."""
        word, struct_name, answer_type = _ASKS[method]
        index = self._calls
        self._calls += 1
        if getattr(params, "task", UNSET) is not UNSET:
            # No tasks in the stateless versions: the answer comes as a plain result.
            params = msgspec.structs.replace(params, task=UNSET)
        request = self._embedded(method, struct_name, params)
        question = digest(_ENCODER.encode(request))
        answers = self._answers
        if index < len(answers):
            recorded = answers[index]
            if recorded.method == method and recorded.question == question:
                return decode(recorded.result, answer_type)
            del answers[index:]  # asked differently this time: asked again, as later ones
        self._require(method, params)
        key = f"{word}-{index + 1}"
        raise InputRequired(self._input_required({key: request}, Asked(key, method, question)))

    def ask_url_elicitations(self, required: URLElicitationRequiredError) -> Any:
        """The ``InputRequiredResult`` asking the URL mode elicitations of ``required``."""
        requests: dict[str, Any] = {}
        for number, elicitation in enumerate(required.elicitations, 1):
            self._require(methods.ELICITATION_CREATE.method, elicitation)
            requests[f"url-elicitation-{number}"] = self._embedded(
                methods.ELICITATION_CREATE.method, "ElicitRequest", elicitation
            )
        return self._input_required(requests, None)

    def _require(self, method: str, params: Any) -> None:
        require_client_capability(
            self._capabilities,
            method,
            params,
            lambda capability, use: (
                f"Handling {self._method} needs the client capability {capability!r} (for {use}), "
                "which this request's clientCapabilities do not declare"
            ),
        )

    def _embedded(self, method: str, struct_name: str, params: Any) -> Any:
        """The request ``method`` with ``params`` (handler-facing) as the request's version
        embeds it in ``inputRequests``."""
        schema = schema_for(self._version)
        try:
            own = schema.methods.REQUESTS[method].decode_params(_ENCODER.encode(params))
        except (msgspec.ValidationError, msgspec.EncodeError, TypeError) as exc:
            raise McpError(
                INTERNAL_ERROR, f"Cannot ask the client {method} in protocol version {self._version}: {exc}"
            ) from None
        return getattr(schema, struct_name)(params=own)

    def _input_required(self, requests: dict[str, Any], asked: Asked | None) -> Any:
        policy = self._policy
        if self._round >= policy.max_rounds:
            raise McpError(
                INVALID_REQUEST,
                f"{self._method} still needs input after {self._round} rounds, the most this server "
                f"allows (Server(max_input_rounds={policy.max_rounds})); not asking again",
            )
        state = RequestState(
            self._method,
            self.params_digest,
            self._principal,
            self._round + 1,
            policy.signer.expiry(),
            self._answers,
            asked,
        )
        schema = schema_for(self._version)
        return schema.InputRequiredResult(
            result_type="input_required", input_requests=requests, request_state=policy.signer.seal(state)
        )


def _answer(key: str, method: str, raw: Any) -> bytes:
    """A client's answer, checked to be the result of ``method`` and encoded as recorded."""
    answer_type = _ASKS[method][2]
    try:
        value = convert(raw, answer_type)
    except msgspec.ValidationError as exc:
        raise McpError(
            INVALID_PARAMS,
            f"Invalid params: inputResponses[{key!r}] is not a valid {answer_type.__name__} "
            f"(the answer to {method}): {exc}",
        ) from None
    return _ENCODER.encode(value)
