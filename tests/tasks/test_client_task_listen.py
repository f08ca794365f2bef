"""mcpbind's client listening for tasks: ``server.listen(task_ids=[...])`` opens a
``subscriptions/listen`` stream declaring the tasks extension and yields
:class:`~mcpbind.client.subscriptions.TaskChanged` events (the server's ``DetailedTask``), over
memory and Streamable HTTP, and across two workers sharing Redis; a 2025-11-25 session has no
such notifications and leaves the tasks out of what it acknowledges."""

from __future__ import annotations

from typing import Any

import anyio
import pytest
from msgspec import UNSET

from mcpbind.client.subscriptions import Listener, TaskChanged
from mcpbind.protocol import tasks as ext
from mcpbind.runtime.context import RequestContext
from mcpbind.types import TextContent
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


# -- ToolTask.result(listen=True): woken by the notifications ---------------------------------
# The server suggests polling once a minute: only its notifications can end these in time.


async def test_a_task_is_followed_by_its_notifications(transport: str) -> None:  # noqa: F811
    server, gate = make_server(poll_interval_ms=60_000)
    watching = server.tasks.watchable

    async def watchable(task_ids: list[str], ctx: RequestContext[Any]) -> list[str]:
        found = await watching(task_ids, ctx)
        gate.set()  # slow ends once the client's stream asked for it
        return found

    server.tasks.watchable = watchable  # type: ignore[method-assign]
    with anyio.fail_after(20):
        async with connect(server, MODERN, transport) as remote:
            started = await remote.start_tool("slow", {"n": 5})
            assert started.task_id is not None
            result = await started.result(listen=True)
            assert result.structured_content == {"result": 10}


async def test_input_asked_for_is_answered_from_the_notifications(transport: str) -> None:  # noqa: F811
    server, _ = make_server(poll_interval_ms=60_000)
    with anyio.fail_after(20):
        async with connect(server, MODERN, transport) as remote:
            started = await remote.start_tool("greet")
            assert started.task_id is not None
            result = await remote.wait_for_task(started.task_id, listen=True)
            item = result.content[0]
            assert isinstance(item, TextContent) and item.text == "Hello, Luca!"


async def test_a_session_is_polled_when_asked_to_listen() -> None:
    server, gate = make_server()
    with anyio.fail_after(20):
        async with connect(server, OLD, "memory") as remote:
            started = await remote.start_tool("slow", {"n": 2})
            gate.set()
            assert (await started.result(listen=True)).structured_content == {"result": 4}


async def test_a_task_on_another_worker_is_followed_by_its_notifications(redis_url: str) -> None:
    with anyio.fail_after(20):
        async with two_workers(redis_url) as ((first, _), (on_first, on_second), _):
            started = await on_first.start_tool("slow", {"n": 21})
            assert started.task_id is not None
            first.gate.set()
            result = await on_second.wait_for_task(started.task_id, listen=True)
            assert result.structured_content == {"result": 42}
