"""Tasks: tools that run in the background while the client polls (see
:mod:`mcpbind.server.tasks.support`), their store (:mod:`mcpbind.server.tasks.store`)."""

from mcpbind.server.tasks.store import MemoryTaskStore, TaskRecord, TaskStore, TaskStoreFull
from mcpbind.server.tasks.support import TaskSupport

__all__ = ["MemoryTaskStore", "TaskRecord", "TaskStore", "TaskStoreFull", "TaskSupport"]
