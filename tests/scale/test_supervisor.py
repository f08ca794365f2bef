"""The supervisor of ``mcpbind serve --workers`` on its own, with stand-in workers that start in a
blink (tests/scale/stub_worker.py): the delays before restarts double, workers that keep
failing to start make it give up, a first worker that fails stops everything, and workers
that do not stop in time are killed. It runs in a thread of the test (stopped with
``Supervisor.stop``, as its signal handlers would)."""

from __future__ import annotations

import logging
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from mcpbind.server.workers import RestartPolicy, Supervisor
from tests.scale.serving import deadline_poll, gone

STUB = str(Path(__file__).parent / "stub_worker.py")
FAST = RestartPolicy(
    first_delay=0.01, max_delay=1.0, stable_after=600.0, max_start_failures=3, stop_timeout=30.0
)


@dataclass
class Running:
    supervisor: Supervisor
    thread: threading.Thread
    caplog: pytest.LogCaptureFixture
    result: list[int] = field(default_factory=list)

    def messages(self, level: int = logging.INFO) -> list[str]:
        """What the supervisor logged at ``level`` or above."""
        records = self.caplog.records
        return [r.getMessage() for r in records if r.name == "mcpbind.workers" and r.levelno >= level]

    def serving(self) -> list[int]:
        """The pids of the workers that serve, in the order they said so."""
        return [int(m.split("(pid ")[1].split(")")[0]) for m in self.messages() if m.endswith(" serves")]

    def wait_serving(self, count: int) -> list[int]:
        return deadline_poll(
            lambda: (
                pids
                if len(pids := [p for p in self.serving() if p in self.supervisor.pids]) == count
                else None
            ),
            f"{count} workers serve",
        )

    def exit_code(self) -> int:
        self.thread.join(timeout=30)
        assert not self.thread.is_alive(), "the supervisor did not return"
        return self.result[0]


@contextmanager
def supervising(
    caplog: pytest.LogCaptureFixture, *mode: str, workers: int = 2, policy: RestartPolicy = FAST
) -> Iterator[Running]:
    caplog.set_level(logging.DEBUG, logger="mcpbind.workers")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    supervisor = Supervisor([sys.executable, STUB, *mode], [listener], workers, policy=policy)
    running = Running(supervisor, threading.Thread(target=lambda: None), caplog)
    running.thread = threading.Thread(target=lambda: running.result.append(supervisor.run()))
    running.thread.start()
    try:
        yield running
    finally:
        supervisor.stop()
        supervisor.stop()  # (a second request kills what is left at once)
        running.thread.join(timeout=30)
        listener.close()


def kill_the_worker(running: Running) -> str:
    """SIGKILL the one worker that serves; returns what the supervisor logged about it."""
    [pid] = running.wait_serving(1)
    os.kill(pid, signal.SIGKILL)
    prefix = f"worker 1 (pid {pid}) was killed by SIGKILL; restarting it in "
    return deadline_poll(
        lambda: next((m for m in running.messages() if m.startswith(prefix)), None), "the restart is logged"
    )


def test_a_dead_worker_is_restarted_after_doubling_delays(caplog: pytest.LogCaptureFixture) -> None:
    with supervising(caplog, "serve", workers=1) as running:
        said = [kill_the_worker(running) for _ in range(3)]
        assert [line.rpartition(" in ")[2] for line in said] == ["0.01 s", "0.02 s", "0.04 s"]
        running.wait_serving(1)
        running.supervisor.stop()
        assert running.exit_code() == 0


def test_workers_that_keep_failing_to_start_stop_it(caplog: pytest.LogCaptureFixture, tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    with supervising(caplog, "fail-when", str(broken), workers=2) as running:
        first, second = running.wait_serving(2)
        broken.touch()  # from now on, a worker fails to start
        os.kill(first, signal.SIGKILL)
        assert running.exit_code() == 1
    messages = running.messages()
    assert messages[-2].endswith("exited with code 3 before serving (3 failures to start in a row): stopping")
    assert messages[-1] == "stopping 1 workers (workers fail to start)"
    assert gone(second)


def test_a_first_worker_that_fails_to_start_stops_it(caplog: pytest.LogCaptureFixture) -> None:
    with supervising(caplog, "fail", workers=3) as running:
        assert running.exit_code() == 3
    started = [m for m in running.messages(logging.DEBUG) if m.startswith("started worker")]
    assert len(started) == 1  # the others never started
    assert running.messages()[-1].endswith(") exited with code 3 before serving: stopping")


def test_workers_that_do_not_stop_in_time_are_killed(caplog: pytest.LogCaptureFixture) -> None:
    policy = RestartPolicy(stop_timeout=0.2)
    with supervising(caplog, "stubborn", workers=2, policy=policy) as running:
        pids = running.wait_serving(2)
        running.supervisor.stop()
        assert running.exit_code() == 0
    assert any(m.endswith("still running 0.2 s after the stop: killing them") for m in running.messages())
    assert all(gone(pid) for pid in pids)


def test_a_second_stop_kills_at_once(caplog: pytest.LogCaptureFixture) -> None:
    policy = RestartPolicy(stop_timeout=3600.0)
    with supervising(caplog, "stubborn", workers=2, policy=policy) as running:
        pids = running.wait_serving(2)
        running.supervisor.stop(signal.SIGINT)
        running.supervisor.stop(signal.SIGINT)
        assert running.exit_code() == 0  # (within the join's 30 s, not the hour)
    assert "stop requested again: killing 2 workers" in running.messages()
    assert all(gone(pid) for pid in pids)


def test_a_stop_is_quiet_and_clean(caplog: pytest.LogCaptureFixture) -> None:
    with supervising(caplog, "serve", workers=3) as running:
        pids = running.wait_serving(3)
        running.supervisor.stop(signal.SIGTERM)
        assert running.exit_code() == 0
    assert running.messages()[-1] == "stopping 3 workers (on SIGTERM)"
    assert all(gone(pid) for pid in pids)
    assert not [r for r in caplog.records if r.levelno >= logging.WARNING]


def test_bad_settings() -> None:
    with pytest.raises(ValueError):
        RestartPolicy(first_delay=-1)
    with pytest.raises(ValueError):
        RestartPolicy(max_start_failures=0)
    with pytest.raises(ValueError):
        Supervisor([sys.executable, STUB, "serve"], [], 0)
