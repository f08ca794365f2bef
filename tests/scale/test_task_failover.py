"""A task whose worker is killed (SIGKILL: no graceful end) while it runs: another
``mcpbind serve`` process sharing the Redis store reports it ``failed``, saying why, once the
dead worker's lease ran out; it is never lost, nor left ``working``."""

from __future__ import annotations

import signal
from pathlib import Path

import anyio
import pytest

from mcpbind.client.client import Client
from mcpbind.client.tasks import ToolTask
from tests.scale.serving import serve

pytestmark = pytest.mark.anyio

TASK_SERVER = str(Path(__file__).parent / "task_server.py")


async def test_a_task_of_a_killed_worker_is_reported_failed_by_another(
    anyio_backend: str, tmp_path: Path, redis_url: str
) -> None:
    extra = ["--store", redis_url]
    with serve(tmp_path, TASK_SERVER, backend=anyio_backend, copies=2, extra=extra) as (doomed, survivor):
        with anyio.fail_after(30):
            async with Client().connect_url(doomed.url) as on_doomed:
                started = await on_doomed.start_tool("forever")
                assert started.task_id is not None
                assert (await started.status()).status == "working"
            doomed.process.send_signal(signal.SIGKILL)
            doomed.process.wait()
            async with Client().connect_url(survivor.url) as on_survivor:
                task = ToolTask(on_survivor, started.task_id, 50)
                state = await task.status()
                while state.status == "working":  # (until its lease ran out)
                    await anyio.sleep(0.05)
                    state = await task.status()
                assert state.status == "failed"
                assert "stopped before it finished" in state.status_message
                assert "stopped before it finished" in state.error.message
