"""``mcpbind serve --transport http`` run as a user runs it (a subprocess), on 127.0.0.1, for the
scale-out tests: with ``--workers N`` (the port left to the system and read from the
supervisor's log), or as one process on a port of its own. What it writes on stderr goes to
a file the test reads; the process is stopped when the block ends."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from tests.harness import child_env

__all__ = ["PID_SERVER", "Served", "deadline_poll", "gone", "respawn", "serve", "serving_workers"]

PID_SERVER = str(Path(__file__).parent / "pid_server.py")
START_TIMEOUT = 60.0  # (workers start one Python each: slow on a busy 2-core machine)
STOP_TIMEOUT = 30.0

T = TypeVar("T")

_SERVING = re.compile(r"^mcpbind: serving http://127\.0\.0\.1:(\d+)/mcp with \d+ workers$", re.MULTILINE)
_SERVES = re.compile(r"^mcpbind: worker (\d+) \(pid (\d+)\) serves$", re.MULTILINE)


def deadline_poll(check: Callable[[], T | None], what: str, timeout: float = START_TIMEOUT) -> T:
    """Call ``check`` until it returns something other than ``None`` (or fail, saying ``what``
    did not happen within ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while True:
        found = check()
        if found is not None:
            return found
        assert time.monotonic() < deadline, f"{what}: not within {timeout:g} s"
        time.sleep(0.02)


def gone(pid: int) -> bool:
    """Whether process ``pid`` has ended (a zombie nobody reaped counts as ended)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rpartition(")")[2].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def accepts(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=1).close()
    except OSError:
        return False
    return True


class Served:
    """A running ``mcpbind serve``: its process, port and stderr."""

    def __init__(
        self,
        process: subprocess.Popen[bytes],
        log_path: Path,
        port: int | None,
        command: Sequence[str] = (),
        env: dict[str, str] | None = None,
    ) -> None:
        self.process = process
        self.log_path = log_path
        self.port = port
        self.command = list(command)  # (what started it, for respawn())
        self.env = env
        self._asked = False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def children(self) -> set[int]:
        """The process ids of its child processes (its workers)."""
        pid = self.process.pid
        try:
            return {int(child) for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()}
        except FileNotFoundError:
            return set()

    def serving(self) -> dict[int, int]:
        """Worker number: process id, for the workers the log says serve now (the last one to
        serve under each number)."""
        return {int(number): int(pid) for number, pid in _SERVES.findall(self.log())}

    def ask_to_stop(self) -> None:
        """SIGTERM, once."""
        if not self._asked and self.process.poll() is None:
            self._asked = True
            self.process.send_signal(signal.SIGTERM)

    def check_running(self) -> None:
        code = self.process.poll()
        assert code is None, f"mcpbind serve exited with {code}:\n{self.log()}"

    def stop(self) -> int:
        """SIGTERM (unless :meth:`stop` was called already), then SIGKILL if it does not exit
        in time; returns its exit code."""
        self.ask_to_stop()
        if self.process.poll() is None:
            try:
                return self.process.wait(timeout=STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.process.kill()
        return self.process.wait(timeout=STOP_TIMEOUT)


def _free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def _start(
    folder: Path, target: str, workers: int, backend: str, extra: Sequence[str], env: dict[str, str] | None
) -> Served:
    port = 0 if workers > 1 else _free_port()
    command = [sys.executable, "-m", "mcpbind", "serve", target, "--transport", "http"]
    command += ["--port", str(port), "--backend", backend, "--workers", str(workers), *extra]
    return _launch(folder, command, {**child_env(), **(env or {})}, port or None)


def _launch(folder: Path, command: Sequence[str], env: dict[str, str], port: int | None) -> Served:
    log_path = folder / f"serve-{os.getpid()}-{time.monotonic_ns()}.log"
    with log_path.open("wb") as log:
        process = subprocess.Popen(
            command, env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=log
        )
    return Served(process, log_path, port, command, env)


def respawn(folder: Path, served: Served) -> Served:
    """A one-process ``served`` that ended, started again the same way on the same port,
    listening when it returns."""
    assert served.process.poll() is not None and served.port is not None and served.command
    again = _launch(folder, served.command, served.env or child_env(), served.port)
    try:
        _wait_serving(again, 1)
    except BaseException:
        again.stop()
        raise
    return again


def _wait_serving(served: Served, workers: int) -> None:
    if workers > 1:

        def started() -> int | None:
            served.check_running()
            found = _SERVING.search(served.log())
            return int(found.group(1)) if found else None

        served.port = deadline_poll(started, "the supervisor bound a port")
        deadline_poll(lambda: len(serving_workers(served)) == workers or None, f"{workers} workers serve")
    else:
        port = served.port or 0

        def listening() -> bool | None:
            served.check_running()
            return accepts(port) or None

        deadline_poll(listening, "the server listens")


@contextmanager
def serve(
    folder: Path,
    target: str = PID_SERVER,
    *,
    workers: int = 1,
    backend: str = "asyncio",
    extra: Sequence[str] = (),
    env: dict[str, str] | None = None,
    copies: int = 1,
) -> Iterator[list[Served]]:
    """``copies`` separate ``mcpbind serve target --transport http`` on 127.0.0.1 (started
    together), serving when the block starts (with ``workers`` > 1: every worker serves),
    stopped (and their workers with them) at the end."""
    started: list[Served] = []
    try:
        for _ in range(copies):
            started.append(_start(folder, target, workers, backend, extra, env))
        for served in started:
            _wait_serving(served, workers)
        yield started
    finally:
        for served in started:  # (together: a graceful stop may take hypercorn a few seconds)
            served.ask_to_stop()
        for served in started:
            served.stop()


def serving_workers(served: Served) -> set[int]:
    """The workers of ``served`` that serve (its children the log says serve)."""
    served.check_running()
    return set(served.serving().values()) & served.children()
