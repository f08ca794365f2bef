"""The rounds of a multi round-trip request (``tools/call``, ``prompts/get``,
``resources/read``) across the eras, through a proxy.

* A session's client in front of a stateless server (:meth:`RoundBridge.answer_rounds`): the
  server's ``InputRequiredResult`` is answered by asking the client each question mid-call
  (the proxy's own client handlers put it to the call's client, see :mod:`.calls`), and the
  request is retried with the answers and the server's ``requestState``, until the final result.
* A stateless client in front of a session's server (:meth:`RoundBridge.held_round`): the
  server's call runs in the proxy's own task group, and each round waits for what comes first,
  its result or its next question; a question ends the round with an ``InputRequiredResult``
  while the call is held (:mod:`.held`) for the client's retry.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import msgspec
from anyio.abc import TaskGroup

from mcpbind.client.mrtr import InputRoundsExceeded, answer_input_requests, input_required
from mcpbind.client.remote import RemoteServer
from mcpbind.protocol.errors import McpError
from mcpbind.proxy.calls import FrontCall, InFlight
from mcpbind.proxy.eras import strip_envelope
from mcpbind.proxy.held import HeldCall, HeldCalls
from mcpbind.proxy.held import input_required as ask_in_round
from mcpbind.proxy.specs import raw_request
from mcpbind.runtime.context import RequestContext

__all__ = ["RoundBridge"]

Progress = Callable[[float, float | None, str | None], Awaitable[None]]


class RoundBridge:
    """The rounds of one server's calls: ``held`` (the calls held between rounds),
    ``in_flight`` (where a held call is found by its server's questions), ``tasks()`` (where a
    held call runs), and the server's limits."""

    def __init__(
        self,
        held: HeldCalls,
        in_flight: InFlight,
        tasks: Callable[[], TaskGroup | None],
        *,
        max_input_rounds: int,
        request_timeout: float | None,
    ) -> None:
        self.held = held
        self.in_flight = in_flight
        self._tasks = tasks
        self.max_input_rounds = max_input_rounds
        self.request_timeout = request_timeout

    async def answer_rounds(
        self, remote: RemoteServer, method: str, sent: Any, raw: msgspec.Raw, progress: Progress | None
    ) -> msgspec.Raw:
        """``raw``, a stateless server's answer to ``sent``, followed to the final result."""
        rounds = 0
        spec = raw_request(method)
        while (asked := input_required(raw)) is not None:
            rounds += 1
            if rounds > self.max_input_rounds:
                raise InputRoundsExceeded(method, self.max_input_rounds)
            responses = await answer_input_requests(remote.session, method, asked, rounds)
            retry = dict(sent)
            if responses is not None:
                retry["inputResponses"] = responses
            if asked.request_state is not None:
                retry["requestState"] = asked.request_state
            raw = await remote.session.request(spec, retry, timeout=self.request_timeout, progress=progress)
        return raw

    async def held_round(
        self, remote: RemoteServer, method: str, params: msgspec.Raw, ctx: RequestContext[Any]
    ) -> msgspec.Raw:
        """One round of a stateless request to a server of a session."""
        envelope = ctx.envelope
        tasks = self._tasks()
        assert envelope is not None and tasks is not None
        if envelope.request_state is not None or envelope.input_responses is not None:
            held = self.held.take(envelope.request_state, envelope.input_responses)
            held.ctx = ctx
        else:
            held = HeldCall(ctx)
            progress = _progress_to_held(held) if ctx.progress_token is not None else None
            tasks.start_soon(self._run_held, remote, method, strip_envelope(params), held, progress)
        try:
            outcome = await held.next()
        except BaseException:
            held.close()  # the client went away: the server's call is cancelled
            raise
        if outcome.question is not None:
            held.pending = outcome.question
            return ask_in_round(outcome.question, self.held.hold(held, tasks))
        held.close()
        if outcome.error is not None:
            raise outcome.error
        assert outcome.result is not None
        return outcome.result

    async def _run_held(
        self, remote: RemoteServer, method: str, sent: Any, held: HeldCall, progress: Progress | None
    ) -> None:
        with held.scope, self.in_flight.tracking(FrontCall(held.ctx, held)):
            try:
                raw = await remote.session.request(raw_request(method), sent, progress=progress)
            except McpError as exc:
                held.finish(error=exc)
            else:
                await remote.session.notifications_handled()  # (log messages before the answer)
                held.finish(result=raw)


def _progress_to_held(held: HeldCall) -> Progress:
    """Progress of a held call, to the client of its current round."""

    async def report(progress: float, total: float | None, message: str | None) -> None:
        await held.ctx.report_progress(progress, total, message)

    return report
