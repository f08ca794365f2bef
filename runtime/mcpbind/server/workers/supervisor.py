"""The supervisor of ``mcpbind serve --workers N``: it starts N worker processes on listening
sockets it bound and passes down, restarts a worker that dies, and stops them all when asked.

Each worker is a new interpreter (``command``, with ``--listen-fd FD`` for each listening
socket and ``--supervisor-fd FD`` for its :mod:`~mcpbind.server.workers.link` appended): no
fork of a process with threads or an event loop, and a worker loads the server itself, as a
single ``mcpbind serve`` does. The kernel hands each connection to one of the workers
accepting on the shared sockets. Workers run in sessions of their own, so that a Ctrl-C at a
terminal reaches the supervisor alone, which then stops each worker once.

What it does:

* Start: the first worker alone, then, once it serves (its application started), the others.
  If the first exits before serving (a file that does not load, a bad option: it said why on
  stderr), the supervisor exits with its exit code without starting the others.
* A worker that exits while the supervisor runs is restarted after a delay that doubles with
  each exit in a row of that worker (``RestartPolicy``), each logged as a warning. Workers
  exiting before they serve, :attr:`RestartPolicy.max_start_failures` times in a row (a server
  file broken since the start, say), stop the supervisor with exit code 1 instead of looping.
* SIGINT or SIGTERM (or :meth:`Supervisor.stop`): each worker is sent ``stop_signal`` (SIGINT:
  ``mcpbind serve`` stops quietly on it, on asyncio and trio; a worker still starting gets
  SIGTERM, which ends it as quietly before it serves) and has
  :attr:`RestartPolicy.stop_timeout` seconds to exit before it is killed (SIGKILL); a second
  request kills them at once. The supervisor then exits with 0.
* A worker notices when the supervisor is gone (killed with SIGKILL, say) and stops itself.

It waits for its workers with pidfds (Linux 5.3 and later), or elsewhere by checking on them
every :data:`POLL_INTERVAL` seconds.
"""

from __future__ import annotations

import logging
import os
import selectors
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from types import FrameType
from typing import Final

from mcpbind.server.workers.link import READY, open_link

__all__ = ["POLL_INTERVAL", "RestartPolicy", "Supervisor"]

log = logging.getLogger("mcpbind.workers")

# Without pidfds: how often the supervisor checks whether a worker exited.
POLL_INTERVAL: Final = 0.2


@dataclass(frozen=True)
class RestartPolicy:
    """When the supervisor restarts a worker, when it gives up, and how long workers have to
    stop."""

    first_delay: float = 0.1
    """Seconds before restarting a worker that exited (the first time in a row)."""
    max_delay: float = 10.0
    """The delay doubles with each exit in a row of the same worker, up to this."""
    stable_after: float = 30.0
    """A worker that served this long: its exit counts as the first in a row again."""
    max_start_failures: int = 5
    """Workers exiting before they serve this many times in a row (any of them): give up."""
    stop_timeout: float = 10.0
    """Seconds workers have to exit once asked to stop, before they are killed."""

    def __post_init__(self) -> None:
        if min(self.first_delay, self.max_delay, self.stable_after, self.stop_timeout) < 0:
            raise ValueError("the delays and timeouts of a RestartPolicy cannot be negative")
        if self.max_start_failures < 1:
            raise ValueError("max_start_failures must be at least 1")


@dataclass(eq=False)
class _Worker:
    slot: int  # 0 to N-1 (logged as 1 to N)
    process: subprocess.Popen[bytes]
    link: socket.socket | None  # the supervisor's end, until the worker closes its own
    exited: int | None  # a pidfd, readable once the worker exits
    started: float
    serving: bool = False

    def __str__(self) -> str:
        return f"worker {self.slot + 1} (pid {self.process.pid})"


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _exit_status(code: int) -> str:
    """How a process with this return code ended (a negative code: killed by that signal)."""
    return f"was killed by {_signal_name(-code)}" if code < 0 else f"exited with code {code}"


@dataclass(eq=False)
class _Schedule:
    restarts: dict[int, float] = field(default_factory=dict)  # slot: when (monotonic)
    exits_in_a_row: dict[int, int] = field(default_factory=dict)  # slot: count


class Supervisor:
    """Runs ``workers`` copies of ``command`` on the listening sockets ``listeners`` (which
    stay the caller's to close) until stopped: see the module's docstring. :meth:`run` blocks;
    it handles SIGINT and SIGTERM when called from the main thread (:meth:`stop` does the same
    from anywhere)."""

    def __init__(
        self,
        command: Sequence[str],
        listeners: Sequence[socket.socket],
        workers: int,
        *,
        policy: RestartPolicy | None = None,
        stop_signal: int = signal.SIGINT,
        env: Mapping[str, str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if workers < 1:
            raise ValueError("a supervisor needs at least one worker")
        self.command = list(command)
        self.listeners = list(listeners)
        self.count = workers
        self.policy = policy or RestartPolicy()
        self.stop_signal = stop_signal
        self.env = dict(env) if env is not None else None
        self._clock = clock
        self._workers: list[_Worker] = []
        self._schedule = _Schedule()
        self._selector = selectors.DefaultSelector()
        self._wake_read, self._wake_write = os.pipe()
        os.set_blocking(self._wake_read, False)
        os.set_blocking(self._wake_write, False)
        self._selector.register(self._wake_read, selectors.EVENT_READ)
        self._stop_requests: list[int] = []  # (appended by signal handlers and other threads)
        self._stopping_since: float | None = None
        self._killed = False
        self._served = False  # whether any worker ever served
        self._start_failures = 0  # workers exiting before they serve, in a row
        self._exit_code = 0
        self._ran = False

    @property
    def pids(self) -> list[int]:
        """The process ids of the running workers."""
        return [worker.process.pid for worker in self._workers]

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Ask :meth:`run` to stop the workers and return (a second call kills them at once).
        Safe from a signal handler or another thread."""
        self._stop_requests.append(signum)
        try:
            os.write(self._wake_write, b"\0")
        except OSError:  # full (a wake-up is pending anyway), or closed (run is over)
            pass

    def run(self) -> int:
        """Supervise until stopped; returns the exit code: 0 once stopped, the first worker's
        (1 if it had none) when it failed to start, 1 when workers kept failing to start."""
        if self._ran:
            raise RuntimeError("a Supervisor runs once")
        self._ran = True
        handled = threading.current_thread() is threading.main_thread()
        previous = (
            {sig: signal.signal(sig, self._on_signal) for sig in (signal.SIGINT, signal.SIGTERM)}
            if handled
            else {}
        )
        try:
            self._start(0)
            while self._workers or (self._stopping_since is None and self._schedule.restarts):
                self._wait()
                self._reap()
                self._act()
            return self._exit_code
        finally:
            for worker in list(self._workers):  # (only after an error of the supervisor itself)
                worker.process.kill()
                worker.process.wait()
                self._forget(worker)
            for sig, handler in previous.items():
                signal.signal(sig, handler)
            self._selector.close()
            wake_read, wake_write, self._wake_write = self._wake_read, self._wake_write, -1
            os.close(wake_read)
            os.close(wake_write)

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        self.stop(signum)

    def _wait(self) -> None:
        """Wait for something to happen: a worker ready or gone, a stop request, or the time
        of the next restart or kill."""
        deadlines = list(self._schedule.restarts.values())
        if self._stopping_since is not None and not self._killed:
            deadlines.append(self._stopping_since + self.policy.stop_timeout)
        timeout = max(0.0, min(deadlines) - self._clock()) if deadlines else None
        if any(worker.exited is None for worker in self._workers):
            timeout = POLL_INTERVAL if timeout is None else min(timeout, POLL_INTERVAL)
        for key, _ in self._selector.select(timeout):
            if key.fd == self._wake_read:
                try:
                    while os.read(self._wake_read, 512):
                        pass
                except BlockingIOError:
                    pass
            elif (
                isinstance(key.data, _Worker)
                and key.data.link is not None
                and key.fd == key.data.link.fileno()
            ):
                self._read_link(key.data)

    def _read_link(self, worker: _Worker) -> None:
        assert worker.link is not None
        try:
            said = worker.link.recv(64)
        except OSError:
            said = b""
        if not said:  # the worker is exiting (its exit is reaped separately)
            self._selector.unregister(worker.link)
            worker.link.close()
            worker.link = None
            return
        if READY in said and not worker.serving:
            worker.serving = True
            self._start_failures = 0
            log.info("%s serves", worker)
            if not self._served:
                self._served = True
                if self._stopping_since is None:
                    for slot in range(1, self.count):
                        self._start(slot)

    def _reap(self) -> None:
        for worker in list(self._workers):
            code = worker.process.poll()
            if code is not None:
                self._forget(worker)
                self._exited(worker, code)

    def _act(self) -> None:
        """Stop when asked, kill when the time is up, restart when it is time."""
        now = self._clock()
        if self._stop_requests:
            requests = []
            while self._stop_requests:  # (a signal handler may append meanwhile)
                requests.append(self._stop_requests.pop(0))
            if self._stopping_since is None:
                self._begin_stop(f"on {_signal_name(requests[0])}")
                requests = requests[1:]
            if requests and not self._killed:
                log.warning("stop requested again: killing %d workers", len(self._workers))
                self._kill()
        if self._stopping_since is not None:
            if not self._killed and now >= self._stopping_since + self.policy.stop_timeout:
                log.warning(
                    "%s still running %g s after the stop: killing them",
                    ", ".join(str(worker) for worker in self._workers),
                    self.policy.stop_timeout,
                )
                self._kill()
            return
        for slot, when in list(self._schedule.restarts.items()):
            if now >= when:
                del self._schedule.restarts[slot]
                self._start(slot)

    def _begin_stop(self, why: str) -> None:
        self._stopping_since = self._clock()
        self._schedule.restarts.clear()
        if self._workers:
            log.info("stopping %d workers (%s)", len(self._workers), why)
        for worker in self._workers:
            # One not serving yet may not handle stop_signal yet (SIGINT would interrupt its
            # start with a traceback): it ends on SIGTERM, quietly, as it would have started.
            worker.process.send_signal(self.stop_signal if worker.serving else signal.SIGTERM)

    def _kill(self) -> None:
        self._killed = True
        for worker in self._workers:
            worker.process.kill()

    def _start(self, slot: int) -> None:
        link, their_end = open_link()
        fds = [listener.fileno() for listener in self.listeners]
        argv = [
            *self.command,
            *(f"--listen-fd={fd}" for fd in fds),
            f"--supervisor-fd={their_end.fileno()}",
        ]
        try:
            process = subprocess.Popen(
                argv,
                pass_fds=(*fds, their_end.fileno()),
                stdin=subprocess.DEVNULL,
                start_new_session=True,
                env=self.env,
            )
        except OSError as exc:
            link.close()
            self._failed_to_start(slot, f"worker {slot + 1} could not be started ({exc})", 1)
            return
        finally:
            their_end.close()
        try:
            exited: int | None = os.pidfd_open(process.pid)
        except (AttributeError, OSError):  # not Linux, or too old a kernel: polled instead
            exited = None
        worker = _Worker(slot, process, link, exited, self._clock())
        self._workers.append(worker)
        self._selector.register(link, selectors.EVENT_READ, worker)
        if exited is not None:
            self._selector.register(exited, selectors.EVENT_READ, worker)
        log.debug("started %s", worker)

    def _forget(self, worker: _Worker) -> None:
        """Let go of what the supervisor holds of ``worker`` (it exited)."""
        self._workers.remove(worker)
        if worker.link is not None:
            self._selector.unregister(worker.link)
            worker.link.close()
            worker.link = None
        if worker.exited is not None:
            self._selector.unregister(worker.exited)
            os.close(worker.exited)
            worker.exited = None

    def _exited(self, worker: _Worker, code: int) -> None:
        if self._stopping_since is not None:
            log.debug("%s %s", worker, _exit_status(code))
            return
        if not worker.serving:
            self._failed_to_start(worker.slot, f"{worker} {_exit_status(code)} before serving", code)
            return
        now = self._clock()
        if now - worker.started >= self.policy.stable_after:
            self._schedule.exits_in_a_row[worker.slot] = 0
        self._restart_later(worker.slot, f"{worker} {_exit_status(code)}")

    def _failed_to_start(self, slot: int, what: str, code: int) -> None:
        if not self._served:  # the first worker: whatever failed will fail for every worker
            log.error("%s: stopping", what)
            self._exit_code = code if code > 0 else 1
            self._begin_stop("the first worker failed")
            return
        self._start_failures += 1
        if self._start_failures >= self.policy.max_start_failures:
            log.error("%s (%d failures to start in a row): stopping", what, self._start_failures)
            self._exit_code = 1
            self._begin_stop("workers fail to start")
            return
        self._restart_later(slot, what)

    def _restart_later(self, slot: int, what: str) -> None:
        exits = self._schedule.exits_in_a_row.get(slot, 0)
        delay = min(self.policy.first_delay * 2**exits, self.policy.max_delay)
        self._schedule.exits_in_a_row[slot] = exits + 1
        self._schedule.restarts[slot] = self._clock() + delay
        log.warning("%s; restarting it in %g s", what, delay)
