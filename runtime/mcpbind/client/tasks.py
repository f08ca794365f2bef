"""Tasks, client side: a ``tools/call`` the server may run as a task, followed to its end.

:meth:`RemoteServer.start_tool <mcpbind.client.remote.RemoteServer.start_tool>` calls a tool
letting the server answer with a task: at a stateless version (2026-07-28) the call declares
the tasks extension (``io.modelcontextprotocol/tasks``) in its capabilities and the server
decides; on a 2025-11-25 session the call asks for a task (``params.task``). Either way it
returns a :class:`ToolTask`: ``await task.result()`` polls the task (``tasks/get``, at the
server's ``pollIntervalMs``) until it ends, answering what it asks for (``input_required``)
with the client's own sampling, elicitation and roots handlers (stateless: ``tasks/update``;
2025-11-25: the server asks on the session while ``tasks/result`` waits), and returns the
tool's result. A task that failed raises the :class:`~mcpbind.protocol.errors.McpError` it
failed with; a cancelled one :class:`TaskCancelled`. ``await task.cancel()`` cancels it.

``await task.result(listen=True)`` (at a stateless version) also opens a ``subscriptions/listen``
stream for the task (``taskIds``, :mod:`mcpbind.client.subscriptions`): each status change the
server reports wakes it at once with the task's state, and ``tasks/get`` is sent only when the
stream stayed quiet for a poll interval (a server may see some changes only when a task is read,
such as a task whose worker is gone). A server that does not agree to report the task, or that
ends the stream, is polled as without ``listen``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from typing import Any, Protocol

import anyio
import msgspec
from msgspec import UNSET

from mcpbind import types
from mcpbind.client.mrtr import InputRequired, answer_input_requests
from mcpbind.client.stateless import raw_result_spec
from mcpbind.protocol import tasks as ext
from mcpbind.protocol.envelope import CLIENT_CAPABILITIES
from mcpbind.protocol.errors import INVALID_REQUEST, McpError, error_from_response
from mcpbind.protocol.methods import RequestSpec, ToServer
from mcpbind.runtime.session import Session

__all__ = ["TaskCancelled", "ToolTask", "declaring_tasks", "start_tool"]

methods = types.methods
_MIN_POLL = 0.01  # seconds: a server suggesting less (or 0) is polled this often


class TaskCancelled(McpError):
    """The task was cancelled before it finished."""

    def __init__(self, task_id: str) -> None:
        self.task_id = task_id
        super().__init__(INVALID_REQUEST, f"Task {task_id} was cancelled")


class _Remote(Protocol):
    """What this module needs of a :class:`~mcpbind.client.remote.RemoteServer`."""

    session: Session

    @property
    def stateless(self) -> bool: ...

    @property
    def client_capabilities(self) -> Any: ...

    async def request(
        self, spec: RequestSpec[Any, Any, ToServer], params: Any, *, timeout: float | None = None
    ) -> Any: ...

    def listen(self, *, task_ids: Sequence[str] = ()) -> AbstractAsyncContextManager[Any]:
        """A :class:`~mcpbind.client.subscriptions.Listener` for the tasks ``task_ids``."""
        ...


def declaring_tasks(remote: _Remote) -> dict[str, Any]:
    """The ``_meta`` entry declaring the tasks extension with the client's capabilities."""
    capabilities = msgspec.to_builtins(remote.client_capabilities)
    extensions = dict(capabilities.get("extensions") or {})
    extensions[ext.TASKS_EXTENSION] = {}
    return {CLIENT_CAPABILITIES: {**capabilities, "extensions": extensions}}


async def start_tool(
    remote: _Remote, name: str, arguments: Mapping[str, Any] | None, ttl_ms: int | None
) -> ToolTask:
    """Call the tool ``name`` letting the server run it as a task (see the module)."""
    args = UNSET if arguments is None else dict(arguments)
    if remote.stateless:
        params = types.CallToolRequestParams(name=name, arguments=args, meta=declaring_tasks(remote))
        raw = await remote.request(raw_result_spec(methods.TOOLS_CALL), params)
        data = bytes(raw)
        if b'"task"' in data:
            try:
                made = msgspec.json.decode(data, type=ext.CreateTaskResult)
            except msgspec.ValidationError:
                made = None
            if made is not None and made.result_type == "task":
                interval = made.poll_interval_ms if isinstance(made.poll_interval_ms, int) else 1000
                return ToolTask(remote, made.task_id, interval)
        return ToolTask(remote, None, 0, msgspec.json.decode(data, type=types.CallToolResult))
    task = types.TaskMetadata(ttl=UNSET if ttl_ms is None else ttl_ms)
    result = await remote.request(
        methods.TOOLS_CALL, types.CallToolRequestParams(name=name, arguments=args, task=task)
    )
    if isinstance(result, types.CreateTaskResult):
        polling = result.task.poll_interval
        return ToolTask(remote, result.task.task_id, polling if isinstance(polling, int) else 1000)
    assert isinstance(result, types.CallToolResult)
    return ToolTask(remote, None, 0, result)


class ToolTask:
    """A tool call the server may have made a task (see the module): ``task_id`` is ``None``
    when it answered at once (:meth:`result` then returns that answer)."""

    def __init__(
        self,
        remote: _Remote,
        task_id: str | None,
        poll_interval_ms: int,
        result: types.CallToolResult | None = None,
    ) -> None:
        self.remote = remote
        self.task_id = task_id
        self.poll_interval_ms = poll_interval_ms
        self._result = result
        self._answered: set[str] = set()

    def __repr__(self) -> str:
        return f"ToolTask({self.task_id!r})"

    async def status(self) -> Any:
        """The task now (``tasks/get``): at a stateless version one of the extension's
        :data:`~mcpbind.protocol.tasks.DetailedTask` shapes, else 2025-11-25's ``GetTaskResult``."""
        task_id = self._id()
        if self.remote.stateless:
            params = ext.GetTaskRequestParams(task_id=task_id, meta=declaring_tasks(self.remote))
            return await self.remote.request(ext.TASKS_GET, params)
        return await self.remote.request(methods.TASKS_GET, types.GetTaskRequestParams(task_id=task_id))

    async def cancel(self) -> None:
        """Ask the server to cancel the task (``tasks/cancel``); cancellation is cooperative."""
        task_id = self._id()
        if self.remote.stateless:
            params = ext.CancelTaskRequestParams(task_id=task_id, meta=declaring_tasks(self.remote))
            await self.remote.request(ext.TASKS_CANCEL, params)
        else:
            await self.remote.request(methods.TASKS_CANCEL, types.CancelTaskRequestParams(task_id=task_id))

    async def result(self, *, listen: bool = False) -> types.CallToolResult:
        """Poll until the task ends, answering what it asks for; its result. ``listen``: woken
        by the server's notifications of the task as well (see the module)."""
        if self._result is not None:
            return self._result
        if listen and self.remote.stateless:
            done = await self._follow_listening()
            if done is not None:
                self._result = done
                return done
        while True:
            state = await self.status()
            if self.remote.stateless:
                done = await self._modern_step(state)
            else:
                done = await self._legacy_step(state)
            if done is not None:
                self._result = done
                return done
            await anyio.sleep(max(self.poll_interval_ms / 1000, _MIN_POLL))

    async def _follow_listening(self) -> types.CallToolResult | None:
        """The result, following the task's notifications (tasks/get when they are quiet for
        a poll interval); ``None`` when the server does not report the task, or stops."""
        task_id = self._id()
        async with AsyncExitStack() as stack:
            try:
                changes = await stack.enter_async_context(self.remote.listen(task_ids=[task_id]))
            except McpError:  # a server refusing the stream is polled
                return None
            agreed = getattr(changes.acknowledged, "task_ids", UNSET)
            if not isinstance(agreed, list) or task_id not in agreed:
                return None
            state: Any = None  # (the server reports the task's state first)
            while True:
                if state is not None:
                    done = await self._modern_step(state)
                    if done is not None:
                        return done
                state = None
                with anyio.move_on_after(max(self.poll_interval_ms / 1000, _MIN_POLL)):
                    try:
                        event = await changes.__anext__()
                    except (StopAsyncIteration, McpError):  # the stream ended
                        return None
                    state = getattr(event, "task", None)
                if state is None:
                    state = await self.status()

    def _id(self) -> str:
        if self.task_id is None:
            raise McpError(INVALID_REQUEST, "The server answered this call at once: it is no task")
        return self.task_id

    async def _modern_step(self, state: Any) -> types.CallToolResult | None:
        if isinstance(state.poll_interval_ms, int):
            self.poll_interval_ms = state.poll_interval_ms
        if isinstance(state, ext.CompletedTask):
            return msgspec.convert(state.result, types.CallToolResult)
        if isinstance(state, ext.FailedTask):
            error = state.error
            raise error_from_response(error.code, error.message, error.data)
        if isinstance(state, ext.CancelledTask):
            raise TaskCancelled(state.task_id)
        if isinstance(state, ext.InputRequiredTask):
            fresh = {k: v for k, v in state.input_requests.items() if k not in self._answered}
            if fresh:
                asked = msgspec.json.decode(msgspec.json.encode({"inputRequests": fresh}), type=InputRequired)
                responses = await answer_input_requests(self.remote.session, "tools/call", asked, 1)
                if responses:
                    self._answered.update(responses)
                    params = ext.UpdateTaskRequestParams(
                        task_id=state.task_id, input_responses=responses, meta=declaring_tasks(self.remote)
                    )
                    await self.remote.request(ext.TASKS_UPDATE, params)
        return None

    async def _legacy_step(self, state: types.GetTaskResult) -> types.CallToolResult | None:
        if isinstance(state.poll_interval, int):
            self.poll_interval_ms = state.poll_interval
        if state.status == "cancelled":
            raise TaskCancelled(state.task_id)
        if state.status == "working":
            return None
        # Terminal, or asking on the session: tasks/result waits for the end (the client's
        # handlers answering the requests meanwhile) and answers as the call would have.
        spec = raw_result_spec(methods.TASKS_RESULT)
        raw = await self.remote.request(spec, types.GetTaskPayloadRequestParams(task_id=state.task_id))
        return msgspec.json.decode(bytes(raw), type=types.CallToolResult)
