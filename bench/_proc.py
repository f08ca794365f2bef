"""Helpers the benchmark scripts share: the servers' environment, readers of a process's CPU time
and memory, reaping, the order of the rounds, number formatting and the machine/commit lines.

Only the standard library: ``bench/streamable_http.py`` uses it without loading
``bench/stdio.py`` (and its msgspec).
"""

from __future__ import annotations

import argparse
import math
import os
import platform
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from importlib import metadata
from pathlib import Path
from typing import IO, Any, Protocol, TypeVar

ROOT = Path(__file__).resolve().parent.parent


def server_env() -> dict[str, str]:
    """The environment of mcpbind's servers: this checkout's runtime and generated code first."""
    env = dict(os.environ)
    dev = [str(ROOT / "runtime"), str(ROOT / "generated")]
    if env.get("PYTHONPATH"):
        dev.append(env["PYTHONPATH"])
    env["PYTHONPATH"] = os.pathsep.join(dev)
    env["PYTHONFAULTHANDLER"] = "1"  # a hung server is sent SIGABRT and dumps its threads
    return env


def proc_status_kib(pid: int, field_name: str) -> float:
    """A ``kB`` field of /proc/PID/status (``VmRSS``, ``VmHWM``), in KiB; NaN when unreadable."""
    try:
        with open(f"/proc/{pid}/status", "rb") as f:
            for line in f:
                if line.startswith(field_name.encode() + b":"):
                    return float(line.split()[1])
    except (OSError, ValueError, IndexError):
        pass
    return math.nan


def cpu_seconds(pid: int) -> float:
    """CPU time of a live process: the sum over its threads of /proc's schedstat (ns precision).

    A thread that exits between two readings takes its time with it; the servers here keep
    their threads (anyio's and trio's worker threads idle for 10 s before they exit).
    """
    total = 0
    try:
        for task in os.listdir(f"/proc/{pid}/task"):
            try:
                with open(f"/proc/{pid}/task/{task}/schedstat", "rb") as f:
                    total += int(f.read().split()[0])
            except (OSError, ValueError, IndexError):
                continue
    except OSError:
        return math.nan
    return total / 1e9


def reap(proc: subprocess.Popen[bytes]) -> None:
    """Kill ``proc`` if it still runs, and wait for it."""
    if proc.poll() is None:
        proc.kill()
        proc.wait()


class Failable(Protocol):
    failure: str | None  # why this one was dropped from the run (None: it was not)


S = TypeVar("S", bound=Failable)


def rounds_of(results: Mapping[str, S], rounds: int) -> Iterator[tuple[int, str, S]]:
    """``(round, name, samples)`` for every round and every name of ``results``, their order
    rotated by one each round; a name whose samples have a ``failure`` is passed over from then on."""
    names = list(results)
    for r in range(rounds):
        shift = r % len(names)
        for name in names[shift:] + names[:shift]:
            samples = results[name]
            if samples.failure is None:
                yield r, name, samples


def med(values: Sequence[float]) -> float:
    return statistics.median(values) if values else math.nan


def fmt_num(value: float, decimals: int = 3) -> str:
    """A number for a table: thousands separated from 1,000 on, no decimals from 100 on, then
    one from 10, two from 1, three below (``decimals`` at the most)."""
    if math.isnan(value):
        return "n/a"
    if value >= 1000:
        return f"{value:,.0f}"
    places = 0 if value >= 100 else 1 if value >= 10 else 2 if value >= 1 else 3
    return f"{value:.{min(places, decimals)}f}"


def fmt_range(values: Sequence[float], decimals: int = 3) -> str:
    """The median and, in brackets, the min-max range (each by :func:`fmt_num`)."""
    if not values:
        return "n/a"
    low, mid, high = (fmt_num(v, decimals) for v in (min(values), med(values), max(values)))
    return f"{mid} ({low}-{high})"


def fmt_ratio(value: float) -> str:
    if math.isnan(value):
        return "n/a"
    return f"{value:.2f}x" if value < 10 else f"{value:.1f}x"


def ratio(ours: float, theirs: float) -> float:
    if math.isnan(ours) or math.isnan(theirs) or theirs == 0:
        return math.nan
    return ours / theirs


def version_of(package: str) -> str:
    try:
        return metadata.version(package)
    except metadata.PackageNotFoundError:
        return "not installed"


def machine_line() -> str:
    cpu = platform.processor() or "unknown cpu"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    cpu = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return f"{os.cpu_count()} cpus ({cpu}), {platform.system()} {platform.release()}"


def commit(watched: Sequence[str]) -> str:
    """This checkout's commit, and whether the code the servers run (the ``watched`` folders)
    has uncommitted (or untracked) changes, which make the commit not enough to name it."""

    def git(*words: str) -> str:
        run = subprocess.run(
            ["git", *words], cwd=ROOT, capture_output=True, text=True, timeout=10, check=True
        )
        return run.stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", *watched)
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    if not dirty:
        return head
    folders = [f"{name}/" for name in watched]
    listed = folders[0] if len(folders) == 1 else f"{', '.join(folders[:-1])} or {folders[-1]}"
    return f"{head} (plus uncommitted changes in {listed})"


def picked(parser: argparse.ArgumentParser, text: str, known: Sequence[str], what: str) -> list[str]:
    """The comma-separated names of an option (each once, in order); any unknown (or none at
    all) is a usage error naming ``what`` they are."""
    names = list(dict.fromkeys(n.strip() for n in text.split(",") if n.strip()))
    unknown = [n for n in names if n not in known]
    if unknown or not names:
        parser.error(f"unknown {what} {unknown}; choose from {', '.join(known)}")
    return names


def count(parser: argparse.ArgumentParser, given: int | None, default: int, option: str) -> int:
    """A count option's value (``default`` when not given); below 1 is a usage error."""
    value = given if given is not None else default
    if value < 1:
        parser.error(f"{option} must be at least 1")
    return value


R = TypeVar("R")


def standalone(
    script: str,
    doc: str | None,
    add_options: Callable[[argparse.ArgumentParser], None],
    check_options: Callable[[argparse.ArgumentParser, argparse.Namespace], argparse.Namespace],
    run: Callable[[argparse.Namespace], R],
    report: Callable[[argparse.Namespace, R], int],
    errors: tuple[type[Exception], ...],
    argv: Sequence[str] | None,
) -> int:
    """A scenario run on its own (``python bench/<script>``): its command line, ``run``, then
    ``report`` (which gives the exit status); 1 after saying why on stderr when ``run`` raised
    one of ``errors``."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    add_options(parser)
    args = check_options(parser, parser.parse_args(argv))
    try:
        results = run(args)
    except errors as exc:
        print(f"bench/{script}: run aborted: {exc}", file=sys.stderr)
        return 1
    return report(args, results)


def initialize_request(client_name: str, protocol_version: str) -> dict[str, Any]:
    """The ``initialize`` request (id 0) of a load generator, as data to encode."""
    return {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": protocol_version,
            "capabilities": {},
            "clientInfo": {"name": client_name, "version": "0.1.0"},
        },
    }


class LoggedProcess:
    """A process of the benchmark whose output (stdout and stderr) is kept in a temporary file.
    A subclass calls :meth:`start`, which waits for it to be ready (its :meth:`wait_ready`) and
    stops it (its :meth:`close`) if it is not."""

    output: IO[bytes]
    proc: subprocess.Popen[bytes]

    def start(
        self,
        command: Sequence[str],
        *,
        env: Mapping[str, str],
        start_timeout: float,
        stdin: int = subprocess.DEVNULL,
        new_session: bool = False,
    ) -> None:
        self.output = tempfile.TemporaryFile()
        try:
            self.proc = subprocess.Popen(
                list(command),
                cwd=ROOT,
                env=dict(env),
                stdin=stdin,
                stdout=self.output,
                stderr=self.output,
                start_new_session=new_session,
            )
        except BaseException:
            self.output.close()
            raise
        try:
            self.wait_ready(start_timeout)
        except BaseException:
            self.close()
            raise

    @property
    def pid(self) -> int:
        return self.proc.pid

    def text(self, limit: int = 3000) -> str:
        """What it printed (the last ``limit`` characters)."""
        self.output.seek(0)
        text = self.output.read().decode("utf-8", "replace").strip()
        return text if len(text) <= limit else "...\n" + text[-limit:]

    def wait_ready(self, timeout: float) -> None:
        raise NotImplementedError

    def wait_listening(self, port: int, timeout: float, fail: Callable[[str], Exception]) -> None:
        """Wait until the process listens on 127.0.0.1:``port`` (tried every 50 ms); raises
        ``fail(what)`` if it exits first or does not listen within ``timeout`` seconds."""
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                raise fail(f"exited with code {self.proc.returncode} before listening")
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return
            except OSError:
                if time.monotonic() > deadline:
                    raise fail(f"not listening after {timeout:g} s") from None
                time.sleep(0.05)

    def close(self) -> str:
        raise NotImplementedError
