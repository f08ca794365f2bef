"""mcpbind's client listening for tasks: ``server.listen(task_ids=[...])`` opens a
``subscriptions/listen`` stream declaring the tasks extension and yields
:class:`~mcpbind.client.subscriptions.TaskChanged` events (the server's ``DetailedTask``), over
memory and Streamable HTTP, and across two workers sharing Redis; a 2025-11-25 session has no
such notifications and leaves the tasks out of what it acknowledges."""

from __future__ import annotations

import anyio
import pytest
from msgspec import UNSET

from mcpbind.client.subscriptions import Listener, TaskChanged
from mcpbind.protocol import tasks as ext
from tests.tasks.test_shared_tasks import two_workers
from tests.tasks.test_tasks import connect, make_server, transport  # noqa: F401 (fixture)

pytestmark = pytest.mark.anyio

MODERN = "2026-07-28"
OLD = "2025-11-25"


async def next_task_state(changes: Listener) -> ext.DetailedTask:
    event = await changes.next(10)
    assert isinstance(event, TaskChanged), event
    return event.task


async def test_a_listener_hears_its_task_change_until_it_ends(transport: str) -> None:  # noqa: F811
    server, gate = make_server()
    with anyio.fail_after(20):
        async with connect(server, MODERN, transport) as remote:
            started = await remote.start_tool("slow", {"n": 4})
            assert started.task_id is not None
            async with remote.listen(task_ids=[started.task_id, "no-such-task"]) as changes:
                assert changes.acknowledged.task_ids == [started.task_id]
                now = await next_task_state(changes)  # its state first
                assert isinstance(now, ext.WorkingTask) and now.task_id == started.task_id
                gate.set()
                done = await next_task_state(changes)
                assert isinstance(done, ext.CompletedTask)
                assert done.result["structuredContent"] == {"result": 8}


async def test_a_session_acknowledges_no_tasks() -> None:
    server, _ = make_server()
    with anyio.fail_after(20):
        async with connect(server, OLD, "memory") as remote:
            started = await remote.start_tool("slow", {"n": 4})
            assert started.task_id is not None
            async with remote.listen(tools=True, task_ids=[started.task_id]) as changes:
                assert changes.acknowledged.task_ids is UNSET
                assert changes.acknowledged.tools_list_changed is True


async def test_a_listener_on_one_worker_hears_a_task_running_on_the_other(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as ((first, _), (on_first, on_second), _):
            started = await on_first.start_tool("slow", {"n": 21})
            assert started.task_id is not None
            async with on_second.listen(task_ids=[started.task_id]) as changes:
                assert changes.acknowledged.task_ids == [started.task_id]
                assert isinstance(await next_task_state(changes), ext.WorkingTask)
                first.gate.set()
                done = await next_task_state(changes)
                assert isinstance(done, ext.CompletedTask)
                assert done.result["structuredContent"] == {"result": 42}
