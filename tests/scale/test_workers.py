"""``mcpbind serve --transport http --workers 3``, run as a user runs it: 2026-07-28 requests
are served by every worker with nothing shared, a killed worker is replaced, SIGTERM (or the
supervisor's death) stops them all and frees the port, and a server file that does not load
fails once, clearly. The server runs on the test's backend (uvicorn on asyncio, hypercorn on
trio)."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import anyio
import pytest

from tests.harness import child_env
from tests.scale.clients import call_pid, call_pids, connected, retrying
from tests.scale.serving import PID_SERVER, accepts, deadline_poll, gone, serve, serving_workers

pytestmark = pytest.mark.anyio

WORKERS = 3
SPREAD_TIMEOUT = 30.0


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # (as servers bind)
        try:
            probe.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


async def test_requests_spread_over_the_workers(anyio_backend: str, tmp_path: Path) -> None:
    with serve(tmp_path, workers=WORKERS, backend=anyio_backend) as [served]:
        workers = serving_workers(served)
        assert len(workers) == WORKERS and served.process.pid not in workers
        seen: set[int] = set()
        async with connected(served.url) as server:
            assert await retrying(server, "echo", {"text": "hello"}) == "hello"
            with anyio.fail_after(SPREAD_TIMEOUT):  # the kernel picks a worker per connection
                while seen != workers:
                    seen.update(await call_pids(server, 6))
                    assert seen <= workers, f"answered by {seen - workers}, not a worker"


async def test_a_killed_worker_is_replaced_and_calls_go_on(anyio_backend: str, tmp_path: Path) -> None:
    with serve(tmp_path, workers=WORKERS, backend=anyio_backend) as [served]:
        before = served.serving()
        number, victim = sorted(before.items())[0]
        async with connected(served.url) as server:
            os.kill(victim, signal.SIGKILL)
            deadline_poll(lambda: gone(victim) or None, "the killed worker is gone")
            for _ in range(5):  # while it is being replaced, the others answer
                assert await call_pid(server) != victim

            def replaced() -> int | None:
                pid = served.serving()[number]
                return pid if pid != victim and pid in serving_workers(served) else None

            successor = await anyio.to_thread.run_sync(deadline_poll, replaced, "a new worker serves")
            assert serving_workers(served) == {*before.values(), successor} - {victim}
            assert f"worker {number} (pid {victim}) was killed by SIGKILL; restarting it in " in served.log()
            seen: set[int] = set()
            with anyio.fail_after(SPREAD_TIMEOUT):
                while successor not in seen:  # and the new one answers too
                    seen.update(await call_pids(server, 6))


async def test_sigterm_stops_every_worker_and_frees_the_port(anyio_backend: str, tmp_path: Path) -> None:
    with serve(tmp_path, workers=WORKERS, backend=anyio_backend) as [served]:
        async with connected(served.url) as server:
            await call_pid(server)
        workers = serving_workers(served)
        assert served.port is not None
        served.process.send_signal(signal.SIGTERM)
        assert served.process.wait(timeout=30) == 0
        assert all(gone(pid) for pid in workers)
        assert not accepts(served.port)
        assert port_is_free(served.port)
        log = served.log()
        assert "mcpbind: stopping 3 workers (on SIGTERM)" in log
        assert "Traceback" not in log, log


@pytest.mark.parametrize("backend", ["asyncio", "trio"])
def test_workers_stop_when_their_supervisor_is_killed(backend: str, tmp_path: Path) -> None:
    with serve(tmp_path, workers=WORKERS, backend=backend) as [served]:
        workers = serving_workers(served)
        assert served.port is not None
        served.process.kill()  # no chance to stop them: each notices it is gone
        served.process.wait(timeout=30)
        deadline_poll(lambda: all(gone(pid) for pid in workers) or None, "the orphaned workers stop")
        deadline_poll(lambda: port_is_free(served.port or 0) or None, "the port is free")


def test_workers_1_is_one_process(tmp_path: Path) -> None:
    with serve(tmp_path, workers=1) as [served]:
        assert served.children() == set()
        assert "workers" not in served.log()


def mcpbind_serve(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "mcpbind", "serve", *args],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        env=child_env(),
        timeout=60,
        check=False,
    )


def test_a_file_that_does_not_load_fails_once_clearly(tmp_path: Path) -> None:
    missing = str(tmp_path / "nope.py")
    done = mcpbind_serve(missing, "--transport", "http", "--port", "0", "--workers", "3")
    assert done.returncode == 1
    lines = done.stderr.splitlines()
    assert lines.count(f"mcpbind: no such file: {missing}") == 1, done.stderr  # one worker tried
    assert lines[-1].startswith("mcpbind: worker 1 (pid "), done.stderr
    assert lines[-1].endswith(") exited with code 1 before serving: stopping"), done.stderr


def test_bad_worker_options(tmp_path: Path) -> None:
    done = mcpbind_serve(PID_SERVER, "--transport", "http", "--workers", "0")
    assert (done.returncode, done.stderr) == (
        2,
        "mcpbind: --workers takes a number of processes, 1 or more (not 0)\n",
    )
    done = mcpbind_serve(PID_SERVER, "--workers", "2")
    assert (done.returncode, done.stderr) == (2, "mcpbind: --workers: for HTTP only (add --transport http)\n")
    done = mcpbind_serve(PID_SERVER, "--store", "memory:")
    assert (done.returncode, done.stderr) == (2, "mcpbind: --store: for HTTP only (add --transport http)\n")


def test_a_taken_port_fails_before_any_worker_starts(tmp_path: Path) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = mcpbind_serve(PID_SERVER, "--transport", "http", "--port", str(port), "--workers", "2")
    assert done.returncode == 1
    assert done.stderr.startswith(f"mcpbind: cannot serve on 127.0.0.1:{port}: "), done.stderr
    assert len(done.stderr.splitlines()) == 1
