"""The wire types of the tasks extension (``io.modelcontextprotocol/tasks``) for the stateless
protocol (MCP 2026-07-28), whose generated schema does not have them: named after the
extension's schema (``schema/draft/schema.ts`` of the extension's repository).

A server that negotiated the extension may answer ``tools/call`` with a
:class:`CreateTaskResult` (``resultType: "task"``) instead of its result; the client then polls
``tasks/get`` (a :data:`DetailedTask`, discriminated by ``status``), answers
``inputRequests`` with ``tasks/update`` and may ``tasks/cancel``. A client declares the
extension in the ``extensions`` of its per-request capabilities; a server in the
``extensions`` of its ``server/discover`` capabilities.

The 2025-11-25 tasks (``tasks/get``, ``tasks/result``, ``tasks/list``, ``tasks/cancel``,
``notifications/tasks/status``) are in that version's generated schema.
"""

from __future__ import annotations

from typing import Any, Final, Literal

import msgspec
from msgspec import UNSET, UnsetType, field

from mcpbind.protocol.methods import Direction, NotificationSpec, RequestSpec, ToServer

__all__ = [
    "TASKS_CANCEL",
    "TASKS_EXTENSION",
    "TASKS_GET",
    "TASKS_UPDATE",
    "NOTIFICATIONS_TASKS",
    "CancelTaskRequestParams",
    "CancelTaskResult",
    "CancelledTask",
    "CompletedTask",
    "CreateTaskResult",
    "DetailedTask",
    "FailedTask",
    "GetTaskRequestParams",
    "InputRequiredTask",
    "JSONRPCErrorObject",
    "TaskStatus",
    "UpdateTaskRequestParams",
    "UpdateTaskResult",
    "WorkingTask",
]

# The extension's identifier, in capabilities' ``extensions``.
TASKS_EXTENSION: Final = "io.modelcontextprotocol/tasks"

TaskStatus = Literal["working", "input_required", "completed", "failed", "cancelled"]


class JSONRPCErrorObject(msgspec.Struct, kw_only=True):
    """A JSON-RPC error object: what a ``failed`` task carries."""

    code: int
    message: str
    data: Any | UnsetType = UNSET


class _TaskFields(msgspec.Struct, kw_only=True):
    """What every task shape carries (``Task`` of the schema), plus the result's ``_meta``.
    ``ttl_ms`` is always sent (``null``: unlimited)."""

    task_id: str = field(name="taskId")
    status_message: str | UnsetType = field(name="statusMessage", default=UNSET)
    created_at: str = field(name="createdAt")
    last_updated_at: str = field(name="lastUpdatedAt")
    ttl_ms: int | None = field(name="ttlMs")
    poll_interval_ms: int | UnsetType = field(name="pollIntervalMs", default=UNSET)
    meta: dict[str, Any] | UnsetType = field(name="_meta", default=UNSET)


class CreateTaskResult(_TaskFields, kw_only=True):
    """The answer to a task-augmented request: the task's seed state (``resultType: "task"``)."""

    status: TaskStatus
    result_type: str = field(name="resultType", default="task")


class _DetailedBase(_TaskFields, kw_only=True, tag_field="status"):
    """``GetTaskResult`` (``result_type`` ``"complete"``) and the params of ``notifications/tasks``
    (no ``result_type``)."""

    result_type: str | UnsetType = field(name="resultType", default=UNSET)

    @property
    def status(self) -> TaskStatus:
        """The task's status (the tag of its shape)."""
        tag: Any = self.__struct_config__.tag
        return tag  # type: ignore[no-any-return]


class WorkingTask(_DetailedBase, kw_only=True, tag="working"):
    """A task in progress."""


class InputRequiredTask(_DetailedBase, kw_only=True, tag="input_required"):
    """A task waiting for the client: ``input_requests`` (keys of the server's choosing, each an
    embedded ``elicitation/create``, ``sampling/createMessage`` or ``roots/list`` request)."""

    input_requests: dict[str, Any] = field(name="inputRequests")


class CompletedTask(_DetailedBase, kw_only=True, tag="completed"):
    """A finished task: ``result`` is the request's result (a ``CallToolResult``, even one with
    ``isError``)."""

    result: dict[str, Any]


class FailedTask(_DetailedBase, kw_only=True, tag="failed"):
    """A task whose request ended with a JSON-RPC error: ``error``."""

    error: JSONRPCErrorObject


class CancelledTask(_DetailedBase, kw_only=True, tag="cancelled"):
    """A task cancelled before it finished."""


DetailedTask = WorkingTask | InputRequiredTask | CompletedTask | FailedTask | CancelledTask


class GetTaskRequestParams(msgspec.Struct, kw_only=True):
    """``tasks/get``: the task to query."""

    task_id: str = field(name="taskId")
    meta: dict[str, Any] | UnsetType = field(name="_meta", default=UNSET)


class CancelTaskRequestParams(GetTaskRequestParams, kw_only=True):
    """``tasks/cancel``: the task to cancel."""


class UpdateTaskRequestParams(GetTaskRequestParams, kw_only=True):
    """``tasks/update``: answers (``inputResponses``) to a task's outstanding ``inputRequests``,
    by key."""

    input_responses: dict[str, Any] = field(name="inputResponses")


class UpdateTaskResult(msgspec.Struct, kw_only=True):
    """The acknowledgement of ``tasks/update`` (and, as :data:`CancelTaskResult`, of
    ``tasks/cancel``)."""

    result_type: str = field(name="resultType", default="complete")
    meta: dict[str, Any] | UnsetType = field(name="_meta", default=UNSET)


CancelTaskResult = UpdateTaskResult

TASKS_GET: Final[RequestSpec[GetTaskRequestParams, DetailedTask, ToServer]] = RequestSpec(
    "tasks/get", Direction.CLIENT_TO_SERVER, GetTaskRequestParams, DetailedTask, params_optional=False
)
TASKS_UPDATE: Final[RequestSpec[UpdateTaskRequestParams, UpdateTaskResult, ToServer]] = RequestSpec(
    "tasks/update",
    Direction.CLIENT_TO_SERVER,
    UpdateTaskRequestParams,
    UpdateTaskResult,
    params_optional=False,
)
TASKS_CANCEL: Final[RequestSpec[CancelTaskRequestParams, CancelTaskResult, ToServer]] = RequestSpec(
    "tasks/cancel",
    Direction.CLIENT_TO_SERVER,
    CancelTaskRequestParams,
    CancelTaskResult,
    params_optional=False,
)
# notifications/tasks: a DetailedTask for the current status (sent on subscriptions/listen).
NOTIFICATIONS_TASKS: Final[NotificationSpec[Any, Any]] = NotificationSpec(
    "notifications/tasks", Direction.SERVER_TO_CLIENT, DetailedTask, params_optional=False
)
