"""Calls held open across the rounds of a stateless request: a client of the stateless
protocol (2026-07-28) in front of a server of a handshake version.

The server asks its questions mid-call (``elicitation/create``...), as a request to its client;
the stateless client expects the proxy's answer to end with an ``InputRequiredResult`` asking
that question, and to come back with the answer in a new request (any connection) carrying
``inputResponses`` and the ``requestState`` the proxy gave. So the proxy keeps the server's call
running, ends the round with the question, and when the retry comes with the answer gives it to
the server and goes on waiting for the call's result, or for its next question.

A held call waits for its retry ``input_timeout`` seconds; then the server's call is cancelled
and the request state is refused. At most ``max_held`` calls are held at once.
"""

from __future__ import annotations

import math
import secrets
from dataclasses import dataclass
from typing import Any, Final

import anyio
import msgspec
from anyio.abc import TaskGroup

from mcpbind.protocol.errors import INTERNAL_ERROR, INVALID_PARAMS, McpError
from mcpbind.runtime.context import RequestContext

__all__ = ["HeldCall", "HeldCalls", "Outcome", "Question", "input_required"]

_KEY: Final = "proxy"


class Question:
    """A server's question waiting for the client's answer."""

    __slots__ = ("_answer", "_answered", "key", "method", "params")

    def __init__(self, key: str, method: str, params: Any) -> None:
        self.key = key
        self.method = method
        self.params = params
        self._answered = anyio.Event()
        self._answer: Any = None

    def answer(self, value: Any) -> None:
        self._answer = value
        self._answered.set()

    async def wait(self) -> Any:
        await self._answered.wait()
        if isinstance(self._answer, McpError):
            raise self._answer
        return self._answer


@dataclass(slots=True)
class Outcome:
    """What a held call brings next: its result, its error, or a question."""

    result: msgspec.Raw | None = None
    error: McpError | None = None
    question: Question | None = None


class HeldCall:
    """One call to the server, with the front request it currently serves (``ctx``, a new one
    each round) and its questions."""

    def __init__(self, ctx: RequestContext[Any]) -> None:
        self.ctx = ctx
        self.scope = anyio.CancelScope()
        self._send, self._receive = anyio.create_memory_object_stream[Outcome](math.inf)
        self._asked = 0
        self.pending: Question | None = None
        self.expiry: anyio.CancelScope | None = None

    def finish(self, result: msgspec.Raw | None = None, error: McpError | None = None) -> None:
        self._send.send_nowait(Outcome(result=result, error=error))

    async def ask(self, method: str, params: Any) -> Any:
        """The server's question: the answer the client gives in its retry."""
        self._asked += 1
        question = Question(f"{_KEY}-{self._asked}", method, params)
        await self._send.send(Outcome(question=question))
        return await question.wait()

    async def next(self) -> Outcome:
        """What comes first: the call's result or error, or its next question."""
        return await self._receive.receive()

    def close(self) -> None:
        self.scope.cancel()
        self._send.close()
        self._receive.close()


def input_required(question: Question, state: str) -> msgspec.Raw:
    """The ``InputRequiredResult`` asking ``question``, to be retried with ``state``."""
    asked: dict[str, Any] = {"method": question.method}
    if not (type(question.params) is msgspec.Raw and not question.params):  # (absent: left out)
        asked["params"] = question.params
    body = {"resultType": "input_required", "inputRequests": {question.key: asked}, "requestState": state}
    return msgspec.Raw(msgspec.json.encode(body))


class HeldCalls:
    """The calls held between rounds, by request state."""

    def __init__(self, *, input_timeout: float = 300.0, max_held: int = 1024) -> None:
        self.input_timeout = input_timeout
        self.max_held = max_held
        self._held: dict[str, HeldCall] = {}

    def __len__(self) -> int:
        return len(self._held)

    def hold(self, call: HeldCall, tasks: TaskGroup) -> str:
        """Keep ``call`` until its retry; its request state."""
        if len(self._held) >= self.max_held:
            call.close()
            raise McpError(
                INTERNAL_ERROR, f"Too many calls wait for input ({self.max_held}); try again later"
            )
        state = secrets.token_urlsafe(24)
        self._held[state] = call
        call.expiry = anyio.CancelScope()
        tasks.start_soon(self._expire, state, call, call.expiry)
        return state

    def take(self, state: str | None, responses: Any) -> HeldCall:
        """The call a retry carrying ``state`` goes on with, given the answer in ``responses``."""
        call = self._held.pop(state, None) if state is not None else None
        if call is not None and call.expiry is not None:
            call.expiry.cancel()
            call.expiry = None
        if call is None:
            raise McpError(
                INVALID_PARAMS,
                "Invalid params: requestState is unknown or expired (the call waited for its input "
                "too long, or was made through another proxy): start the request again",
                {"reason": "expired"},
            )
        question = call.pending
        if question is not None:
            call.pending = None
            if not isinstance(responses, dict) or question.key not in responses:
                question.answer(McpError(INVALID_PARAMS, f"No answer to {question.method} in inputResponses"))
            else:
                question.answer(responses[question.key])
        return call

    async def _expire(self, state: str, call: HeldCall, scope: anyio.CancelScope) -> None:
        with scope:
            await anyio.sleep(self.input_timeout)
        if not scope.cancel_called and self._held.get(state) is call:
            del self._held[state]
            call.close()

    def close(self) -> None:
        for call in self._held.values():
            call.close()
        self._held.clear()
