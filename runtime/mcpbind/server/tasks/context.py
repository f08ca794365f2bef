"""The context a tool's function gets when it runs as a task: a
:class:`~mcpbind.runtime.context.RequestContext` whose asks (``ctx.elicit``,
``ctx.create_message``, ``ctx.list_roots``) move the task to ``input_required``.

On a stateless request (2026-07-28) the ask becomes the task's ``inputRequests`` (as the
request's version embeds it), answered by the client's ``tasks/update``; the request's
capabilities must allow it (-32021 fails the task otherwise). On a 2025-11-25 session it is
sent to the client on the session, tagged with the task (``io.modelcontextprotocol/related-task``),
the task ``input_required`` until the answer comes. Progress and log messages are sent on a
session (not tied to the answered request) and dropped for stateless requests, which have no
channel for them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Final

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol.client_capabilities import require_client_capability
from mcpbind.protocol.envelope import Envelope
from mcpbind.protocol.errors import (
    INTERNAL_ERROR,
    INVALID_PARAMS,
    McpError,
)
from mcpbind.protocol.methods import RequestSpec, ToClient
from mcpbind.protocol.unions import convert
from mcpbind.runtime.context import RequestContext
from mcpbind.server.tasks.runner import TaskRunner
from mcpbind.versions import schema_for

if TYPE_CHECKING:
    from mcpbind.runtime.session import Session

__all__ = ["RELATED_TASK", "TaskContext"]

methods = types.methods
RELATED_TASK: Final = "io.modelcontextprotocol/related-task"

# What a task may ask: the word its keys start with, the embedded request's struct in the
# stateless schema, and the handler-facing type of the answer.
_ASKS: Final[dict[str, tuple[str, str, type[Any]]]] = {
    methods.ELICITATION_CREATE.method: ("elicitation", "ElicitRequest", types.ElicitResult),
    methods.SAMPLING_CREATE_MESSAGE.method: ("sampling", "CreateMessageRequest", types.CreateMessageResult),
    methods.ROOTS_LIST.method: ("roots", "ListRootsRequest", types.ListRootsResult),
}


class TaskContext(RequestContext[ToClient]):
    """The context of a task's work (see the module). ``task_id`` names the task."""

    __slots__ = ("_runner", "task_id")

    def __init__(
        self,
        session: Session,
        method: str,
        progress_token: str | int | None,
        envelope: Envelope | None,
        runner: TaskRunner,
        task_id: str,
    ) -> None:
        super().__init__(session, None, method, progress_token, envelope)
        self._runner = runner
        self.task_id = task_id

    async def request(
        self, spec: RequestSpec[Any, Any, ToClient], params: Any, *, timeout: float | None = None
    ) -> Any:
        if spec.method in _ASKS:
            return await self._ask(spec.method, params)
        return await self.session.request(spec, params, timeout=timeout)

    async def create_message(
        self, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.CreateTaskResult:
        result: types.CreateMessageResult = await self._ask(methods.SAMPLING_CREATE_MESSAGE.method, params)
        return result

    async def elicit(
        self, params: types.ElicitRequestFormParams | types.ElicitRequestURLParams
    ) -> types.ElicitResult | types.CreateTaskResult:
        result: types.ElicitResult = await self._ask(methods.ELICITATION_CREATE.method, params)
        return result

    async def list_roots(self) -> types.ListRootsResult:
        result: types.ListRootsResult = await self._ask(methods.ROOTS_LIST.method, types.RequestParams())
        return result

    async def report_progress(
        self, progress: float, total: float | None = None, message: str | None = None
    ) -> None:
        if self.envelope is None:
            await super().report_progress(progress, total, message)

    async def log(self, level: types.LoggingLevel, data: Any, logger: str | None = None) -> None:
        if self.envelope is None:
            await super().log(level, data, logger)

    async def _ask(self, method: str, params: Any) -> Any:
        word, struct_name, answer_type = _ASKS[method]
        envelope = self.envelope
        if envelope is None:  # a session: asked on it, the task input_required meanwhile
            meta = params.meta if isinstance(getattr(params, "meta", UNSET), dict) else {}
            tagged = msgspec.structs.replace(params, meta={**meta, RELATED_TASK: {"taskId": self.task_id}})
            await self._runner.mark(self.task_id, "input_required")
            try:
                return await self.session.request(methods.REQUESTS[method], tagged)
            finally:
                await self._runner.mark(self.task_id, "working")
        require_client_capability(
            envelope.client_capabilities,
            method,
            params,
            lambda capability, use: f"The task needs the client capability {capability!r} (for {use})",
        )
        schema = schema_for(envelope.version)
        try:
            own = schema.methods.REQUESTS[method].decode_params(msgspec.json.encode(params))
        except (msgspec.ValidationError, msgspec.EncodeError, TypeError) as exc:
            raise McpError(
                INTERNAL_ERROR, f"Cannot ask the client {method} in {envelope.version}: {exc}"
            ) from None
        embedded = msgspec.to_builtins(getattr(schema, struct_name)(params=own))
        raw = await self._runner.ask(self.task_id, word, embedded)
        try:
            return convert(raw, answer_type)
        except msgspec.ValidationError as exc:
            raise McpError(
                INVALID_PARAMS,
                f"Invalid params: the answer to {method} is not a {answer_type.__name__}: {exc}",
            ) from None
