"""A task's record as each protocol version shows it: the tasks extension's shapes for the
stateless versions (:mod:`mcpbind.protocol.tasks`), 2025-11-25's ``Task`` for sessions."""

from __future__ import annotations

from datetime import datetime, timezone
from typing import Any

from msgspec import UNSET

from mcpbind import types
from mcpbind.protocol import tasks as ext
from mcpbind.server.tasks.store import TaskRecord

__all__ = ["created", "detailed", "iso", "legacy_fields", "legacy_task"]


def iso(seconds: float) -> str:
    """An ISO 8601 UTC timestamp (milliseconds) of ``seconds`` since the epoch."""
    text = datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec="milliseconds")
    return text.replace("+00:00", "Z")


def _common(record: TaskRecord) -> dict[str, Any]:
    return {
        "task_id": record.task_id,
        "status_message": UNSET if record.status_message is None else record.status_message,
        "created_at": iso(record.created_at),
        "last_updated_at": iso(record.last_updated_at),
    }


def created(record: TaskRecord) -> ext.CreateTaskResult:
    """The extension's ``CreateTaskResult`` for a new task."""
    return ext.CreateTaskResult(
        **_common(record),
        status=record.status,
        ttl_ms=record.ttl_ms,
        poll_interval_ms=record.poll_interval_ms,
    )


def detailed(record: TaskRecord, result_type: str | None = "complete") -> ext.DetailedTask:
    """The extension's ``DetailedTask`` of ``record`` (a ``GetTaskResult`` with
    ``result_type``; the params of ``notifications/tasks`` with ``None``)."""
    fields: dict[str, Any] = {
        **_common(record),
        "ttl_ms": record.ttl_ms,
        "poll_interval_ms": record.poll_interval_ms,
        "result_type": UNSET if result_type is None else result_type,
    }
    status = record.status
    if status == "input_required":
        return ext.InputRequiredTask(**fields, input_requests=dict(record.input_requests or {}))
    if status == "completed":
        return ext.CompletedTask(**fields, result=dict(record.result or {}))
    if status == "failed":
        error = record.error or {"code": -32603, "message": "Internal error"}
        return ext.FailedTask(
            **fields,
            error=ext.JSONRPCErrorObject(
                code=int(error["code"]), message=str(error["message"]), data=error.get("data", UNSET)
            ),
        )
    if status == "cancelled":
        return ext.CancelledTask(**fields)
    return ext.WorkingTask(**fields)


def legacy_fields(record: TaskRecord) -> dict[str, Any]:
    """The members of 2025-11-25's ``Task`` for ``record`` (as keyword arguments)."""
    return {
        **_common(record),
        "status": record.status,
        "ttl": record.ttl_ms,
        "poll_interval": record.poll_interval_ms,
    }


def legacy_task(record: TaskRecord) -> types.Task:
    """2025-11-25's ``Task`` of ``record``."""
    return types.Task(**legacy_fields(record))
