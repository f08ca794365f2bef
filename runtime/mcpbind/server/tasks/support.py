"""A server's tasks: :class:`TaskSupport` answers task-augmented ``tools/call`` and the task
methods, for the tasks extension (``io.modelcontextprotocol/tasks``, stateless requests of
2026-07-28) and for 2025-11-25's tasks (sessions).

A tool made with ``@server.tool(task="optional")`` (or ``True``) runs as a task when the
client can follow one: a stateless request declaring the extension in its capabilities, or a
2025-11-25 ``tools/call`` with a ``task`` member; otherwise it runs as a plain call. With
``task="required"`` it runs only as a task: a client that cannot follow one gets -32021
(stateless, naming the extension) or -32601 (2025-11-25), as the specifications say.

Methods answered: ``tasks/get``, ``tasks/update`` and ``tasks/cancel`` (stateless: refused
with -32021 to a request not declaring the extension); ``tasks/get``, ``tasks/result``,
``tasks/list`` and ``tasks/cancel`` (2025-11-25 sessions), with
``notifications/tasks/status`` to the session that created the task on each change of its
status. An unknown, expired or another requestor's task is -32602. The work itself runs in
:class:`~mcpbind.server.tasks.runner.TaskRunner`, whose options :class:`TaskSupport` takes;
a server serving with a shared store keeps its tasks there (see
:meth:`TaskRunner.sharing <mcpbind.server.tasks.runner.TaskRunner.sharing>`), so that any
worker answers these methods. Listen streams carry ``notifications/tasks`` for the tasks they
name (:meth:`TaskSupport.watchable`, :meth:`TaskSupport.state`; see
:mod:`mcpbind.server.listen`).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable, MutableMapping
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol import tasks as ext
from mcpbind.protocol.errors import (
    INVALID_PARAMS,
    METHOD_NOT_FOUND,
    McpError,
    MissingRequiredClientCapabilityError,
)
from mcpbind.protocol.unions import convert
from mcpbind.runtime.context import RequestContext
from mcpbind.server.tasks.context import RELATED_TASK, TaskContext
from mcpbind.server.tasks.runner import TaskRunner
from mcpbind.server.tasks.store import TaskRecord, TaskStore
from mcpbind.server.tasks.wire import created, detailed, legacy_fields, legacy_task

if TYPE_CHECKING:
    from mcpbind.runtime.session import Session
    from mcpbind.server.tools import FunctionTool

__all__ = ["TaskSupport"]

methods = types.methods
_NEEDS_EXTENSION: dict[str, Any] = {"extensions": {ext.TASKS_EXTENSION: {}}}


def _requestor(ctx: RequestContext) -> str:
    token = ctx.access_token
    return "" if token is None else "\x1f".join(part or "" for part in token.principal)


class TaskSupport(TaskRunner):
    """The tasks of one server (see the module); the options are :class:`TaskRunner`'s.
    ``page_size``: the most tasks one page of ``tasks/list`` holds."""

    def __init__(self, store: TaskStore | None = None, *, page_size: int = 100, **options: Any) -> None:
        super().__init__(store, **options)
        self.page_size = page_size
        self.attached = False

    def attach(self, handlers: MutableMapping[str, Any], extensions: MutableMapping[str, Any]) -> None:
        """Answer the task methods in ``handlers`` (a server's request handlers) and declare the
        extension in ``extensions`` (what ``server/discover`` declares); once."""
        if self.attached:
            return
        self.attached = True
        handlers[methods.TASKS_GET.method] = self._get
        handlers[methods.TASKS_CANCEL.method] = self._cancel
        handlers[methods.TASKS_RESULT.method] = self._result
        handlers[methods.TASKS_LIST.method] = self._list
        handlers[ext.TASKS_UPDATE.method] = self._update
        extensions[ext.TASKS_EXTENSION] = {}

    @asynccontextmanager
    async def serving(self) -> AsyncIterator[None]:
        """:meth:`TaskRunner.running` once attached (nothing to run otherwise)."""
        if not self.attached:
            yield
            return
        async with self.running():
            yield

    # -- tools/call --------------------------------------------------------------------------

    async def call_tool(
        self, tool: FunctionTool, params: types.CallToolRequestParams, ctx: RequestContext
    ) -> Any:
        """``tools/call`` of ``tool``: a task when the tool and the client allow it (see the
        module), else the tool's result."""
        arguments = params.arguments if isinstance(params.arguments, dict) else {}
        policy = tool.task_support
        envelope = ctx.envelope
        if envelope is not None:
            wanted = ext.TASKS_EXTENSION in envelope.extensions
            if not wanted and policy == "required":
                raise MissingRequiredClientCapabilityError(
                    _NEEDS_EXTENSION, f"Tool {tool.name} runs only as a task: declare the tasks extension"
                )
        else:
            wanted = params.task is not UNSET
            if wanted and policy is None:
                raise McpError(METHOD_NOT_FOUND, f"Tool {tool.name} does not run as a task")
            if not wanted and policy == "required":
                raise McpError(METHOD_NOT_FOUND, f"Tool {tool.name} must be called as a task (params.task)")
        if not wanted or policy is None:
            return await tool.call(arguments, ctx)
        ttl = (
            params.task.ttl if envelope is None and not isinstance(params.task, msgspec.UnsetType) else UNSET
        )
        session = ctx.session
        progress = ctx.progress_token

        async def work(record: TaskRecord) -> dict[str, Any]:
            context = TaskContext(session, ctx.method, progress, envelope, self, record.task_id)
            result = await tool.call(arguments, context)
            out: dict[str, Any] = msgspec.to_builtins(result)
            return out

        record = await self.start(
            work,
            version=ctx.protocol_version,
            requestor=_requestor(ctx),
            ttl_ms=None if isinstance(ttl, msgspec.UnsetType) else ttl,
            listener=None if envelope is not None else self._status_listener(session),
        )
        if envelope is not None:
            return created(record)
        return types.CreateTaskResult(task=legacy_task(record))

    def _status_listener(self, session: Session) -> Callable[[TaskRecord], Awaitable[None]]:
        async def tell(record: TaskRecord) -> None:
            params = types.TaskStatusNotificationParams(**legacy_fields(record))
            await session.notify(methods.NOTIFICATIONS_TASKS_STATUS, params)

        return tell

    # -- listen streams (subscriptions/listen with taskIds) --------------------------------

    async def watchable(self, task_ids: list[str], ctx: RequestContext) -> list[str]:
        """Those of ``task_ids`` that are tasks of the requestor of ``ctx`` (see
        :class:`~mcpbind.server.listen.TaskWatch`)."""
        if not self.attached:
            return []
        requestor = _requestor(ctx)
        found = []
        for task_id in task_ids:
            record = await self.store.get(task_id)
            if record is not None and record.requestor == requestor:
                found.append(task_id)
        return found

    async def state(self, task_id: str) -> ext.DetailedTask | None:
        """The params of ``notifications/tasks`` for ``task_id`` now, as ``tasks/get`` would
        answer (``None``: no such task any more)."""
        record = await self.store.get(task_id)
        if record is None:
            return None
        try:
            record = await self.read(task_id, record.requestor)  # (failed if its worker is gone)
        except McpError:  # expired meanwhile
            return None
        return detailed(record, None)

    # -- the task methods ------------------------------------------------------------------

    async def _read(self, task_id: str, ctx: RequestContext) -> TaskRecord:
        envelope = ctx.envelope
        if envelope is not None and ext.TASKS_EXTENSION not in envelope.extensions:
            raise MissingRequiredClientCapabilityError(
                _NEEDS_EXTENSION, f"{ctx.method} needs the tasks extension in the client capabilities"
            )
        return await self.read(task_id, _requestor(ctx))

    async def _get(self, params: types.GetTaskRequestParams, ctx: RequestContext) -> Any:
        record = await self._read(params.task_id, ctx)
        if ctx.envelope is not None:
            return detailed(record)
        return types.GetTaskResult(**legacy_fields(record))

    async def _update(self, params: ext.UpdateTaskRequestParams, ctx: RequestContext) -> ext.UpdateTaskResult:
        if ctx.envelope is None:
            raise McpError(
                METHOD_NOT_FOUND, f"Method not found: tasks/update is not part of {ctx.protocol_version}"
            )
        record = await self._read(params.task_id, ctx)
        offered = params.input_responses

        def deliver(stored: TaskRecord) -> dict[str, Any] | None:
            outstanding = stored.input_requests or {}
            answers = {k: v for k, v in offered.items() if k in outstanding}
            if not answers or stored.status != "input_required":
                return None  # nothing asked now: ignored, as the extension says
            return {"input_responses": {**(stored.input_responses or {}), **answers}}

        await self.modify(record.task_id, deliver)
        return ext.UpdateTaskResult()

    async def _cancel(self, params: types.CancelTaskRequestParams, ctx: RequestContext) -> Any:
        record = await self._read(params.task_id, ctx)
        if record.terminal:
            if ctx.envelope is not None:
                return ext.UpdateTaskResult()  # cooperative: acknowledged, nothing to do
            raise McpError(
                INVALID_PARAMS, f"Cannot cancel task {record.task_id}: it is {record.status} already"
            )
        record = await self.cancel(record)
        if ctx.envelope is not None:
            return ext.UpdateTaskResult()
        return types.CancelTaskResult(**legacy_fields(record))

    async def _result(self, params: types.GetTaskPayloadRequestParams, ctx: RequestContext) -> Any:
        """2025-11-25's ``tasks/result``: waits until the task ends, then answers as its
        request would have."""
        record = await self._read(params.task_id, ctx)
        while not record.terminal:
            await self.wait_changed(record.task_id)
            record = await self._read(params.task_id, ctx)
        if record.status == "failed":
            error = record.error or {}
            raise McpError(int(error.get("code", -32603)), str(error.get("message", "")), error.get("data"))
        if record.status == "cancelled":
            raise McpError(INVALID_PARAMS, f"Task {record.task_id} was cancelled")
        result = convert(record.result or {}, types.CallToolResult)
        meta = result.meta if isinstance(result.meta, dict) else {}
        return msgspec.structs.replace(result, meta={**meta, RELATED_TASK: {"taskId": record.task_id}})

    async def _list(self, params: types.PaginatedRequestParams, ctx: RequestContext) -> types.ListTasksResult:
        cursor = params.cursor if isinstance(params.cursor, str) else None
        try:
            records, following = await self.store.list(_requestor(ctx), cursor, self.page_size)
        except KeyError:
            raise McpError(INVALID_PARAMS, f"Invalid params: unknown cursor {cursor!r}") from None
        return types.ListTasksResult(
            tasks=[legacy_task(r) for r in records], next_cursor=UNSET if following is None else following
        )
